/**
 * memtier_benchmark 2.x: pure parsers for everything it writes. `--json-out-file`
 * ({@link parseMemtierJson}), stdout ({@link parseMemtierReport}), stderr progress
 * ({@link parseMemtierProgress}) and the `--hdr-file-prefix` files ({@link parseHdrPercentiles},
 * {@link parseHdrIntervalLog}), with the HdrHistogram helpers they share. One `export *` of
 * this module exports them all.
 *
 * @module
 */

export * from "./memtier_types.ts";
export * from "./memtier_json.ts";
export * from "./memtier_json_stats.ts";
export * from "./memtier_report.ts";
export * from "./memtier_progress.ts";
export * from "./memtier_hdr.ts";
