/**
 * The workload words every tool and engine shares: a SET:GET ratio written as memtier's
 * `--ratio` takes it, read the same way by plan kinds, kvlab's generator and its rows.
 *
 * @module
 */

/** A SET:GET mix, e.g. `{ set: 1, get: 10 }`; GET-only is `{ set: 0, get: 1 }`. */
export interface RatioMix {
  set: number;
  get: number;
}

/**
 * Reads a SET:GET ratio written like memtier's `--ratio` (`1:10`; `0:1` is GET only).
 *
 * @param text `S:G` with non-negative integers, not both 0.
 * @returns The mix.
 * @throws {RangeError} On anything else.
 *
 * @example
 * ```ts
 * import { parseRatio } from "./workload.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseRatio("1:10"), { set: 1, get: 10 });
 * assert.throws(() => parseRatio("0:0"), RangeError);
 * ```
 */
export function parseRatio(text: string): RatioMix {
  const m = /^(\d+):(\d+)$/.exec(text.trim());
  const set = m ? Number(m[1]) : NaN;
  const get = m ? Number(m[2]) : NaN;
  if (!m || set + get === 0) {
    throw new RangeError(`invalid SET:GET ratio: ${JSON.stringify(text)} (expected e.g. 1:10)`);
  }
  return { set, get };
}
