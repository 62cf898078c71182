/**
 * Fills the generator's key space before a run: `SET keyPrefix<n> <value>` for every key, in
 * pipelined batches over a few connections, bounded in time.
 *
 * @module
 */

import { encodeSet } from "./resp.ts";
import { connectResp, type Endpoint, roundTrip } from "./wire.ts";

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
 * import { preloadBatches } from "./preload.ts";
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
