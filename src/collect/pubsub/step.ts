/**
 * Live collection of one pub/sub step: snapshots the server (INFO, CONFIG, DBSIZE) before and
 * after, runs {@link runPubSub}, and stores one run: the step's `results`, `time_series` and
 * `hdr_histograms` rows ({@link pubSubRows}), the server's CPU time over the step on the `runs`
 * row, and the step's counts as `raw/pubsub.json`. A server without sharded pub/sub, a server
 * that is down, or a failed step is stored as a failed run with its reason.
 *
 * @module
 */

import {
  type PubSubOptions,
  type PubSubResult,
  PubSubUnsupportedError,
  runPubSub,
} from "./engine.ts";
import { pubSubRows } from "./rows.ts";
import {
  argvToCommand,
  type CollectedRun,
  type CollectOptions,
  collectRun,
  type Measurement,
  stepFaults,
  stepStatus,
  stopCause,
  type StoredRun,
} from "../collector.ts";
import { redactArgv } from "../../text/redact.ts";
import { clientRoom, ServerUnreachableError, snapshotServer } from "../server.ts";
import { PUBSUB_CONNECTIONS, roomProblem } from "../limits.ts";
import { KVLAB_VERSION } from "../../version.ts";
import type { ServerTarget } from "../target.ts";
import { type SustainedVerdict, sustainedVerdict } from "../../fixed_rate.ts";

/** One pub/sub step to run: the server and the engine's options other than the endpoint. */
export interface PubSubCall extends Omit<PubSubOptions, "hostname" | "port" | "password"> {
  target: ServerTarget;
}

/** Options of {@link runPubSubStep}. */
export type PubSubStepOptions = CollectOptions;

/** A stored step: the run, and how the step went against its target. */
export interface PubSubStepRun extends CollectedRun {
  /** The sustained verdict (null when the step did not run). */
  verdict: SustainedVerdict | null;
  /** What the engine measured (absent when the step did not run). */
  result?: PubSubResult;
}

/**
 * The `kvlab pubsub` command line of a step (secrets redacted), as stored on the run.
 *
 * @param call The step.
 * @returns The command.
 *
 * @example
 * ```ts
 * import { parseServerUrl, pubSubCommand } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   pubSubCommand({ target: parseServerUrl("redis://:pw@127.0.0.1:6379"), mode: "fan-out",
 *     publishers: 2, subscribers: 8, requestedOpsPerSec: 1000, durationS: 5 }),
 *   "kvlab pubsub --url redis://:***@127.0.0.1:6379 --mode fan-out --publishers 2 " +
 *     "--subscribers 8 --rate 1000 --duration 5",
 * );
 * ```
 */
export function pubSubCommand(call: PubSubCall): string {
  return argvToCommand(redactArgv(pubSubArgv(call)));
}

/**
 * The `kvlab pubsub` argv of a step, credentials redacted (the engine runs inside kvlab: this is
 * what a user types to run the same step).
 *
 * @param call The step.
 * @returns The program and its arguments.
 *
 * @example
 * ```ts
 * import { parseServerUrl, pubSubArgv } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const argv = pubSubArgv({ target: parseServerUrl("redis://h:1"), mode: "sharded",
 *   publishers: 2, subscribers: 4, requestedOpsPerSec: 100, durationS: 1 });
 * assert.deepEqual(argv.slice(0, 6), ["kvlab", "pubsub", "--url", "redis://h:1", "--mode", "sharded"]);
 * assert.deepEqual(argv.slice(-2), ["--duration", "1"]);
 * ```
 */
export function pubSubArgv(call: PubSubCall): string[] {
  const argv = ["kvlab", "pubsub", "--url", call.target.display, "--mode", call.mode];
  const opt = (flag: string, v: number | undefined) => {
    if (v !== undefined) argv.push(flag, String(v));
  };
  opt("--publishers", call.publishers);
  opt("--subscribers", call.subscribers);
  opt("--channels", call.channels);
  opt("--fan-out", call.fanOut);
  opt("--payload", call.payloadBytes);
  opt("--rate", call.requestedOpsPerSec);
  opt("--duration", call.durationS);
  opt("--grace", call.graceS);
  if (call.engine !== undefined && call.engine !== "auto") argv.push("--engine", call.engine);
  return argv;
}

/** Why a target cannot be driven by the engine (raw RESP over plain TCP), or null. */
function unsupportedTarget(t: ServerTarget): string | null {
  if (t.socket !== undefined) return "the pub/sub engine speaks TCP only, not a unix socket";
  if (t.tls) return "the pub/sub engine does not speak TLS";
  if (t.user !== undefined) return "the pub/sub engine sends AUTH with a password only, not a user";
  return null;
}

/**
 * Runs one pub/sub step and stores it as one run. Does not throw for a server that is down,
 * one without sharded pub/sub, or a step that fails: those become a failed run with a reason.
 *
 * @param call The step: server, mode, counts, rate, duration.
 * @param options Dataset, labels, plan reference.
 * @returns The stored run and the step's verdict.
 */
export async function runPubSubStep(
  call: PubSubCall,
  options: PubSubStepOptions,
): Promise<PubSubStepRun> {
  const now = options.now ?? (() => new Date());
  const { measured, ...run } = await collectRun(options, {
    target: call.target,
    command: pubSubCommand(call),
    measure: () => measure(call, now),
    store: (m, runId) => stored(m, runId, call.target.display),
  });
  return { ...run, verdict: measured.verdict, result: measured.result };
}

/** What a step gave, before it is stored. */
interface Measured extends Measurement {
  result?: PubSubResult;
  window: { start: Date; end: Date };
  reason: string | null;
  verdict: SustainedVerdict | null;
}

/** Snapshots the server, runs the engine and snapshots again (unless it cannot drive it). */
async function measure(call: PubSubCall, now: () => Date): Promise<Measured> {
  const start = now();
  const m: Measured = {
    window: { start, end: start },
    reason: unsupportedTarget(call.target),
    verdict: null,
  };
  if (m.reason !== null) return m;
  try {
    m.before = await snapshotServer(call.target);
    // more connections than the server has room for: the step would measure refusals
    const room = clientRoom(m.before);
    const wanted = call.publishers + call.subscribers;
    if (room !== null && wanted > room.room) {
      m.reason = roomProblem(PUBSUB_CONNECTIONS, wanted, { room, server: call.target.display });
      return m;
    }
    const { target, ...engine } = call;
    const begun = now();
    m.result = await runPubSub({
      ...engine,
      port: target.port,
      hostname: target.host,
      password: target.password,
    });
    m.window = { start: begun, end: now() };
    m.after = await snapshotServer(call.target).catch(() => undefined);
  } catch (e) {
    if (e instanceof PubSubUnsupportedError) {
      m.reason = `skipped: ${call.mode} needs SSUBSCRIBE, which this server lacks (${e.message})`;
    } else if (e instanceof ServerUnreachableError) {
      m.reason = e.message; // (it names the server)
    } else if (e instanceof RangeError || e instanceof TypeError) {
      throw e; // bad options
    } else if (call.signal?.aborted) {
      m.reason = `interrupted (${stopCause(call.signal)}) before the step started`;
    } else {
      // whatever the server did (refused SUBSCRIBE, went silent, sent RESP3, closed): a stored
      // failed run naming it, not an error without a run (issue 30)
      const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      m.reason = `${call.target.display}: ${what}`;
    }
  }
  const r = m.result;
  if (r) m.verdict = sustainedVerdict(r);
  if (r?.interrupted) {
    m.reason = `interrupted (${stopCause(call.signal)}) after ${r.durationS.toFixed(1)} s of ` +
      "the step; partial counts kept";
  }
  return m;
}

/** How a measured step is stored: the engine's rows and counts, or a failed run with its reason. */
function stored(m: Measured, runId: string, server: string): StoredRun {
  const r = m.result;
  const rows = r ? pubSubRows(runId, r, m.window) : undefined;
  const counts = r ? stepFacts(r, m.verdict) : null;
  // connections lost and messages kvlab did not publish are run errors, as in `kvlab load`
  // (issue 21): with nothing delivered the step failed, else it is incomplete
  const broken = r ? stepFaults({ ...r, connections: r.publishers + r.subscribers }, server) : null;
  const status = stepStatus(
    r && { done: r.delivered, broken, interrupted: r.interrupted },
  );
  return {
    status,
    reason: [m.reason, broken].filter((x) => x).join("; ") || null,
    tests: rows?.results.length ?? 0,
    interrupted: r?.interrupted ?? false,
    columns: {
      tool: "kvlab",
      tool_version: KVLAB_VERSION,
      output_format: counts ? "json" : "none",
    },
    tables: {
      results: rows?.results ?? [],
      time_series: rows?.time_series ?? [],
      hdr_histograms: rows?.hdr_histograms ?? [],
    },
    raw: counts
      ? [{
        name: "pubsub.json",
        bytes: new TextEncoder().encode(JSON.stringify(counts, null, 2) + "\n"),
      }]
      : [],
    manifest: { pubsub: counts },
  };
}

/** The counts of a step, kept as `raw/pubsub.json` and in run.json (resume reads the verdict). */
function stepFacts(r: PubSubResult, verdict: SustainedVerdict | null) {
  const { latency: _l, sendLateness: _s, perSecond: _p, ...facts } = r;
  return { ...facts, verdict };
}
