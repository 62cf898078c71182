/**
 * Small statistics used by the comparisons: medians, a seeded PRNG, and a bootstrap interval
 * for the ratio of two medians. Pure and deterministic.
 *
 * @module
 */

import { seededRandom } from "../random.ts";

/**
 * The median of numbers (mean of the two middle ones for an even count).
 *
 * @example
 * ```ts
 * import { median } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * assert.equal(median([3, 1, 2]), 2);
 * assert.equal(median([4, 1, 2, 3]), 2.5);
 * ```
 */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** A seeded generator in [0, 1) (mulberry32; see `src/random.ts`). */
export const prng: (seed: number) => () => number = seededRandom;

/**
 * Percentile bootstrap interval of `median(candidate) / median(baseline)`: both samples are
 * resampled with replacement, independently, `resamples` times. Deterministic for a seed.
 * Returns null when either sample has fewer than 2 values.
 *
 * @example
 * ```ts
 * import { bootstrapRatioCi } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * const ci = bootstrapRatioCi([100, 101, 99, 100, 100], [120, 121, 119, 120, 120])!;
 * assert.ok(ci[0] > 1.15 && ci[1] < 1.25);
 * assert.equal(bootstrapRatioCi([1], [2, 3]), null);
 * ```
 */
export function bootstrapRatioCi(
  baseline: readonly number[],
  candidate: readonly number[],
  confidence = 0.95,
  resamples = 4000,
  seed = 1,
): [number, number] | null {
  if (baseline.length < 2 || candidate.length < 2) return null;
  const rand = prng(seed);
  const draw = (xs: readonly number[], buf: number[]) => {
    for (let i = 0; i < xs.length; i++) buf[i] = xs[Math.floor(rand() * xs.length)];
    return median(buf);
  };
  const bb = new Array(baseline.length);
  const cb = new Array(candidate.length);
  const ratios = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) ratios[i] = draw(candidate, cb) / draw(baseline, bb);
  ratios.sort();
  const lo = (1 - confidence) / 2;
  const at = (q: number) =>
    ratios[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))];
  return [at(lo), at(1 - lo)];
}
