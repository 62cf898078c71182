/**
 * kvlab analyze: load datasets into nodejs-polars DataFrames, compare arms with calibrated
 * verdicts and intervals, deltas, scaling and crossovers, latency spectra merged as histograms, tables for
 * people, and Vega-Lite charts with SVG/PNG export.
 *
 * @module
 */

export * from "./chart.ts";
export * from "./changes/mod.ts";
export * from "./compare/mod.ts";
export * from "./export.ts";
export * from "./format.ts";
export * from "./latency.ts";
export * from "./load.ts";
export * from "./present.ts";
export * from "./scaling.ts";
export * from "./notebook.ts";
export * from "./memory.ts";
export * from "./plots.ts";
export * from "./summary.ts";
export * from "./units.ts";
export * from "./arms.ts";
export * from "./attempts.ts";
export * from "./environment.ts";
export * from "./sweep/mod.ts";
export * from "./summary_page/mod.ts";
export * from "./sequential/mod.ts";
export * from "./failover/mod.ts";
export * from "./topology/mod.ts";
