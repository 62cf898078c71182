/**
 * The sections of the summary page that are one figure each: the latency spectrum per arm (from
 * the latency distributions) and throughput against clients (when the client count varies
 * within arms). Private to `summary_page/`.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { comparisonKeys } from "../grouping.ts";
import { PLOTS } from "../plots.ts";
import type { Resolved, Section } from "./_section.ts";

/**
 * Whether a chart has data to draw: some inline `data.values` is non-empty (or it has none, so
 * this cannot tell). Vega fails on some empty charts instead of drawing empty axes.
 */
function drawsSomething(spec: unknown): boolean {
  const found: unknown[][] = [];
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (typeof x !== "object" || x === null) return;
    const values = (x as { data?: { values?: unknown } }).data?.values;
    if (Array.isArray(values)) found.push(values);
    Object.values(x).forEach(walk);
  };
  walk(spec);
  return found.length === 0 || found.some((v) => v.length > 0);
}

/** The latency spectrum figure from the latency distributions, when it has steps to draw. */
export function latencySection(latency: pl.DataFrame, o: Resolved): Section {
  const spec = PLOTS.latency.build(latency, { by: o.by });
  if (!drawsSomething(spec)) return { lines: [], figures: [] };
  return {
    lines: ["## Latency distribution", ""],
    figures: [{ name: "latency", caption: "Latency by percentile, per arm", spec }],
  };
}

/** Throughput against clients, when the client count varies within arms. */
export function scalingSection(results: pl.DataFrame, o: Resolved): Section {
  if (!comparisonKeys(results, o.by).keys.includes("clients")) return { lines: [], figures: [] };
  const candidate = o.arms.length === 2 ? o.arms.find((a) => a !== o.baseline) : undefined;
  return {
    lines: ["## Scaling with clients", ""],
    figures: [{
      name: "scaling",
      caption: "Throughput against clients (median of runs)",
      spec: PLOTS.scaling.build(results, {
        by: o.by,
        x: "clients",
        baseline: o.baseline,
        candidate,
      }),
    }],
  };
}
