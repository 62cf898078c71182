/**
 * kvlab's open-loop generator as a {@link Tool}: an engine inside kvlab (nothing to find, kvlab's
 * version), its calls shown as the `kvlab load` command that runs the same step, each call one
 * stored run ({@link runOpenLoopStep}); and how it runs a latency sweep's fixed-rate steps (open
 * loop, latency from the intended send, warm-up inside the step, any rate), its key space
 * written first ({@link preloadKeys}: `SET key:<n> <value>` for every key, in pipelined batches
 * over a few connections, bounded in time).
 *
 * @module
 */

import { LIMITS } from "../limits.ts";
import { type FixedRateStep, prepareEngine, type Tool } from "../tools/tool.ts";
import { encodeSet } from "./resp.ts";
import { connectResp, type Endpoint, roundTrip } from "./wire.ts";
import {
  type CollectedStep,
  openLoopArgv,
  type OpenLoopCall,
  openLoopCommand,
  runOpenLoopStep,
} from "./step.ts";

/**
 * The open-loop call of a fixed-rate step.
 *
 * @param step The step.
 * @returns The call.
 *
 * @example
 * ```ts
 * import { openLoopStepCall, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const call = openLoopStepCall({
 *   target: parseServerUrl("redis://h:1"), requestedOpsPerSec: 500, threads: 2, clients: 5,
 *   durationS: 1.5, warmupS: 1, ratio: "1:10", dataSizeBytes: 64, keys: 10, pipeline: 1,
 *   arrivals: "poisson",
 * });
 * assert.deepEqual([call.connections, call.threads, call.arrival], [10, 2, "poisson"]);
 * ```
 */
export function openLoopStepCall(step: FixedRateStep): OpenLoopCall {
  return {
    target: step.target,
    requestedOpsPerSec: step.requestedOpsPerSec,
    connections: step.threads * step.clients,
    durationS: step.durationS,
    warmupS: step.warmupS,
    ratio: step.ratio,
    valueSize: step.dataSizeBytes,
    keys: step.keys,
    pipeline: step.pipeline,
    arrival: step.arrivals,
    threads: step.threads,
  };
}

/**
 * kvlab's open-loop generator (`kvlab load`, a latency sweep's `engine: kvlab`).
 *
 * @example
 * ```ts
 * import { kvlabLoadTool, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(kvlabLoadTool.external, false);
 * const call = { target: parseServerUrl("redis://h:1"), requestedOpsPerSec: 10, connections: 1, durationS: 1 };
 * assert.match(kvlabLoadTool.command(call), /^kvlab load --url redis:\/\/h:1 --rate 10 /);
 * ```
 */
export const kvlabLoadTool: Tool<OpenLoopCall, CollectedStep> = {
  name: "kvlab-loadgen",
  programs: ["kvlab"],
  external: false,
  formats: [],
  prepare: () => prepareEngine("kvlab"),
  argv: openLoopArgv,
  command: openLoopCommand,
  run: (call, ctx) =>
    runOpenLoopStep(call, {
      data: ctx.data,
      label: ctx.label,
      tags: ctx.tags,
      plan: ctx.plan,
      watch: ctx.watch,
      host: ctx.host,
      now: ctx.now,
      signal: ctx.signal,
    }),
  fixedRate: {
    engine: "kvlab",
    program: null,
    call: openLoopStepCall,
    // the engine warms up inside the step (its warm-up seconds are left out of every figure)
    warmup: () => null,
    preload: async (step) => {
      const t = step.target;
      await preloadKeys({
        hostname: t.host,
        port: t.port,
        password: t.password,
        keys: step.keys,
        valueSize: step.dataSizeBytes,
      }).catch(() => {/* the step reports problems */});
    },
    rate: (total) => total,
    limit: LIMITS.kvlabRate,
    wholeNumbers: false,
    poisson: true,
  },
};

/** Options of {@link preloadKeys}. */
export interface PreloadOptions extends Endpoint {
  /** Number of keys: `keyPrefix + 0 … keys − 1` (as the generator uses them). */
  keys: number;
  /** @default {256} */
  valueSize?: number;
  /** @default {"key:"} */
  keyPrefix?: string;
  /** SETs written per round trip. @default {1000} */
  batch?: number;
  /** Connections working in parallel. @default {4} */
  connections?: number;
  /** Hard limit; past it the call rejects with `Deno.errors.TimedOut`. @default {120000} */
  timeoutMs?: number;
}

/** What {@link preloadKeys} did. */
export interface PreloadResult {
  keys: number;
  /** Error replies (e.g. OOM). */
  errors: number;
  /** Text of the last error reply, or `""`. */
  lastError: string;
  elapsedMs: number;
}

/**
 * The batches of a preload: `[first, end)` key ranges of at most `batch` keys.
 *
 * @param keys Number of keys.
 * @param batch Keys per batch.
 * @returns Ranges covering `0 … keys − 1` in order.
 *
 * @example
 * ```ts
 * import { preloadBatches } from "./tool.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(preloadBatches(5, 2), [[0, 2], [2, 4], [4, 5]]);
 * ```
 */
export function preloadBatches(keys: number, batch: number): [number, number][] {
  if (!Number.isInteger(keys) || keys < 0) throw new RangeError(`keys must be ≥ 0: ${keys}`);
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batch must be ≥ 1: ${batch}`);
  const out: [number, number][] = [];
  for (let k = 0; k < keys; k += batch) out.push([k, Math.min(keys, k + batch)]);
  return out;
}

/**
 * Writes every key of the key space with pipelined SETs.
 *
 * @param options Server, key count, value size.
 * @returns Keys written, error replies, elapsed time.
 * @throws {Deno.errors.TimedOut} When `timeoutMs` passes first.
 */
export async function preloadKeys(options: PreloadOptions): Promise<PreloadResult> {
  const t0 = performance.now();
  const prefix = options.keyPrefix ?? "key:";
  const value = new Uint8Array(options.valueSize ?? 256).fill(120);
  const batches = preloadBatches(options.keys, options.batch ?? 1000);
  const timeoutMs = options.timeoutMs ?? 120_000;
  const conns = await Promise.all(
    Array.from(
      { length: Math.max(1, Math.min(options.connections ?? 4, batches.length)) },
      () => connectResp(options, Math.min(timeoutMs, 5000)),
    ),
  );
  let next = 0, errors = 0, lastError = "", timedOut = false;
  const worker = async (conn: Deno.Conn) => {
    while (next < batches.length && !timedOut) {
      const [from, to] = batches[next++];
      const parts: Uint8Array[] = [];
      for (let k = from; k < to; k++) parts.push(encodeSet(prefix + k, value));
      const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      parts.reduce((at, p) => (bytes.set(p, at), at + p.length), 0);
      const r = await roundTrip(conn, bytes, to - from);
      errors += r.errors;
      if (r.errors > 0) lastError = r.lastError;
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      Promise.all(conns.map(worker)),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(new Deno.errors.TimedOut(`preload exceeded ${timeoutMs} ms`));
        }, timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    for (const c of conns) c.close();
  }
  return { keys: options.keys, errors, lastError, elapsedMs: performance.now() - t0 };
}
