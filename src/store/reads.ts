/**
 * A per-process count of the Parquet reads of datasets, by table: `scanFiles` (`layout.ts`),
 * the one place where a table's Parquet files are scanned, counts each scan it builds (a scan of
 * a table with no file reads nothing and is not counted), so a test can show what a command reads:
 * each table at most once, or, for a command that prints what it has just stored, none at all.
 *
 * @module
 */

const counts = new Map<string, number>();

/**
 * Counts one scan of a table's Parquet files (called by `scanFiles` only).
 *
 * @param table The table scanned.
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

/**
 * The scans counted so far in this process, by table (a copy: take one before and one after
 * what you measure).
 *
 * @returns Table → scans.
 *
 * @example
 * ```ts
 * import { countRead, readsByTable } from "./reads.ts";
 * import assert from "node:assert/strict";
 * const before = readsByTable().memory ?? 0;
 * countRead("memory");
 * assert.equal(readsByTable().memory, before + 1);
 * ```
 */
export function readsByTable(): Record<string, number> {
  return Object.fromEntries(counts);
}
