/**
 * kvlab's pub/sub delivery-latency engine: publishers send `PUBLISH` (or `SPUBLISH`) open loop
 * at intended times with their phases spread, subscribers read `message` pushes as they arrive,
 * and each delivery's latency is the receive time minus the intended publish time carried in
 * the payload (coordinated omission corrected: a publisher running late does not hide it).
 *
 * Clock: every publisher and subscriber of a run lives in one loop, so every stamp and every
 * receive time comes from one monotonic clock, as integer nanoseconds since the run's start.
 * Two engines: `ffi` (`_ffi_run.ts`), one blocking epoll loop over libc on a Worker, deliveries
 * timed by the kernel's receive stamps; `deno` (`_run.ts`), Deno's TCP on the calling thread,
 * timed by `performance.now()` when read. `auto` takes `ffi` where it can run.
 *
 * @module
 */

import process from "node:process";
import { connectionIntervalMs } from "../loadgen/schedule.ts";
import { checkTopology, PAYLOAD_HEADER_BYTES } from "./payload.ts";
import type { Endpoint } from "../loadgen/wire.ts";
import { PubSubRun } from "./_run.ts";
import { runFfiPubSub } from "./_ffi_host.ts";
import { chooseFfiEngine } from "../loadgen/libc.ts";
import type {
  PubSubChecked,
  PubSubEngine,
  PubSubEngineName,
  PubSubOptions,
  PubSubResult,
} from "./types.ts";

export * from "./types.ts";

/**
 * The default pacing quantum: the time the publishers take to send 100 messages at the
 * publish rate, kept within [0.25, 1] ms. A wake-up of the pump costs 0.1–0.25 ms of CPU on a
 * small VM (measured in issue 20), so many messages per wake-up keep that cost per message
 * small at high rates; at most 1 ms keeps the publishers' lateness (which the latency, counted
 * from the intended publish time, includes) near the latency it measures on loopback, at the
 * price of up to 1,000 wake-ups a second at low rates (`quantumMs` trades the other way).
 *
 * @param publishRatePerSec Messages published per second (all publishers).
 * @returns The quantum, ms.
 *
 * @example
 * ```ts
 * import { defaultQuantumMs } from "./engine.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual([1_000, 10_000, 200_000, 1e6].map(defaultQuantumMs), [1, 1, 0.5, 0.25]);
 * ```
 */
export function defaultQuantumMs(publishRatePerSec: number): number {
  return Math.min(1, Math.max(0.25, 100_000 / publishRatePerSec));
}

/**
 * Checks options and fills defaults.
 *
 * @param o Options.
 * @returns Options with every default filled.
 * @throws {RangeError} On a bad count, rate, duration, payload size or topology.
 *
 * @example
 * ```ts
 * import { pubSubPlan } from "./engine.ts";
 * import assert from "node:assert/strict";
 * const p = pubSubPlan({ port: 1, mode: "fan-out", publishers: 2, subscribers: 10,
 *   requestedOpsPerSec: 1000, durationS: 1 });
 * assert.deepEqual([p.channels, p.fanOut, p.payloadBytes, p.maxMessages], [1, 10, 128, 202]);
 * assert.throws(() => pubSubPlan({ ...p, payloadBytes: 8 }), /payloadBytes/);
 * ```
 */
export function pubSubPlan(o: PubSubOptions): PubSubChecked {
  const fanOut = o.fanOut ?? (o.mode === "fan-out" ? o.subscribers : 1);
  // every subscriber on exactly one channel unless told otherwise
  const channels = o.channels ?? Math.ceil(o.subscribers / fanOut);
  if (o.mode === "one-to-one" && fanOut !== 1) {
    throw new RangeError(`one-to-one means fan-out 1: ${fanOut}`);
  }
  checkTopology({ subscribers: o.subscribers, channels, fanOut });
  const pos = (k: string, v: number, min = Number.MIN_VALUE) => {
    if (!(v >= min) || !Number.isFinite(v)) throw new RangeError(`${k} must be ≥ ${min}: ${v}`);
    return v;
  };
  pos("publishers", o.publishers, 1);
  const graceS = pos("graceS", o.graceS ?? 2, 0);
  const rate = pos("requestedOpsPerSec", o.requestedOpsPerSec);
  const durationS = pos("durationS", o.durationS);
  connectionIntervalMs(rate / fanOut, o.publishers);
  return {
    ...o,
    channels,
    fanOut,
    payloadBytes: pos("payloadBytes", o.payloadBytes ?? 128, PAYLOAD_HEADER_BYTES),
    graceS,
    timeoutS: pos("timeoutS", o.timeoutS ?? durationS + graceS + 30),
    arrival: o.arrival ?? "uniform",
    channelPrefix: o.channelPrefix ?? "kvlab:ps:",
    maxMessages: o.maxMessages ?? Math.ceil(2 * (rate / fanOut) * durationS) + o.publishers,
    quantumMs: pos("quantumMs", o.quantumMs ?? defaultQuantumMs(rate / fanOut), 0),
    connectTimeoutMs: o.connectTimeoutMs ?? 5000,
    seed: o.seed ?? 1,
    readDelayMs: o.readDelayMs ?? 0,
    stallSubscribers: o.stallSubscribers ?? 0,
    stallAfterMs: o.stallAfterMs ?? 0,
    kernelTimestamps: o.kernelTimestamps ?? true,
    sealKey: o.sealKey ?? crypto.getRandomValues(new Uint32Array(1))[0],
  };
}

/**
 * The engine a step uses: `ffi` where it can run (and was not refused), else `deno`, with the
 * reason `ffi` was not used.
 *
 * @param wanted `auto`, `ffi` or `deno`.
 * @param endpoint Where the engine would connect.
 * @returns The engine and its note (null when `ffi` runs).
 * @throws {Deno.errors.NotSupported} When `ffi` is asked for and cannot run here.
 * @throws {TypeError} On another name.
 *
 * @example
 * ```ts
 * import { choosePubSubEngine } from "./engine.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(choosePubSubEngine("deno", { port: 6379 }), { engine: "deno", note: "asked for" });
 * assert.throws(() => choosePubSubEngine("ffi", { port: 6379, hostname: "example.com" }),
 *   /engine ffi: the host is not an IPv4 address/);
 * assert.throws(() => choosePubSubEngine("fast" as "auto", { port: 1 }), /invalid engine: fast/);
 * ```
 */
export function choosePubSubEngine(
  wanted: PubSubEngine,
  endpoint: Endpoint,
): { engine: PubSubEngineName; note: string | null } {
  return chooseFfiEngine(wanted, endpoint);
}

/**
 * The engine of a step against a Redis Cluster: `deno`, which connects to each master (the
 * epoll engine drives one server's connections).
 *
 * @param wanted `auto`, `ffi` or `deno`.
 * @returns The engine and its note.
 * @throws {Deno.errors.NotSupported} When `ffi` is asked for.
 *
 * @example
 * ```ts
 * import { clusterPubSubEngine } from "./engine.ts";
 * import assert from "node:assert/strict";
 * assert.equal(clusterPubSubEngine("auto").engine, "deno");
 * assert.match(clusterPubSubEngine("auto").note ?? "", /cluster/);
 * assert.throws(() => clusterPubSubEngine("ffi"), /engine ffi: a cluster/);
 * ```
 */
export function clusterPubSubEngine(
  wanted: PubSubEngine,
): { engine: PubSubEngineName; note: string | null } {
  const why = "a cluster (the epoll engine drives one server's connections, not one per master)";
  if (wanted === "ffi") throw new Deno.errors.NotSupported(`engine ffi: ${why}`);
  if (wanted !== "auto" && wanted !== "deno") throw new TypeError(`invalid engine: ${wanted}`);
  return { engine: "deno", note: wanted === "deno" ? "asked for" : why };
}

/**
 * Runs one pub/sub step: subscribes every subscriber, publishes open loop at the target
 * delivery rate for `durationS`, waits up to `graceS` for the last deliveries, closes. The
 * engine is `options.engine`'s ({@link choosePubSubEngine}).
 *
 * @param options Target, mode, counts, rate, duration.
 * @returns Counts, the latency histogram, per-second series, client CPU.
 * @throws {RangeError} On bad options.
 * @throws {Deno.errors.NotSupported} When engine `ffi` is asked for and cannot run here.
 * @throws {PubSubUnsupportedError} When the server refuses SSUBSCRIBE (sharded mode).
 * @throws {Deno.errors.TimedOut} When subscribing or the whole call passes its deadline.
 */
export async function runPubSub(options: PubSubOptions): Promise<PubSubResult> {
  const o = pubSubPlan(options);
  const wanted = options.engine ?? "auto";
  const { engine, note } = o.cluster ? clusterPubSubEngine(wanted) : choosePubSubEngine(wanted, o);
  if (engine === "ffi") return await runFfiPubSub(o, note);
  const wall0 = performance.now();
  const cpu0 = process.cpuUsage();
  const run = new PubSubRun(o);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.close();
      reject(new Deno.errors.TimedOut(`pub/sub step exceeded its ${o.timeoutS} s deadline`));
    }, o.timeoutS * 1000);
  });
  const abort = () => run.interrupt();
  o.signal?.addEventListener("abort", abort, { once: true });
  try {
    await Promise.race([run.connect(), deadline]);
    const cpu1 = process.cpuUsage();
    await Promise.race([run.run(), deadline]);
    const cpu = process.cpuUsage(cpu1);
    return {
      ...run.result(
        (cpu.user + cpu.system) / 1e6,
        (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / 1e6,
        (performance.now() - wall0) / 1000,
      ),
      engine: "deno",
      engineNote: note,
      stampedDeliveries: 0,
    };
  } finally {
    o.signal?.removeEventListener("abort", abort);
    clearTimeout(timer);
    run.close();
  }
}
