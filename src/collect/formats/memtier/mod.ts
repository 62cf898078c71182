/**
 * memtier_benchmark 2.x: pure parsers for everything it writes. `--json-out-file`
 * ({@link parseMemtierJson}), stdout ({@link parseMemtierReport}), stderr progress
 * ({@link parseMemtierProgress}) and the `--hdr-file-prefix` files ({@link parseHdrPercentiles},
 * {@link parseHdrIntervalLog}), with the HdrHistogram helpers they share, its flag grammar, and
 * the rows of a run ({@link memtierRows}).
 *
 * @module
 */

export * from "./types.ts";
export * from "./json/mod.ts";
export * from "./report.ts";
export * from "./progress.ts";
export * from "./hdr.ts";
export * from "./rows.ts";
export * from "./files.ts";
export * from "./flags.ts";
export * from "./format.ts";
