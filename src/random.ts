/**
 * A small seeded pseudo-random generator (mulberry32) for the arrival schedules of the load
 * generator (and the calibration tests' simulations), so both are reproducible for a seed.
 *
 * @module
 */

/**
 * A seeded generator of numbers in [0, 1): the same seed gives the same sequence.
 *
 * @example
 * ```ts
 * import { seededRandom } from "./random.ts";
 * import assert from "node:assert/strict";
 * const a = seededRandom(7), b = seededRandom(7);
 * assert.equal(a(), b());
 * assert.ok(a() < 1);
 * ```
 */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
