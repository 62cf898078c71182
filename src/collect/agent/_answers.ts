/**
 * The coordinator's pure parts: which registered agents a step uses, and the `agent_steps` row
 * of each agent's answer.
 *
 * @module
 */

import type { AgentStepsRow } from "../../schema.ts";
import { redactSecret } from "../../text/redact.ts";
import type { ServerTarget } from "../target.ts";
import type { OpenLoopResult } from "../loadgen/open_loop.ts";
import type { MemtierAgentRun } from "./memtier.ts";
import { skewBoundMs } from "./clock.ts";
import type { ControlEntry } from "./control.ts";
import type { AgentResult, Registration } from "./protocol.ts";

/** An agent's registration older than this is not counted, ms (it registers every 5 s). */
export const REGISTRATION_FRESH_MS = 20_000;

/** One agent of a step: who, its share, and what it answered (null: nothing yet). */
export interface Answer {
  registration: Registration;
  item: string;
  share: { index: number; of: number };
  result: AgentResult | null;
  /** Its measured step, decoded. */
  step?: OpenLoopResult;
  /** Why it was given up on before the cell's limit (no heartbeat), when it was. */
  lost?: string;
  /** Its memtier step, read (engine memtier). */
  memtier?: MemtierAgentRun;
}

/**
 * The agents of a step: the latest registration of each agent seen within
 * {@link REGISTRATION_FRESH_MS}; those named, or the first `count` by name.
 *
 * @param entries The registry stream, newest first.
 * @param o The control server's time, and the agents wanted.
 * @returns The registrations (in share order), or why the step cannot run.
 *
 * @example
 * ```ts
 * import { chooseAgents } from "./_answers.ts";
 * import assert from "node:assert/strict";
 * const reg = (agent: string, atMs: number) => ({ id: "1-0", message: { type: "register" as const,
 *   v: 1 as const, agent, host: agent, cpuModel: null, cpuCount: 2, memoryBytes: null,
 *   kernel: "6", tools: {}, clock: { offsetMs: 0, uncertaintyMs: 0.1, roundTrips: 8 }, atMs } });
 * const entries = [reg("b", 99_000), reg("a", 98_000), reg("c", 1_000)];
 * const two = chooseAgents(entries, { nowMs: 100_000, count: 2, names: null });
 * assert.ok(Array.isArray(two) && two.map((r) => r.agent).join() === "a,b");
 * assert.deepEqual(chooseAgents(entries, { nowMs: 100_000, count: 3, names: null }), {
 *   reason: "3 agents wanted, 2 registered in the last 20 s (a, b)" });
 * assert.deepEqual(chooseAgents(entries, { nowMs: 100_000, count: 2, names: ["a", "c"] }), {
 *   reason: "agent c: not registered in the last 20 s" });
 * ```
 */
export function chooseAgents(
  entries: readonly ControlEntry[],
  o: { nowMs: number; count: number; names: string[] | null },
): Registration[] | { reason: string } {
  const fresh = new Map<string, Registration>();
  for (const e of entries) {
    const r = e.message;
    if (r?.type !== "register" || fresh.has(r.agent)) continue;
    if (o.nowMs - r.atMs <= REGISTRATION_FRESH_MS) fresh.set(r.agent, r);
  }
  const s = REGISTRATION_FRESH_MS / 1000;
  if (o.names) {
    const gone = o.names.filter((n) => !fresh.has(n));
    if (gone.length > 0) {
      return {
        reason: gone.map((n) => `agent ${n}: not registered in the last ${s} s`).join("; "),
      };
    }
    return o.names.map((n) => fresh.get(n)!);
  }
  const names = [...fresh.keys()].sort();
  if (names.length < o.count) {
    return {
      reason: `${o.count} agents wanted, ${names.length} registered in the last ${s} s` +
        (names.length > 0 ? ` (${names.join(", ")})` : ""),
    };
  }
  return names.slice(0, o.count).map((n) => fresh.get(n)!);
}

/**
 * The `agent_steps` row of one agent's answer.
 *
 * @param a The answer.
 * @param runId The merged run.
 * @param startAtMs The common start, control clock (null when none was given).
 * @returns The row.
 */
export function agentRow(a: Answer, runId: string, startAtMs: number | null): AgentStepsRow {
  const r = a.result;
  const clock = r?.clock ?? a.registration.clock;
  const st = a.step;
  const skew = r?.startedAtMs != null && startAtMs !== null ? r.startedAtMs - startAtMs : null;
  const num = (k: string) => {
    const v = r?.noise?.[k];
    return typeof v === "number" ? v : null;
  };
  const disturbance = r?.noise?.noise_disturbance;
  return {
    run_id: runId,
    agent: a.registration.agent,
    host: r?.host ?? a.registration.host,
    share_index: a.share.index,
    share_of: a.share.of,
    status: r?.status ?? "no-answer",
    error: r === null ? a.lost ?? "no answer within the cell's limit" : r.error,
    clock_offset_ms: clock.offsetMs,
    clock_uncertainty_ms: clock.uncertaintyMs,
    start_skew_ms: skew,
    start_skew_warning: skew === null ? null : Math.abs(skew) > skewBoundMs(clock.uncertaintyMs),
    connections: st?.connections ?? null,
    requested_ops_per_sec: st?.requestedOpsPerSec ?? null,
    ops_per_sec: st?.achievedOpsPerSec ?? null,
    error_count: st ? st.errors + st.unanswered + st.disconnects : null,
    client_cpu_s: st?.clientCpuS ?? null,
    send_lateness_p99_ms: st && st.lateness.count > 0 ? st.lateness.p99Ms : null,
    noise_other_cpu_pct: num("noise_other_cpu_pct"),
    noise_steal_pct: num("noise_steal_pct"),
    noise_disturbance: typeof disturbance === "string" ? disturbance : null,
    raw_file: r === null ? null : `agent-${a.registration.agent}.json`,
  };
}

/**
 * The disturbance a step's start skew is (the agents started further apart than their bound,
 * max(5 ms, offset uncertainty)), as the run's `noise_disturbance` carries it to `compare`.
 *
 * @param rows The step's `agent_steps` rows.
 * @returns `agents' start skew 12.5 ms (a2, a3)`, or null when every skew is within its bound.
 *
 * @example
 * ```ts
 * import { skewDisturbance } from "./_answers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(skewDisturbance([
 *   { agent: "a1", start_skew_ms: 0.4, start_skew_warning: false },
 *   { agent: "a2", start_skew_ms: -12.5, start_skew_warning: true },
 * ]), "agents' start skew 12.5 ms (a2)");
 * assert.equal(skewDisturbance([{ agent: "a1", start_skew_ms: 1, start_skew_warning: false }]), null);
 * ```
 */
export function skewDisturbance(
  rows: readonly Pick<AgentStepsRow, "agent" | "start_skew_ms" | "start_skew_warning">[],
): string | null {
  const over = rows.filter((r) => r.start_skew_warning === true);
  if (over.length === 0) return null;
  const worst = Math.max(...over.map((r) => Math.abs(r.start_skew_ms ?? 0)));
  return `agents' start skew ${worst.toFixed(1)} ms (${over.map((r) => r.agent).join(", ")})`;
}

/**
 * Each answering agent's whole result as a raw file, the target's password redacted (as written and
 * as JSON escapes it): an agent redacts what it posts, but the coordinator does not trust it to.
 *
 * @example
 * ```ts
 * import { agentFiles } from "./_answers.ts";
 * import assert from "node:assert/strict";
 * const answer = { registration: { agent: "a1" }, result: { error: 'AUTH p"ssw0rd failed' } };
 * // deno-lint-ignore no-explicit-any
 * const [f] = agentFiles([answer as any], { host: "h", port: 1, password: 'p"ssw0rd' } as any);
 * assert.equal(f.name, "agent-a1.json");
 * assert.doesNotMatch(new TextDecoder().decode(f.bytes), /ssw0rd/);
 * ```
 */
export function agentFiles(
  answers: Answer[],
  target: ServerTarget,
): { name: string; bytes: Uint8Array }[] {
  const pw = target.password ?? "";
  return answers.filter((a) => a.result !== null).map((a) => {
    const text = JSON.stringify(a.result, null, 1);
    return {
      name: `agent-${a.registration.agent}.json`,
      bytes: new TextEncoder().encode(
        redactSecret(redactSecret(text, pw), JSON.stringify(pw).slice(1, -1)) + "\n",
      ),
    };
  });
}
