/**
 * A change along one dimension: throughput factor beside latency change per test.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { base, type Rec, testOrder } from "./_common.ts";
import { colorFor } from "./color.ts";
import type { ChartOptions, VegaLiteSpec } from "./theme.ts";

/**
 * A change along one dimension (from {@link delta}): throughput factor per test (line at 1)
 * beside the latency change in % per test and percentile (line at 0).
 */
export function deltaChart(d: pl.DataFrame, options: ChartOptions = {}): VegaLiteSpec {
  const recs = d.toRecords() as Rec[];
  const tests = testOrder(recs);
  const testAxis = {
    field: "test",
    type: "nominal",
    sort: tests,
    title: "test",
    axis: { labelAngle: -40 },
  };
  const from = String(recs[0]?.from ?? "from");
  const to = String(recs[0]?.to ?? "to");
  const lat: Rec[] = [];
  for (const r of recs) {
    for (const p of ["avg", "p50", "p95", "p99"]) {
      const v = r[`${p}_latency_change_pct`];
      if (typeof v === "number") lat.push({ test: r.test, latency: p, change_pct: v });
    }
  }
  return {
    ...base(options.title ?? `${to} vs ${from}`, options.subtitle ?? "medians of repetitions"),
    hconcat: [
      {
        width: 300,
        height: 300,
        data: { values: recs },
        layer: [
          {
            mark: { type: "bar", color: colorFor(to) },
            encoding: {
              x: testAxis,
              y: {
                field: "throughput_factor",
                type: "quantitative",
                title: `throughput factor (${to} / ${from})`,
              },
              tooltip: [{ field: "test" }, { field: "throughput_factor", format: ".2f" }],
            },
          },
          { mark: { type: "rule", strokeDash: [4, 3] }, encoding: { y: { datum: 1 } } },
        ],
      },
      {
        width: 300,
        height: 300,
        data: { values: lat },
        layer: [
          {
            mark: { type: "bar" },
            encoding: {
              x: testAxis,
              xOffset: { field: "latency", sort: ["avg", "p50", "p95", "p99"] },
              y: { field: "change_pct", type: "quantitative", title: "latency change (%)" },
              color: {
                field: "latency",
                type: "nominal",
                title: "latency",
                sort: ["avg", "p50", "p95", "p99"],
                scale: { scheme: "blues" },
              },
              tooltip: [{ field: "test" }, { field: "latency" }, {
                field: "change_pct",
                format: ".1f",
              }],
            },
          },
          { mark: { type: "rule" }, encoding: { y: { datum: 0 } } },
        ],
      },
    ],
    resolve: { scale: { color: "independent" } },
  };
}
