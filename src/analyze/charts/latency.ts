/**
 * Latency spectra: latency against percentile on a "nines" axis, drawn as steps.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { PARAMETER_COLUMNS } from "../compare/compare.ts";
import { base, GROUP, logScale, type Rec, testOrder, withGroups } from "./_common.ts";
import { colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

const NINES_LABELS =
  "datum.value == 0 ? '0%' : datum.value == 1 ? '90%' : datum.value == 2 ? '99%' : datum.value == 3 ? '99.9%' : datum.value == 4 ? '99.99%' : datum.value == 5 ? '99.999%' : datum.value == 6 ? 'max' : ''";
/** The same without `%` (the axis title says it), for panels too narrow for the long labels. */
const NINES_SHORT =
  "datum.value == 0 ? '0' : datum.value == 1 ? '90' : datum.value == 2 ? '99' : datum.value == 3 ? '99.9' : datum.value == 4 ? '99.99' : datum.value == 5 ? '99.999' : datum.value == 6 ? 'max' : ''";

/** Options of {@link latencyChart}. */
export interface LatencyChartOptions extends ChartOptions {
  /** The column whose values are the arms (one line colour each). @default {"server"} */
  by?: string;
  /**
   * The parameters that split groups besides the arm (one panel column each). @default {the
   * parameter columns the frame holds besides `by`} (the spectrum was grouped by them)
   */
  keys?: string[];
}

/**
 * Latency spectrum: latency (log axis) against percentile on a "nines" axis (0 %, 90 %,
 * 99 %, 99.9 % … evenly spaced), one line per arm (numbers such as `clients` on an ordinal
 * colour scale), one panel per test and group (e.g. `clients 50`): nothing pooled. A grid of
 * tests × groups when each test ran in each group, else a panel per pair that ran (`GET ·
 * clients 50`), none drawn empty.
 *
 * From {@link latencySteps} (preferred) the line is the merged histogram's exact step
 * function (`step-after`: each printed bucket's upper bound from the share of requests below
 * it); from {@link latencySpectrum} it steps between the reported percentiles, with a point
 * at each, and the 0 % point (the first bucket's upper bound, not a measured minimum) left out.
 *
 * @param spectrum Rows of `latencySteps` or `latencySpectrum`.
 * @param options Arm column, grouping, title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { latencyChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const steps = pl.DataFrame({ test: ["GET", "GET"], clients: [1, 1], from_percentile: [0, 100],
 *   to_percentile: [100, 100], latency_ms: [0.2, 0.2], nines: [0, 6], count: [10, 10] });
 * const spec = latencyChart(steps, { by: "clients" });
 * const layer = spec as { mark: { interpolate: string }; encoding: { color: { type: string } } };
 * assert.equal(layer.mark.interpolate, "step-after");
 * assert.equal(layer.encoding.color.type, "ordinal");
 * ```
 */
export function latencyChart(
  spectrum: pl.DataFrame,
  options: LatencyChartOptions = {},
): VegaLiteSpec {
  const by = options.by ?? "server";
  const steps = spectrum.columns.includes("from_percentile");
  const extra = options.keys ??
    PARAMETER_COLUMNS.filter((c) => c !== by && spectrum.columns.includes(c));
  const rows = (spectrum.toRecords() as Rec[]).filter((r) => steps || r.percentile !== 0);
  const { values, groups } = withGroups(rows, extra);
  const tests = testOrder(values);
  const single = tests.length === 1 && extra.length === 0;
  const layer = {
    width: extra.length ? 320 : WIDTH,
    height: single ? 340 : 240,
    mark: { type: "line", interpolate: "step-after", point: !steps, strokeWidth: 2 },
    encoding: {
      x: {
        field: "nines",
        type: "quantitative",
        title: extra.length ? 'percentile (%, "nines" axis)' : 'percentile ("nines" axis)',
        scale: { domain: [0, 6] },
        axis: {
          values: [0, 1, 2, 3, 4, 5, 6],
          // a 320 px panel has 53 px per label: "99.999%" and "max" would touch
          labelExpr: extra.length ? NINES_SHORT : NINES_LABELS,
          ...(extra.length ? { labelFontSize: 11 } : {}),
          labelOverlap: false,
          grid: true,
        },
      },
      y: logScale("latency_ms", "latency (ms, log scale)"),
      color: colorEncoding(by, values.map((r) => r[by])),
      order: { field: "nines", type: "quantitative" },
      tooltip: [
        { field: "test" },
        ...extra.map((field) => ({ field })),
        { field: by },
        ...(steps
          ? [{ field: "from_percentile", format: ".3f" }, { field: "to_percentile", format: ".3f" }]
          : [{ field: "percentile" }]),
        { field: "latency_ms", format: ".3f" },
        { field: "count", title: "requests" },
      ],
    },
  };
  const head = base(
    options.title ?? "latency by percentile",
    options.subtitle ?? [
      steps
        ? "runs merged as histograms; each step a printed bucket's upper bound"
        : "runs merged as histograms; steps between the reported percentiles",
      'x: "nines" axis (90 %, 99 %, 99.9 % … evenly spaced); y: log scale',
    ],
  );
  if (single) return { ...head, data: { values }, ...layer };
  // a panel's name fits its panel (long group names were drawn over their neighbours')
  const header = { labelLimit: layer.width, labelFontSize: 13 };
  const cells = new Set(values.map((r) => `${r.test}\u0000${r[GROUP]}`));
  if (extra.length && cells.size < tests.length * groups.length) {
    // not every test in every group: one panel per pair that has data, none drawn empty
    const name = (r: Rec) => [r.test, r[GROUP]].filter((x) => x !== "").join(" · ");
    const panels = [...cells].map((c) => c.split("\u0000")).sort((a, b) =>
      tests.indexOf(a[0]) - tests.indexOf(b[0]) || groups.indexOf(a[1]) - groups.indexOf(b[1])
    ).map(([test, group]) => name({ test, [GROUP]: group }));
    return {
      ...head,
      data: { values: values.map((r) => ({ ...r, panel: name(r) })) },
      facet: { field: "panel", type: "nominal", title: null, sort: panels, header },
      columns: 2,
      spec: layer,
    };
  }
  return {
    ...head,
    data: { values },
    facet: {
      row: { field: "test", type: "nominal", title: null, sort: tests },
      ...(extra.length
        ? { column: { field: GROUP, type: "nominal", title: null, sort: groups, header } }
        : {}),
    },
    spec: layer,
  };
}
