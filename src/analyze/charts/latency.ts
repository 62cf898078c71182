/**
 * Latency spectra: latency against percentile on a "nines" axis.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { base, type Rec, testOrder } from "./_common.ts";
import { colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

const NINES_LABELS =
  "datum.value == 0 ? '0%' : datum.value == 1 ? '90%' : datum.value == 2 ? '99%' : datum.value == 3 ? '99.9%' : datum.value == 4 ? '99.99%' : datum.value == 5 ? '99.999%' : datum.value == 6 ? 'max' : ''";

/**
 * Latency spectrum (from {@link latencySpectrum}): latency against percentile on a "nines"
 * axis (50 %, 90 %, 99 %, 99.9 % … evenly spaced), log latency axis, one line per arm, one
 * panel per test.
 */
export function latencyChart(
  spectrum: pl.DataFrame,
  options: ChartOptions & { by?: string } = {},
): VegaLiteSpec {
  const by = options.by ?? "server";
  const recs = spectrum.toRecords() as Rec[];
  const arms = recs.map((r) => String(r[by]));
  const tests = testOrder(recs);
  const single = tests.length === 1;
  const layer = {
    width: WIDTH,
    height: single ? 340 : 260,
    mark: { type: "line", point: true, interpolate: "monotone" },
    encoding: {
      x: {
        field: "nines",
        type: "quantitative",
        title: "percentile",
        scale: { domain: [0, 6] },
        axis: {
          values: [0, 1, 2, 3, 4, 5, 6],
          labelExpr: NINES_LABELS,
          labelOverlap: false,
          grid: true,
        },
      },
      y: {
        field: "latency_ms",
        type: "quantitative",
        title: "latency (ms)",
        scale: { type: "log" },
      },
      color: colorEncoding(by, arms),
      tooltip: [{ field: "test" }, { field: by }, { field: "percentile" }, {
        field: "latency_ms",
        format: ".3f",
      }, { field: "count" }],
    },
  };
  const head = base(
    options.title ?? "latency by percentile",
    options.subtitle ?? "runs merged as histograms",
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
