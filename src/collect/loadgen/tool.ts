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
import { redactSent } from "../../text/redact.ts";
import { type FixedRateStep, prepareEngine, type Tool } from "../tools/tool.ts";
import { encodeSet } from "./resp.ts";
import { connectResp, type Endpoint, roundTrip } from "./wire.ts";
import { stepTopology } from "./cluster/topology.ts";
import { keyNumbersByNode } from "../cluster/slots.ts";
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
      after: ctx.after,
      notRun: ctx.notRun,
    }),
  fixedRate: {
    engine: "kvlab",
    program: null,
    call: openLoopStepCall,
    // the engine warms up inside the step (its warm-up seconds are left out of every figure)
    warmup: () => null,
    preload: async (step, ctx) => {
      const t = step.target;
      try {
        // TLS files, and a cluster's slot map: each master is written the keys it serves
        const topology = await stepTopology(t, undefined);
        if ("reason" in topology) return `${t.display}: ${topology.reason}`;
        const map = topology.options.cluster;
        const parts = map
          ? keyNumbersByNode(map, step.keys, "key:").map((keyNumbers, i) => ({
            hostname: map.nodes[i].host,
            port: map.nodes[i].port,
            keyNumbers,
          }))
          : [{ hostname: t.host, port: t.port, keyNumbers: undefined }];
        const done = await Promise.all(parts.map((p) =>
          preloadKeys({
            ...p,
            password: t.password,
            tls: topology.options.tls,
            keys: step.keys,
            valueSize: step.dataSizeBytes,
            // the plan's limit, not a limit of its own (issue 30), and Ctrl-C at once
            timeoutMs: ctx.timeoutMs,
            signal: ctx.signal,
          })
        ));
        const errors = done.reduce((n, r) => n + r.errors, 0);
        if (errors === 0) return null;
        const last = done.findLast((r) => r.errors > 0)!.lastError;
        return `${errors} of ${step.keys} SETs answered with an error ` +
          `(${redactSent(last, t.password)})`;
      } catch (e) {
        const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        return `${t.display}: ${redactSent(text, t.password)}`;
      }
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
  /** Only these key numbers (a cluster master's share), else all of them. */
  keyNumbers?: readonly number[];
  /** @default {256} */
  valueSize?: number;
  /** @default {"key:"} */
  keyPrefix?: string;
  /** SETs written per round trip (fewer when their values pass 4 MiB). @default {1000} */
  batch?: number;
  /** Connections working in parallel. @default {4} */
  connections?: number;
  /** Hard limit (a plan's `timeout_s`); past it the call rejects with `Deno.errors.TimedOut`.
   * @default {120000} */
  timeoutMs?: number;
  /**
   * Longest wait for a batch's replies (a server that stopped answering), ms; past it the call
   * rejects with `Deno.errors.TimedOut`. At most `timeoutMs`. @default {10000}
   */
  idleMs?: number;
  /** Aborting (Ctrl-C) closes the connections and rejects with `Deno.errors.Interrupted`. */
  signal?: AbortSignal;
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

/** Bytes of values in one preload round trip, at most (a batch of 16 MiB values is one). */
const PRELOAD_BATCH_BYTES = 4 << 20;

/**
 * Writes every key of the key space with pipelined SETs, within `timeoutMs`, and no longer than
 * `idleMs` waiting for one batch's replies; Ctrl-C (`signal`) ends it at once.
 *
 * @param options Server, key count, value size, limits.
 * @returns Keys written, error replies, elapsed time.
 * @throws {Deno.errors.TimedOut} When `timeoutMs` passes first, or a batch waits `idleMs`.
 * @throws {Deno.errors.Interrupted} When `signal` aborts.
 */
export async function preloadKeys(options: PreloadOptions): Promise<PreloadResult> {
  const t0 = performance.now();
  const prefix = options.keyPrefix ?? "key:";
  const value = new Uint8Array(options.valueSize ?? 256).fill(120);
  const perBatch = Math.max(1, Math.min(options.batch ?? 1000, PRELOAD_BATCH_BYTES / value.length));
  const numbers = options.keyNumbers;
  const count = numbers?.length ?? options.keys;
  const batches = preloadBatches(count, Math.floor(perBatch));
  const timeoutMs = options.timeoutMs ?? 120_000;
  const idleMs = Math.min(options.idleMs ?? 10_000, timeoutMs);
  const conns: Deno.Conn[] = [];
  let next = 0, errors = 0, lastError = "", over = false;
  let failed: (e: Error) => void = () => {};
  const failure = new Promise<never>((_, reject) => (failed = reject));
  const closeAll = () => {
    for (const c of conns) {
      try {
        c.close(); // a pending read then fails: nothing waits on it
      } catch { /* closed */ }
    }
  };
  const end = (e: Error) => {
    over = true;
    failed(e);
    closeAll();
  };
  const onAbort = () => end(new Deno.errors.Interrupted("preload interrupted"));
  if (options.signal?.aborted) throw new Deno.errors.Interrupted("preload interrupted");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let written = 0;
  const timers = [
    setTimeout(() => {
      end(
        new Deno.errors.TimedOut(
          `preload exceeded its ${timeoutMs / 1000} s limit, ${written} of ${count} ` +
            "keys written",
        ),
      );
    }, timeoutMs),
  ];
  let batchTimer: ReturnType<typeof setTimeout> | undefined;
  const worker = async (conn: Deno.Conn) => {
    while (next < batches.length && !over) {
      const [from, to] = batches[next++];
      const parts: Uint8Array[] = [];
      for (let k = from; k < to; k++) parts.push(encodeSet(prefix + (numbers?.[k] ?? k), value));
      const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      parts.reduce((at, p) => (bytes.set(p, at), at + p.length), 0);
      clearTimeout(batchTimer);
      if (idleMs < timeoutMs) {
        batchTimer = setTimeout(() => {
          end(new Deno.errors.TimedOut(`no reply to ${to - from} SETs in ${idleMs / 1000} s`));
        }, idleMs);
      }
      const r = await roundTrip(conn, bytes, to - from);
      written += to - from;
      errors += r.errors;
      if (r.errors > 0) lastError = r.lastError;
    }
  };
  try {
    const n = Math.max(1, Math.min(options.connections ?? 4, batches.length));
    const opening = Array.from(
      { length: n },
      () =>
        connectResp(options, Math.min(timeoutMs, 5000)).then((c) => {
          if (over) c.close();
          else conns.push(c);
          return c;
        }),
    );
    const opened = Promise.all(opening);
    opened.catch(() => {}); // (the race below reports it, or the failure that ended it)
    await Promise.race([opened, failure]);
    const work = Promise.all(conns.map(worker));
    work.catch(() => {});
    await Promise.race([work, failure]);
  } finally {
    over = true;
    for (const t of [...timers, batchTimer]) clearTimeout(t);
    options.signal?.removeEventListener("abort", onAbort);
    closeAll();
  }
  return { keys: count, errors, lastError, elapsedMs: performance.now() - t0 };
}
