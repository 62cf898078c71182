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
import { stepTopology } from "../loadgen/cluster/topology.ts";
import { type NodeCalls, nodeCalls } from "../cluster/nodes.ts";
import type { SlotMap } from "../cluster/slots.ts";
import type { PubSubShard } from "./types.ts";

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
  /** What kvlab says of the topology (cluster mode detected, a per-shard count that differs). */
  notes: string[];
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
  return { ...run, verdict: measured.verdict, result: measured.result, notes: measured.notes };
}

/** What a step gave, before it is stored. */
interface Measured extends Measurement {
  result?: PubSubResult;
  window: { start: Date; end: Date };
  reason: string | null;
  verdict: SustainedVerdict | null;
  /** What kvlab says of the topology (cluster mode detected, a cross-check that disagrees). */
  notes: string[];
}

/** Snapshots the server, runs the engine and snapshots again (unless it cannot drive it). */
async function measure(call: PubSubCall, now: () => Date): Promise<Measured> {
  const start = now();
  const m: Measured = {
    window: { start, end: start },
    reason: unsupportedTarget(call.target),
    verdict: null,
    notes: [],
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
    // a cluster (declared, or detected from INFO): its slot map, read as `kvlab load` reads it
    const topology = await stepTopology(call.target, m.before.info);
    if ("reason" in topology) {
      m.reason = topology.reason;
      return m;
    }
    const cluster = topology.options.cluster;
    if (cluster && !call.target.cluster) {
      m.notes.push(
        `cluster mode detected from INFO (cluster_enabled:1) on ${call.target.display}: ` +
          pubSubClusterRouting(call.mode),
      );
    }
    const command = call.mode === "sharded" ? "spublish" : "publish";
    const callsBefore = cluster ? await nodeCalls(call.target, cluster, [command]) : [];
    const { target, ...engine } = call;
    const begun = now();
    m.result = await runPubSub({
      ...engine,
      port: target.port,
      hostname: target.host,
      password: target.password,
      ...(cluster ? { cluster } : {}),
    });
    m.window = { start: begun, end: now() };
    m.after = await snapshotServer(call.target).catch(() => undefined);
    if (cluster && m.result.shards) {
      const callsAfter = await nodeCalls(call.target, cluster, [command]);
      const warning = checkShards(m.result.shards, { cluster, callsBefore, callsAfter, command });
      if (warning) m.notes.push(warning);
    }
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

/**
 * How a step routes its connections across a cluster's masters, in words.
 *
 * @example
 * ```ts
 * import { pubSubClusterRouting } from "./step.ts";
 * import assert from "node:assert/strict";
 * assert.match(pubSubClusterRouting("sharded"), /slot's master/);
 * assert.match(pubSubClusterRouting("fan-out"), /broadcast/);
 * ```
 */
export function pubSubClusterRouting(mode: PubSubCall["mode"]): string {
  return mode === "sharded"
    ? "each channel's subscribers and SPUBLISH go to its slot's master"
    : "PUBLISH is broadcast over the cluster bus: subscribers and publishers spread over the " +
      "masters";
}

/**
 * Sets each shard's commandstats calls over the step, and compares them with what kvlab
 * published through it: a disagreement (more than 1 %, or any for a master kvlab sent
 * nothing) is a warning with both numbers.
 *
 * @returns The warning, or null.
 *
 * @example
 * ```ts
 * import { checkShards } from "./step.ts";
 * import { emptySlotMap } from "../cluster/slots.ts";
 * import assert from "node:assert/strict";
 * const cluster = emptySlotMap();
 * cluster.nodes.push({ host: "h", port: 1, id: null }, { host: "h", port: 2, id: null });
 * import type { PubSubShard } from "./types.ts";
 * const shards: PubSubShard[] = [
 *   { node: "h:1", channels: 1, subscriberConnections: 1, published: 100 },
 *   { node: "h:2", channels: 1, subscriberConnections: 1, published: 50 },
 * ];
 * const callsBefore = [{ node: "h:1", calls: 5 }, { node: "h:2", calls: 0 }];
 * const o = { cluster, callsBefore, command: "spublish" };
 * assert.equal(checkShards(shards, { ...o, callsAfter: [{ node: "h:1", calls: 105 },
 *   { node: "h:2", calls: 50 }] }), null);
 * assert.deepEqual(shards.map((s) => s.serverCalls), [100, 50]);
 * assert.equal(checkShards(shards, { ...o, callsAfter: [{ node: "h:1", calls: 105 }, null] }),
 *   "h:2: INFO commandstats not read after the step: no per-shard cross-check");
 * assert.equal(checkShards(shards, { ...o, callsAfter: [{ node: "h:1", calls: 85 },
 *   { node: "h:2", calls: 50 }] }),
 *   "h:1: kvlab sent 100 SPUBLISH, the node's commandstats counted 80 (20.0 % apart)");
 * ```
 */
export function checkShards(
  shards: PubSubShard[],
  o: {
    cluster: SlotMap;
    callsBefore: readonly (NodeCalls | null)[];
    callsAfter: readonly (NodeCalls | null)[];
    command: string;
  },
): string | null {
  const problems: string[] = [];
  shards.forEach((s, i) => {
    const b = o.callsBefore[i];
    const a = o.callsAfter[i];
    s.serverCalls = a && b ? a.calls - b.calls : null;
    if (s.serverCalls === null) {
      problems.push(
        `${s.node}: INFO commandstats not read after the step: no per-shard cross-check`,
      );
      return;
    }
    const apart = Math.abs(s.serverCalls - s.published) / Math.max(1, s.published);
    if (apart > 0.01) {
      problems.push(
        `${s.node}: kvlab sent ${s.published.toLocaleString("en")} ${o.command.toUpperCase()}, ` +
          `the node's commandstats counted ${s.serverCalls.toLocaleString("en")} ` +
          `(${(100 * apart).toFixed(1)} % apart)`,
      );
    }
  });
  return problems.length ? problems.join("; ") : null;
}

/** How a measured step is stored: the engine's rows and counts, or a failed run with its reason. */
function stored(m: Measured, runId: string, server: string): StoredRun {
  const r = m.result;
  const rows = r ? pubSubRows(runId, r, m.window) : undefined;
  const counts = r ? { ...stepFacts(r, m.verdict), notes: m.notes } : null;
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
