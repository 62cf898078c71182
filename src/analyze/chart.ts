/**
 * Chart builders: pure functions from DataFrames to Vega-Lite specs (nothing renders or writes;
 * see export.ts). One theme for blog figures — readable at 800 px wide, axis titles with units,
 * a font stack with a CJK fallback — and one stable colour per server across every chart.
 *
 * @module
 */

export * from "./charts/theme.ts";
export * from "./charts/color.ts";
export * from "./charts/throughput.ts";
export * from "./charts/ratio.ts";
export * from "./charts/latency.ts";
export * from "./charts/scaling.ts";
export * from "./charts/delta.ts";
export * from "./charts/changes.ts";
export * from "./charts/memory.ts";
export * from "./charts/container.ts";
export * from "./charts/topology.ts";
export { metricTitle } from "./units.ts";
export * from "./grouping.ts";
