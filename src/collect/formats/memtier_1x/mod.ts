/**
 * memtier_benchmark 1.x stdout: its `ALL STATS` tables with one mean `Latency` column, read into
 * the same rows as memtier 2.x's report.
 *
 * @module
 */

export * from "./report.ts";
export * from "./format.ts";
