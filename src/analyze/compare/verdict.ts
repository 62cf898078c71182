/**
 * The one verdict rule of kvlab's comparisons (`compare`, `delta`, the summary page and its
 * charts): an exact Wilcoxon–Mann–Whitney test for the call, the Hodges–Lehmann ratio with
 * Moses' distribution-free interval for the size, both on the log scale; at least 4 runs per
 * arm; an equivalence band for "no difference"; and the latency resolution of the tool that
 * measured, below which a difference is never a verdict. Pure.
 *
 * @module
 */

import { median, rankSumP, shiftInterval } from "../_stats.ts";
import type { Direction } from "../units.ts";

/** A comparison's verdict. */
export type Verdict = "better" | "worse" | "no difference" | "inconclusive";

/** Options of {@link cellVerdict}. */
export interface VerdictOptions {
  /** Whether higher or lower values are better (the metric's direction, from its unit). */
  direction: Direction;
  /**
   * Significance level of each cell's test; the interval's confidence is `1 - alpha`.
   * @default {0.05}
   */
  alpha?: number;
  /**
   * "No difference" needs the whole interval of the ratio inside `1 ± band`.
   * @default {0.05}
   */
  band?: number;
  /**
   * The fewest runs per arm for any verdict other than inconclusive (benchstat's rule: with 3
   * or fewer a two-sided rank test cannot reach 5 %).
   * @default {4}
   */
  minRuns?: number;
  /**
   * The smallest difference the tool can show at a value, in the metric's unit (latency
   * buckets); 0 for none.
   * @default {() => 0}
   */
  resolution?: (value: number) => number;
  /**
   * What medians within the resolution are. `inconclusive` (compare's rule): never a verdict.
   * `equivalent` (fixed-rate steps, whose latencies a histogram or a printed table rounds): never
   * better or worse, and, as any cell, `no difference` when the interval lies within the band,
   * the band being at least one bucket there (the ratio of the bucket below the smaller median
   * to the next: a tool that cannot show 5 % there cannot tell it either).
   * @default {"inconclusive"}
   */
  ties?: "inconclusive" | "equivalent";
}

/** The verdict of one cell and its evidence. */
export interface CellVerdict {
  verdict: Verdict;
  /** Why a cell is inconclusive (or null). */
  note: string | null;
  /** Two-sided p of the rank-sum test, null with an empty side. */
  pValue: number | null;
  /** Hodges–Lehmann estimate of candidate / baseline (null with non-positive values). */
  shiftRatio: number | null;
  /** Moses interval of the ratio; null when no interval has the coverage. */
  ciLow: number | null;
  ciHigh: number | null;
}

/** The default equivalence band and level, named once for the docs and the texts. */
export const VERDICT_DEFAULTS = { alpha: 0.05, band: 0.05, minRuns: 4 } as const;

/**
 * The verdict on one cell: `baseline` and `candidate` are the metric's values of the runs.
 *
 * - fewer than `minRuns` runs on a side: inconclusive (an interval is still given when one
 *   reaches the confidence);
 * - the medians within the tool's resolution: inconclusive (with `ties: "equivalent"`: never
 *   better or worse, and on to the next rule with the band at least the relative resolution);
 * - p < alpha (and the interval excludes 1): better or worse, by the metric's direction;
 * - the interval inside `1 ± band`: no difference;
 * - else inconclusive (the interval is too wide to say either).
 *
 * @param baseline The baseline arm's values.
 * @param candidate The candidate arm's values.
 * @param options The metric's direction; level, band, fewest runs, resolution.
 * @returns The verdict with its p-value, ratio and interval.
 *
 * @example
 * ```ts
 * import { cellVerdict } from "./verdict.ts";
 * import assert from "node:assert/strict";
 * const a = [100, 101, 99, 100.5, 99.5];
 * const up = { direction: "higher" } as const;
 * assert.equal(cellVerdict(a, a.map((v) => v * 1.2), up).verdict, "better");
 * assert.equal(cellVerdict(a, a.map((v) => v * 1.2), { direction: "lower" }).verdict, "worse");
 * assert.equal(cellVerdict(a, a, up).verdict, "no difference");
 * assert.equal(cellVerdict([100], [1049], up).verdict, "inconclusive");
 * // p99s in 0.1 ms steps (a printed table): a one-step tie is no difference when asked
 * const res = { direction: "lower", resolution: () => 0.1 } as const;
 * const p99 = [2.1, 2.1, 2.2, 2.1, 2.1], other = [2.2, 2.1, 2.2, 2.2, 2.1];
 * assert.equal(cellVerdict(p99, other, res).verdict, "inconclusive");
 * assert.equal(cellVerdict(p99, other, { ...res, ties: "equivalent" }).verdict, "no difference");
 * ```
 */
export function cellVerdict(
  baseline: readonly number[],
  candidate: readonly number[],
  options: VerdictOptions,
): CellVerdict {
  const direction = options.direction;

  const alpha = options.alpha ?? VERDICT_DEFAULTS.alpha;
  const band = options.band ?? VERDICT_DEFAULTS.band;
  const minRuns = options.minRuns ?? VERDICT_DEFAULTS.minRuns;
  const none = { pValue: null, shiftRatio: null, ciLow: null, ciHigh: null };
  if (baseline.length === 0 || candidate.length === 0) {
    return { verdict: "inconclusive", note: "no runs on a side", ...none };
  }
  const positive = [...baseline, ...candidate].every((v) => v > 0);
  const p = rankSumP(baseline, candidate);
  const pValue = Number.isFinite(p) ? p : null;
  if (!positive) {
    return { verdict: "inconclusive", note: "values not all positive", ...none, pValue };
  }
  const s = shiftInterval(baseline.map(Math.log), candidate.map(Math.log), 1 - alpha);
  const ev = {
    pValue,
    shiftRatio: Math.exp(s.estimate),
    ciLow: s.low === null ? null : Math.exp(s.low),
    ciHigh: s.high === null ? null : Math.exp(s.high),
  };
  const fewest = Math.min(baseline.length, candidate.length);
  if (fewest < minRuns) {
    return { verdict: "inconclusive", note: `fewer than ${minRuns} runs per arm`, ...ev };
  }
  const mb = median(baseline), mc = median(candidate);
  const step = options.resolution?.(Math.max(mb, mc)) ?? 0;
  const tie = step > 0 && Math.abs(mc - mb) <= step + 1e-12;
  const within = `within the tool's resolution (${+step.toPrecision(3)})`;
  const equivalent = options.ties === "equivalent";
  if (tie && !equivalent) return { verdict: "inconclusive", note: within, ...ev };
  const excludesOne = ev.ciLow !== null && ev.ciHigh !== null && (ev.ciLow > 1 || ev.ciHigh < 1);
  if (!tie && pValue !== null && pValue < alpha && excludesOne) {
    const up = ev.shiftRatio > 1;
    return { verdict: up === (direction === "higher") ? "better" : "worse", note: null, ...ev };
  }
  // resolution-aware: the band is at least one bucket, the ratio of the bucket below the
  // smaller median to the next (below one bucket the tool tells nothing apart)
  const low = Math.min(mb, mc) - step;
  const bucket = low > 0 ? step / low : 1;
  const b = equivalent && step > 0 ? Math.max(band, bucket) : band;
  const eps = 1e-9; // ratios of bucket edges, computed in floating point
  if (
    ev.ciLow !== null && ev.ciHigh !== null && ev.ciLow >= 1 - b - eps && ev.ciHigh <= 1 + b + eps
  ) {
    return { verdict: "no difference", note: tie ? within : null, ...ev };
  }
  return {
    verdict: "inconclusive",
    note: `interval wider than ±${+(b * 100).toFixed(1)} %`,
    ...ev,
  };
}

/** HdrHistogram layouts of the tools whose latencies kvlab reads (values recorded in µs). */
const HDR_LAYOUTS: Record<string, { lowestUs: number; digits: number }> = {
  // redis-benchmark.c / valkey-benchmark.c: hdr_init(10 µs, 3 s, precision 3)
  "redis-benchmark": { lowestUs: 10, digits: 3 },
  "valkey-benchmark": { lowestUs: 10, digits: 3 },
  // memtier 2.3.0 run_stats_types.h: LATENCY_HDR_MIN_VALUE 10, LATENCY_HDR_SEC_SIGDIGTS 2
  "memtier_benchmark": { lowestUs: 10, digits: 2 },
};

/**
 * The width in ms of the latency bucket a tool's value (in ms) falls in: the smallest latency
 * difference that tool can show there. Tools with no known histogram: 0.001 ms (they print 3
 * decimals).
 *
 * @param tool The run's `tool`.
 * @param valueMs A latency in ms.
 * @returns The bucket width in ms.
 *
 * @example
 * ```ts
 * import { latencyResolutionMs } from "./verdict.ts";
 * import assert from "node:assert/strict";
 * // redis-benchmark: 0.023 and 0.031 ms are adjacent 8 µs buckets
 * assert.equal(latencyResolutionMs("redis-benchmark", 0.031), 0.008);
 * assert.equal(latencyResolutionMs("memtier_benchmark", 5), 0.032);
 * assert.equal(latencyResolutionMs("kvlab-open-loop", 5), 0.001);
 * ```
 */
export function latencyResolutionMs(tool: string, valueMs: number): number {
  const layout = HDR_LAYOUTS[tool];
  if (!layout) return 0.001;
  // HdrHistogram_c: unit = 2^floor(log2(lowest)); sub_bucket_count = 2^ceil(log2(2·10^digits));
  // values below sub_bucket_count·unit have width unit, each doubling above doubles the width
  const unit = 2 ** Math.floor(Math.log2(layout.lowestUs));
  const count = 2 ** Math.ceil(Math.log2(2 * 10 ** layout.digits));
  const us = valueMs * 1000;
  const doublings = us < count * unit ? 0 : Math.floor(Math.log2(us / (count * unit))) + 1;
  return Math.max(0.001, (unit * 2 ** doublings) / 1000);
}

/** Options of {@link instability}. */
export interface InstabilityOptions {
  /**
   * A cell is unstable when the coefficient of variation of its runs is above this.
   * @default {0.1}
   */
  maxCv?: number;
  /**
   * A strictly monotone run of at least this many repetitions (in run order) is a drift
   * (5: 2 of 120 orders, 1.7 %, when the runs are exchangeable).
   * @default {5}
   */
  driftRuns?: number;
}

/**
 * Why one arm's repetitions (in run order) are unstable, or null: a coefficient of variation
 * above `maxCv`, or a strictly monotone drift across all of them.
 *
 * @example
 * ```ts
 * import { instability } from "./verdict.ts";
 * import assert from "node:assert/strict";
 * assert.equal(instability([100, 101, 99]), null);
 * assert.equal(instability([100, 150, 70]), "CV 38 %");
 * assert.equal(instability([100, 101, 102, 103, 104]), "drift +4.0 % over 5 runs");
 * ```
 */
export function instability(
  values: readonly number[],
  options: InstabilityOptions = {},
): string | null {
  const n = values.length;
  if (n < 2) return null;
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1));
  const cv = mean === 0 ? 0 : sd / Math.abs(mean);
  if (cv > (options.maxCv ?? 0.1)) return `CV ${Math.round(cv * 100)} %`;
  if (n >= (options.driftRuns ?? 5)) {
    let up = true, down = true;
    for (let i = 1; i < n; i++) {
      if (!(values[i] > values[i - 1])) up = false;
      if (!(values[i] < values[i - 1])) down = false;
    }
    if ((up || down) && values[0] !== 0) {
      const pct = (values[n - 1] / values[0] - 1) * 100;
      return `drift ${pct > 0 ? "+" : ""}${pct.toFixed(1)} % over ${n} runs`;
    }
  }
  return null;
}
