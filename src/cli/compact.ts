/**
 * `kvlab compact`: merge a dataset's small batches into few large ones (see
 * `store/compact.ts`), safe while others read and write the dataset.
 *
 * @module
 */

import { datasetOption } from "./_options.ts";
import type { OptionValues } from "commander";
import type { Dataset } from "../store/dataset.ts";
import type { Output } from "./_exit.ts";

/** What `kvlab compact` does. */
export interface CompactCommandOptions {
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /**
   * Size a merged batch aims at, MB.
   * @default {128}
   */
  targetMb: number;
}

/**
 * Reads `kvlab compact`'s options.
 *
 * @param raw Commander's option values.
 * @returns The typed options.
 * @throws {RangeError} For a target size that is not a positive number.
 *
 * @example
 * ```ts
 * import { compactOptions } from "./compact.ts";
 * import assert from "node:assert/strict";
 * const o = compactOptions({ data: "ds", targetMb: "64" });
 * assert.deepEqual({ ...o, data: o.data.dir }, { data: "ds", targetMb: 64 });
 * assert.throws(() => compactOptions({ data: "ds", targetMb: "0" }), /invalid --target-mb: 0/);
 * ```
 */
export function compactOptions(raw: OptionValues): CompactCommandOptions {
  const targetMb = Number(raw.targetMb ?? 128);
  if (!(targetMb > 0) || !Number.isFinite(targetMb)) {
    throw new RangeError(`invalid --target-mb: ${raw.targetMb} (a size in MB, e.g. 128)`);
  }
  return { data: datasetOption(raw.data), targetMb };
}

/**
 * Compacts the dataset and prints one line about it.
 *
 * @param o The dataset and target size.
 * @param out Where to print.
 */
export function compactCommand(o: CompactCommandOptions, out: Output): void {
  const r = o.data.compact({ targetMb: o.targetMb });
  out.print(
    `compacted ${o.data.dir}: ${r.batchesBefore} batches (${r.filesBefore} Parquet files) → ` +
      `${r.batchesAfter} batches (${r.filesAfter} files)\n`,
  );
}
