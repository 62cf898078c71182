/**
 * `kvlab data`: rebuild the bundled study datasets from their raw outputs.
 *
 * @module
 */

import type { Command, OptionValues } from "commander";
import { buildStudies } from "../collect/ingest/studies.ts";
import { type Output, readOptions } from "./_exit.ts";
import { REPO } from "./_options.ts";

/** Where `kvlab data` reads and writes. */
export interface DataCommandOptions {
  /** The raw folder, one subfolder per study. @default {"<repo>/data/raw"} */
  raw: string;
  /** Where the datasets go. @default {"<repo>/data/studies"} */
  out: string;
}

/**
 * Reads `kvlab data`'s options (commander fills in the defaults).
 *
 * @param raw Commander's option values.
 * @returns The typed options.
 *
 * @example
 * ```ts
 * import { dataOptions } from "./data.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(dataOptions({ raw: "r", out: "o" }), { raw: "r", out: "o" });
 * ```
 */
export function dataOptions(raw: OptionValues): DataCommandOptions {
  return { raw: String(raw.raw), out: String(raw.out) };
}

/**
 * Rebuilds every study dataset and prints one line per study.
 *
 * @param o The raw and output folders.
 * @param out Where to print.
 */
export async function dataCommand(o: DataCommandOptions, out: Output): Promise<void> {
  const built = await buildStudies(o.raw, o.out);
  for (const b of built) out.print(`${b.study}: ${b.runs} runs, ${b.tests} tests → ${b.data}\n`);
}

/**
 * Declares `kvlab data`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link dataCommand} does the work.
 */
export function declareData(program: Command, out: Output): void {
  program.command("data")
    .description(
      "Rebuild the bundled study datasets (data/studies/<study>/) from the raw outputs in " +
        "data/raw/<study>/, as each folder's ingest.json says (server, version, label per file).",
    )
    .option("--raw <dir>", "raw folder", REPO + "data/raw")
    .option("--out <dir>", "where the datasets go", REPO + "data/studies")
    .action((opts) => dataCommand(readOptions(() => dataOptions(opts)), out));
}
