/**
 * Single-run outliers of a history: a run far from the other runs of its segment (the runs
 * between two change points). A change point is a lasting move of the level (E-divisive needs
 * at least 2 runs either side); a one-night dip of 50 % is not one, by design, and is found here
 * instead.
 *
 * The test, per run of a segment of n ≥ {@link MIN_SEGMENT_RUNS} runs: Student's t of the run
 * against the other n − 1 (their mean and standard deviation, without the run itself, so an
 * outlier does not hide itself by widening the spread), as a prediction: t = (x − mean) /
 * (sd · √(1 + 1/(n − 1))), two-sided, n − 2 degrees of freedom (exact when the runs are normal
 * and independent). The false-alarm rate over every run and series looked at is held by
 * Bonferroni: a run is an outlier when its p times the number of runs tested is at most the
 * level. Pure and deterministic.
 *
 * @module
 */

import { tTwoSidedP } from "./_edivisive.ts";

/** The fewest runs a segment has for its runs to be tested. */
export const MIN_SEGMENT_RUNS = 5;

/** One run tested against the other runs of its segment. */
export interface RunTest {
  /** Its position (0-based) in the series. */
  index: number;
  /** Its segment: first position (inclusive) and end (exclusive). */
  start: number;
  end: number;
  /** The mean of the other runs of its segment. */
  meanOthers: number;
  /** Two-sided p of the run's t against the others (not adjusted). */
  pValue: number;
}

/**
 * Each run of each segment of at least {@link MIN_SEGMENT_RUNS} runs, tested against the other
 * runs of its segment (see the module doc).
 *
 * @param xs The series, in order.
 * @param changes The change points' positions (the first run after each), ascending.
 * @returns One test per run looked at, in order.
 *
 * @example
 * ```ts
 * import { segmentTests } from "./outliers.ts";
 * import assert from "node:assert/strict";
 * const xs = Array.from({ length: 30 }, (_, i) => 100 + ((i * 7) % 5) - 2);
 * xs[12] = 50; // one night at half
 * const t = segmentTests(xs, []);
 * assert.equal(t.length, 30);
 * assert.ok(t[12].pValue < 1e-20);
 * assert.ok(t[11].pValue > 0.1);
 * assert.equal(segmentTests(xs, [3]).length, 27); // a segment of 3 runs is not tested
 * ```
 */
export function segmentTests(xs: readonly number[], changes: readonly number[]): RunTest[] {
  const bounds = [0, ...changes, xs.length];
  const out: RunTest[] = [];
  for (let s = 0; s + 1 < bounds.length; s++) {
    const start = bounds[s], end = bounds[s + 1];
    const n = end - start;
    if (n < MIN_SEGMENT_RUNS) continue;
    let mean = 0;
    for (let i = start; i < end; i++) mean += xs[i];
    mean /= n;
    let m2 = 0;
    for (let i = start; i < end; i++) m2 += (xs[i] - mean) ** 2;
    for (let i = start; i < end; i++) {
      // the others: n − 1 runs (Welford's removal of one value)
      const others = (n * mean - xs[i]) / (n - 1);
      const ss = Math.max(0, m2 - (xs[i] - mean) * (xs[i] - others));
      const sd = Math.sqrt(ss / (n - 2));
      const diff = xs[i] - others;
      const same = Math.abs(diff) <= 1e-12 * Math.max(1, Math.abs(others));
      const pValue = sd === 0
        ? (same ? 1 : 0)
        : tTwoSidedP(diff / (sd * Math.sqrt(1 + 1 / (n - 1))), n - 2);
      out.push({ index: i, start, end, meanOthers: others, pValue });
    }
  }
  return out;
}

/**
 * The Bonferroni-adjusted p of a run's test: its p times the runs tested, at most 1.
 *
 * @param pValue The run's own p.
 * @param tested How many runs were tested (every series looked at).
 * @returns The adjusted p.
 *
 * @example
 * ```ts
 * import { adjustedP } from "./outliers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(adjustedP(0.001, 8), 0.008);
 * assert.equal(adjustedP(0.5, 120), 1);
 * ```
 */
export function adjustedP(pValue: number, tested: number): number {
  return Math.min(1, pValue * Math.max(1, tested));
}
