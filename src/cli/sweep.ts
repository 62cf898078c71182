/**
 * `kvlab sweep`: print a fixed-rate sweep as seed 000 does (rows = requested rate, columns =
 * arms, cells `p50 / p99`, `NS (258k)`, `-`), or its rows as CSV or JSON.
 *
 * @module
 */

import type { Dataset } from "../store/dataset.ts";
import { datasetOption, sustainedOption } from "./_options.ts";
import type { Command, OptionValues } from "commander";
import { type TableFormat, tableFormat } from "../analyze/format.ts";
import { formatSweep, sweepTable } from "../analyze/sweep/sweep.ts";
import { type Output, readOptions } from "./_exit.ts";
import { DEFAULT_SUSTAINED_RULE, type SustainedRule } from "../fixed_rate.ts";
import { attemptsNote, onlyForSweeps } from "./_shows.ts";

/** What `kvlab sweep` prints. */
export interface SweepCommandOptions {
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** @default {"md"} */
  format: TableFormat;
  /** The runs column naming the arms. @default {"label"} */
  by: string;
  /** Sustained bounds on achieved / requested. @default {DEFAULT_SUSTAINED_RULE} */
  sustained: SustainedRule;
}

/**
 * Reads `kvlab sweep`'s options.
 *
 * @param raw Commander's option values.
 * @returns The typed options.
 * @throws {TypeError} For an unknown format or bounds that are not `min:max` around 1.
 *
 * @example
 * ```ts
 * import { sweepOptions } from "./sweep.ts";
 * import assert from "node:assert/strict";
 * const o = sweepOptions({ data: "d", format: "csv", by: "label", sustained: "0.95:1.05" });
 * assert.deepEqual({ ...o, data: o.data.dir }, {
 *   data: "d", format: "csv", by: "label", sustained: { min: 0.95, max: 1.05 },
 * });
 * assert.throws(() => sweepOptions({ data: "d", format: "md", sustained: "1.1:2" }), /invalid --sustained/);
 * ```
 */
export function sweepOptions(raw: OptionValues): SweepCommandOptions {
  const rule = sustainedOption(raw.sustained);
  return {
    data: datasetOption(raw.data),
    format: tableFormat(String(raw.format ?? "md")),
    by: String(raw.by ?? "label"),
    sustained: rule,
  };
}

/**
 * Prints the sweep.
 *
 * @param o Dataset, format, arms, rule.
 * @param out Where to print.
 * @throws {NothingToShowError} When the dataset holds no fixed-rate step.
 */
export function sweepCommand(o: SweepCommandOptions, out: Output): void {
  const table = sweepTable(o.data, {
    by: o.by,
    sustained: o.sustained,
    onLeftOut: attemptsNote(out),
  });
  onlyForSweeps("kvlab sweep", o.data, table.height);
  out.print(formatSweep(table, o.format, { by: o.by }));
}

/**
 * Declares `kvlab sweep`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link sweepCommand} does the work.
 */
export function declareSweep(program: Command, out: Output): void {
  program.command("sweep")
    .description(
      "Print a fixed-rate sweep: rows = requested rate, columns = arms, cells p50 / p99 (ms), " +
        "NS (achieved) below the sustained bounds, - for steps not run after a first NS.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--format <format>",
      "md (the tables), text, csv or json (one row per arm × step)",
      "md",
    )
    .option("--by <column>", "runs column naming the arms", "label")
    .option(
      "--sustained <min:max>",
      "sustained bounds on achieved / requested",
      `${DEFAULT_SUSTAINED_RULE.min}:${DEFAULT_SUSTAINED_RULE.max}`,
    )
    .action((opts) => sweepCommand(readOptions(() => sweepOptions(opts)), out));
}
