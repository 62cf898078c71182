/**
 * How a live step ended, in the words its run keeps: the stop signal that cut it short
 * ({@link stopCause}), what broke a kvlab generator's step ({@link stepFaults}) and the status
 * that makes ({@link stepStatus}). Shared by the collectors (`collector.ts` re-exports them).
 *
 * @module
 */

import { redactText } from "../text/redact.ts";

/**
 * The stop signal that aborted `signal`, in words for a run's reason: `Ctrl-C` (SIGINT),
 * `SIGTERM` or `SIGHUP`, as the CLI's stop signals abort with their names; `stopped` for
 * another abort (a caller's own AbortController).
 *
 * @param signal The abort signal.
 * @returns The words.
 *
 * @example
 * ```ts
 * import { stopCause } from "./step_outcome.ts";
 * import assert from "node:assert/strict";
 * const ac = new AbortController();
 * ac.abort("SIGHUP");
 * assert.equal(stopCause(ac.signal), "SIGHUP");
 * const ctrlC = new AbortController();
 * ctrlC.abort("SIGINT");
 * assert.equal(stopCause(ctrlC.signal), "Ctrl-C");
 * assert.equal(stopCause(undefined), "stopped");
 * ```
 */
export function stopCause(signal: AbortSignal | undefined): string {
  const r = signal?.aborted ? signal.reason : undefined;
  return r === "SIGINT" ? "Ctrl-C" : r === "SIGTERM" || r === "SIGHUP" ? r : "stopped";
}

/** What a kvlab generator counted that breaks a step (`kvlab load`, `kvlab pubsub`). */
export interface StepFaults {
  /** Connections lost, of `connections`. */
  disconnects: number;
  connections: number;
  /** Replies or messages kvlab did not ask for (pub/sub: messages it did not publish). */
  protocolErrors?: number;
  /** Requests still without a reply when the step ended (its window and drain). */
  unanswered?: number;
  /** Up to five error texts, as the engine sampled them. */
  errorSamples: string[];
}

/**
 * What broke a generator's step, for its run's reason (issue 21): connections lost, protocol
 * errors and requests never answered (issue 30), the server named with what it did (redacted);
 * null when nothing broke.
 *
 * @example
 * ```ts
 * import { stepFaults } from "./step_outcome.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   stepFaults({ disconnects: 2, connections: 4, errorSamples: ["ConnectionReset: x"] }, "r:1"),
 *   "2 of 4 connections lost (r:1: ConnectionReset: x)",
 * );
 * const none = { disconnects: 0, connections: 4 };
 * const protocol = stepFaults({ ...none, protocolErrors: 1, errorSamples: [] }, "r:1");
 * assert.equal(protocol, "1 protocol error");
 * assert.equal(stepFaults({ ...none, errorSamples: ["busy"] }, "r:1"), null);
 * assert.equal(stepFaults({ ...none, unanswered: 4, errorSamples: ["no reply"] }, "r:1"),
 *   "4 requests never answered (r:1: no reply)");
 * ```
 */
export function stepFaults(f: StepFaults, server: string): string | null {
  const lost = f.disconnects > 0 ? `${f.disconnects} of ${f.connections} connections lost` : null;
  const n = f.protocolErrors ?? 0;
  const protocol = n > 0 ? `${n} protocol error${n === 1 ? "" : "s"}` : null;
  const u = f.unanswered ?? 0;
  const unanswered = u > 0 ? `${u} request${u === 1 ? "" : "s"} never answered` : null;
  if (!lost && !protocol && !unanswered) return null;
  const samples = f.errorSamples.length
    ? ` (${server}: ${redactText(f.errorSamples.join("; "))})`
    : "";
  return [lost, protocol, unanswered].filter((x) => x).join(", ") + samples;
}

/**
 * A generator step's status: failed without a result, or when broken with nothing done;
 * incomplete when broken or interrupted; else complete.
 *
 * @example
 * ```ts
 * import { stepStatus } from "./step_outcome.ts";
 * import assert from "node:assert/strict";
 * const broken = "2 of 4 connections lost";
 * assert.equal(stepStatus({ done: 10, broken, interrupted: false }), "incomplete");
 * assert.equal(stepStatus({ done: 0, broken, interrupted: false }), "failed");
 * assert.equal(stepStatus({ done: 0, broken: null, interrupted: true }), "incomplete");
 * assert.equal(stepStatus(null), "failed");
 * ```
 */
export function stepStatus(
  s: { done: number; broken: string | null; interrupted: boolean } | null | undefined,
): "complete" | "incomplete" | "failed" {
  if (!s || (s.broken && s.done === 0)) return "failed";
  return s.broken || s.interrupted ? "incomplete" : "complete";
}
