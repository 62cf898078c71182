/**
 * Scaling curves: a metric against clients or threads per arm, crossovers marked.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { metricName, metricTitle } from "../units.ts";
import { base, type Rec, testOrder } from "./_common.ts";
import { colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

/**
 * Scaling curves (from {@link scaling}): the median metric against `x` (log-2 axis for counts)
 * per arm and test, with crossover points (from {@link crossovers}) marked.
 */
export function scalingChart(
  curve: pl.DataFrame,
  options: ChartOptions & { x?: string; by?: string; metric?: string; crossovers?: pl.DataFrame } =
    {},
): VegaLiteSpec {
  const x = options.x ?? "clients";
  const by = options.by ?? "server";
  const metric = options.metric ?? "ops_per_sec";
  const recs = curve.toRecords() as Rec[];
  const arms = recs.map((r) => String(r[by]));
  const cross = (options.crossovers?.toRecords() as Rec[] | undefined ?? []).filter((c) =>
    c.crossover_x !== null
  );
  const tests = testOrder(recs);
  const xEnc = {
    field: x,
    type: "quantitative",
    title: x.replace(/_/g, " "),
    scale: { type: "log", base: 2 },
    axis: { tickCount: 8 },
  };
  const layers: VegaLiteSpec[] = [
    {
      mark: { type: "line", point: true },
      encoding: {
        x: xEnc,
        y: { field: `median_${metric}`, type: "quantitative", title: metricTitle(metric) },
        color: colorEncoding(by, arms),
        tooltip: [{ field: "test" }, { field: by }, { field: x }, {
          field: `median_${metric}`,
          format: ",.2f",
        }, { field: "n" }],
      },
    },
  ];
  if (cross.length > 0) {
    layers.push(
      {
        data: { values: cross },
        mark: { type: "rule", strokeDash: [5, 4], color: "#444" },
        encoding: { x: { field: "crossover_x", type: "quantitative" } },
      },
      {
        data: {
          values: cross.map((c) => ({ ...c, label: `${c.candidate} ahead from ${c.crossover_x}` })),
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
          text: { field: "label" },
        },
      },
    );
  }
  const head = base(
    options.title ??
      `${metricName(metric)} against ${x.replace(/_/g, " ")}`,
    options.subtitle ?? "medians of repetitions",
  );
  if (tests.length === 1) {
    return { ...head, width: WIDTH, height: 360, data: { values: recs }, layer: layers };
  }
  return {
    ...head,
    data: { values: recs },
    facet: { field: "test", type: "nominal", title: null, sort: tests },
    columns: 2,
    spec: { width: 300, height: 220, layer: layers },
  };
}
