/**
 * Comparisons with the uncertainty that repetitions give: one arm against a baseline
 * ({@link compare}) and a change along one dimension such as transport or io-threads
 * ({@link delta}). Input: a results frame from `loadResults` (results ⋈ runs).
 *
 * **Verdict.** Per cell, an exact Wilcoxon–Mann–Whitney rank-sum test (two-sided, 5 %) decides
 * better or worse; the size is the Hodges–Lehmann ratio with Moses' distribution-free 95 %
 * interval (both on the log scale). Fewer than 4 runs on a side, or medians within the
 * measuring tool's latency resolution, are `inconclusive`; `no difference` needs the whole
 * interval inside ±5 %; anything else is `inconclusive`. Each table carries Benjamini–Hochberg
 * q-values across its cells ({@link verdictSummary} says how many cells differ). Cells whose
 * repetitions vary by more than 10 % (CV) or drift monotonically over 5+ runs are flagged in
 * `unstable`. The rule lives in `verdict.ts`; `delta` is in `delta.ts`.
 *
 * @module
 */

import pl from "nodejs-polars";
import { benjaminiHochberg, ratioOf } from "../_stats.ts";
import { VERDICT_DEFAULTS } from "./verdict.ts";
import { DISTURBED, unstableDetails, unstableText } from "./_unstable.ts";
import { finiteRows } from "../summary.ts";
import { metricDirection, resultsFrame } from "../units.ts";
import { comparisonCells, differs, type Rec, sortRows, verdictOf } from "./_cells.ts";
import { adviceColumns } from "./advice.ts";

export { type Direction, metricDirection } from "../units.ts";

export { PARAMETER_COLUMNS } from "../grouping.ts";
export { delta, type DeltaOptions } from "./delta.ts";

/** Options of {@link compare}. */
export interface CompareOptions {
  /** Column whose values are the arms (`server`, `label`, `server_version`, `transport`, …). */
  by: string;
  /** The baseline arm. */
  baseline: string;
  /**
   * Metric column.
   * @default {"ops_per_sec"}
   */
  metric?: string;
  /** Grouping columns; by default `test` plus the {@link PARAMETER_COLUMNS} that vary. */
  keys?: string[];
  /**
   * Confidence of the intervals; each cell's test is at `1 - confidence`.
   * @default {0.95}
   */
  confidence?: number;
  /**
   * "No difference" needs the interval of the ratio inside `1 ± band`.
   * @default {0.05}
   */
  band?: number;
  /**
   * The fewest runs per arm for a verdict other than inconclusive.
   * @default {4}
   */
  minRuns?: number;
  /**
   * The smallest difference worth telling, for the advice of inconclusive cells
   * (`runs_needed`).
   * @default {band}
   */
  minEffect?: number;
  /** @deprecated Unused since the verdict is a rank test (there is no bootstrap). */
  resamples?: number;
  /** @deprecated Unused since the verdict is a rank test (there is no bootstrap). */
  seed?: number;
}

/**
 * Compares every arm of `by` with the baseline, per test (and per parameter that varies).
 *
 * @returns One row per group and candidate arm: the group keys, `<by>` (the candidate),
 * `baseline_n`, `candidate_n`, `baseline_median_<metric>`, `candidate_median_<metric>`,
 * `baseline_min_…`, `baseline_max_…`, `candidate_min_…`, `candidate_max_…`, `ratio`,
 * `ratio` (of the medians), `ratio_ci_low`, `ratio_ci_high` (Moses' interval of the
 * Hodges–Lehmann ratio; null with 3 or fewer runs on a side, where no interval has 95 %
 * coverage), `verdict` (better / worse / no difference / inconclusive), `direction`,
 * `shift_ratio` (the Hodges–Lehmann ratio), `p_value` (exact rank-sum test), `q_value`
 * (Benjamini–Hochberg across the rows of this table), `verdict_note` (why inconclusive),
 * `unstable` (one short reason per arm: repetitions with a CV above 10 % or a monotone drift,
 * and how many runs the noise guard found disturbed (`noise_disturbance`) with their reasons in
 * short: `candidate: CV 27 %, 4/5 runs disturbed (steal ≤ 37 %)`; else null),
 * `also_differs`: run parameters that differ between the two arms besides `by` (they are
 * confounded with it; e.g. `keyspace 1000000 vs 1000000000`), or null, and `unstable_details`
 * (the disturbed runs `unstable` counts, in full: every reason the noise guard gave, per arm;
 * else null), and, for an inconclusive cell, `runs_needed` (runs per arm to tell ±`minEffect` at
 * the test's level with 80 % power, from the cell's spread) and `runs_needed_observed` (to tell
 * the difference seen, when it is larger), else null ({@link adviceSummary} says it in a line);
 * when the frame marks runs in {@link REDONE}, `left_out_disturbed`: how many of the cell's runs
 * were left out of its verdict as disturbed and redone.
 * @throws {TypeError} For a missing column, an unknown metric direction, or a baseline that is
 * not in the data.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { compare } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   test: Array(10).fill("SET"),
 *   server: [...Array(5).fill("redis"), ...Array(5).fill("valkey")],
 *   ops_per_sec: [100, 102, 101, 99, 100, 120, 121, 119, 122, 120],
 * });
 * const c = compare(df, { by: "server", baseline: "redis" });
 * assert.equal(c.getColumn("ratio").get(0), 120 / 100);
 * assert.equal(c.getColumn("verdict").get(0), "better");
 * assert.equal(c.getColumn("p_value").get(0), 2 / 252);
 * // three runs per arm cannot be told apart at 5 %: inconclusive, never "no difference"
 * const two = compare(df.filter(pl.col("ops_per_sec").isIn([100, 102, 120, 121])), { by: "server", baseline: "redis" });
 * assert.equal(two.getColumn("verdict").get(0), "inconclusive");
 * ```
 */
export function compare(df: pl.DataFrame, options: CompareOptions): pl.DataFrame {
  const metric = options.metric ?? "ops_per_sec";
  metricDirection(metric); // throws for a metric whose name does not tell the direction
  let arms: string[] = [];
  // per run, whether the noise guard found it disturbed: the count of disturbed runs per arm
  // issue 36: runs the noise guard found disturbed and that were redone are counted, not compared
  const redone = df.columns.includes(REDONE) ? df.filter(pl.col(REDONE)) : null;
  const kept = redone ? df.filter(pl.col(REDONE).not()) : df;
  const noise = kept.columns.includes("noise_disturbance");
  const frame = noise
    ? kept.withColumns(pl.col("noise_disturbance").isNotNull().cast(pl.Float64).alias(DISTURBED))
    : kept;
  const { keys, confounded, groups } = comparisonCells(frame, {
    by: options.by,
    keys: options.keys,
    metric,
    metrics: noise ? [metric, DISTURBED] : [metric],
    // the tool (its latency resolution) and the noise guard's reasons (disturbed runs)
    extra: ["tool", "noise_disturbance"].filter((c) => frame.columns.includes(c)),
    rows: (selected) => finiteRows(selected, metric),
    check: (values) => {
      arms = values;
      if (!arms.includes(options.baseline)) {
        throw new TypeError(
          `invalid baseline: ${options.baseline} (values of ${options.by}: ${
            arms.join(", ") || "none"
          })`,
        );
      }
    },
  });
  const out: Rec[] = [];
  const values = (r: Rec) => (r[`values_${metric}`] as number[] | undefined) ?? [];
  const leftOut = redoneCounts(redone, keys, options.by);
  for (const g of groups) {
    const base = g.arms.get(options.baseline);
    if (!base) continue;
    for (const arm of arms) {
      const cand = g.arms.get(arm);
      if (arm === options.baseline || !cand) continue;
      const row = armComparison(base, cand, { ...options, metric });
      out.push({
        ...g.keys,
        [options.by]: arm,
        ...row,
        also_differs: differs(base, cand, confounded),
        unstable_details: unstableDetails([["baseline", base], ["candidate", cand]]),
        // issue 36: the runs an inconclusive cell would need
        ...adviceColumns(String(row.verdict), [values(base), values(cand)], {
          minEffect: options.minEffect ?? options.band,
          alpha: options.confidence === undefined ? undefined : 1 - options.confidence,
        }),
        ...(leftOut.size === 0 ? {} : {
          left_out_disturbed: [options.baseline, arm].reduce(
            (n, a) =>
              n + (leftOut.get(JSON.stringify([...keys.map((c) => g.keys[c] ?? null), a])) ?? 0),
            0,
          ),
        }),
      });
    }
  }
  const q = benjaminiHochberg(out.map((r) => (r.p_value as number | null) ?? NaN));
  out.forEach((r, i) => r.q_value = Number.isFinite(q[i]) ? q[i] : null);
  return resultsFrame(sortRows(out, keys));
}

/**
 * The column of a results frame that marks the rows of runs left out of verdicts because the
 * noise guard found them disturbed and `kvlab run --redo-disturbed` ran them again (their later
 * attempt counts): {@link compare} counts them per cell in `left_out_disturbed`.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { compare, REDONE } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   test: Array(11).fill("SET"),
 *   server: [...Array(6).fill("a"), ...Array(5).fill("b")],
 *   ops_per_sec: [100, 102, 101, 99, 100, 10, 120, 121, 119, 122, 120],
 *   [REDONE]: [false, false, false, false, false, true, false, false, false, false, false],
 * });
 * const c = compare(df, { by: "server", baseline: "a" });
 * assert.deepEqual([c.getColumn("baseline_n").get(0), c.getColumn("left_out_disturbed").get(0)], [5, 1]);
 * ```
 */
export const REDONE = "redone_disturbed";

/** The rows of redone runs per cell and arm (keys then arm, as JSON). */
function redoneCounts(
  redone: pl.DataFrame | null,
  keys: string[],
  by: string,
): Map<string, number> {
  const counts = new Map<string, number>();
  if (!redone || redone.height === 0) return counts;
  const cols = [...keys, by].filter((c) => redone.columns.includes(c));
  for (const r of redone.select(...cols).toRecords() as Rec[]) {
    const k = JSON.stringify([...keys.map((c) => r[c] ?? null), String(r[by])]);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/** The columns of one compare() row from the two arms' summary rows, from `baseline` on. */
function armComparison(
  base: Rec,
  cand: Rec,
  options: CompareOptions & { metric: string },
): Rec {
  const metric = options.metric;
  const direction = metricDirection(metric);
  const baseMedian = base[`median_${metric}`] as number;
  const candMedian = cand[`median_${metric}`] as number;
  const ratio = ratioOf(candMedian, baseMedian);
  const v = verdictOf(base, cand, { ...options, direction });

  return {
    baseline: options.baseline,
    baseline_n: base.n,
    candidate_n: cand.n,
    [`baseline_median_${metric}`]: baseMedian,
    [`candidate_median_${metric}`]: candMedian,
    [`baseline_min_${metric}`]: base[`min_${metric}`],
    [`baseline_max_${metric}`]: base[`max_${metric}`],
    [`candidate_min_${metric}`]: cand[`min_${metric}`],
    [`candidate_max_${metric}`]: cand[`max_${metric}`],
    ratio,
    ratio_ci_low: v.ciLow,
    ratio_ci_high: v.ciHigh,
    verdict: v.verdict,
    direction: `${direction} is better`,
    shift_ratio: v.shiftRatio,
    p_value: v.pValue,
    q_value: null, // filled in across the table
    verdict_note: v.note,
    unstable: unstableText(metric, [["baseline", base], ["candidate", cand]]),
  };
}

/**
 * A frame from plain records, keeping column order and numeric types (Float64 for columns
 * whose names say they are fractional).
 *
 * @deprecated Use `resultsFrame` (analyze) or `rowsFrame` from `src/frame.ts`.
 */
export function rowsFrame(rows: Rec[]): pl.DataFrame {
  return resultsFrame(rows);
}

/**
 * One line on a comparison table as a whole: how many cells differ, how many of those remain
 * after the Benjamini–Hochberg adjustment across the table (false discovery rate `alpha`), and
 * how many are inconclusive, no different or unstable. Reading a 20-cell table cell by cell at
 * 5 % finds one difference by chance on average; the adjusted count does not.
 *
 * @param c A frame from {@link compare}.
 * @param alpha The level. @default {0.05}
 * @returns The line (no trailing newline).
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { compare, verdictSummary } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   test: Array(10).fill("SET"),
 *   server: [...Array(5).fill("a"), ...Array(5).fill("b")],
 *   ops_per_sec: [100, 102, 101, 99, 100, 120, 121, 119, 122, 120],
 * });
 * assert.equal(
 *   verdictSummary(compare(df, { by: "server", baseline: "a" })),
 *   "1 of 1 cells differ (better or worse at 5 % each; 1 after Benjamini–Hochberg, q < 0.05); " +
 *     "0 no difference (interval within ±5 %); 0 inconclusive.",
 * );
 * ```
 */
export function verdictSummary(c: pl.DataFrame, alpha = VERDICT_DEFAULTS.alpha): string {
  const verdicts = c.getColumn("verdict").toArray() as string[];
  const q = c.columns.includes("q_value")
    ? (c.getColumn("q_value").toArray() as (number | null)[])
    : verdicts.map(() => null);
  const count = (v: string) => verdicts.filter((x) => x === v).length;
  const differ = verdicts.filter((v) => v === "better" || v === "worse").length;
  const adjusted =
    verdicts.filter((v, i) => (v === "better" || v === "worse") && q[i] !== null && q[i]! < alpha)
      .length;
  const unstable = c.columns.includes("unstable")
    ? c.height - c.getColumn("unstable").nullCount()
    : 0;
  const pct = (x: number) => `${+(x * 100).toFixed(1)} %`;
  return `${differ} of ${c.height} cells differ (better or worse at ${pct(alpha)} each; ` +
    `${adjusted} after Benjamini–Hochberg, q < ${alpha}); ${count("no difference")} no ` +
    `difference (interval within ±${pct(VERDICT_DEFAULTS.band)}); ${count("inconclusive")} ` +
    `inconclusive.${
      unstable ? ` ${unstable} cell${unstable > 1 ? "s" : ""} unstable (see unstable).` : ""
    }`;
}
