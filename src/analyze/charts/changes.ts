/**
 * A run history with its change points: each series over its order, one panel per series,
 * the runs as points, each segment's mean as a line and each change point as a rule.
 *
 * @module
 */

import pl from "nodejs-polars";
import { metricName, metricTitle } from "../units.ts";
import { base, type Rec } from "./_common.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

/** Options of {@link changesChart}. */
export interface ChangesChartOptions extends ChartOptions {
  /**
   * The metric.
   * @default {"ops_per_sec"}
   */
  metric?: string;
  /** The run column the series are ordered by, for the x axis title. @default {"order"} */
  orderBy?: string;
  /**
   * Draw only the series with at least one change point (all when none has one).
   * @default {false}
   */
  changedOnly?: boolean;
}

/**
 * The most panels a changes chart draws: a history of thousands of series (2,000 tests × 30
 * nights) draws the series that changed most, and counts the rest, so the chart stays a picture
 * a page can show (one panel is 156 px high) and memory stays bounded.
 */
export const MAX_CHANGE_PANELS = 20;

/**
 * The series a changes chart draws, in the frame's order, and what it says of those it does
 * not. All of them when they fit ({@link MAX_CHANGE_PANELS}; `changedOnly`: those that changed,
 * or all when none did); else the series that changed, those whose largest change of segment
 * mean is largest first, and when none changed the first ones.
 */
function panels(
  series: pl.DataFrame,
  metric: string,
  options: ChangesChartOptions,
): { names: string[]; note: string | null } {
  if (series.height === 0) return { names: [], note: null };
  const mean = pl.col(`segment_mean_${metric}`);
  const previous = mean.shift(1).over("series");
  const per = series.lazy()
    .select(
      pl.col("series"),
      pl.col("change"),
      pl.when(pl.col("change")).then(mean.minus(previous).abs().div(previous.abs()))
        .otherwise(pl.lit(null)).alias("size"),
    )
    .groupBy("series", true)
    .agg(pl.col("change").any().alias("changed"), pl.col("size").max().alias("size"))
    .collectSync();
  const all = per.getColumn("series").toArray().map(String);
  const changed = per.filter(pl.col("changed"));
  const candidates = options.changedOnly && changed.height > 0
    ? changed.getColumn("series").toArray().map(String)
    : all;
  if (candidates.length <= MAX_CHANGE_PANELS) return { names: candidates, note: null };
  const n = MAX_CHANGE_PANELS;
  if (changed.height === 0) {
    return {
      names: all.slice(0, n),
      note: `the first ${n} of ${all.length} series; none changed, ${all.length - n} not drawn`,
    };
  }
  const biggest = new Set(
    changed.sort("size", true, true).head(n).getColumn("series").toArray().map(String),
  );
  const names = all.filter((s) => biggest.has(s));
  const unchanged = all.length - changed.height;
  const rest = changed.height - names.length;
  return {
    names,
    note: `${names.length} of the ${changed.height} series that changed (the largest changes)` +
      (rest > 0 ? `; ${rest} more changed, not drawn` : "") +
      (unchanged > 0 ? `; ${unchanged} without a change point, not drawn` : ""),
  };
}

/**
 * The changes chart of a {@link changeSeries} frame: x is the run's place in the ordered
 * series, y the metric; points are runs, lines the mean of each segment between change
 * points, and a red rule marks each change point (between the last run before and the first
 * after). Each series (test × parameters × arm, as `changes` groups) is a panel of its own with
 * its own y scale. A history of more series than {@link MAX_CHANGE_PANELS} draws those that
 * changed, the largest changes first, and says in its subtitle how many it leaves out.
 *
 * @param series A frame from `changeSeries`.
 * @param options Metric, order name, title, whether to leave out unchanged series.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { changeSeries } from "../changes/changes.ts";
 * import { changesChart } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const n = 40;
 * const df = pl.DataFrame({
 *   run_id: Array.from({ length: n }, (_, i) => `r${i}`), test: Array(n).fill("GET"),
 *   source_path: Array.from({ length: n }, (_, i) => `n/${i}.csv`),
 *   ops_per_sec: Array.from({ length: n }, (_, i) => (i < 20 ? 100 : 110) + (i % 3) - 1),
 * });
 * const spec = changesChart(changeSeries(df, { orderBy: "source_path" }), { orderBy: "source_path" });
 * const values = (spec.data as { values: { change: boolean; at: number }[] }).values;
 * assert.deepEqual(values.filter((v) => v.change).map((v) => v.at), [19.5]);
 * assert.equal((spec.facet as { row: { field: string } }).row.field, "series");
 * ```
 */
export function changesChart(
  series: pl.DataFrame,
  options: ChangesChartOptions = {},
): VegaLiteSpec {
  const metric = options.metric ?? "ops_per_sec";
  const drawn = panels(series, metric, options);
  const recs = series.height === 0
    ? []
    : series.filter(pl.col("series").isIn(drawn.names)).toRecords() as Rec[];
  const values = recs.map((r) => ({
    series: String(r.series),
    position: r.position,
    order: String(r.order_value),
    run_id: r.run_id,
    value: r[metric],
    segment: r.segment,
    mean: r[`segment_mean_${metric}`],
    change: r.change === true,
    at: (r.position as number) - 0.5,
  }));
  const names = drawn.names;
  const cps = values.filter((v) => v.change).length;
  const points = values.length;
  const head = base(
    options.title ?? `${metricName(metric)} over the history, with its change points`,
    options.subtitle ?? [
      `${metricTitle(metric)}: ${names.length} series, ${points} runs in order of ` +
      `${options.orderBy ?? "order"}`,
      `${cps} change point${cps === 1 ? "" : "s"} (red), segment means (black lines)`,
      ...(drawn.note ? [drawn.note] : []),
    ],
  );
  const x = {
    field: "position",
    type: "quantitative",
    scale: { nice: false },
    title: `run (in order of ${options.orderBy ?? "order"})`,
  };
  const unit = {
    width: WIDTH,
    height: 140,
    layer: [
      {
        mark: { type: "point", filled: true, size: 18, opacity: 0.6, color: "#4c78a8" },
        encoding: {
          x,
          y: {
            field: "value",
            type: "quantitative",
            // the unit is in the subtitle: a rotated title longer than a panel pushes panels apart
            title: null,
            scale: { zero: false },
          },
          tooltip: [
            { field: "series" },
            { field: "position", title: "index" },
            { field: "order" },
            { field: "run_id" },
            { field: "value", format: ",.2f" },
          ],
        },
      },
      {
        mark: { type: "line", color: "#222", strokeWidth: 2 },
        encoding: {
          x,
          y: { field: "mean", type: "quantitative" },
          detail: { field: "segment", type: "nominal" },
        },
      },
      {
        transform: [{ filter: "datum.change" }],
        mark: { type: "rule", color: "#d62728", strokeWidth: 1.5, strokeDash: [4, 3] },
        encoding: { x: { field: "at", type: "quantitative" } },
      },
    ],
  };
  return {
    ...head,
    data: { values },
    facet: { row: { field: "series", type: "nominal", sort: names, title: null } },
    resolve: { scale: { y: "independent" } },
    spacing: 16,
    spec: unit,
  };
}
