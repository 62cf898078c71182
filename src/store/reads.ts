/**
 * A per-process count of dataset reads: each scan of a table's Parquet files (see
 * `layout.ts`'s `scanFiles`, the one place every reader goes through) counts one for that table.
 * A scan of a table with no file reads nothing and is not counted. Tests use it to show that a
 * command prints from memory what it has just stored instead of reading it back.
 *
 * @module
 */

const counts = new Map<string, number>();

/**
 * Counts one read of a table's Parquet files.
 *
 * @param table The table read.
 *
 * @example
 * ```ts
 * import { countRead, datasetReads } from "./reads.ts";
 * import assert from "node:assert/strict";
 * const before = datasetReads("results");
 * countRead("results");
 * assert.equal(datasetReads("results"), before + 1);
 * ```
 */
export function countRead(table: string): void {
  counts.set(table, (counts.get(table) ?? 0) + 1);
}

/**
 * The dataset reads of this process so far: of one table, or of every table.
 *
 * @param table The table; all of them when absent.
 * @returns How many scans of Parquet files were started.
 *
 * @example
 * ```ts
 * import { countRead, datasetReads } from "./reads.ts";
 * import assert from "node:assert/strict";
 * const all = datasetReads();
 * countRead("runs");
 * countRead("results");
 * assert.equal(datasetReads(), all + 2);
 * ```
 */
export function datasetReads(table?: string): number {
  if (table !== undefined) return counts.get(table) ?? 0;
  let n = 0;
  for (const c of counts.values()) n += c;
  return n;
}
