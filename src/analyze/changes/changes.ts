/**
 * Change points and single-run outliers over run histories: which night, which version, which
 * commit moved a series, and which one run stood apart from its neighbours. A series is one test
 * × the parameters that identify a cell (the grouping `compare` uses, see `grouping.ts`) × the
 * arm column when there is one; its runs are put in order by a run column (`started_at`,
 * `source_path`, `server_version`, `tag:<key>`, …) and the change points of a metric are found
 * with E-divisive (see `_edivisive.ts`: Matteson & James 2014, with Hunter's / Apache Otava's
 * windowed weak/strong scheme and deterministic t test); each run is then tested against the
 * other runs of its segment (`outliers.ts`). One analysis ({@link changeHistory}) gives the
 * change points, the outliers and the chart's series, so a table and a figure of one history
 * with one set of options show the same points.
 *
 * Input: a results frame from `loadResults` (results ⋈ runs).
 *
 * @module
 */

import type pl from "nodejs-polars";
import { type ChangePoint, changePoints, type EDivisiveOptions } from "./_edivisive.ts";
import { changePctOf, median } from "../_stats.ts";
import { comparisonKeys } from "../grouping.ts";
import { type Direction, metricDirection, resultsFrame } from "../units.ts";
import { defaultOrder, orderText, runDifferences } from "./order.ts";
import { adjustedP, type RunTest, segmentTests } from "./outliers.ts";
import {
  armColumn,
  ENVIRONMENT_COLUMNS,
  type OrderAxis,
  orderAxis,
  prepare,
  type Rec,
  RUN_FACTS,
  type Series,
} from "./_series.ts";

export { compareOrder, defaultOrder } from "./order.ts";
export { ENVIRONMENT_COLUMNS };
export { changesForPeople, outliersForPeople } from "./people.ts";

/** Options of {@link changes}, {@link outliers}, {@link changeSeries} and {@link changeHistory}. */
export interface ChangesOptions extends EDivisiveOptions {
  /**
   * The run column that orders each series: any run column (`started_at`, `source_path`,
   * `server_version`, `label`, …) or `tag:<key>` for a tag. Strings are compared in natural
   * order (digit runs as numbers: `7.2.10` after `7.2.9`, `build-10` after `build-9`), times as
   * times; ties keep the order of `started_at`, then `source_path` and `source_line_start`, then
   * `run_id`.
   * @default {defaultOrder(df): started_at, or source_path when no run has a start time}
   */
  orderBy?: string;
  /**
   * The results metric.
   * @default {"ops_per_sec"}
   */
  metric?: string;
  /** Only this test (`SET`, `GET`, …). */
  test?: string;
  /**
   * The arm column: each of its values is a series of its own. By default `label` when the
   * runs' labels split the data, else none.
   */
  by?: string;
}

/** A series with what was found in it. */
interface Found extends Series {
  points: ChangePoint[];
  /** The outliers by position: the run's test and its adjusted p. */
  outliers: Map<number, RunTest & { adjusted: number }>;
}

/** One analysis of a history: the series with their change points and outliers. */
interface Analysis {
  keys: string[];
  metric: string;
  orderBy: string;
  direction: Direction;
  series: Found[];
  /** How many runs were tested for outliers (the Bonferroni family). */
  tested: number;
  /** The order values of every series, ranked and labelled. */
  axis: OrderAxis;
}

/** The change points and outliers of every series (see the module doc). */
function analyse(df: pl.DataFrame, options: ChangesOptions): Analysis {
  const metric = options.metric ?? "ops_per_sec";
  const orderBy = options.orderBy ?? defaultOrder(df);
  const direction = metricDirection(metric);
  const { keys, series } = prepare(df, { ...options, metric, orderBy });
  const level = options.maxPValue ?? 0.001;
  const found = series.map((s) => {
    const points = changePoints(s.values, options);
    return { ...s, points, tests: segmentTests(s.values, points.map((p) => p.index)) };
  });
  const tested = found.reduce((n, s) => n + s.tests.length, 0);
  return {
    keys,
    metric,
    orderBy,
    direction,
    tested,
    axis: orderAxis(series),
    series: found.map(({ tests, ...s }) => ({
      ...s,
      outliers: new Map(
        tests.map((t) => ({ ...t, adjusted: adjustedP(t.pValue, tested) }))
          .filter((t) => t.adjusted <= level).map((t) => [t.index, t]),
      ),
    })),
  };
}

/** better / worse: whether `after` moved from `before` the way the metric's unit calls better. */
function verdict(after: number, before: number, direction: Direction): string {
  return (after > before) === (direction === "higher") ? "better" : "worse";
}

/** The change point rows of an analysis (see {@link changes}). */
function changeRows(a: Analysis): pl.DataFrame {
  const { metric, orderBy, keys } = a;
  const skip = new Set([...keys, metric, ...RUN_FACTS, orderBy]);
  const out: Rec[] = [];
  for (const s of a.series) {
    for (const cp of s.points) {
      const before = s.rows[cp.index - 1];
      const after = s.rows[cp.index];
      out.push({
        ...s.keys,
        index: cp.index,
        order_by: orderBy,
        order_before: orderText(before.__order),
        order_after: orderText(after.__order),
        run_before: before.run_id,
        run_after: after.run_id,
        n_before: cp.index - cp.start,
        n_after: cp.end - cp.index,
        [`mean_before_${metric}`]: cp.meanBefore,
        [`mean_after_${metric}`]: cp.meanAfter,
        [`median_before_${metric}`]: median(s.values.slice(cp.start, cp.index)),
        [`median_after_${metric}`]: median(s.values.slice(cp.index, cp.end)),
        // null from a mean of 0 (no percentage of nothing): the means say what happened
        change_pct: changePctOf(cp.meanAfter, cp.meanBefore),
        verdict: verdict(cp.meanAfter, cp.meanBefore, a.direction),
        p_value: cp.pValue,
        also_differs: runDifferences(before, after, skip),
      });
    }
  }
  return out.length > 0 ? resultsFrame(out) : emptyFrame([
    ...keys,
    ...["index", "order_by", "order_before", "order_after", "run_before", "run_after"],
    ...["n_before", "n_after", `mean_before_${metric}`, `mean_after_${metric}`],
    ...[`median_before_${metric}`, `median_after_${metric}`, "change_pct", "verdict"],
    ...["p_value", "also_differs"],
  ]);
}

/** The outlier rows of an analysis (see {@link outliers}). */
function outlierRows(a: Analysis): pl.DataFrame {
  const { metric, orderBy, keys } = a;
  const out: Rec[] = [];
  for (const s of a.series) {
    for (const t of s.outliers.values()) {
      const r = s.rows[t.index];
      out.push({
        ...s.keys,
        index: t.index,
        order_by: orderBy,
        order_value: orderText(r.__order),
        order_label: a.axis.label.get(orderText(r.__order)),
        run_id: r.run_id,
        [metric]: s.values[t.index],
        [`segment_mean_${metric}`]: t.meanOthers,
        segment_runs: t.end - t.start,
        change_pct: changePctOf(s.values[t.index], t.meanOthers),
        verdict: verdict(s.values[t.index], t.meanOthers, a.direction),
        p_value: t.pValue,
        p_adjusted: t.adjusted,
        runs_tested: a.tested,
      });
    }
  }
  return out.length > 0 ? resultsFrame(out) : emptyFrame([
    ...keys,
    ...["index", "order_by", "order_value", "order_label", "run_id", metric],
    `segment_mean_${metric}`,
    ...["segment_runs", "change_pct", "verdict", "p_value", "p_adjusted", "runs_tested"],
  ]);
}

/** Every run of an analysis with its segment (see {@link changeSeries}). */
function seriesRows(a: Analysis, by: string | undefined): pl.DataFrame {
  const { metric, keys, axis } = a;
  const out: Rec[] = [];
  for (const s of a.series) {
    const bounds = [0, ...s.points.map((c) => c.index), s.values.length];
    const label = keys.map((k, i) => i === 0 || k === by ? String(s.keys[k]) : `${k} ${s.keys[k]}`)
      .join(" · ");
    for (let seg = 0; seg + 1 < bounds.length; seg++) {
      const vals = s.values.slice(bounds[seg], bounds[seg + 1]);
      const mean = vals.reduce((x, y) => x + y, 0) / vals.length;
      for (let i = bounds[seg]; i < bounds[seg + 1]; i++) {
        const order = orderText(s.rows[i].__order);
        out.push({
          ...s.keys,
          series: label,
          position: i,
          order_value: order,
          order_label: axis.label.get(order),
          order_rank: axis.rank.get(order),
          run_id: s.rows[i].run_id,
          [metric]: s.values[i],
          segment: seg,
          [`segment_mean_${metric}`]: mean,
          change: seg > 0 && i === bounds[seg],
          outlier: s.outliers.has(i),
        });
      }
    }
  }
  return resultsFrame(out);
}

/** A frame of no row with these columns. */
function emptyFrame(cols: string[]): pl.DataFrame {
  return resultsFrame([Object.fromEntries(cols.map((c) => [c, null]))]).head(0);
}

/** What one analysis of a history gives (see {@link changeHistory}). */
export interface ChangeHistory {
  /** The change points ({@link changes}). */
  changes: pl.DataFrame;
  /** The single-run outliers ({@link outliers}). */
  outliers: pl.DataFrame;
  /** Every run with its segment, change and outlier marks ({@link changeSeries}). */
  series: pl.DataFrame;
  /** How many runs were tested for outliers (every series looked at). */
  runsTested: number;
}

/**
 * The change points, the single-run outliers and the chart's series of a history from one
 * analysis: what `kvlab changes` prints and `kvlab plot changes` draws with the same options.
 *
 * @param df A results frame (results ⋈ runs).
 * @param options Order, metric, test, arm column and the detector's thresholds.
 * @returns The three frames and the number of runs tested for outliers.
 * @throws {TypeError} As {@link changes}.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { changeHistory } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const n = 60;
 * const ops = Array.from({ length: n }, (_, i) => (i < 30 ? 100 : 90) + ((i * 7) % 5) - 2);
 * ops[45] = 45; // one night at half
 * const df = pl.DataFrame({
 *   run_id: Array.from({ length: n }, (_, i) => `r${i}`), test: Array(n).fill("SET"),
 *   source_path: Array.from({ length: n }, (_, i) => `nightly/${1000 + i}/out.csv`),
 *   ops_per_sec: ops,
 * });
 * const h = changeHistory(df, { orderBy: "source_path" });
 * assert.deepEqual(h.changes.getColumn("index").toArray(), [30]);
 * assert.deepEqual(h.outliers.getColumn("order_value").toArray(), ["nightly/1045/out.csv"]);
 * assert.equal(h.series.filter(pl.col("outlier")).getColumn("position").get(0), 45);
 * assert.equal(h.series.getColumn("order_label").get(0), "1000");
 * ```
 */
export function changeHistory(df: pl.DataFrame, options: ChangesOptions = {}): ChangeHistory {
  const a = analyse(df, options);
  return {
    changes: changeRows(a),
    outliers: outlierRows(a),
    series: seriesRows(a, options.by),
    runsTested: a.tested,
  };
}

/**
 * The change points of every series (see the module doc).
 *
 * @param df A results frame (results ⋈ runs).
 * @param options Order, metric, test, arm column and the detector's thresholds.
 * @returns One row per change point, series by series in order: the series keys (`test`, the
 * parameters that vary, the arm column), `index` (0-based position in the ordered series of
 * the first run after the change), `order_by`, `order_before` / `order_after` and `run_before`
 * / `run_after` (the runs just before and after), `n_before` / `n_after` (runs of the segments
 * either side, up to the neighbouring change points), `mean_before_<metric>`,
 * `mean_after_<metric>`, `median_before_<metric>`, `median_after_<metric>`, `change_pct`
 * (of the means; null when the mean before is 0, see `ratioOf`), `verdict` (better / worse by the metric's unit), `p_value`, and
 * `also_differs`: run facts that differ between the runs just before and after (host, tool
 * or server version, confounded parameters, `tag:<key>`), or null.
 * @throws {TypeError} For an unknown column, order, test or metric direction, or when no run
 * has the order value.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { changes } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const n = 60;
 * const df = pl.DataFrame({
 *   run_id: Array.from({ length: n }, (_, i) => `r${i}`),
 *   test: Array(n).fill("SET"),
 *   source_path: Array.from({ length: n }, (_, i) => `nightly/night-${i}/out.csv`),
 *   server_version: Array.from({ length: n }, (_, i) => (i < 40 ? "7.2.4" : "7.2.5")),
 *   ops_per_sec: Array.from({ length: n }, (_, i) => (i < 40 ? 100 : 90) + ((i * 7) % 5) - 2),
 * });
 * const c = changes(df, { orderBy: "source_path" }).toRecords();
 * assert.equal(c.length, 1);
 * assert.equal(c[0].index, 40);
 * assert.equal(c[0].order_after, "nightly/night-40/out.csv");
 * assert.equal(c[0].verdict, "worse");
 * assert.equal(c[0].also_differs, "server_version 7.2.4 vs 7.2.5");
 * ```
 */
export function changes(df: pl.DataFrame, options: ChangesOptions = {}): pl.DataFrame {
  return changeRows(analyse(df, options));
}

/**
 * The single-run outliers of every series: runs far from the other runs of their segment (the
 * runs between neighbouring change points), by the test of `outliers.ts`, kept when their p
 * times the runs tested in every series looked at (Bonferroni) is at most `maxPValue`.
 *
 * @param df A results frame (results ⋈ runs).
 * @param options As for {@link changes}; `maxPValue` is the level of the adjusted p.
 * @returns One row per outlier, series by series in order: the series keys, `index` (its place
 * in the ordered series), `order_by`, `order_value`, `order_label` (as `changeSeries` labels it),
 * `run_id`, the metric, `segment_mean_<metric>`
 * (the mean of the other runs of its segment), `segment_runs`, `change_pct` (of the run against
 * that mean), `verdict` (better / worse), `p_value` (the run's own), `p_adjusted` (× the runs
 * tested, at most 1) and `runs_tested`.
 * @throws {TypeError} As {@link changes}.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { changes, outliers } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const n = 30;
 * const ops = Array.from({ length: n }, (_, i) => 100 + ((i * 7) % 5) - 2);
 * ops[12] = 50; // one night at half: not a change point, an outlier
 * const df = pl.DataFrame({
 *   run_id: Array.from({ length: n }, (_, i) => `r${i}`), test: Array(n).fill("GET"),
 *   source_path: Array.from({ length: n }, (_, i) => `n/${i}.csv`), ops_per_sec: ops,
 * });
 * assert.equal(changes(df).height, 0);
 * const o = outliers(df).toRecords()[0];
 * assert.deepEqual([o.index, o.verdict, o.runs_tested], [12, "worse", 30]);
 * assert.ok((o.p_adjusted as number) < 1e-10);
 * ```
 */
export function outliers(df: pl.DataFrame, options: ChangesOptions = {}): pl.DataFrame {
  return outlierRows(analyse(df, options));
}

/**
 * Every run of every series in order, with its segment: what the changes chart draws, grouped
 * as {@link changes} groups, marked as {@link changes} and {@link outliers} find.
 *
 * @param df A results frame.
 * @param options As for {@link changes}.
 * @returns One row per run: the series keys, `series` (the keys as one label, e.g.
 * `SET · clients 50`), `position` (0-based place in the ordered series), `order_value` (text),
 * `order_label` (the order value without the folder and file name every value shares:
 * `2026-01-05` for `nightly/2026-01-05/bench.csv`), `order_rank` (its place among the order
 * values of every series), `run_id`, the metric, `segment` (0-based number of the segment between
 * change points), `segment_mean_<metric>`, `change` (true on the first run after a change point)
 * and `outlier` (true on a single-run outlier).
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { changeSeries } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const n = 40;
 * const df = pl.DataFrame({
 *   run_id: Array.from({ length: n }, (_, i) => `r${i}`),
 *   test: Array(n).fill("GET"),
 *   source_path: Array.from({ length: n }, (_, i) => `n/${i}.csv`),
 *   ops_per_sec: Array.from({ length: n }, (_, i) => (i < 20 ? 100 : 110) + (i % 3) - 1),
 * });
 * const s = changeSeries(df, { orderBy: "source_path" });
 * assert.equal(s.height, n);
 * assert.deepEqual(s.getColumn("segment").unique().sort().toArray(), [0, 1]);
 * assert.equal(s.filter(pl.col("change")).getColumn("position").get(0), 20);
 * assert.equal(s.filter(pl.col("outlier")).height, 0);
 * ```
 */
export function changeSeries(df: pl.DataFrame, options: ChangesOptions = {}): pl.DataFrame {
  return seriesRows(analyse(df, options), options.by);
}

/**
 * Whether a results frame has a history worth looking for change points in: some series
 * (test × the parameters that vary × the label when labels split the data) with at least
 * `minRuns` runs. A comparison of arms with a few repetitions each has none.
 *
 * @param df A results frame.
 * @param minRuns Fewest runs of one series.
 * @returns Whether it does.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { hasHistory } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: Array(30).fill("SET"), ops_per_sec: Array(30).fill(1) });
 * assert.equal(hasHistory(df), true);
 * assert.equal(hasHistory(df.head(10)), false);
 * ```
 */
export function hasHistory(df: pl.DataFrame, minRuns = 20): boolean {
  if (!df.columns.includes("test") || df.height < minRuns) return false;
  const by = armColumn(df, undefined);
  const keys = [...comparisonKeys(df, by ?? "label").keys, ...(by ? [by] : [])];
  const counts = df.groupBy(keys).len().getColumn("len").toArray() as number[];
  return counts.some((n) => n >= minRuns);
}
