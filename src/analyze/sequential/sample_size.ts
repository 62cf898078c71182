/**
 * Sample-size advice for an inconclusive cell: from the spread of the runs so far, how many runs
 * per arm would tell a difference of a given size (±5 %, or `--min-effect`) at the verdict's
 * level with 80 % power. Pure.
 *
 * The figure is the normal-theory size of a two-sided two-sample test on the log scale, divided
 * by the rank-sum test's asymptotic relative efficiency under normal data (3/π, Noether 1987,
 * "Sample size determination for some common nonparametric tests", JASA 82:645), plus one run
 * for the t-distribution's heavier tails at small n (Guenther 1981), and never fewer than the
 * verdict's fewest runs (4). Checked against a simulation of `cellVerdict` itself
 * (`test/analyze/sequential/sample_size_test.ts`: the simulated power at the advised n is about
 * 80 %; the n that reaches 80 % is within ±25 % of the advice).
 *
 * @module
 */

/**
 * The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9).
 *
 * @param p A probability in (0, 1).
 * @returns z with P(Z ≤ z) = p.
 * @throws {RangeError} For p outside (0, 1).
 *
 * @example
 * ```ts
 * import { normalQuantile } from "./sample_size.ts";
 * import assert from "node:assert/strict";
 * assert.equal(normalQuantile(0.975).toFixed(4), "1.9600");
 * assert.equal(normalQuantile(0.2).toFixed(4), "-0.8416");
 * ```
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`invalid probability: ${p} (expected 0 < p < 1)`);
  const a = [
    -39.69683028665376,
    220.9460984245205,
    -275.9285104469687,
    138.357751867269,
    -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406,
    161.5858368580409,
    -155.6989798598866,
    66.80131188771972,
    -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293,
    -0.3223964580411365,
    -2.400758277161838,
    -2.549732539343734,
    4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/** Options of {@link runsNeeded} and {@link cellAdvice}. */
export interface RunsNeededOptions {
  /**
   * The two-sided level of the test (compare's).
   * @default {0.05}
   */
  alpha?: number;
  /**
   * The chance of telling the difference when it is there.
   * @default {0.8}
   */
  power?: number;
  /**
   * The fewest runs per arm of any verdict (compare's rule).
   * @default {4}
   */
  minRuns?: number;
}

/** Above this the advice says "more than" (a cell that needs it cannot be told on this machine). */
export const MAX_ADVISED_RUNS = 10_000;

/**
 * Runs per arm to tell a relative difference `effect` (0.05 = 5 %) at level `alpha` with the
 * given power, for runs whose log values have standard deviation `logSd` (about their CV).
 *
 * @param logSd The standard deviation of the runs' log values (≥ 0).
 * @param effect The relative difference to tell (≠ 0; -0.05 and 0.05 both mean 5 %).
 * @param options Level, power, fewest runs.
 * @returns Runs per arm, at least `minRuns`, at most {@link MAX_ADVISED_RUNS}.
 * @throws {RangeError} For a negative or non-finite spread, or an effect of 0 or at most -100 %.
 *
 * @example
 * ```ts
 * import { runsNeeded } from "./sample_size.ts";
 * import assert from "node:assert/strict";
 * assert.equal(runsNeeded(0.03, 0.05), 8); // CV 3 %, ±5 %
 * assert.equal(runsNeeded(0.10, 0.05), 71); // CV 10 %
 * assert.equal(runsNeeded(0.03, 0.30), 4); // never fewer than compare's 4
 * ```
 */
export function runsNeeded(logSd: number, effect: number, options: RunsNeededOptions = {}): number {
  if (!(logSd >= 0) || !Number.isFinite(logSd)) {
    throw new RangeError(`invalid spread: ${logSd} (expected a finite number ≥ 0)`);
  }
  if (!(effect > -1) || effect === 0 || !Number.isFinite(effect)) {
    throw new RangeError(`invalid effect: ${effect} (expected a relative difference, e.g. 0.05)`);
  }
  const alpha = options.alpha ?? 0.05, power = options.power ?? 0.8;
  const minRuns = options.minRuns ?? 4;
  const d = Math.abs(Math.log1p(effect));
  const z = normalQuantile(1 - alpha / 2) + normalQuantile(power);
  // normal theory, over the rank test's efficiency 3/π, plus one run for the t's tails
  const n = 2 * (z * logSd / d) ** 2 * (Math.PI / 3) + 1;
  return Math.min(MAX_ADVISED_RUNS, Math.max(minRuns, Math.ceil(n - 1e-9)));
}

/**
 * The pooled standard deviation of two arms' log values (the spread {@link runsNeeded} takes),
 * or null with fewer than 3 runs in all or a value that is not positive.
 *
 * @example
 * ```ts
 * import { pooledLogSd } from "./sample_size.ts";
 * import assert from "node:assert/strict";
 * assert.equal(pooledLogSd([100, 100], [200, 200]), 0);
 * assert.equal(pooledLogSd([100], [200]), null);
 * ```
 */
export function pooledLogSd(a: readonly number[], b: readonly number[]): number | null {
  const nu = a.length + b.length - (a.length > 0 ? 1 : 0) - (b.length > 0 ? 1 : 0);
  if (nu < 1 || [...a, ...b].some((v) => !(v > 0))) return null;
  const ss = (xs: readonly number[]) => {
    const l = xs.map(Math.log);
    const m = l.reduce((s, v) => s + v, 0) / (l.length || 1);
    return l.reduce((s, v) => s + (v - m) ** 2, 0);
  };
  return Math.sqrt((ss(a) + ss(b)) / nu);
}

/** What {@link cellAdvice} advises for one cell. */
export interface CellAdvice {
  /** Runs per arm to tell ±`minEffect`; null when the spread is unknown. */
  runsNeeded: number | null;
  /** Runs per arm to tell the observed difference, when it is larger than `minEffect`; else null. */
  runsNeededObserved: number | null;
}

/**
 * The advice for one cell from its runs: runs per arm to tell ±`minEffect`, and, when the
 * observed difference (of the medians) is larger, to tell that.
 *
 * @param baseline The baseline's values.
 * @param candidate The candidate's values.
 * @param options The smallest difference worth telling (`minEffect`, default 0.05), level,
 * power, fewest runs.
 * @returns The two figures.
 *
 * @example
 * ```ts
 * import { cellAdvice } from "./sample_size.ts";
 * import assert from "node:assert/strict";
 * const a = [100, 90, 110, 95, 105], b = a.map((v) => v * 1.2);
 * const advice = cellAdvice(a, b);
 * assert.ok(advice.runsNeeded! > advice.runsNeededObserved!);
 * assert.equal(cellAdvice(a, a).runsNeededObserved, null);
 * ```
 */
export function cellAdvice(
  baseline: readonly number[],
  candidate: readonly number[],
  options: RunsNeededOptions & { minEffect?: number } = {},
): CellAdvice {
  const sd = pooledLogSd(baseline, candidate);
  if (sd === null) return { runsNeeded: null, runsNeededObserved: null };
  const minEffect = options.minEffect ?? 0.05;
  const med = (xs: readonly number[]) => {
    const s = [...xs].sort((x, y) => x - y), h = s.length >> 1;
    return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
  };
  const observed = baseline.length && candidate.length
    ? Math.abs(Math.log(med(candidate) / med(baseline)))
    : 0;
  const larger = observed > Math.abs(Math.log1p(minEffect));
  return {
    runsNeeded: runsNeeded(sd, minEffect, options),
    runsNeededObserved: larger ? runsNeeded(sd, Math.expm1(observed), options) : null,
  };
}
