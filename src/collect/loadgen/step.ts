/**
 * Live collection with kvlab's own open-loop generator: one fixed-rate step stored as one run,
 * like the other collectors (server snapshots before and after, server CPU, host facts, the
 * generator's summary kept as the raw `loadgen.json`), with the rows of
 * {@link openLoopRows}. `kvlab load` and `kind: latency-sweep` with `engine: kvlab` use it.
 *
 * @module
 */

import {
  argvToCommand,
  type CollectedRun,
  type CollectOptions,
  collectRun,
  type Measurement,
  snapshotAfter,
  snapshotBefore,
  stepFaults,
  stepStatus,
  stopCause,
  type StoredRun,
} from "../collector.ts";
import type { ArrivalMode } from "./schedule.ts";
import {
  type EngineName,
  type LoadgenEngine,
  type OpenLoopOptions,
  type OpenLoopResult,
  runOpenLoop,
} from "./open_loop.ts";
import { type OpenLoopRows, openLoopRows } from "./rows.ts";
import type { SleepCost } from "../../system/timer.ts";
import { redactText } from "../../text/redact.ts";
import { KVLAB_VERSION } from "../../version.ts";
import type { ServerTarget } from "../target.ts";
import { clientRoom } from "../server.ts";
import { roomProblem } from "../limits.ts";
import { parseCpusAllowed } from "../noise.ts";
import { readSystemFiles } from "../../system/proc.ts";
import { type NodeCrossCheck, stepTopology } from "./cluster/topology.ts";

/** One open-loop step to run. */
export interface OpenLoopCall {
  /** A `redis://` TCP server (TLS, unix sockets, ACL users and db > 0 are not supported). */
  target: ServerTarget;
  /** Requested total rate, requests per second. */
  requestedOpsPerSec: number;
  /** Connections (over all threads). */
  connections: number;
  /** Measured seconds. */
  durationS: number;
  /** Seconds of load before them, left out of every figure. @default {0} */
  warmupS?: number;
  /** SET:GET. @default {"0:1"} (GET only) */
  ratio?: string;
  /** @default {256} */
  valueSize?: number;
  /** @default {1000} */
  keys?: number;
  /** @default {1} */
  pipeline?: number;
  /** @default {"uniform"} */
  arrival?: ArrivalMode;
  /** Worker threads sharing the connections. @default {1} */
  threads?: number;
  /** The engine (`auto`: the epoll engine by FFI where it can run). @default {"auto"} */
  engine?: LoadgenEngine;
}

/** Options of {@link runOpenLoopStep}. */
export interface OpenLoopRunOptions extends CollectOptions {
  /**
   * Ctrl-C / SIGTERM / SIGHUP: before the step, it is not started (a failed run); during it,
   * the step ends now and what ran is stored as an `incomplete` run.
   */
  signal?: AbortSignal;
  /** What ran unrecorded just before (`preload`): a stop signal during it is named with it. */
  after?: string;
  /** Why the step must not start (its key space was not written): stored failed with it. */
  notRun?: string;
}

/** A stored step: the run and its rates (null when nothing was measured). */
export interface CollectedStep extends CollectedRun {
  requestedOpsPerSec: number;
  achievedOpsPerSec: number | null;
  /** The engine that ran (null when none did). */
  engine: EngineName | null;
  /** Why the epoll engine did not run, when it did not. */
  engineNote: string | null;
  /** What a timed sleep cost on this machine before the step (`OpenLoopResult.timer`). */
  timer: SleepCost | null;
  /** The Worker threads that ran (null when none did). */
  threads: number | null;
  /** Why fewer threads ran than were asked for (see {@link stepThreads}), or null. */
  threadsNote: string | null;
  /** Cluster redirections followed (null when none ran). */
  redirects: { moved: number; asked: number } | null;
  /** What kvlab found of the topology (cluster mode detected). */
  notes: string[];
  /** A cluster's per-node command counts and their cross-check with the generator's total. */
  nodes: NodeCrossCheck | null;
}

/**
 * What {@link runOpenLoop} is given for a call: its target's address and password and the step's
 * parameters, by runOpenLoop's names (one mapping for `kvlab load`, plans and agents).
 *
 * @param c The call.
 * @returns runOpenLoop's options, without a signal or topology.
 *
 * @example
 * ```ts
 * import { openLoopRunOptions } from "./step.ts";
 * import { parseServerUrl } from "../target.ts";
 * import assert from "node:assert/strict";
 * const o = openLoopRunOptions({ target: parseServerUrl("redis://127.0.0.1:7000"),
 *   requestedOpsPerSec: 500, connections: 4, durationS: 2, threads: 2 });
 * assert.deepEqual([o.hostname, o.port, o.requestedOpsPerSec, o.workers], ["127.0.0.1", 7000, 500, 2]);
 * ```
 */
export function openLoopRunOptions(c: OpenLoopCall): OpenLoopOptions {
  return {
    hostname: c.target.host,
    port: c.target.port,
    password: c.target.password,
    requestedOpsPerSec: c.requestedOpsPerSec,
    connections: c.connections,
    durationS: c.durationS,
    warmupS: c.warmupS,
    ratio: c.ratio,
    valueSize: c.valueSize,
    keys: c.keys,
    pipeline: c.pipeline,
    arrival: c.arrival,
    workers: c.threads,
    engine: c.engine,
  };
}

/**
 * The `kvlab load` command line of a step (the run's stored `command`), credentials redacted.
 *
 * @param c The step.
 * @returns The command.
 *
 * @example
 * ```ts
 * import { openLoopCommand, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   openLoopCommand({ target: parseServerUrl("redis://:pw@127.0.0.1:7000"), requestedOpsPerSec: 5000,
 *     connections: 48, durationS: 20, ratio: "1:10" }),
 *   "kvlab load --url redis://:***@127.0.0.1:7000 --rate 5000 --connections 48 --duration 20 " +
 *     "--warmup 0 --ratio 1:10 --data-size 256 --keys 1000 --pipeline 1 --arrivals uniform --threads 1",
 * );
 * ```
 */
export function openLoopCommand(c: OpenLoopCall): string {
  return argvToCommand(openLoopArgv(c));
}

/**
 * The `kvlab load` argv of a step, credentials redacted (the engine runs inside kvlab: this is
 * what a user types to run the same step).
 *
 * @param c The step.
 * @returns The program and its arguments.
 *
 * @example
 * ```ts
 * import { openLoopArgv, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const argv = openLoopArgv({ target: parseServerUrl("redis://h:1"), requestedOpsPerSec: 10,
 *   connections: 1, durationS: 1, engine: "deno" });
 * assert.deepEqual(argv.slice(0, 4), ["kvlab", "load", "--url", "redis://h:1"]);
 * assert.deepEqual(argv.slice(-2), ["--engine", "deno"]);
 * ```
 */
export function openLoopArgv(c: OpenLoopCall): string[] {
  return [
    "kvlab",
    "load",
    "--url",
    c.target.display,
    ...[
      ["--rate", c.requestedOpsPerSec],
      ["--connections", c.connections],
      ["--duration", c.durationS],
      ["--warmup", c.warmupS ?? 0],
      ["--ratio", c.ratio ?? "0:1"],
      ["--data-size", c.valueSize ?? 256],
      ["--keys", c.keys ?? 1000],
      ["--pipeline", c.pipeline ?? 1],
      ["--arrivals", c.arrival ?? "uniform"],
      ["--threads", c.threads ?? 1],
      ...(c.engine && c.engine !== "auto" ? [["--engine", c.engine]] : []),
    ].flatMap(([k, v]) => [String(k), String(v)]),
  ];
}

/**
 * The Worker threads a step runs: those asked for, at most one per connection and one per CPU
 * kvlab may use (issue 30: 256 threads for 256 connections took 4.3 GB on 2 CPUs; 128 threads
 * for one connection said "128 threads" and ran one), and the words saying so when capped.
 *
 * @param c The step (its `threads` and `connections`).
 * @param cpus The CPUs kvlab may use. @default {this process's `Cpus_allowed_list`}
 * @returns The threads used, and the note when fewer than asked.
 *
 * @example
 * ```ts
 * import { stepThreads } from "./step.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(stepThreads({ threads: 2, connections: 8 }, 4), { used: 2, note: null });
 * assert.deepEqual(stepThreads({ threads: 128, connections: 1 }, 4), {
 *   used: 1,
 *   note: "128 threads asked, 1 used (at most one per connection: 1, and per CPU kvlab may use: 4)",
 * });
 * ```
 */
export function stepThreads(
  c: Pick<OpenLoopCall, "threads" | "connections">,
  cpus: number = usableCpus(),
): { used: number; note: string | null } {
  const asked = c.threads ?? 1;
  const used = Math.max(1, Math.min(asked, c.connections, cpus));
  return {
    used,
    note: used === asked ? null : `${asked} threads asked, ${used} used (at most one per ` +
      `connection: ${c.connections}, and per CPU kvlab may use: ${cpus})`,
  };
}

/** The CPUs this process may run on (its affinity), else the machine's. */
function usableCpus(): number {
  const status = `/proc/${Deno.pid}/status`;
  const text = readSystemFiles([status])[status];
  return (text && parseCpusAllowed(text)?.length) || navigator.hardwareConcurrency || 1;
}

/** Why the generator cannot drive a target, or null when it can. */
function unsupported(t: ServerTarget): string | null {
  if (t.socket !== undefined) return "the open-loop generator speaks TCP only (no unix sockets)";
  if (t.tlsFiles?.insecure) {
    return "the open-loop generator checks the server's certificate (tls: { insecure } is for " +
      "the external tools): give the server's CA with tls: { ca_file }";
  }
  if (t.user) return "the open-loop generator authenticates with a password only (no ACL user)";
  if (t.db) return "the open-loop generator uses db 0 only";
  return null;
}

/** What a step gave, before it is stored. */
interface Measured extends Measurement {
  result?: OpenLoopResult;
  rows?: OpenLoopRows;
  reason: string | null;
  /** What kvlab found of the server's topology (cluster mode detected). */
  notes?: string[];
  /** A cluster's per-node command counts and their cross-check. */
  nodes?: NodeCrossCheck | null;
}

async function measure(
  c: OpenLoopCall,
  o: OpenLoopRunOptions,
  { runId, threads }: { runId: string; threads: number },
): Promise<Measured> {
  const why = unsupported(c.target);
  if (why) return { reason: why };
  const before = await snapshotBefore(c.target);
  if ("reason" in before) return before;
  // more connections than the server has room for: the step would measure refusals (issue 21)
  const room = clientRoom(before);
  if (room !== null && c.connections > room.room) {
    return {
      before,
      reason: roomProblem("--connections", c.connections, { room, server: c.target.display }),
    };
  }
  if (o.notRun) return { before, reason: o.notRun };
  if (o.signal?.aborted) {
    const during = o.after ? ` (during its ${o.after})` : "";
    return {
      before,
      reason: `interrupted (${stopCause(o.signal)}) before the step started${during}`,
    };
  }
  const topology = await stepTopology(c.target, before.info);
  if ("reason" in topology) return { before, reason: topology.reason };
  const warmupS = c.warmupS ?? 0;
  const startedAt = new Date(Date.now() + warmupS * 1000);
  let result: OpenLoopResult;
  try {
    result = await runOpenLoop({
      ...topology.options,
      ...openLoopRunOptions(c),
      warmupS,
      workers: threads,
      signal: o.signal,
    });
  } catch (e) {
    if (e instanceof RangeError || e instanceof TypeError) throw e;
    const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return { before, reason: redactText(text) };
  }
  const after = await snapshotAfter(c.target);
  // every GET and SET the servers executed: warm-up and measured, answered without error
  const nodes = await topology.after(result.perSecond.reduce((n, s) => n + s.completed, 0));
  const rows = openLoopRows(result, runId, {
    ratio: c.ratio,
    valueSize: c.valueSize ?? 256,
    keys: c.keys ?? 1000,
    startedAt,
  });
  return { before, after, result, rows, reason: null, notes: topology.notes, nodes };
}

/** The generator's summary as the raw file of the run (histograms left out: they are rows). */
function rawSummary(r: OpenLoopResult): Uint8Array {
  const {
    latencyFromIntended: _a,
    latencyFromSend: _b,
    sendLateness: _c,
    sendQueue: _d,
    sendDelay: _e,
    commands,
    ...rest
  } = r;
  const types = commands.map((c) => ({
    test: c.test,
    sent: c.sent,
    completed: c.completed,
    errors: c.errors,
  }));
  return new TextEncoder().encode(JSON.stringify({ ...rest, commands: types }, null, 2) + "\n");
}

/**
 * Runs one open-loop step and stores it as a run (complete, or failed with a reason). Does not
 * throw for a server that is down or a generator that cannot connect: those become a stored
 * run with a reason. Throws for bad options ({@link RangeError}, {@link TypeError}) or a
 * dataset that cannot be written.
 *
 * @param call The step: server, rate, connections, duration, workload.
 * @param options Dataset, labels, plan reference.
 * @returns The stored run, with the requested and achieved rates.
 */
export async function runOpenLoopStep(
  call: OpenLoopCall,
  options: OpenLoopRunOptions,
): Promise<CollectedStep> {
  const threads = stepThreads(call);
  const { measured: m, ...run } = await collectRun(options, {
    target: call.target,
    command: openLoopCommand(call),
    measure: (writer) => measure(call, options, { runId: writer.runId, threads: threads.used }),
    store: (m) => stored(m, options, { server: call.target.display, threads }),
  });
  return {
    ...run,
    requestedOpsPerSec: call.requestedOpsPerSec,
    achievedOpsPerSec: m.result?.achievedOpsPerSec ?? null,
    engine: m.result?.engine ?? null,
    engineNote: m.result?.engineNote ?? null,
    timer: m.result?.timer ?? null,
    threads: m.result?.workers ?? null,
    threadsNote: m.result ? threads.note : null,
    redirects: m.result ? { moved: m.result.moved, asked: m.result.asked } : null,
    notes: m.notes ?? [],
    nodes: m.nodes ?? null,
  };
}

/** How a measured step is stored: complete, or failed with its reason. */
function stored(
  m: Measured,
  options: OpenLoopRunOptions,
  { server, threads }: { server: string; threads: { note: string | null } },
): StoredRun {
  const r = m.result;
  // connections lost are a run error: nothing answered is a failed step, some lost an
  // incomplete one, and the reason says how many (issue 21)
  // (the server named with what it did: `RespProtocolError: … (found byte 37)`)
  // (and a step whose every reply was an error measured no server latency: it failed)
  const lost = r
    ? stepFaults(r, server) ??
      (r.completed === 0 && r.errors > 0
        ? `every reply was an error (${server}: ${redactText(r.errorSamples.join("; "))})`
        : null)
    : null;
  const status = stepStatus(
    r && { done: r.completed, broken: lost, interrupted: r.interrupted },
  );
  const stopped = r?.interrupted
    ? `interrupted (${stopCause(options.signal)}) after ${r.durationS.toFixed(1)} s of the ` +
      "step; partial step kept"
    : null;
  return {
    status,
    reason: m.reason ?? ([stopped, lost].filter((x) => x).join("; ") || null),
    tests: m.rows?.results.length ?? 0,
    interrupted: (r?.interrupted || options.signal?.aborted) ?? false,
    columns: {
      tool: "kvlab-loadgen",
      tool_version: KVLAB_VERSION,
      output_format: r ? "kvlab" : "none",
      tool_exit_code: null,
    },
    tables: {
      results: m.rows?.results ?? [],
      time_series: m.rows?.time_series ?? [],
      hdr_histograms: m.rows?.hdr_histograms ?? [],
    },
    raw: r ? [{ name: "loadgen.json", bytes: rawSummary(r) }] : [],
    manifest: {
      step: r
        ? {
          requested_ops_per_sec: r.requestedOpsPerSec,
          achieved_ops_per_sec: r.achievedOpsPerSec,
          engine: r.engine,
          threads: r.workers,
          moved: r.moved,
          asked: r.asked,
        }
        : null,
      cluster_nodes: m.nodes ?? null,
      warnings: [
        ...(r?.engine === "deno" && r.engineNote !== "asked for"
          ? [`loadgen engine deno (the epoll engine cannot run: ${r.engineNote})`]
          : []),
        ...(r && threads.note ? [threads.note] : []),
        ...m.notes ?? [],
        ...(m.nodes?.warning ? [m.nodes.warning] : []),
        ...r?.errorSamples.map((e) => `error: ${redactText(e)}`) ?? [],
      ],
    },
  };
}
