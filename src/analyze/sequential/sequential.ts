/**
 * The sequential verdict of `kvlab run --until-decided`: a cell may be looked at after every
 * round of runs, as often as one likes, and stopped as soon as it is decided, with the chance of
 * a false "better"/"worse" (or a false "no difference") at most `alpha` over all the looks
 * together. Pure: a function of the runs so far, whatever the rounds were.
 *
 * **Method.** An anytime-valid two-sample t-test on the runs' log values: the Bayes factor of a
 * shift against none with a normal prior on the standardized shift (δ/σ ~ N(0, g)) and the
 * right-Haar prior on the nuisance location and scale. Its value after n runs is the likelihood
 * ratio of the scale- and location-invariant part of the data, hence a nonnegative martingale
 * with mean 1 under "no shift", and by Ville's inequality it ever exceeds 1/α with probability at
 * most α, under any rule of looking and stopping (Pérez-Ortiz, Lardy, de Heide & Grünwald,
 * "E-statistics, group invariance and anytime-valid testing", Annals of Statistics 52(4), 2024;
 * Lindon, Ham, Tingley & Bojinov, "Anytime-valid linear models and regression adjusted causal
 * inference in randomized experiments", arXiv:2210.08589, 2022). With t the pooled two-sample
 * t-statistic, ν = n₁ + n₂ − 2 and N = n₁n₂/(n₁+n₂), the factor is (Rouder et al., "Bayesian t
 * tests for accepting and rejecting the null hypothesis", Psychonomic Bulletin & Review 16, 2009,
 * at a fixed g):
 *
 *     BF = (1 + Ng)^(−1/2) · [(1 + t²/ν) / (1 + t²/(ν(1 + Ng)))]^((ν+1)/2)
 *
 * Testing every shift δ₀ (the candidate's logs moved by −δ₀) and keeping those with BF < 1/α
 * gives a confidence sequence: an interval for the ratio that covers the true one at every look
 * at once with probability 1 − α. The verdict: the interval excludes 1 → better or worse (by the
 * metric's direction); the interval inside 1 ± `minEffect` → no difference; else open.
 *
 * The price of looking: the fixed-n rank test of `compare` needs 4 runs per arm for a +10 % shift
 * at CV 3 % with 80 % power; this rule stops there at a median of 5 (and at 3 for +30 %); the A/A
 * error stays below 5 % at any number of looks (measured in
 * `test/analyze/sequential/sequential_test.ts`).
 *
 * @module
 */

import type { Direction } from "../units.ts";

/** Options of {@link sequentialVerdict}. */
export interface SequentialOptions {
  /** Whether higher or lower values are better. */
  direction: Direction;
  /**
   * The most chance of a false verdict, over all looks together.
   * @default {0.05}
   */
  alpha?: number;
  /**
   * "No difference" needs the whole interval of the ratio inside `1 ± minEffect`.
   * @default {0.05}
   */
  minEffect?: number;
  /**
   * The prior variance of the standardized shift (δ/σ ~ N(0, g)): 10 puts most weight on shifts
   * of a few run-to-run standard deviations, as benchmark differences worth telling are (5–30 %
   * at a CV of 1–10 %). Any g keeps the guarantee; it only moves where the rule is quickest.
   * @default {10}
   */
  g?: number;
}

/** The sequential verdict of one cell. */
export interface SequentialVerdict {
  /** `open`: not decided yet (more runs may decide it). */
  verdict: "better" | "worse" | "no difference" | "open";
  /** The Bayes factor (e-value) of a shift against none. */
  eValue: number | null;
  /** Candidate / baseline, from the mean log values. */
  ratio: number | null;
  /** The confidence sequence's interval of the ratio at this look (null: unbounded yet). */
  ciLow: number | null;
  ciHigh: number | null;
}

/** The log of the Bayes factor for t with ν degrees of freedom, N effective runs and prior g. */
// positional: four numbers of one formula, called in two places of this file
function logFactor(t: number, nu: number, n: number, g: number): number {
  const r = 1 + n * g;
  return -0.5 * Math.log(r) +
    (nu + 1) / 2 * (Math.log1p(t * t / nu) - Math.log1p(t * t / (nu * r)));
}

/**
 * The |t| at which the factor reaches 1/α (solved in closed form), or null when no t does: with
 * so few runs the interval is still unbounded.
 */
// positional: the same four numbers as logFactor's
function criticalT(nu: number, n: number, g: number, alpha: number): number | null {
  const r = 1 + n * g;
  const k = Math.exp((2 / (nu + 1)) * (0.5 * Math.log(r) - Math.log(alpha)));
  if (k >= r) return null;
  return Math.sqrt(nu * (k - 1) / (1 - k / r));
}

/**
 * Decides one cell from all its runs so far (in any order; rounds need not be recorded): better,
 * worse, no difference, or open. Valid under repeated looks: see the module doc.
 *
 * @param baseline The baseline's values so far (positive).
 * @param candidate The candidate's values so far (positive).
 * @param options The metric's direction, level, smallest difference worth telling, prior.
 * @returns The verdict, the e-value, the ratio and its interval.
 * @throws {RangeError} For alpha outside (0, 1), a negative minEffect or g not positive.
 *
 * @example
 * ```ts
 * import { sequentialVerdict } from "./sequential.ts";
 * import assert from "node:assert/strict";
 * const a = [100, 101, 99, 100.5, 99.5];
 * const up = { direction: "higher" } as const;
 * assert.equal(sequentialVerdict(a, a.map((v) => v * 1.2), up).verdict, "better");
 * assert.equal(sequentialVerdict(a, a.map((v) => v * 1.2), { direction: "lower" }).verdict, "worse");
 * assert.equal(sequentialVerdict(a, a, up).verdict, "no difference");
 * assert.equal(sequentialVerdict([100, 90], [120, 80], up).verdict, "open");
 * ```
 */
export function sequentialVerdict(
  baseline: readonly number[],
  candidate: readonly number[],
  options: SequentialOptions,
): SequentialVerdict {
  const alpha = options.alpha ?? 0.05, minEffect = options.minEffect ?? 0.05;
  const g = options.g ?? 10;
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`invalid alpha: ${alpha}`);
  if (!(minEffect >= 0)) throw new RangeError(`invalid minEffect: ${minEffect}`);
  if (!(g > 0)) throw new RangeError(`invalid g: ${g}`);
  const none = { verdict: "open", eValue: null, ratio: null, ciLow: null, ciHigh: null } as const;
  const n1 = baseline.length, n2 = candidate.length;
  if (n1 === 0 || n2 === 0 || [...baseline, ...candidate].some((v) => !(v > 0))) return none;
  const la = baseline.map(Math.log), lb = candidate.map(Math.log);
  const mean = (xs: number[]) => xs.reduce((s, v) => s + v, 0) / xs.length;
  const ma = mean(la), mb = mean(lb);
  const shift = mb - ma;
  const ratio = Math.exp(shift);
  const nu = n1 + n2 - 2;
  if (nu < 1) return { ...none, ratio };
  const ss = la.reduce((s, v) => s + (v - ma) ** 2, 0) + lb.reduce((s, v) => s + (v - mb) ** 2, 0);
  const n = n1 * n2 / (n1 + n2);
  const se = Math.sqrt(ss / nu / n);
  if (se === 0) {
    // identical runs: a shift is certain, or none is
    const verdict = shift === 0
      ? "no difference"
      : (shift > 0) === (options.direction === "higher")
      ? "better"
      : "worse";
    return { verdict, eValue: shift === 0 ? 0 : Infinity, ratio, ciLow: ratio, ciHigh: ratio };
  }
  const eValue = Math.exp(logFactor(shift / se, nu, n, g));
  const tc = criticalT(nu, n, g, alpha);
  if (tc === null) return { ...none, eValue, ratio };
  const ciLow = Math.exp(shift - tc * se), ciHigh = Math.exp(shift + tc * se);
  const out = { eValue, ratio, ciLow, ciHigh };
  if (ciLow > 1 || ciHigh < 1) {
    const up = ciLow > 1;
    return { verdict: up === (options.direction === "higher") ? "better" : "worse", ...out };
  }
  if (ciLow >= 1 - minEffect && ciHigh <= 1 + minEffect) {
    return { verdict: "no difference", ...out };
  }
  return { verdict: "open", ...out };
}
