/**
 * kvlab's open-loop load generator (issue 13, item 3): RESP encoding and an incremental reply
 * reader, the send schedule, HDR latency histograms, per-second series, the generator
 * `runOpenLoop` and the key-space preload `preloadKeys`.
 *
 * @module
 */

export * from "./resp.ts";
export * from "./schedule.ts";
export * from "./histogram.ts";
export * from "./series.ts";
export * from "./open_loop.ts";
export * from "./step.ts";
export * from "./rows.ts";
export * from "./tool.ts";
