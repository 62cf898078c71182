/**
 * Automatic compaction: a dataset that grows by one small batch per nightly ingest or plan
 * cell is read more slowly with every batch (150 nightly ingests: 150 batches, 600 Parquet
 * files; `loadResults` 0.3–0.45 s where one batch loads in 0.01–0.05 s). So a writer, once its
 * batch is visible and its files' claims are done, merges the small batches when it finds more
 * than {@link AUTO_COMPACT_SMALL_BATCHES} of them (see `compact.ts`: atomic, safe for readers
 * and other writers, one compaction at a time).
 *
 * @module
 */

import { BATCHES } from "./layout.ts";
import { compactDataset, type CompactResult } from "./compact.ts";

/** More small batches than this make a writer compact the dataset. */
export const AUTO_COMPACT_SMALL_BATCHES = 32;

/** A batch under this many bytes of Parquet counts as small. */
export const SMALL_BATCH_BYTES = 16e6;

/**
 * The number of small batches of a dataset (under {@link SMALL_BATCH_BYTES}), counted only
 * when there are more batches than `atLeast` (so a writer pays one directory listing).
 */
function smallBatches(dataDir: string, atLeast: number): number {
  let dirs: string[];
  try {
    dirs = [...Deno.readDirSync(`${dataDir}/${BATCHES}`)].filter((e) => e.isDirectory)
      .map((e) => `${dataDir}/${BATCHES}/${e.name}`);
  } catch {
    return 0;
  }
  if (dirs.length <= atLeast) return dirs.length;
  let small = 0;
  for (const dir of dirs) {
    let bytes = 0;
    try {
      for (const f of Deno.readDirSync(dir)) {
        if (f.name.endsWith(".parquet")) bytes += Deno.statSync(`${dir}/${f.name}`).size;
      }
    } catch {
      continue; // replaced meanwhile
    }
    if (bytes < SMALL_BATCH_BYTES) small++;
  }
  return small;
}

/**
 * Compacts a dataset when it holds more than {@link AUTO_COMPACT_SMALL_BATCHES} small batches.
 * Call it after a batch is committed (and its claims completed). Never throws: the runs are
 * stored whatever happens here; a compaction that cannot run now (another one is running, a
 * damaged file) leaves the dataset as it was, and `kvlab compact` says why.
 *
 * @param dataDir The dataset directory.
 * @param limit More small batches than this trigger a compaction.
 * @returns What was merged, or null when nothing was done.
 *
 * @example
 * ```ts
 * import { autoCompact } from "./auto_compact.ts";
 * import assert from "node:assert/strict";
 * assert.equal(autoCompact(Deno.makeTempDirSync()), null);
 * ```
 */
export function autoCompact(
  dataDir: string,
  limit = AUTO_COMPACT_SMALL_BATCHES,
): CompactResult | null {
  if (smallBatches(dataDir, limit) <= limit) return null;
  try {
    return compactDataset(dataDir);
  } catch {
    return null;
  }
}
