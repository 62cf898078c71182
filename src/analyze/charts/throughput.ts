/**
 * Throughput (or another metric) by test: one bar per arm and group, min–max whiskers.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { comparisonKeys } from "../grouping.ts";
import { finiteRows, summarize } from "../summary.ts";
import { metricName, metricTitle } from "../units.ts";
import {
  base,
  type Rec,
  rowsPerGroup,
  runsPhrase,
  testAxis,
  testOrder,
  withGroups,
} from "./_common.ts";
import { armOrder, colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

/** Options of {@link throughputChart}. */
export interface ThroughputChartOptions extends ChartOptions {
  /** The column whose values are the arms. @default {"server"} */
  by?: string;
  /** The metric. @default {"ops_per_sec"} */
  metric?: string;
  /**
   * The grouping: `test` and the parameters that split groups. @default {comparisonKeys} (as
   * `compare` groups: `test` plus each parameter that varies within an arm)
   */
  keys?: string[];
}

/**
 * Throughput (or another metric) by test: one bar per arm (the median of its repetitions, as
 * `compare` reports it) with a min–max whisker when there are repetitions. Groups `compare`
 * keeps apart (e.g. `clients` 10 and 50 within each arm) are drawn in their own panels, never
 * pooled.
 *
 * @param results A results frame (loadResults): `test`, the `by` column and the metric.
 * @param options Arm column, metric, grouping, title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { throughputChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET", "SET"], server: ["redis", "redis"], clients: [1, 50],
 *   ops_per_sec: [100, 900] });
 * const spec = throughputChart(df);
 * assert.deepEqual((spec.data as { values: { value: number }[] }).values.map((v) => v.value), [100, 900]);
 * assert.equal((spec.facet as { row: { field: string } }).row.field, "group");
 * ```
 */
export function throughputChart(
  results: pl.DataFrame,
  options: ThroughputChartOptions = {},
): VegaLiteSpec {
  const by = options.by ?? "server";
  const metric = options.metric ?? "ops_per_sec";
  const keys = options.keys ?? comparisonKeys(results, by).keys;
  const extra = keys.filter((k) => k !== "test");
  const rows = results.select(...new Set([...keys, by, metric]));
  const stats = summarize(finiteRows(rows, metric), { keys: [...keys, by], metrics: [metric] });
  const { values, groups } = withGroups(
    (stats.toRecords() as Rec[]).map((r) => ({
      ...Object.fromEntries(keys.map((k) => [k, r[k]])),
      test: String(r.test),
      [by]: String(r[by]),
      value: r[`median_${metric}`],
      min: r[`min_${metric}`],
      max: r[`max_${metric}`],
      n: r.n,
    })).sort((a, b) => a.test.localeCompare(b.test) || String(a[by]).localeCompare(String(b[by]))),
    extra,
  );
  const arms = values.map((v) => String(v[by]));
  const runs = runsPhrase(values.map((v) => v.n), "arm");
  const head = base(
    options.title ?? `${metricName(metric)} by test`,
    options.subtitle ??
      (runs.startsWith("one")
        ? `bars: ${runs}, so no whiskers`
        : `bars: ${runs}; whiskers: min–max of the runs`),
  );
  const tests = testOrder(rows.toRecords() as Rec[]);
  const unit = {
    width: WIDTH,
    height: extra.length ? 240 : 360,
    encoding: {
      x: {
        field: "test",
        type: "nominal",
        title: "test",
        sort: tests,
        axis: testAxis(tests, WIDTH),
      },
      xOffset: { field: by, sort: armOrder(arms) },
    },
    layer: [
      {
        mark: { type: "bar" },
        encoding: {
          y: { field: "value", type: "quantitative", title: metricTitle(metric) },
          color: colorEncoding(by, arms),
          tooltip: [
            { field: "test" },
            ...extra.map((field) => ({ field })),
            { field: by },
            {
              field: "value",
              title: "median",
              format: ",.2f",
            },
            { field: "min", format: ",.2f" },
            { field: "max", format: ",.2f" },
            { field: "n" },
          ],
        },
      },
      {
        transform: [{ filter: "datum.n > 1" }],
        mark: { type: "rule", color: "#333" },
        encoding: { y: { field: "min", type: "quantitative" }, y2: { field: "max" } },
      },
    ],
  };
  // each panel its own y scale: pipeline 1's bars are not flattened beside pipeline 16's
  return rowsPerGroup(head, { values, unit, groups, independentY: true });
}
