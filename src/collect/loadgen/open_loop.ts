/**
 * kvlab's open-loop load generator: raw RESP over Deno TCP, requests sent at intended times
 * with connection phases spread (no synchronized bursts), latency measured from the intended
 * send time (wrk2's coordinated-omission correction) and from the actual send, both in HDR
 * histograms, plus the generator's own send lateness and CPU time so a saturated client is
 * never mistaken for a slow server. Optionally spread over Workers.
 *
 * @module
 */

import process from "node:process";
import type { ArrivalMode, RatioMix } from "./schedule.ts";
import { connectionIntervalMs, parseRatio, shareOf } from "./schedule.ts";
import { type Histogram, type LatencySummary, latencySummary } from "./histogram.ts";
import { type SecondBucket, secondSeries } from "./series.ts";
import type { OpenLoopCounts, ShardOptions, ShardOutcome } from "./_shard.ts";

export type { OpenLoopCounts, ShardOptions };
import { commandOutcomes, mergeOutcomes, runInWorkers } from "./_transfer.ts";
import type { CommandOutcome, EngineName } from "./_outcome.ts";
import { type SleepCost, timedSleepCost } from "../../system/timer.ts";
import { connectMainShard, stepEngine, type TopologyOptions } from "./cluster/engine.ts";
import * as failover from "./cluster/engine.ts";

/** Which engine drives the connections: `ffi` (an epoll loop over libc in each Worker),
 * `deno` (Deno's TCP and a timer thread), or `auto` (`ffi` where it can run). */
export type LoadgenEngine = "auto" | EngineName;
export type { CommandOutcome, EngineName };

/** Options of {@link runOpenLoop}. */
export interface OpenLoopOptions extends TopologyOptions {
  /** @default {"127.0.0.1"} */
  hostname?: string;
  /** Server port. */
  port: number;
  /** Sent with AUTH on every connection (not on the hot path). */
  password?: string;
  /** Requested total rate over all connections, requests per second. */
  requestedOpsPerSec: number;
  /** Number of connections. */
  connections: number;
  /** Length of the measured sending window in seconds (after the warm-up). */
  durationS: number;
  /**
   * Seconds of load before the measured window, at the same rate: their requests are sent but
   * left out of every count, histogram and rate (the per-second series keeps them).
   * @default {0}
   */
  warmupS?: number;
  /** Most requests sent in total; a safety bound that normal runs never reach.
   * @default {2 × rate × duration + connections} */
  maxRequests?: number;
  /** How long to wait for outstanding replies after the window, in seconds. @default {2} */
  drainS?: number;
  /** Hard deadline for the whole call, in seconds; past it the call rejects with
   * `Deno.errors.TimedOut`. @default {durationS + drainS + 30} */
  timeoutS?: number;
  /** Arrival process of each connection. @default {"uniform"} */
  arrival?: ArrivalMode;
  /** SET:GET mix, `"1:10"` or `{ set, get }`. @default {"0:1"} (GET only) */
  ratio?: string | RatioMix;
  /** Value size of SETs in bytes. @default {256} */
  valueSize?: number;
  /** Key space: keys `keyPrefix + 0 … keys − 1`, chosen uniformly. @default {1000} */
  keys?: number;
  /** @default {"key:"} */
  keyPrefix?: string;
  /** Requests in flight per connection. @default {1} */
  pipeline?: number;
  /** Worker threads sharing the connections, each with its own loop (engine `deno` with 1:
   * run on the calling thread; engine `ffi` always runs in Workers). @default {1} */
  workers?: number;
  /**
   * `ffi`: each Worker runs a blocking epoll loop over libc by Deno FFI (Linux ≥ 5.11,
   * `--allow-ffi`, an IPv4 host); `deno`: Deno's TCP and a timer thread; `auto`: `ffi` where it
   * can run, else `deno` (the result says which ran, and why not `ffi`).
   * @default {"auto"}
   */
  engine?: LoadgenEngine;
  /** Seed of the key choice and of Poisson arrivals. @default {1} */
  seed?: number;
  /**
   * Engine `deno`: pacing precision against client CPU: the pacer sleeps (on a timer thread, in
   * `Atomics.wait`) until this many milliseconds before a send is due, then polls through
   * `setImmediate`. 0 never polls (send lateness ≈ the timer thread's wake-up, about 0.1 ms,
   * least CPU); 1 polls whenever sends are less than 1 ms apart (a busy core at ≥ 1,000/s).
   * @default {0.1}
   */
  spinMs?: number;
  /**
   * Engine `ffi`: precision against client CPU: 0 wakes at each due send; Q > 0 wakes on a
   * Q-ms grid and sends everything due then (fewer wake-ups at high rates, timer lateness up to
   * Q; memtier's libevent timers have a 1 ms grid).
   * @default {0}
   */
  quantumMs?: number;
  /**
   * Engine `ffi`: time replies by the kernel's receive timestamp (SO_TIMESTAMPNS), so a reply
   * may wait for the next due send's wake-up and still be timed when it arrived. `false` (or a
   * kernel that gives none) times replies when read, and wakes for every reply.
   * @default {true}
   */
  kernelTimestamps?: boolean;
  /** @default {5000} */
  connectTimeoutMs?: number;
  /**
   * Ends the sending window early (Ctrl-C, SIGTERM): replies outstanding are drained, the
   * result says `interrupted` and its rates cover the part of the window that ran.
   */
  signal?: AbortSignal;
  /** Only connections `i % of === index` (one host of several, issue 35; `shareOf`). */
  share?: { index: number; of: number };
  /** Epoch ms (this clock) the schedule starts at, if later than ready (a common start). */
  startAtEpochMs?: number;
}

/** What {@link runOpenLoop} measured. Latencies in histograms are integer nanoseconds. */
export interface OpenLoopResult extends OpenLoopCounts, failover.FailoverResult {
  requestedOpsPerSec: number;
  /** Successful replies received in the measured window divided by its length. */
  achievedOpsPerSec: number;
  /** Requests written divided by the window length. */
  sentOpsPerSec: number;
  /** The measured window, seconds. */
  durationS: number;
  /** The warm-up before it, seconds (second 0 of `perSecond` is the warm-up's first). */
  warmupS: number;
  connections: number;
  workers: number;
  /** The engine that ran. */
  engine: EngineName;
  /** Why `ffi` did not run (or `asked for` when `deno` was asked for); null when it ran. */
  engineNote: string | null;
  pipeline: number;
  arrival: ArrivalMode;
  /** Latency from the intended send time (coordinated omission corrected), ns. */
  latencyFromIntended: Histogram;
  /** Latency from the actual send, ns. */
  latencyFromSend: Histogram;
  /** The generator's own lateness (the timer part of the send delay): actual send −
   * max(intended time, time the connection was free), ns. High values mean the client, not the
   * server, is saturated. */
  sendLateness: Histogram;
  /** The queue part of the send delay: max(0, time the connection was free − intended time),
   * ns: requests waiting behind a connection busy with an earlier request (pipeline full). */
  sendQueue: Histogram;
  /** The whole delay from the intended to the actual send (queue + lateness), ns. */
  sendDelay: Histogram;
  fromIntended: LatencySummary;
  fromSend: LatencySummary;
  lateness: LatencySummary;
  queue: LatencySummary;
  delay: LatencySummary;
  perSecond: SecondBucket[];
  /** The command types sent, SET first (as memtier lists them); each with its own counts. */
  commands: CommandOutcome[];
  /** CPU time of this process (all threads) from the start of the schedule to the end of the
   * drain, seconds. */
  clientCpuS: number;
  /** Seconds the generator's sending threads waited for a CPU over the same span (runnable but
   * not running: another process had it); null where Linux's schedstat is not readable. */
  clientRunQueueS: number | null;
  /** Replies timed by the kernel's receive timestamp (engine `ffi`, where the kernel gives
   * one); the others were timed when read. */
  stampedReplies: number;
  /** CPU time spent before that: connecting, starting Workers and the timer thread. */
  setupCpuS: number;
  /** What a timed sleep cost on this machine just before the step (engine `ffi`: 0.1–0.5 s of
   * due times as far apart as the engine's, the gap between one Worker's sends or the
   * `quantumMs` grid, within 20 µs–20 ms; not counted in the step's CPU or wall time): the
   * step's send lateness p99 is not expected below its `scheduleLatenessP99Us`. Null for engine
   * `deno`, or where it cannot be measured. */
  timer: SleepCost | null;
  /** Requests completed per client CPU-second. */
  requestsPerCpuS: number;
  /** Client CPU per request sent, µs (null when none was sent). */
  clientCpuUsPerRequest: number | null;
  /** Wall time of the call, seconds (connecting included). */
  wallS: number;
  /** The `signal` ended the window early: `durationS` is the part that ran. */
  interrupted: boolean;
  /** When the schedule started, epoch ms of this machine's clock (null when it never did). */
  startEpochMs?: number | null;
}

function atLeastZero(name: string, v: number): number {
  if (!(v >= 0) || !Number.isFinite(v)) throw new RangeError(`${name} must be a number ≥ 0: ${v}`);
  return v;
}

function positive(name: string, v: number, integer: boolean): number {
  if (!(v > 0) || !Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw new RangeError(`${name} must be a positive ${integer ? "integer" : "number"}: ${v}`);
  }
  return v;
}

/**
 * Checks options and fills defaults: the shard options of the whole run (all connections).
 *
 * @param o Options.
 * @returns Shard options covering every connection.
 * @throws {RangeError} On a non-positive rate, duration, connection count, …
 *
 * @example
 * ```ts
 * import { openLoopPlan } from "./open_loop.ts";
 * import assert from "node:assert/strict";
 * const p = openLoopPlan({ port: 6379, requestedOpsPerSec: 1000, connections: 10, durationS: 2 });
 * assert.equal(p.maxRequests, 4010);
 * assert.deepEqual(p.mix, { set: 0, get: 1 });
 * assert.throws(() => openLoopPlan({ port: 1, requestedOpsPerSec: 0, connections: 1, durationS: 1 }),
 *   RangeError);
 * assert.equal(p.quantumMs, 0);
 * assert.throws(() => openLoopPlan({ port: 1, requestedOpsPerSec: 1, connections: 1, durationS: 1,
 *   quantumMs: -1 }), RangeError);
 * ```
 */
export function openLoopPlan(o: OpenLoopOptions): ShardOptions {
  const connections = positive("connections", o.connections, true);
  const rate = positive("requestedOpsPerSec", o.requestedOpsPerSec, false);
  const durationS = positive("durationS", o.durationS, false);
  const warmupS = o.warmupS ?? 0;
  if (!(warmupS >= 0) || !Number.isFinite(warmupS)) {
    throw new RangeError(`warmupS must be a number ≥ 0: ${warmupS}`);
  }
  connectionIntervalMs(rate, connections);
  const ratio = o.ratio ?? "0:1";
  const arrival = o.arrival ?? "uniform";
  if (arrival !== "uniform" && arrival !== "poisson") {
    throw new TypeError(`invalid arrival mode: ${arrival}`);
  }
  return {
    hostname: o.hostname ?? "127.0.0.1",
    port: o.port,
    password: o.password,
    ...(o.tls ? { tls: o.tls } : {}),
    ...failover.clusterOptions(o),
    indices: Array.from({ length: connections }, (_, i) => i),
    connections,
    requestedOpsPerSec: rate,
    durationMs: (warmupS + durationS) * 1000,
    warmupMs: warmupS * 1000,
    drainMs: (o.drainS ?? 2) * 1000,
    maxRequests: positive(
      "maxRequests",
      o.maxRequests ?? Math.ceil(2 * rate * (warmupS + durationS)) + connections,
      true,
    ),
    arrival,
    mix: typeof ratio === "string" ? parseRatio(ratio) : ratio,
    valueSize: positive("valueSize", o.valueSize ?? 256, true),
    keys: positive("keys", o.keys ?? 1000, true),
    keyPrefix: o.keyPrefix ?? "key:",
    pipeline: positive("pipeline", o.pipeline ?? 1, true),
    seed: o.seed ?? 1,
    spinMs: o.spinMs ?? 0.1,
    quantumMs: atLeastZero("quantumMs", o.quantumMs ?? 0),
    kernelTimestamps: o.kernelTimestamps ?? true,
    connectTimeoutMs: o.connectTimeoutMs ?? 5000,
  };
}

/**
 * Splits the run over `workers` shards: connections round-robin (so each shard's phases stay
 * spread over the whole interval), the request budget in proportion.
 *
 * @param plan The whole run ({@link openLoopPlan}).
 * @param workers Number of shards wanted (at most one per connection).
 * @returns One shard options object per worker.
 *
 * @example
 * ```ts
 * import { openLoopPlan, splitPlan } from "./open_loop.ts";
 * import assert from "node:assert/strict";
 * const p = openLoopPlan({ port: 1, requestedOpsPerSec: 100, connections: 5, durationS: 1 });
 * const s = splitPlan(p, 2);
 * assert.deepEqual(s.map((x) => x.indices), [[0, 2, 4], [1, 3]]);
 * assert.equal(s[0].maxRequests + s[1].maxRequests, p.maxRequests);
 * ```
 */
export function splitPlan(plan: ShardOptions, workers: number): ShardOptions[] {
  const w = Math.min(positive("workers", workers, true), plan.indices.length);
  const shards = Array.from({ length: w }, (_, k) => {
    const indices = plan.indices.filter((_, i) => i % w === k);
    return { ...plan, indices };
  });
  let left = plan.maxRequests;
  shards.forEach((s, k) => {
    s.maxRequests = k === w - 1
      ? left
      : Math.floor((plan.maxRequests * s.indices.length) / plan.indices.length);
    left -= s.maxRequests;
  });
  return shards;
}

const epochNow = () => performance.timeOrigin + performance.now();

function withDeadline<T>(p: Promise<T>, ms: number, onTimeout: () => Promise<void>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let late: Error | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      late = new Deno.errors.TimedOut(`open-loop run exceeded its ${ms / 1000} s deadline`);
      onTimeout().finally(() => reject(late));
    }, ms);
  });
  // a run that winds down after the deadline (the epoll loops close their sockets) still fails
  const settled = p.then((v) => {
    if (late) throw late;
    return v;
  }, (e) => {
    throw late ?? e;
  });
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The machine's own timer, the floor under the `ffi` engine's lateness: a schedule of due times
 * as far apart as the engine's sends (the gap between one Worker's sends, or the wake-up grid;
 * 20 µs–20 ms), 150 gaps long clamped to 0.1–0.5 s (blocking this thread).
 */
function machineTimer(plan: ShardOptions, workers: number): SleepCost | null {
  const gapUs = Math.min(
    20_000,
    Math.max(20, (1e6 * workers) / plan.requestedOpsPerSec, plan.quantumMs * 1000),
  );
  return timedSleepCost(gapUs, Math.min(0.5, Math.max(0.1, (150 * gapUs) / 1e6)));
}

/**
 * Runs one open-loop load step against a RESP server and measures it.
 *
 * Requests are scheduled at intended send times ({@link connectionSchedule}); with pipeline
 * depth 1 a late reply delays the next send on that connection, and the wait counts in the
 * latency from the intended time. Sending stops at `durationS`; requests due by then but
 * never sent are reported as `unsent`.
 *
 * @param options Target, rate, connections, duration, workload.
 * @returns Counts, histograms, summaries, per-second series, client CPU.
 * @throws {RangeError} On bad options.
 * @throws {Deno.errors.TimedOut} When the hard deadline passes.
 */
export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const plan = shareOf(openLoopPlan(options), options.share);
  const { engine, note: engineNote } = stepEngine(options.engine ?? "auto", plan);
  const shards = splitPlan(plan, plan.cluster ? 1 : options.workers ?? 1);
  const timer = engine === "ffi" ? machineTimer(plan, shards.length) : null;
  const deadlineMs = (options.timeoutS ?? plan.durationMs / 1000 + plan.drainMs / 1000 + 30) *
    1000;
  const cpu0 = process.cpuUsage();
  let cpu1 = cpu0;
  const started = () => (cpu1 = process.cpuUsage());
  const wall0 = performance.now();
  let stop = () => Promise.resolve();
  // Ctrl-C: each shard ends its window (an abort before the connections are up ends it at once)
  let interrupt = () => {};
  let startEpochMs: number | null = null;
  let abortEpochMs: number | null = null;
  const onAbort = () => {
    abortEpochMs ??= epochNow();
    interrupt();
  };
  const work = async (): Promise<ShardOutcome[]> => {
    if (shards.length > 1 || engine === "ffi") {
      return await runInWorkers(shards, engine, {
        register: (s, i) => {
          stop = s;
          interrupt = i;
        },
        started: () => {
          if (abortEpochMs !== null) interrupt(); // before the run message: ends it at once
          started();
          return (startEpochMs = failover.scheduleStart(options, 50));
        },
      });
    }
    const shard = await connectMainShard(shards[0]);
    stop = () => Promise.resolve(shard.close());
    interrupt = () => shard.interrupt();
    if (abortEpochMs !== null) shard.interrupt();
    started();
    startEpochMs = failover.scheduleStart(options, 20);
    return [await shard.run(startEpochMs)];
  };
  if (options.signal?.aborted) abortEpochMs = epochNow();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let outcomes: ShardOutcome[];
  try {
    outcomes = await withDeadline(work(), deadlineMs, () => stop());
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  const cpu = process.cpuUsage(cpu1);
  const m = mergeOutcomes(outcomes);
  const interrupted = abortEpochMs !== null;
  const windowS = windowSeconds(plan, startEpochMs, abortEpochMs);
  const clientCpuS = (cpu.user + cpu.system) / 1e6;
  return {
    requestedOpsPerSec: (plan.requestedOpsPerSec * plan.indices.length) / plan.connections,
    achievedOpsPerSec: m.windowCompleted / windowS,
    sentOpsPerSec: m.sent / windowS,
    durationS: windowS,
    warmupS: plan.warmupMs / 1000,
    connections: plan.indices.length,
    workers: shards.length,
    engine,
    engineNote,
    pipeline: plan.pipeline,
    arrival: plan.arrival,
    sent: m.sent,
    completed: m.completed,
    errors: m.errors,
    disconnects: m.disconnects,
    unsent: m.unsent,
    unanswered: m.unanswered,
    errorSamples: m.errorSamples,
    moved: m.moved,
    asked: m.asked,
    latencyFromIntended: m.fromIntended,
    latencyFromSend: m.fromSend,
    sendLateness: m.lateness,
    sendQueue: m.queue,
    sendDelay: m.delay,
    fromIntended: latencySummary(m.fromIntended),
    fromSend: latencySummary(m.fromSend),
    lateness: latencySummary(m.lateness),
    queue: latencySummary(m.queue),
    delay: latencySummary(m.delay),
    ...failover.intervalResult(m.intervalParts, secondSeries(m.seriesParts)),
    commands: commandOutcomes(m),
    clientCpuS,
    clientRunQueueS: m.runQueueS,
    stampedReplies: m.stampedReplies,
    setupCpuS: (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / 1e6,
    timer,
    requestsPerCpuS: clientCpuS > 0 ? m.completed / clientCpuS : 0,
    clientCpuUsPerRequest: m.sent > 0 ? (clientCpuS / m.sent) * 1e6 : null,
    wallS: (performance.now() - wall0) / 1000,
    interrupted,
    startEpochMs,
  };
}

/**
 * The measured window's length, seconds: the planned one, or the part that ran before an
 * interrupt (at least 1 ms, so that rates stay finite).
 */
function windowSeconds(
  plan: ShardOptions,
  startEpochMs: number | null,
  abortEpochMs: number | null,
): number {
  const full = (plan.durationMs - plan.warmupMs) / 1000;
  if (abortEpochMs === null) return full;
  const ran = startEpochMs === null ? 0 : (abortEpochMs - startEpochMs - plan.warmupMs) / 1000;
  return Math.min(full, Math.max(0.001, ran));
}
