/**
 * Throughput (or another metric) by test: one bar per arm, min–max whiskers.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { finiteRows, summarize } from "../summary.ts";
import { metricName, metricTitle } from "../units.ts";
import { base, type Rec, testOrder } from "./_common.ts";
import { armOrder, colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

/**
 * Throughput (or another metric) by test, one bar per arm (median of repetitions) with a
 * min–max whisker when there are repetitions.
 *
 * @param results A results frame (loadResults): `test`, the `by` column and the metric.
 */
export function throughputChart(
  results: pl.DataFrame,
  options: ChartOptions & { by?: string; metric?: string } = {},
): VegaLiteSpec {
  const by = options.by ?? "server";
  const metric = options.metric ?? "ops_per_sec";
  const rows = results.select("test", by, metric);
  const stats = summarize(finiteRows(rows, metric), { keys: ["test", by], metrics: [metric] });
  const values = (stats.toRecords() as Rec[]).map((r) => ({
    test: String(r.test),
    [by]: String(r[by]),
    value: r[`median_${metric}`],
    min: r[`min_${metric}`],
    max: r[`max_${metric}`],
    n: r.n,
  })).sort((a, b) => a.test.localeCompare(b.test) || String(a[by]).localeCompare(String(b[by])));
  const tests = testOrder(rows.toRecords() as Rec[]);
  const arms = values.map((v) => String(v[by]));
  const x = {
    field: "test",
    type: "nominal",
    title: "test",
    sort: tests,
    axis: { labelAngle: -40 },
  };
  return {
    ...base(
      options.title ?? `${metricName(metric)} by test`,
      options.subtitle,
    ),
    width: WIDTH,
    height: 360,
    data: { values },
    encoding: { x, xOffset: { field: by, sort: armOrder(arms) } },
    layer: [
      {
        mark: { type: "bar" },
        encoding: {
          y: { field: "value", type: "quantitative", title: metricTitle(metric) },
          color: colorEncoding(by, arms),
          tooltip: [{ field: "test" }, { field: by }, {
            field: "value",
            title: "median",
            format: ",.2f",
          }, { field: "n" }],
        },
      },
      {
        transform: [{ filter: "datum.n > 1" }],
        mark: { type: "rule", color: "#333" },
        encoding: { y: { field: "min", type: "quantitative" }, y2: { field: "max" } },
      },
    ],
  };
}
