/**
 * A per-process count of the Parquet reads of datasets, by table: `scanFiles` (`layout.ts`),
 * the one place where a table's Parquet files are scanned, counts each scan it builds, so a
 * test can show what a command reads (each table at most once, or none at all).
 *
 * @example
 * ```ts
 * import { countRead, datasetReads } from "./reads.ts";
 * import assert from "node:assert/strict";
 * const before = datasetReads().results ?? 0;
 * countRead("results");
 * assert.equal(datasetReads().results, before + 1);
 * ```
 *
 * @module
 */

const counts = new Map<string, number>();

/**
 * Counts one scan of a table's Parquet files (called by `scanFiles` only).
 *
 * @param table The table scanned.
 */
export function countRead(table: string): void {
  counts.set(table, (counts.get(table) ?? 0) + 1);
}

/**
 * The scans counted so far in this process, by table (a copy: take one before and one after
 * what you measure).
 *
 * @returns Table → scans.
 */
export function datasetReads(): Record<string, number> {
  return Object.fromEntries(counts);
}
