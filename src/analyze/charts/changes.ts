/**
 * A run history with its change points and outliers: each series over its order values, one
 * panel per series, the runs as points, each segment's mean as a line, each change point as a
 * rule and each single-run outlier as a ring.
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

/** A date (`2026-01-05`) or an ISO 8601 time: order labels drawn on a time axis. */
const DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** One run as the chart draws it. */
interface Point {
  series: string;
  position: number;
  order: string;
  label: string;
  rank: number;
  run_id: unknown;
  value: unknown;
  segment: unknown;
  mean: unknown;
  change: boolean;
  outlier: boolean;
  /** A change point's rule: halfway between the run before and this one (time axis only). */
  at?: string;
}

/** The runs of the drawn series as points. */
function points(recs: Rec[], metric: string): Point[] {
  return recs.map((r) => ({
    series: String(r.series),
    position: r.position as number,
    order: String(r.order_value),
    label: String(r.order_label ?? r.order_value),
    rank: Number(r.order_rank ?? r.position),
    run_id: r.run_id,
    value: r[metric],
    segment: r.segment,
    mean: r[`segment_mean_${metric}`],
    change: r.change === true,
    outlier: r.outlier === true,
  }));
}

/** Each change's rule on a time axis: halfway between the run before and the first after. */
function placeRules(values: Point[]): void {
  const at = new Map(values.map((v) => [`${v.series}\u0000${v.position}`, v]));
  for (const v of values.filter((v) => v.change)) {
    const before = at.get(`${v.series}\u0000${v.position - 1}`);
    const t = Date.parse(v.label);
    const b = before ? Date.parse(before.label) : t;
    v.at = new Date((t + b) / 2).toISOString();
  }
}

/**
 * The x axis: the order value of each run (the night, the version, the commit), as time when
 * every label is a date or a time (`started_at`, nightly folders `2026-01-05/`), else as ordered
 * labels (tags, versions, paths) in the order the series were put in.
 */
function xAxis(values: Point[], orderBy: string) {
  const labels = [...new Map(values.map((v) => [v.rank, v.label]))]
    .sort((a, b) => a[0] - b[0]).map(([, l]) => l);
  const time = labels.length > 0 && labels.every((l) => DATE.test(l));
  const title = orderBy;
  if (time) {
    const x = {
      field: "label",
      type: "temporal",
      scale: { type: "utc" },
      axis: { format: "%Y-%m-%d", labelOverlap: "greedy", labelSeparation: 8 },
      title,
    };
    return { time, x, rule: { x: { field: "at", type: "temporal" } }, offset: 0 };
  }
  const x = {
    field: "label",
    type: "ordinal",
    sort: labels,
    scale: { type: "point", domain: labels, padding: 0.5 },
    axis: { labelAngle: 0, labelOverlap: "greedy", labelSeparation: 8, labelLimit: 140 },
    title,
  };
  // a point scale with padding 0.5: one step is the width over the labels; the rule sits
  // half a step before the first run after the change
  return {
    time,
    x,
    rule: { x: { field: "label", type: "ordinal" } },
    offset: -WIDTH / 2 / labels.length,
  };
}

/**
 * The changes chart of a {@link changeSeries} frame: x is the run's order value (the night, as
 * a date when the order values are dates or times; else tags, versions or paths as ordered
 * labels), y the metric; points are runs, lines the mean of each segment between change points,
 * a red rule marks each change point (between the last run before and the first after) and an
 * orange ring each single-run outlier. Each series (test × parameters × arm, as `changes`
 * groups) is a panel of its own with its own y scale. A history of more series than
 * {@link MAX_CHANGE_PANELS} draws those that changed, the largest changes first, and says in its
 * subtitle how many it leaves out.
 *
 * @param series A frame from `changeSeries` (or `changeHistory`'s `series`).
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
 * const values = (spec.data as { values: { change: boolean; label: string }[] }).values;
 * assert.deepEqual(values.filter((v) => v.change).map((v) => v.label), ["20.csv"]);
 * assert.equal((spec.facet as { row: { field: string } }).row.field, "series");
 * ```
 */
export function changesChart(
  series: pl.DataFrame,
  options: ChangesChartOptions = {},
): VegaLiteSpec {
  const metric = options.metric ?? "ops_per_sec";
  const orderBy = options.orderBy ?? "order";
  const drawn = panels(series, metric, options);
  const recs = series.height === 0
    ? []
    : series.filter(pl.col("series").isIn(drawn.names)).toRecords() as Rec[];
  const values = points(recs, metric);
  const axis = xAxis(values, orderBy);
  if (axis.time) placeRules(values);
  const names = drawn.names;
  const cps = values.filter((v) => v.change).length;
  const odd = values.filter((v) => v.outlier).length;
  const runs = new Set(values.map((v) => v.run_id)).size;
  const head = base(
    options.title ?? `${metricName(metric)} over the history, with its change points`,
    options.subtitle ?? [
      `${metricTitle(metric)}: ${names.length} series, ${runs} runs in order of ${orderBy}`,
      `${cps} change point${cps === 1 ? "" : "s"} (red), ` +
      (odd > 0 ? `${odd} single-run outlier${odd === 1 ? "" : "s"} (orange rings), ` : "") +
      "segment means (black lines)",
      ...(drawn.note ? [drawn.note] : []),
    ],
  );
  return {
    ...head,
    data: { values },
    facet: { row: { field: "series", type: "nominal", sort: names, title: null } },
    resolve: { scale: { y: "independent" } },
    spacing: 16,
    spec: panel(axis),
  };
}

/** One series' panel: the runs, the segment means, the change rules and the outlier rings. */
function panel(axis: ReturnType<typeof xAxis>) {
  const x = axis.x;
  return {
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
        mark: {
          type: "rule",
          color: "#d62728",
          strokeWidth: 1.5,
          strokeDash: [4, 3],
          ...(axis.offset ? { xOffset: axis.offset } : {}),
        },
        encoding: axis.rule,
      },
      {
        transform: [{ filter: "datum.outlier" }],
        mark: { type: "point", filled: false, size: 160, strokeWidth: 2, color: "#ff7f0e" },
        encoding: { x, y: { field: "value", type: "quantitative" } },
      },
    ],
  };
}
