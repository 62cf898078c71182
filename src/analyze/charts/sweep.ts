/**
 * Fixed-rate sweep charts: p50 and p99 against offered load per arm, NS steps marked; and the
 * latency spectrum of each step.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { base, type Rec } from "./_common.ts";
import { colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

/** Options of the sweep charts. */
export interface SweepChartOptions extends ChartOptions {
  /** The arm column, as given to `sweepTable`. @default {"label"} */
  by?: string;
}

const tableOf = (r: Rec) => `${r.test}, ${r.clients ?? "?"} connections`;

/**
 * p50 (solid line, solid points) and p99 (dashed line, hollow points) against the requested rate
 * (log axes around the steps), one colour per arm, one panel per workload and connection count,
 * with legends for the arms and the percentiles; `over` steps drawn as triangles, NS steps as a
 * `+` at their latency (when measured) and a dotted rule at the rate they reached (the
 * requested rate when that is unknown), so two arms NS at one step draw two rules; a
 * generator-bound step (`generator_bound`: the load generator's send delay p99 is above 10 % of
 * the p99) ringed in grey, its latency not the server's alone.
 *
 * @param table `sweepTable`'s result.
 * @param options The arm column, title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import { sweepChart } from "@kvlab/kvlab/analyze";
 * import pl from "nodejs-polars";
 * import assert from "node:assert/strict";
 * const t = pl.DataFrame({ test: ["GET", "GET"], clients: [48, 48], label: ["a", "a"],
 *   requested_ops_per_sec: [1000, 2000], p50_latency_ms: [0.1, null],
 *   p99_latency_ms: [0.3, null], verdict: ["sustained", "NS"] });
 * const spec = sweepChart(t);
 * assert.equal((spec.layer as unknown[]).length, 4);
 * const bound = sweepChart(t.withColumns(pl.lit(true).alias("generator_bound")));
 * assert.equal((bound.layer as unknown[]).length, 5);
 * ```
 */
export function sweepChart(table: pl.DataFrame, options: SweepChartOptions = {}): VegaLiteSpec {
  const by = options.by ?? "label";
  const recs = table.toRecords() as Rec[];
  const points = latencyPoints(recs, by);
  const rules = nsRules(recs);
  const encodings: SweepEncodings = {
    by,
    x: rateAxis([
      ...points.map((r) => r.requested_ops_per_sec),
      ...rules.map((r) => r.ns_at_ops_per_sec),
    ]),
    color: colorEncoding(by, recs.map((r) => String(r[by]))),
  };
  const layers = [
    lineLayer(encodings),
    pointLayer(encodings),
    nsLayer(encodings),
    percentileLegend(encodings),
  ];
  // steps whose generator delay dominates (sweepTable's generator_bound): a grey ring around
  // both points, only when there is one (charts without them stay as they were)
  const genBound = points.some((r) => r.generator_bound === true);
  if (genBound) layers.push(generatorBoundLayer(encodings));
  const head = base(
    options.title ?? "latency against offered load",
    options.subtitle ??
      [
        "▲ : a step above the requested rate (over)",
        "+ : a step not sustained (NS), its dotted rule at the rate it reached",
        ...(genBound
          ? ["○ : generator-bound (the generator's send delay p99 > 10 % of the p99)"]
          : []),
      ],
  );
  const values = [...points, ...rules];
  const tables = [...new Set(recs.map(tableOf))];
  if (tables.length <= 1) {
    return { ...head, width: WIDTH, height: 340, data: { values }, layer: layers };
  }
  return {
    ...head,
    data: { values },
    facet: { field: "table", type: "nominal", title: null, sort: tables },
    columns: 1,
    spec: { width: WIDTH, height: 260, layer: layers },
  };
}

/** The arm column and the encodings every layer of {@link sweepChart} shares. */
interface SweepEncodings {
  by: string;
  /** The requested rate, on a log axis. */
  x: Rec;
  /** One colour per arm. */
  color: VegaLiteSpec;
}

/** Each measured step as two points, p50 and p99 (`layer: "point"`). */
function latencyPoints(recs: Rec[], by: string): Rec[] {
  return recs.filter((r) => r.p50_latency_ms !== null && r.verdict !== "skipped")
    .flatMap((r) =>
      (["p50", "p99"] as const).map((p): Rec => ({
        ...r,
        table: tableOf(r),
        percentile: p,
        latency_ms: r[`${p}_latency_ms`],
        series: `${r[by]} ${p}`,
        layer: "point",
      }))
    );
}

/** Each NS step as a rule (`layer: "ns"`) at the rate it reached, else at the requested rate. */
function nsRules(recs: Rec[]): Rec[] {
  // the NS rule stands at the rate the step reached: two arms NS at one step stay apart
  return recs.filter((r) => r.verdict === "NS").map((r) => ({
    ...r,
    table: tableOf(r),
    layer: "ns",
    ns_at_ops_per_sec: typeof r.achieved_ops_per_sec === "number" && r.achieved_ops_per_sec > 0
      ? r.achieved_ops_per_sec
      : r.requested_ops_per_sec,
  }));
}

/** p50 (solid) and p99 (dashed) lines through the sustained and `over` steps of each arm. */
function lineLayer({ x, color }: SweepEncodings): VegaLiteSpec {
  return {
    transform: [{ filter: "datum.layer == 'point' && datum.verdict != 'NS'" }],
    mark: { type: "line" },
    encoding: {
      x,
      y: {
        field: "latency_ms",
        type: "quantitative",
        title: "latency (ms)",
        scale: { type: "log" },
      },
      color,
      detail: { field: "series" },
      // said in the subtitle: one legend (the arms) keeps the figure as wide as its plot
      strokeDash: { field: "percentile", type: "nominal", title: "percentile" },
    },
  };
}

/**
 * The requested rate on a log axis around the steps drawn (a third beyond the lowest and the
 * highest: one step at 20k is not drawn on a 10k–90k axis), ticks at the rates when there are
 * few of them.
 */
function rateAxis(rates: unknown[]): Rec {
  const xs = rates.filter((x): x is number => typeof x === "number" && x > 0);
  const distinct = [...new Set(xs)].sort((a, b) => a - b);
  const domain = xs.length ? [Math.min(...xs) / 1.5, Math.max(...xs) * 1.5] : undefined;
  return {
    field: "requested_ops_per_sec",
    type: "quantitative",
    title: "requested rate (ops/s)",
    scale: { type: "log", ...(domain ? { domain, nice: false } : {}) },
    ...(distinct.length > 0 && distinct.length <= 6 ? { axis: { values: distinct } } : {}),
  };
}

/**
 * A point per step and percentile, its shape the verdict (circle, triangle for over, `+` NS),
 * p50 solid and p99 hollow (its outline in the arm's colour): a step of one rate has no line to
 * tell them by.
 */
function pointLayer({ by, x, color }: SweepEncodings): VegaLiteSpec {
  return {
    transform: [{ filter: "datum.layer == 'point'" }],
    mark: { type: "point", filled: true, size: 60, strokeWidth: 1.5 },
    encoding: {
      x,
      y: { field: "latency_ms", type: "quantitative" },
      color,
      // the fill's scale: one legend for both
      stroke: color,
      fillOpacity: { condition: { test: "datum.percentile == 'p99'", value: 0 }, value: 1 },
      shape: {
        field: "verdict",
        type: "nominal",
        scale: { domain: ["sustained", "over", "NS"], range: ["circle", "triangle-up", "cross"] },
        legend: null,
      },
      tooltip: [
        { field: by },
        { field: "requested_ops_per_sec", format: "," },
        {
          field: "achieved_ops_per_sec",
          format: ",.0f",
        },
        { field: "percentile" },
        { field: "latency_ms", format: ".3f" },
        { field: "verdict" },
      ],
    },
  };
}

/**
 * The legend of the percentiles (● p50, ○ p99): invisible points whose fill legend shows them
 * (Vega-Lite draws no legend for `fillOpacity`).
 */
function percentileLegend({ x }: SweepEncodings): VegaLiteSpec {
  return {
    transform: [{ filter: "datum.layer == 'point'" }],
    mark: { type: "point", filled: true, opacity: 0 },
    encoding: {
      x,
      y: { field: "latency_ms", type: "quantitative" },
      fill: {
        field: "percentile",
        type: "nominal",
        title: "percentile",
        scale: { domain: ["p50", "p99"], range: ["#555", "#fff"] },
        legend: {
          symbolType: "circle",
          symbolOpacity: 1,
          symbolStrokeColor: "#555",
          symbolStrokeWidth: 1.5,
          labelExpr: "datum.label == 'p50' ? 'p50 (solid line)' : 'p99 (dashed line)'",
        },
      },
    },
  };
}

/** A dotted rule at the rate each NS step reached. */
function nsLayer({ by, x, color }: SweepEncodings): VegaLiteSpec {
  return {
    transform: [{ filter: "datum.layer == 'ns'" }],
    mark: { type: "rule", strokeDash: [2, 3] },
    encoding: {
      x: { ...x, field: "ns_at_ops_per_sec" },
      color,
      tooltip: [{ field: by }, { field: "achieved_ops_per_sec", format: ",.0f" }],
    },
  };
}

/** A grey ring around both points of a generator-bound step, with the generator's delay. */
function generatorBoundLayer({ by, x }: SweepEncodings): VegaLiteSpec {
  return {
    transform: [{ filter: "datum.layer == 'point' && datum.generator_bound == true" }],
    mark: { type: "point", filled: false, size: 220, strokeWidth: 1.5, color: "#555" },
    encoding: {
      x,
      y: { field: "latency_ms", type: "quantitative" },
      tooltip: [
        { field: by },
        { field: "requested_ops_per_sec", format: "," },
        { field: "percentile" },
        { field: "latency_ms", format: ".3f" },
        { field: "generator_delay_p99_ms", title: "generator delay p99 (ms)", format: ".3f" },
      ],
    },
  };
}

/**
 * The latency spectrum of each step (`sweepSpectrum`): latency against percentile on a
 * "nines" axis, one line per requested rate (darker = higher), one panel per arm.
 *
 * @param spectrum `sweepSpectrum`'s result.
 * @param options The arm column, title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import { sweepSpectrumChart } from "@kvlab/kvlab/analyze";
 * import pl from "nodejs-polars";
 * import assert from "node:assert/strict";
 * const s = pl.DataFrame({ label: ["a"], requested_ops_per_sec: [1000], nines: [2],
 *   latency_ms: [0.3], percentile: [99] });
 * assert.equal(sweepSpectrumChart(s).facet !== undefined, true);
 * ```
 */
export function sweepSpectrumChart(
  spectrum: pl.DataFrame,
  options: SweepChartOptions = {},
): VegaLiteSpec {
  const by = options.by ?? "label";
  const recs = spectrum.toRecords() as Rec[];
  const arms = [...new Set(recs.map((r) => String(r[by])))];
  return {
    ...base(
      options.title ?? "latency spectrum of each step",
      options.subtitle ?? "repetitions merged as HDR histograms",
    ),
    data: { values: recs },
    facet: { field: by, type: "nominal", title: null, sort: arms },
    columns: 2,
    spec: {
      width: 300,
      height: 220,
      mark: { type: "line", point: { size: 20 } },
      encoding: {
        x: {
          field: "nines",
          type: "quantitative",
          title: "percentile",
          scale: { domain: [0, 6] },
          axis: {
            values: [0, 1, 2, 3, 4, 5, 6],
            labelExpr: "['0%', '90%', '99%', '99.9%', '99.99%', '99.999%', 'max'][datum.value]",
          },
        },
        y: {
          field: "latency_ms",
          type: "quantitative",
          title: "latency (ms)",
          scale: { type: "log" },
        },
        color: {
          field: "requested_ops_per_sec",
          type: "ordinal",
          title: "requested/s",
          scale: { scheme: "viridis", reverse: true },
        },
        tooltip: [{ field: by }, { field: "requested_ops_per_sec", format: "," }, {
          field: "percentile",
        }, { field: "latency_ms", format: ".3f" }],
      },
    },
  };
}
