/**
 * Small statistics used by the comparisons: medians, the exact Wilcoxon–Mann–Whitney test, the
 * Hodges–Lehmann shift with Moses' interval, and Benjamini–Hochberg q-values. Pure and
 * deterministic. (The percentile bootstrap kvlab used before had far too narrow intervals with 2–3
 * runs per side; see README, "Verdicts".)
 *
 * @module
 */

/**
 * The ratio `to / from` of two medians or means, or null when it is no number: from 0 (a rate
 * of nothing has no factor or percentage of change) or a value that is null or not finite. The
 * one rule of every relative column (`compare`'s `ratio`, `delta`'s factor and changes,
 * `changes`' `change_pct`), so that each output format prints the same: empty in CSV, text and
 * Markdown, `null` in JSON, never `Infinity` or `NaN`.
 *
 * @param to The value after (the candidate's).
 * @param from The value before (the baseline's).
 * @returns The ratio, or null.
 *
 * @example
 * ```ts
 * import { ratioOf } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * assert.equal(ratioOf(120, 100), 1.2);
 * assert.equal(ratioOf(50_000, 0), null);
 * assert.equal(ratioOf(0, 0), null);
 * assert.equal(ratioOf(null, 100), null);
 * assert.equal(ratioOf(1, Infinity), null);
 * ```
 */
export function ratioOf(
  to: number | null | undefined,
  from: number | null | undefined,
): number | null {
  if (to === null || to === undefined || from === null || from === undefined || from === 0) {
    return null;
  }
  const r = to / from;
  return Number.isFinite(r) && Number.isFinite(to) && Number.isFinite(from) ? r : null;
}

/**
 * The change from `from` to `to` in percent, `(to - from) / from · 100`, or null by the rule of
 * {@link ratioOf} (from 0, null or not finite).
 *
 * @param to The value after.
 * @param from The value before.
 * @returns The change in percent, or null.
 *
 * @example
 * ```ts
 * import { changePctOf } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * assert.equal(changePctOf(90, 100), -10);
 * assert.equal(changePctOf(50_000, 0), null);
 * ```
 */
export function changePctOf(
  to: number | null | undefined,
  from: number | null | undefined,
): number | null {
  return ratioOf(to, from) === null ? null : ((to! - from!) / from!) * 100;
}

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

/**
 * The number of ways to draw each Mann–Whitney U from samples of `n` and `m` distinct values
 * under the null hypothesis (index = U, 0 … n·m); the counts sum to C(n + m, n).
 *
 * @example
 * ```ts
 * import { uCounts } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(uCounts(2, 2), [1, 1, 2, 1, 1]);
 * ```
 */
export function uCounts(n: number, m: number): readonly number[] {
  const key = `${n},${m}`;
  let counts = U_COUNTS.get(key);
  if (!counts) {
    counts = Object.freeze(countU(n, m));
    if (U_COUNTS.size >= 1024) U_COUNTS.clear(); // bounded: sequential looks ask many sizes
    U_COUNTS.set(key, counts);
  }
  return counts;
}

/** {@link uCounts}, computed once per pair of sizes (simulations ask the same sizes again). */
const U_COUNTS = new Map<string, readonly number[]>();

/** The counts of {@link uCounts}, computed. */
function countU(n: number, m: number): number[] {
  // f[i][j][u]: arrangements of i x's and j y's with u (x < y) pairs; built one row of i at a time
  let prev: number[][] = [];
  for (let j = 0; j <= m; j++) prev.push([1]); // i = 0: one arrangement, U = 0
  for (let i = 1; i <= n; i++) {
    const cur: number[][] = [[1]]; // j = 0
    for (let j = 1; j <= m; j++) {
      // the largest value is an x (no new x < y pair) or a y (above all i x's: i new pairs)
      const a = prev[j];
      const b = cur[j - 1];
      const out = new Array(i * j + 1).fill(0);
      for (let u = 0; u < a.length; u++) out[u] += a[u];
      for (let u = 0; u < b.length; u++) out[u + i] += b[u];
      cur.push(out);
    }
    prev = cur;
  }
  return prev[m];
}

/**
 * Two-sided p-value of the Wilcoxon–Mann–Whitney rank-sum test that `x` and `y` come from one
 * distribution. Exact (the permutation distribution of the rank sum, mid-ranks for ties) up to
 * 40 values in all, else the normal approximation with tie and continuity corrections (A/A at 25
 * and 40 per side: 5.1 % and 4.8 % below 0.05). NaN when a sample is empty.
 *
 * @example
 * ```ts
 * import { rankSumP } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * // five against five, fully separated: 2 of C(10, 5) = 252 splits are as extreme
 * assert.equal(rankSumP([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), 2 / 252);
 * // three against three can never be below 2 / 20
 * assert.equal(rankSumP([1, 2, 3], [4, 5, 6]), 0.1);
 * assert.equal(rankSumP([1, 1], [1, 1]), 1);
 * ```
 */
export function rankSumP(x: readonly number[], y: readonly number[]): number {
  const n = x.length, m = y.length, total = n + m;
  if (n === 0 || m === 0) return NaN;
  const all = [...x.map((v) => ({ v, x: true })), ...y.map((v) => ({ v, x: false }))]
    .sort((a, b) => a.v - b.v);
  // doubled mid-ranks (integers)
  const r2 = new Array<number>(total);
  for (let i = 0; i < total;) {
    let j = i;
    while (j + 1 < total && all[j + 1].v === all[i].v) j++;
    for (let k = i; k <= j; k++) r2[k] = i + j + 2;
    i = j + 1;
  }
  let w2 = 0;
  for (let i = 0; i < total; i++) if (all[i].x) w2 += r2[i];
  const e2 = n * (total + 1);
  const obs = Math.abs(w2 - e2);
  if (total <= 40) {
    const k = Math.min(n, m);
    // choose the k smaller-sample positions: sums of doubled ranks of k-subsets (symmetric in n, m)
    const kObs = n <= m ? obs : Math.abs((total * (total + 1) - w2) - m * (total + 1));
    const eK = k * (total + 1);
    const maxS = total * (total + 1);
    const f: Float64Array[] = Array.from({ length: k + 1 }, () => new Float64Array(maxS + 1));
    f[0][0] = 1;
    let reach = 0; // the largest sum reachable so far
    for (let i = 0; i < total; i++) {
      const r = r2[i];
      for (let c = Math.min(k, i + 1); c >= 1; c--) {
        const from = f[c - 1], to = f[c];
        for (let s = reach; s >= 0; s--) if (from[s]) to[s + r] += from[s];
      }
      reach = Math.min(maxS, reach + r);
    }
    let extreme = 0, all2 = 0;
    for (let s = 0; s <= maxS; s++) {
      const c = f[k][s];
      if (!c) continue;
      all2 += c;
      if (Math.abs(s - eK) >= kObs - 1e-9) extreme += c;
    }
    return Math.min(1, extreme / all2);
  }
  // normal approximation
  const ties = new Map<number, number>();
  for (const a of all) ties.set(a.v, (ties.get(a.v) ?? 0) + 1);
  let tieSum = 0;
  for (const t of ties.values()) tieSum += t * t * t - t;
  const variance = (n * m / 12) * ((total + 1) - tieSum / (total * (total - 1)));
  if (variance <= 0) return 1;
  const z = Math.max(0, obs / 2 - 0.5) / Math.sqrt(variance);
  return Math.min(1, 2 * normalUpper(z));
}

/** P(Z > z) for a standard normal Z (Abramowitz–Stegun 7.1.26, error below 1.5e-7). */
function normalUpper(z: number): number {
  const t = 1 / (1 + 0.3275911 * z / Math.SQRT2);
  const poly = t * (0.254829592 +
    t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return 0.5 * poly * Math.exp(-z * z / 2);
}

/** A Hodges–Lehmann shift with its distribution-free (Moses) interval, when it has one. */
export interface ShiftEstimate {
  /** Median of the pairwise differences `y[j] - x[i]`. */
  estimate: number;
  /** Lower end, or null when no interval reaches the confidence with so few values. */
  low: number | null;
  /** Upper end, or null. */
  high: number | null;
}

/**
 * The Hodges–Lehmann estimate of the shift from `x` to `y` (median of the n·m differences
 * `y[j] - x[i]`) and Moses' distribution-free interval: the k-th smallest and k-th largest
 * difference, k from the exact null distribution of U, so its coverage is at least
 * `confidence` for any continuous distribution shifted by a constant (Hollander & Wolfe,
 * Nonparametric Statistical Methods, §4.3). With 3 or fewer values on a side no interval
 * reaches 95 %: low and high are null.
 *
 * @example
 * ```ts
 * import { shiftInterval } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * const s = shiftInterval([1, 2, 3, 4, 5], [11, 12, 13, 14, 15]);
 * assert.deepEqual([s.estimate, s.low, s.high], [10, 7, 13]);
 * assert.equal(shiftInterval([1, 2, 3], [4, 5, 6]).low, null);
 * ```
 */
export function shiftInterval(
  x: readonly number[],
  y: readonly number[],
  confidence = 0.95,
): ShiftEstimate {
  const d: number[] = [];
  for (const a of x) for (const b of y) d.push(b - a);
  d.sort((a, b) => a - b);
  const estimate = median(d);
  const counts = uCounts(x.length, y.length);
  const all = counts.reduce((a, b) => a + b, 0);
  const tail = (1 - confidence) / 2;
  // largest c with P(U <= c - 1) <= tail: the interval is [d(c), d(nm + 1 - c)] (1-based)
  let c = 0, cum = 0;
  while (c < counts.length && (cum + counts[c]) / all <= tail + 1e-12) cum += counts[c++];
  if (c === 0) return { estimate, low: null, high: null };
  return { estimate, low: d[c - 1], high: d[d.length - c] };
}

/**
 * Benjamini–Hochberg adjusted p-values (q-values): controls the expected share of false
 * discoveries among the cells called different. NaN stays NaN and is not counted.
 *
 * @example
 * ```ts
 * import { benjaminiHochberg } from "./_stats.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(benjaminiHochberg([0.01, 0.04, 0.03, NaN]), [0.03, 0.04, 0.04, NaN]);
 * ```
 */
export function benjaminiHochberg(ps: readonly number[]): number[] {
  const idx = ps.map((p, i) => ({ p, i })).filter((e) => Number.isFinite(e.p))
    .sort((a, b) => a.p - b.p);
  const out = ps.map(() => NaN);
  let min = 1;
  for (let r = idx.length; r >= 1; r--) {
    min = Math.min(min, (idx[r - 1].p * idx.length) / r);
    out[idx[r - 1].i] = Number(min.toPrecision(12));
  }
  return out;
}
