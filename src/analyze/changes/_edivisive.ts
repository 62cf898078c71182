/**
 * E-divisive change-point detection on one series of numbers, written from the papers:
 *
 * - Matteson & James (2014), "A Nonparametric Approach for Multiple Change Point Analysis of
 *   Multivariate Data", JASA 109(505): the energy-statistic divergence Q̂ between the runs
 *   before a split τ and after it (α = 1), the split that maximises it, and divisive
 *   (hierarchical) bisection of the segments found so far.
 * - Daly et al. (2020), "The Use of Change Point Detection to Identify Software Performance
 *   Regressions in a Continuous Integration System", ICPE: E-divisive in MongoDB's CI.
 * - Fleming et al. (2023), "Hunter: Using Change Point Detection to Hunt for Performance
 *   Regressions", ICPE (now Apache Otava): the permutation test replaced by a deterministic
 *   Student's t test between the segments on either side of a candidate; the series
 *   cut into overlapping windows whose "weak" change points are kept at a relaxed p (10 ×
 *   `maxPValue`), then merged bottom-up: the weakest point is dropped and its neighbours
 *   re-tested against their new neighbours until every point passes `maxPValue` (and
 *   `minChange`).
 *
 * Two departures, kvlab's own: the t test's p is multiplied by the number of positions the split
 * was chosen among (Bonferroni), since the best of ~n splits of pure noise passes an uncorrected
 * test far more often than p says (measured: 5.8 % of 150-run noise series got a change point
 * at p 0.001 uncorrected, at most 1 in 1,000 corrected; 5 % steps under 2 % noise are still
 * found); and the next window starts 2 runs before the last point a window found, not at it, so a
 * change whose first run is a window's last (placed one run early there: a side of a split holds
 * at least 2 runs) is seen again with runs on both sides and the merge keeps its true place.
 *
 * Q̂ for every split of a segment of n values is computed in O(n²) (the within- and
 * between-sums of |xᵢ − xⱼ| updated as one value crosses the split), so a window of w values
 * costs O(w²) per change point, never O(w³). Windows make the result local: runs appended to a
 * history leave the change points found earlier where they were, except near the end.
 *
 * Pure and deterministic: no clock, no random numbers.
 *
 * @module
 */

/** Options of {@link changePoints}. */
export interface EDivisiveOptions {
  /**
   * Runs per window of the first (weak) pass; windows overlap by half.
   * @default {50}
   */
  window?: number;
  /**
   * A change point is kept when the t test between the segments on its two sides gives at
   * most this p.
   * @default {0.001}
   */
  maxPValue?: number;
  /**
   * A change point is kept only when |mean after − mean before| / |mean before| exceeds this
   * (0.05 = 5 %).
   * @default {0}
   */
  minChange?: number;
}

/** The fewest runs on either side of a split. */
const MIN_SIZE = 2;

/** One change point of a series, with the segments on either side. */
export interface ChangePoint {
  /** Position (0-based) of the first value after the change. */
  index: number;
  /** Start (inclusive) of the segment before: the previous change point, or 0. */
  start: number;
  /** End (exclusive) of the segment after: the next change point, or the series' length. */
  end: number;
  /** Mean of `xs[start, index)`. */
  meanBefore: number;
  /** Mean of `xs[index, end)`. */
  meanAfter: number;
  /** Student's two-sided t test p of the two segments (pooled variance, Bonferroni for the
   * positions the split was chosen among). */
  pValue: number;
}

/**
 * The split of `xs[start, end)` that maximises the energy divergence Q̂ (α = 1), each side
 * holding at least `minSize` values.
 *
 * Q̂(τ) = m·n/(m+n) · (2/(m·n) Σ|xᵢ − yⱼ| − Σ_{i<k}|xᵢ − xₖ| / C(m,2) − Σ_{j<l}|yⱼ − yₗ| / C(n,2))
 * with xs the m values before τ and ys the n values from τ on (Matteson & James, eq. 5 with
 * κ the segment's end).
 *
 * @param xs The series.
 * @param segment `start`, the first position of the segment; `end`, the position after the
 * last; `minSize`, the fewest values on a side (default 2).
 * @returns The split (position of the first value after it) and its Q̂, or null when the
 * segment is too short to split.
 *
 * @example
 * ```ts
 * import { bestSplit } from "./_edivisive.ts";
 * import assert from "node:assert/strict";
 * assert.equal(bestSplit([1, 1.1, 0.9, 1, 5, 5.1, 4.9, 5], { start: 0, end: 8 })!.index, 4);
 * assert.equal(bestSplit([1, 2, 3], { start: 0, end: 3 }), null);
 * ```
 */
export function bestSplit(
  xs: readonly number[],
  { start, end, minSize = MIN_SIZE }: { start: number; end: number; minSize?: number },
): { index: number; q: number } | null {
  const len = end - start;
  if (len < 2 * minSize) return null;
  // left[t]: Σ_{i<t} |x_t − x_i|; right[t]: Σ_{j>t} |x_t − x_j| (positions within the segment)
  const left = new Float64Array(len);
  const right = new Float64Array(len);
  let total = 0;
  for (let i = 0; i < len; i++) {
    const xi = xs[start + i];
    for (let j = i + 1; j < len; j++) {
      const d = Math.abs(xi - xs[start + j]);
      left[j] += d;
      right[i] += d;
      total += d;
    }
  }
  // within(before τ) = a, within(from τ) = b, between = total − a − b
  let a = 0;
  let b = total;
  let best: { index: number; q: number } | null = null;
  for (let t = 0; t < len - minSize; t++) {
    a += left[t];
    b -= right[t];
    const m = t + 1;
    const n = len - m;
    if (m < minSize) continue;
    const between = total - a - b;
    const e = (2 * between) / (m * n) - a / ((m * (m - 1)) / 2) - b / ((n * (n - 1)) / 2);
    const q = (m * n) / (m + n) * e;
    if (best === null || q > best.q) best = { index: start + m, q };
  }
  return best;
}

/** Mean and sample variance of `xs[start, end)`. */
function moments(xs: readonly number[], start: number, end: number): [number, number] {
  const n = end - start;
  let s = 0;
  for (let i = start; i < end; i++) s += xs[i];
  const mean = s / n;
  let ss = 0;
  for (let i = start; i < end; i++) ss += (xs[i] - mean) ** 2;
  return [mean, n > 1 ? ss / (n - 1) : 0];
}

/**
 * Student's two-sided t test (pooled variance) of `xs[start, index)` against `xs[index, end)`,
 * its p multiplied by the `end − start − 3` positions a split of the segment is chosen among
 * (at most 1).
 *
 * @param xs The series.
 * @param split `index`, the position of the first value after the split; `start` and `end`
 * (exclusive), the segment's bounds.
 * @returns The change point with its segments' means and p.
 *
 * @example
 * ```ts
 * import { testSplit } from "./_edivisive.ts";
 * import assert from "node:assert/strict";
 * const cp = testSplit([10, 11, 9, 10, 20, 21, 19, 20], { index: 4, start: 0, end: 8 });
 * assert.deepEqual([cp.meanBefore, cp.meanAfter], [10, 20]);
 * assert.ok(cp.pValue < 1e-4);
 * assert.equal(testSplit([1, 2, 1, 2], { index: 2, start: 0, end: 4 }).pValue, 1);
 * ```
 */
export function testSplit(
  xs: readonly number[],
  { index, start, end }: { index: number; start: number; end: number },
): ChangePoint {
  const [m1, v1] = moments(xs, start, index);
  const [m2, v2] = moments(xs, index, end);
  const n1 = index - start;
  const n2 = end - index;
  // Student's t with the pooled variance: a short segment borrows the long one's spread, so
  // two close values at an edge never look like a significant step (Welch's would)
  const df = n1 + n2 - 2;
  const pooled = df > 0 ? ((n1 - 1) * v1 + (n2 - 1) * v2) / df : 0;
  const se2 = pooled * (1 / n1 + 1 / n2);
  const p = se2 === 0 ? (m1 === m2 ? 1 : 0) : tTwoSidedP((m2 - m1) / Math.sqrt(se2), df);
  // the split was the best of the segment's end − start − 3 candidate positions: Bonferroni
  // for that choice, so pure noise passes at most at the stated rate (see the module doc)
  const pValue = Math.min(1, p * Math.max(1, end - start - 3));
  return { index, start, end, meanBefore: m1, meanAfter: m2, pValue };
}

/**
 * Two-sided p of Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
 *
 * @example
 * ```ts
 * import { tTwoSidedP } from "./_edivisive.ts";
 * import assert from "node:assert/strict";
 * assert.ok(Math.abs(tTwoSidedP(2.228, 10) - 0.05) < 1e-3);
 * assert.equal(tTwoSidedP(0, 5), 1);
 * ```
 */
export function tTwoSidedP(t: number, df: number): number {
  if (!Number.isFinite(t)) return 0;
  return Math.min(1, Math.max(0, incompleteBeta(df / (df + t * t), df / 2, 0.5)));
}

/** ln Γ(x), Lanczos (g = 7, n = 9). */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The regularized incomplete beta I_x(a, b) (continued fraction, Lentz's method). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(
    lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x),
  );
  if (x > (a + 1) / (a + b + 2)) return 1 - front * betaFraction(1 - x, b, a) / b;
  return front * betaFraction(x, a, b) / a;
}

function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - (a + b) * x / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-12) break;
  }
  return h;
}

/**
 * E-divisive inside `xs[start, end)`: bisects the segment with the largest Q̂ split while that
 * split's t test passes `maxPValue` (against the segments of the points found so far).
 *
 * @returns The positions found (absolute), sorted.
 */
function eDivisive(
  xs: readonly number[],
  { start, end, maxPValue }: { start: number; end: number; maxPValue: number },
): number[] {
  const found: number[] = [];
  for (;;) {
    const bounds = [start, ...found, end];
    let best: { index: number; q: number; lo: number; hi: number } | null = null;
    for (let i = 0; i + 1 < bounds.length; i++) {
      const s = bestSplit(xs, { start: bounds[i], end: bounds[i + 1] });
      if (s && (best === null || s.q > best.q)) best = { ...s, lo: bounds[i], hi: bounds[i + 1] };
    }
    if (best === null) break;
    if (testSplit(xs, { index: best.index, start: best.lo, end: best.hi }).pValue > maxPValue) {
      break;
    }
    found.push(best.index);
    found.sort((p, q) => p - q);
  }
  return found;
}

/** Each point tested against its neighbours (the segments between the points). */
function tested(xs: readonly number[], points: number[]): ChangePoint[] {
  const bounds = [0, ...points, xs.length];
  return points.map((p, i) => testSplit(xs, { index: p, start: bounds[i], end: bounds[i + 2] }));
}

/** |change| relative to the mean before. */
function magnitude(cp: ChangePoint): number {
  return Math.abs(cp.meanAfter - cp.meanBefore) / Math.abs(cp.meanBefore || 1);
}

/**
 * The change points of a series (see the module doc): a windowed pass keeps "weak" points at
 * p ≤ 10 × `maxPValue`, then a bottom-up merge drops the weakest (largest p, or, once all pass,
 * smallest change when `minChange` asks for one) and re-tests its neighbours until all pass.
 *
 * @param xs The series, in order.
 * @param options Window, threshold and least change.
 * @returns The change points, in order.
 * @throws {RangeError} For a window under 4, a p outside (0, 1] or a negative least change.
 *
 * @example
 * ```ts
 * import { changePoints } from "./_edivisive.ts";
 * import assert from "node:assert/strict";
 * const xs = Array.from({ length: 60 }, (_, i) => (i < 30 ? 100 : 110) + ((i * 7) % 5) - 2);
 * const cps = changePoints(xs);
 * assert.deepEqual(cps.map((c) => c.index), [30]);
 * assert.ok(cps[0].meanAfter > cps[0].meanBefore && cps[0].pValue < 0.001);
 * assert.deepEqual(changePoints(xs, { minChange: 0.2 }), []);
 * ```
 */
export function changePoints(xs: readonly number[], options: EDivisiveOptions = {}): ChangePoint[] {
  const window = options.window ?? 50;
  const maxP = options.maxPValue ?? 0.001;
  const minChange = options.minChange ?? 0;
  if (!(Number.isInteger(window) && window >= 4)) {
    throw new RangeError(`invalid window: ${window} (an integer of at least 4)`);
  }
  if (!(maxP > 0 && maxP <= 1)) throw new RangeError(`invalid max p: ${maxP} (in (0, 1])`);
  if (!(minChange >= 0)) throw new RangeError(`invalid min change: ${minChange} (at least 0)`);
  // weak pass: overlapping windows, relaxed p
  const weak: number[] = [];
  const step = Math.floor(window / 2);
  for (let start = 0; start < xs.length;) {
    const end = Math.min(start + window, xs.length);
    const found = eDivisive(xs, { start, end, maxPValue: Math.min(1, maxP * 10) });

    weak.push(...found);
    // the next window starts MIN_SIZE runs before the last point found (Hunter starts it at the
    // point): a change at a window's last run has one run after it there, so the split can only
    // fall one run early; seen again with runs on both sides, the merge below keeps the true one
    start = Math.max((found.at(-1) ?? 0) - MIN_SIZE, start + step);
  }
  const points = [...new Set(weak)].sort((p, q) => p - q);
  // strong pass: bottom-up merge
  let cps = tested(xs, points);
  while (cps.length > 0) {
    let weakest = 0;
    for (let i = 1; i < cps.length; i++) if (cps[i].pValue > cps[weakest].pValue) weakest = i;
    if (cps[weakest].pValue <= maxP) {
      weakest = 0;
      for (let i = 1; i < cps.length; i++) {
        if (magnitude(cps[i]) < magnitude(cps[weakest])) weakest = i;
      }
      if (magnitude(cps[weakest]) > minChange || minChange === 0) break;
    }
    cps = tested(xs, cps.filter((_, i) => i !== weakest).map((c) => c.index));
  }
  return cps;
}
