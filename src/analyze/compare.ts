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
 * `unstable`. The rule lives in `_verdict.ts`.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { benjaminiHochberg } from "./_stats.ts";
import { cellVerdict, instability, latencyResolutionMs, VERDICT_DEFAULTS } from "./_verdict.ts";
import type { Direction } from "./units.ts";
import { finiteRows, summarize } from "./summary.ts";
import { metricDirection, resultsFrame } from "./units.ts";
import { comparisonKeys } from "./grouping.ts";

export { type Direction, metricDirection } from "./units.ts";

export { PARAMETER_COLUMNS } from "./grouping.ts";

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
  /** @deprecated Unused since the verdict is a rank test (there is no bootstrap). */
  resamples?: number;
  /** @deprecated Unused since the verdict is a rank test (there is no bootstrap). */
  seed?: number;
}

type Rec = Record<string, unknown>;
function groupKeys(
  df: pl.DataFrame,
  by: string,
  keys: string[] | undefined,
): { keys: string[]; confounded: string[] } {
  return keys ? { keys, confounded: [] } : comparisonKeys(df, by);
}

function need(df: pl.DataFrame, cols: string[]): void {
  for (const c of cols) {
    if (!df.columns.includes(c)) throw new TypeError(`invalid column: ${c} (not in the frame)`);
  }
}

/** The values of a column as strings, each once, in order of first appearance. */
function distinctStrings(df: pl.DataFrame, column: string): string[] {
  return [...new Set((df.getColumn(column).toArray() as unknown[]).map(String))];
}

/** A group of summary rows with the same keys: the keys, and each arm's summary row. */
interface ArmGroup {
  keys: Rec;
  arms: Map<string, Rec>;
}

/**
 * Summarises each arm of `by` per group of `keys` (see {@link summarize}) and collects the arms
 * of each group, groups in order of first appearance.
 */
function armGroups(
  df: pl.DataFrame,
  keys: string[],
  by: string,
  options: { metrics: string[]; values?: boolean; distinct: string[] },
): ArmGroup[] {
  const stats = summarize(df, { keys: [...keys, by], ...options }).toRecords() as Rec[];
  const groups = new Map<string, ArmGroup>();
  for (const r of stats) {
    const k = JSON.stringify(keys.map((c) => r[c] ?? null));
    let g = groups.get(k);
    if (!g) {
      g = { keys: Object.fromEntries(keys.map((c) => [c, r[c]])), arms: new Map() };
      groups.set(k, g);
    }
    g.arms.set(String(r[by]), r);
  }
  return [...groups.values()];
}

/** Run parameters that differ between two arms' summary rows (`distinct_<c>` lists), or null. */
function differs(a: Rec, b: Rec, cols: string[]): string | null {
  const out: string[] = [];
  for (const c of cols) {
    const va = [...new Set((a[`distinct_${c}`] as unknown[]).map(String))];
    const vb = [...new Set((b[`distinct_${c}`] as unknown[]).map(String))];
    if (va.join() !== vb.join()) out.push(`${c} ${va.join("/")} vs ${vb.join("/")}`);
  }
  return out.length ? out.join("; ") : null;
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
 * `unstable` (repetitions with a CV above 10 % or a monotone drift, per arm; else null), and
 * `also_differs`: run parameters that differ between the two arms besides `by` (they are
 * confounded with it; e.g. `keyspace 1000000 vs 1000000000`), or null.
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
  need(df, [options.by, metric, "test"]);
  const { keys, confounded } = groupKeys(df, options.by, options.keys);
  need(df, keys);
  const extra = df.columns.includes("tool") ? ["tool"] : [];
  const rows = finiteRows(
    df.select(...new Set([...keys, ...confounded, ...extra, options.by, metric])),
    metric,
  );
  const arms = distinctStrings(rows, options.by);
  if (!arms.includes(options.baseline)) {
    throw new TypeError(
      `invalid baseline: ${options.baseline} (values of ${options.by}: ${
        arms.join(", ") || "none"
      })`,
    );
  }
  const out: Rec[] = [];
  const groups = armGroups(rows, keys, options.by, {
    metrics: [metric],
    values: true,
    distinct: [...confounded, ...extra],
  });
  for (const g of groups) {
    const base = g.arms.get(options.baseline);
    if (!base) continue;
    for (const arm of arms) {
      const cand = g.arms.get(arm);
      if (arm === options.baseline || !cand) continue;
      out.push({
        ...g.keys,
        [options.by]: arm,
        ...armComparison(base, cand, metric, options),
        also_differs: differs(base, cand, confounded),
      });
    }
  }
  const q = benjaminiHochberg(out.map((r) => (r.p_value as number | null) ?? NaN));
  out.forEach((r, i) => r.q_value = Number.isFinite(q[i]) ? q[i] : null);
  return resultsFrame(sortRows(out, keys));
}

/** The latency resolution of the tools of two arms' summary rows (the coarser), or none. */
function resolutionOf(metric: string, a: Rec, b: Rec): ((v: number) => number) | undefined {
  if (!metric.endsWith("_latency_ms")) return undefined;
  const tools = [a, b].flatMap((r) => (r.distinct_tool as unknown[] | undefined) ?? [])
    .map(String);
  if (tools.length === 0) return undefined;
  return (v) => Math.max(...tools.map((t) => latencyResolutionMs(t, v)));
}

/** Why a cell's repetitions are unstable, per arm (`baseline: CV 12 %`), or null. */
function unstableText(metric: string, pairs: [string, Rec][]): string | null {
  const why = pairs.flatMap(([name, r]) => {
    const w = instability((r[`values_${metric}`] as number[] | undefined) ?? []);
    return w ? [`${name}: ${w}`] : [];
  });
  return why.length ? why.join("; ") : null;
}

/** The verdict of one metric between two arms' summary rows, with the compare options. */
function verdictOf(
  base: Rec,
  cand: Rec,
  metric: string,
  direction: Direction,
  o: { confidence?: number; band?: number; minRuns?: number },
) {
  return cellVerdict(
    (base[`values_${metric}`] as number[] | undefined) ?? [],
    (cand[`values_${metric}`] as number[] | undefined) ?? [],
    direction,
    {
      alpha: 1 - (o.confidence ?? 1 - VERDICT_DEFAULTS.alpha),
      band: o.band,
      minRuns: o.minRuns,
      resolution: resolutionOf(metric, base, cand),
    },
  );
}

/** The columns of one compare() row from the two arms' summary rows, from `baseline` on. */
function armComparison(base: Rec, cand: Rec, metric: string, options: CompareOptions): Rec {
  const direction = metricDirection(metric);
  const baseMedian = base[`median_${metric}`] as number;
  const candMedian = cand[`median_${metric}`] as number;
  const ratio = candMedian / baseMedian;
  const v = verdictOf(base, cand, metric, direction, options);
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

/** Options of {@link delta}. */
export interface DeltaOptions {
  /** Column that changes (`transport`, `server_io_threads`, `server_version`, `data_size_bytes`, …). */
  dimension: string;
  /** Its value before the change. */
  from: string | number;
  /** Its value after. */
  to: string | number;
  /** Grouping columns; by default `test` plus the parameters that vary. */
  keys?: string[];
  /** Confidence of the intervals (see {@link CompareOptions}). @default {0.95} */
  confidence?: number;
  /** Equivalence band of "no difference". @default {0.05} */
  band?: number;
  /** The fewest runs per side for a verdict. @default {4} */
  minRuns?: number;
}

const LATENCIES = ["avg", "p50", "p95", "p99"] as const;

/**
 * The change along one dimension, per test: throughput factor (`to / from` of the median
 * ops/sec) and the change of avg/p50/p95/p99 latency in % (negative = faster), each with the
 * interval and verdict of {@link compare} (`throughput_factor_ci_low`/`_high`,
 * `throughput_verdict`, `<p>_latency_change_ci_low_pct`/`_high_pct`, `<p>_latency_verdict`;
 * a latency verdict says whether the `to` side is better, i.e. faster).
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { delta } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   test: ["GET", "GET"], transport: ["tcp", "rdma"], ops_per_sec: [183163.59, 424826.91],
 *   avg_latency_ms: [0.155, 0.068], p50_latency_ms: [0.151, 0.071],
 *   p95_latency_ms: [0.231, 0.095], p99_latency_ms: [0.287, 0.103],
 * });
 * const d = delta(df, { dimension: "transport", from: "tcp", to: "rdma" });
 * assert.equal(d.getColumn("throughput_factor").get(0).toFixed(2), "2.32");
 * assert.equal(d.getColumn("p50_latency_change_pct").get(0).toFixed(1), "-53.0");
 * ```
 */
export function delta(df: pl.DataFrame, options: DeltaOptions): pl.DataFrame {
  need(df, [options.dimension, "ops_per_sec", "test"]);
  const { keys, confounded } = groupKeys(df, options.dimension, options.keys);
  need(df, keys);
  const metrics = ["ops_per_sec", ...LATENCIES.map((l) => `${l}_latency_ms`)].filter((m) =>
    df.columns.includes(m)
  );
  const rows = df.select(
    ...new Set([
      ...keys,
      ...confounded,
      ...(df.columns.includes("tool") ? ["tool"] : []),
      options.dimension,
      ...metrics,
    ]),
  );
  const values = distinctStrings(rows, options.dimension);
  for (const v of [options.from, options.to]) {
    if (!values.includes(String(v))) {
      throw new TypeError(
        `invalid value: ${v} (values of ${options.dimension}: ${values.join(", ")})`,
      );
    }
  }
  const out: Rec[] = [];
  const extra = df.columns.includes("tool") ? ["tool"] : [];
  const groups = armGroups(rows, keys, options.dimension, {
    metrics,
    values: true,
    distinct: [...confounded, ...extra],
  });
  for (const g of groups) {
    const a = g.arms.get(String(options.from));
    const b = g.arms.get(String(options.to));
    if (!a || !b) continue;
    out.push({
      ...g.keys,
      ...change(a, b, metrics, options),
      also_differs: differs(a, b, confounded),
    });
  }
  return resultsFrame(sortRows(out, keys));
}

/** The columns of one delta() row from the two sides' summary rows, from `from` on. */
function change(a: Rec, b: Rec, metrics: string[], options: DeltaOptions): Rec {
  const fo = a.median_ops_per_sec as number | null;
  const to = b.median_ops_per_sec as number | null;
  const row: Rec = {
    from: String(options.from),
    to: String(options.to),
    from_n: a.n,
    to_n: b.n,
    from_ops_per_sec: fo,
    to_ops_per_sec: to,
    throughput_factor: fo && to !== null ? to / fo : null,
  };
  const tp = verdictOf(a, b, "ops_per_sec", "higher", options);
  row.throughput_factor_ci_low = tp.ciLow;
  row.throughput_factor_ci_high = tp.ciHigh;
  row.throughput_verdict = tp.verdict;
  for (const l of LATENCIES) {
    const m = `${l}_latency_ms`;
    if (!metrics.includes(m)) continue;
    const x = a[`median_${m}`] as number | null;
    const y = b[`median_${m}`] as number | null;
    row[`from_${m}`] = x;
    row[`to_${m}`] = y;
    row[`${l}_latency_change_pct`] = x && y !== null ? ((y - x) / x) * 100 : null;
    const v = verdictOf(a, b, m, "lower", options);
    row[`${l}_latency_change_ci_low_pct`] = v.ciLow === null ? null : (v.ciLow - 1) * 100;
    row[`${l}_latency_change_ci_high_pct`] = v.ciHigh === null ? null : (v.ciHigh - 1) * 100;
    row[`${l}_latency_verdict`] = v.verdict;
  }
  return row;
}

/** Sorts rows by first appearance of their test, then by the other keys (numbers as numbers). */
function sortRows(rows: Rec[], keys: string[]): Rec[] {
  const order = new Map<unknown, number>();
  for (const r of rows) if (!order.has(r.test)) order.set(r.test, order.size);
  const cmp = (a: unknown, b: unknown) =>
    typeof a === "number" && typeof b === "number"
      ? a - b
      : String(a ?? "").localeCompare(String(b ?? ""));
  return rows.map((r, i) => ({ r, i })).sort((p, q) => {
    const t = order.get(p.r.test)! - order.get(q.r.test)!;
    if (t) return t;
    for (const k of keys) {
      if (k === "test") continue;
      const c = cmp(p.r[k], q.r[k]);
      if (c) return c;
    }
    return p.i - q.i;
  }).map((x) => x.r);
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
