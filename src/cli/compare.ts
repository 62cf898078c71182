/**
 * `kvlab compare`: each arm against a baseline per test, with an interval and a verdict (see
 * `src/analyze/compare.ts`). Without `--by`, the arms are the runs' labels when they split the
 * data, else the run column that differs; without `--baseline`, the first arm. On stderr: the
 * warning when cells hold fewer than 4 runs per arm (as demo and summary print it) and one line
 * on the table as a whole (how many cells differ, after Benjamini–Hochberg too).
 *
 * @module
 */

import type { Dataset } from "../store/dataset.ts";
import type { Command, OptionValues } from "commander";
import type pl from "nodejs-polars";
import { resolveArms } from "../analyze/arms.ts";
import { compare, verdictSummary } from "../analyze/compare/compare.ts";
import { cellCounts, fewRunsWarning } from "../analyze/environment.ts";
import type { TableFormat } from "../analyze/format.ts";
import { loadResults } from "../analyze/load.ts";
import { type Output, readOptions } from "./_exit.ts";
import { attemptsNote, notForSweeps } from "./_shows.ts";
import { datasetOption, optionalFormat, optionalString } from "./_options.ts";
import { peopleFormat, tableText } from "./_tables.ts";

/** What `kvlab compare` compares. */
export interface CompareCommandOptions {
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** The column whose values are the arms. @default {label when it splits the data, else the column that differs} */
  by?: string;
  /** The baseline arm. @default {the first arm} */
  baseline?: string;
  /** @default {"ops_per_sec"} */
  metric: string;
  /** @default {text on a terminal, md in a pipe} */
  format?: TableFormat;
}

/**
 * Reads `kvlab compare`'s options.
 *
 * @param raw Commander's option values (defaults filled in).
 * @returns The typed options.
 * @throws {TypeError} For an unknown format.
 *
 * @example
 * ```ts
 * import { compareOptions } from "./compare.ts";
 * import assert from "node:assert/strict";
 * const o = compareOptions({ data: "ds", by: "server", baseline: "redis", metric: "ops_per_sec", format: "md" });
 * assert.equal(o.format, "md");
 * assert.equal(compareOptions({ data: "ds", metric: "ops_per_sec" }).by, undefined);
 * ```
 */
export function compareOptions(raw: OptionValues): CompareCommandOptions {
  return {
    data: datasetOption(raw.data),
    by: optionalString(raw.by),
    baseline: optionalString(raw.baseline),
    metric: String(raw.metric ?? "ops_per_sec"),
    format: optionalFormat(raw.format),
  };
}

/**
 * The columns of a comparison worth a table for people: without the per-arm spread, the
 * direction, the baseline name, the unadjusted p, the Hodges–Lehmann ratio and the details of
 * `unstable` (JSON and CSV keep them), and without an all-empty `also_differs`, `verdict_note`
 * or `unstable`.
 *
 * @param c A comparison from `compare()`.
 * @returns The narrower frame.
 */
export function compactCompare(c: pl.DataFrame): pl.DataFrame {
  const keep = c.columns.filter((col) =>
    !/^(baseline_min|baseline_max|candidate_min|candidate_max)_|^direction$|^baseline$|^p_value$|^shift_ratio$|^unstable_details$/
      .test(col) &&
    !(["also_differs", "verdict_note", "unstable"].includes(col) &&
      c.getColumn(col).nullCount() === c.height)
  );
  return c.select(...keep);
}

/**
 * Prints the comparison: compact and rounded for people (Markdown, or aligned text on a
 * terminal), every column at full precision in CSV and JSON. When the arms were chosen by
 * default, says which on stderr.
 *
 * @param o What to compare.
 * @param out Where to print.
 * @throws {TypeError} For fewer than two arms (naming the arms found) or a baseline not in the
 * data.
 */
export function compareCommand(o: CompareCommandOptions, out: Output): void {
  const results = loadResults(o.data, { onLeftOut: attemptsNote(out) });
  notForSweeps("kvlab compare", o.data, results);
  const arms = resolveArms(results, { by: o.by, baseline: o.baseline });
  if (arms.defaulted || o.baseline === undefined) {
    out.printErr(
      `comparing by ${arms.by} (${arms.values.join(", ")}), baseline ${arms.baseline}\n`,
    );
  }
  const c = compare(results, { by: arms.by, baseline: arms.baseline, metric: o.metric });
  out.print(tableText(c, peopleFormat(o.format, out.isTerminal), compactCompare));
  const warning = fewRunsWarning(cellCounts(results, arms.by));
  if (warning) out.printErr(`${warning}\n`);
  if (c.height > 0) out.printErr(`${verdictSummary(c)}\n`);
}

/**
 * Declares `kvlab compare`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link compareCommand} does the work.
 */
export function declareCompare(program: Command, out: Output): void {
  program.command("compare")
    .description(
      "Compare each arm with a baseline per test: medians over repetitions, ratio with a 95% " +
        "interval, and a verdict (better / worse at 5% by an exact rank-sum test with 4+ runs " +
        "per arm; no difference when the interval is within ±5%; else inconclusive), with " +
        "Benjamini–Hochberg q-values across the table. CSV and JSON carry every column at full " +
        "precision.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--by <column>",
      "column whose values are the arms: label, server, server_version, … (default: label when " +
        "the runs' labels split the data, else the run column that differs)",
    )
    .option("--baseline <value>", "the baseline arm (default: the arm measured first)")
    .option(
      "--metric <column>",
      "metric: ops_per_sec, p50_latency_ms, p99_latency_ms, …",
      "ops_per_sec",
    )
    .option(
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .action((opts) => compareCommand(readOptions(() => compareOptions(opts)), out));
}
