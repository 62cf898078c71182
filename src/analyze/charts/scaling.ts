/**
 * Scaling curves: a metric against clients or threads per arm, crossovers marked.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { metricName, metricTitle } from "../units.ts";
import { base, GROUP, type Rec, runsPhrase, testOrder, withGroups } from "./_common.ts";
import { colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

/** Options of {@link scalingChart}. */
export interface ScalingChartOptions extends ChartOptions {
  /** The x column. @default {"clients"} */
  x?: string;
  /** The column whose values are the arms. @default {"server"} */
  by?: string;
  /** The metric. @default {"ops_per_sec"} */
  metric?: string;
  /** Crossover points (from `crossovers`), marked with a rule and a label. */
  crossovers?: pl.DataFrame;
}

/** The columns of a scaling curve that are not group keys. */
function curveColumns(x: string, by: string, metric: string): Set<string> {
  return new Set(["test", x, by, "n", ...["median", "min", "max"].map((s) => `${s}_${metric}`)]);
}

/**
 * Scaling curves (from {@link scaling}): the median metric against `x` (log-2 axis for counts)
 * per arm, a min–max whisker per point with repetitions, one panel per test and per group of
 * the curve's other key columns (e.g. `pipeline 16`), with crossover points (from
 * {@link crossovers}) marked.
 *
 * @param curve A frame from `scaling` (extra key columns split panels).
 * @param options Axes, crossovers, title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { scaling, scalingChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET", "SET"], server: ["redis", "redis"], clients: [1, 8],
 *   ops_per_sec: [10, 70] });
 * const spec = scalingChart(scaling(df, { x: "clients", by: "server" }));
 * assert.equal(JSON.stringify(spec.title), '{"text":"throughput against clients","subtitle":"one run per point"}');
 * ```
 */
export function scalingChart(curve: pl.DataFrame, options: ScalingChartOptions = {}): VegaLiteSpec {
  const x = options.x ?? "clients";
  const by = options.by ?? "server";
  const metric = options.metric ?? "ops_per_sec";
  const known = curveColumns(x, by, metric);
  const extra = curve.columns.filter((c) => !known.has(c));
  const tests = testOrder(curve.toRecords() as Rec[]);
  const { values, groups } = withGroups(curve.toRecords() as Rec[], extra);
  const panelOf = (test: unknown, group: unknown) => group ? `${test} · ${group}` : String(test);
  const data = values.map((r) => ({ ...r, panel: panelOf(r.test, r[GROUP]) }));
  const panels = tests.flatMap((t) => groups.map((g) => panelOf(t, g)));
  const cross = (options.crossovers?.toRecords() as Rec[] | undefined ?? []).filter((c) =>
    c.crossover_x !== null
  );
  // ticks where the data are (10 and 50 clients, not 8/16/32/64)
  const ticks = [...new Set(values.map((r) => r[x]).filter((v) => typeof v === "number"))]
    .sort((a, b) => (a as number) - (b as number)) as number[];
  const layers = curveLayers({ x, by, metric, arms: values.map((r) => r[by]), extra, ticks });
  if (cross.length > 0 && extra.length === 0) layers.push(...crossoverLayers(cross));
  const n = runsPhrase(values.map((r) => r.n), "point");
  const head = base(
    options.title ?? `${metricName(metric)} against ${x.replace(/_/g, " ")}`,
    options.subtitle ??
      (n.startsWith("one") ? n : `${n}; whiskers: min–max of the runs`),
  );
  if (tests.length === 1 && extra.length === 0) {
    return { ...head, width: WIDTH, height: 360, data: { values: data }, layer: layers };
  }
  return {
    ...head,
    data: { values: data },
    facet: { field: "panel", type: "nominal", title: null, sort: panels },
    columns: 2,
    spec: { width: 300, height: 220, layer: layers },
  };
}

/** The curve (a line per arm) and, where there are repetitions, min–max whiskers. */
function curveLayers({ x, by, metric, arms, extra, ticks }: {
  x: string;
  by: string;
  metric: string;
  arms: unknown[];
  extra: string[];
  ticks: number[];
}): VegaLiteSpec[] {
  const xEnc = {
    field: x,
    type: "quantitative",
    title: x.replace(/_/g, " "),
    scale: { type: "log", base: 2 },
    // at most 12 ticks, at the data's own x values
    axis: ticks.length > 0 && ticks.length <= 12
      ? { values: ticks, format: "~s" }
      : { tickCount: 8 },
  };
  const y = { type: "quantitative", title: metricTitle(metric) };
  return [
    {
      mark: { type: "line", point: true },
      encoding: {
        x: xEnc,
        y: { ...y, field: `median_${metric}` },
        color: colorEncoding(by, arms),
        tooltip: [
          { field: "test" },
          ...extra.map((field) => ({ field })),
          { field: by },
          {
            field: x,
          },
          { field: `median_${metric}`, format: ",.2f" },
          { field: "n" },
        ],
      },
    },
    {
      transform: [{ filter: "datum.n > 1" }],
      mark: { type: "rule", strokeWidth: 1.5 },
      encoding: {
        x: xEnc,
        y: { ...y, field: `min_${metric}` },
        y2: { field: `max_${metric}` },
        color: colorEncoding(by, arms),
      },
    },
  ];
}

/** A dashed rule and a label at each crossover. */
function crossoverLayers(cross: Rec[]): VegaLiteSpec[] {
  return [
    {
      data: { values: cross },
      mark: { type: "rule", strokeDash: [5, 4], color: "#444" },
      encoding: { x: { field: "crossover_x", type: "quantitative" } },
    },
    {
      data: {
        values: cross.map((c) => ({
          ...c,
          crossover_label: `${c.candidate} ahead from ${c.crossover_x}`,
        })),
      },
      mark: {
        type: "text",
        align: "right",
        dx: -6,
        dy: 12,
        baseline: "top",
        fontSize: 13,
        color: "#222",
      },
      encoding: {
        x: { field: "crossover_x", type: "quantitative" },
        y: { value: 0 },
        text: { field: "crossover_label" },
      },
    },
  ];
}
