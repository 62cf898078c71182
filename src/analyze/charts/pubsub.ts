/**
 * Pub/sub delivery latency against target delivery rate: p50 and p99 per arm, one panel per
 * mode, for the steps of a pub/sub sweep.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { base, logScale, type Rec, testOrder } from "./_common.ts";
import { colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

/** Options of {@link deliveryLatencyChart}. */
export interface DeliveryLatencyChartOptions extends ChartOptions {
  /** The column whose values are the arms. @default {"server"} */
  by?: string;
}

/**
 * Delivery latency (log axis) against target delivery rate (log axis): a solid line for p50
 * and a dashed one for p99 per arm, one panel per test (`PUBSUB_ONE_TO_ONE`, …). The frame's
 * rows are the steps as its table grouped them; nothing is aggregated here.
 *
 * @param steps Rows with `test`, the arm column, `requested_ops_per_sec`, `p50_latency_ms`,
 *   `p99_latency_ms` and optionally `verdict`.
 * @param options Arm column, title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import { deliveryLatencyChart } from "./pubsub.ts";
 * import pl from "nodejs-polars";
 * import assert from "node:assert/strict";
 * const steps = pl.DataFrame({
 *   test: ["PUBSUB_ONE_TO_ONE", "PUBSUB_ONE_TO_ONE"], server: ["redis", "redis"],
 *   requested_ops_per_sec: [21000, 107000], p50_latency_ms: [0.11, 0.1], p99_latency_ms: [0.74, 0.8],
 * });
 * const spec = deliveryLatencyChart(steps) as { data: { values: Record<string, unknown>[] } };
 * assert.equal(spec.data.values.length, 2);
 * ```
 */
export function deliveryLatencyChart(
  steps: pl.DataFrame,
  options: DeliveryLatencyChartOptions = {},
): VegaLiteSpec {
  const by = options.by ?? "server";
  const recs = steps.toRecords() as Rec[];
  const tests = testOrder(recs);
  const single = tests.length <= 1;
  const layer = {
    width: WIDTH,
    height: single ? 340 : 240,
    transform: [{
      fold: ["p50_latency_ms", "p99_latency_ms"],
      as: ["percentile", "latency_ms"],
    }, {
      calculate: "datum.percentile == 'p50_latency_ms' ? 'p50' : 'p99'",
      as: "percentile",
    }],
    mark: { type: "line", point: true },
    encoding: {
      x: logScale("requested_ops_per_sec", "target delivery rate (deliveries/s)"),
      y: logScale("latency_ms", "delivery latency (ms)"),
      color: colorEncoding(by, recs.map((r) => String(r[by]))),
      strokeDash: {
        field: "percentile",
        type: "nominal",
        sort: ["p50", "p99"],
        scale: { domain: ["p50", "p99"], range: [[1, 0], [6, 3]] },
        legend: { symbolType: "stroke", symbolStrokeWidth: 2, symbolStrokeColor: "#444" },
      },
      detail: { field: "percentile" },
      tooltip: [
        { field: "test" },
        { field: by },
        { field: "requested_ops_per_sec", title: "target/s", format: "," },
        { field: "percentile" },
        { field: "latency_ms", format: ".3f" },
        ...(recs.some((r) => r.verdict !== undefined) ? [{ field: "verdict" }] : []),
      ],
    },
  };
  const head = base(
    options.title ?? "pub/sub delivery latency by target rate",
    options.subtitle ?? "p50 solid, p99 dashed",
  );
  if (single) return { ...head, data: { values: recs }, ...layer };
  return {
    ...head,
    data: { values: recs },
    facet: { field: "test", type: "nominal", title: null, sort: tests },
    columns: 1,
    spec: layer,
  };
}
