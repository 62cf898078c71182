/**
 * `kvlab compact`: merge a dataset's small batches into few large ones (see
 * `store/compact.ts`), safe while others read and write the dataset.
 *
 * @module
 */

import { datasetOption } from "./_options.ts";
import type { Command, OptionValues } from "commander";
import type { Dataset } from "../store/dataset.ts";
import { type Output, readOptions } from "./_exit.ts";

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

/**
 * Declares `kvlab compact`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link compactCommand} does the work.
 */
export function declareCompact(program: Command, out: Output): void {
  program.command("compact")
    .description("Merge a dataset's small batch files into few large ones (safe while in use).")
    .requiredOption("--data <dir>", "dataset directory")
    .option("--target-mb <n>", "size a merged batch aims at, MB", "128")
    .action((opts) => compactCommand(readOptions(() => compactOptions(opts)), out));
}
