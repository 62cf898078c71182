/**
 * `kvlab table`: print one table of a dataset as Markdown, CSV, JSON or aligned text. `results`
 * comes with its runs' columns (label, server, versions, tool, transport, io-threads, …) joined
 * on.
 *
 * @module
 */

import { Dataset, type DatasetRef } from "../store/dataset.ts";
import type { Command, OptionValues } from "commander";
import type pl from "nodejs-polars";
import { ARM_COLUMNS } from "../analyze/arms.ts";
import { formatTable, type TableFormat } from "../analyze/format.ts";
import { loadTable } from "../analyze/load.ts";
import { formatForPeople } from "../analyze/present.ts";
import { tableSpec } from "../schema.ts";
import { type Output, readOptions } from "./_exit.ts";
import { datasetOption, optionalFormat } from "./_options.ts";
import { peopleFormat } from "./_tables.ts";
import { TABLES } from "../schema.ts";

/** What `kvlab table` prints. */
export interface TableCommandOptions {
  /** The table: runs, results, latency_distribution, … */
  name: string;
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** @default {text on a terminal, md in a pipe} */
  format?: TableFormat;
  /** Only these columns, in this order. */
  columns?: string[];
}

/**
 * Reads `kvlab table`'s argument and commander's options.
 *
 * @param name The table's name.
 * @param raw Commander's option values.
 * @returns The typed options.
 * @throws {TypeError} For an unknown format.
 *
 * @example
 * ```ts
 * import { tableOptions } from "./table.ts";
 * import assert from "node:assert/strict";
 * const o = tableOptions("results", { data: "ds", format: "csv", columns: "test, ops_per_sec" });
 * assert.deepEqual({ ...o, data: o.data.dir }, {
 *   name: "results", data: "ds", format: "csv", columns: ["test", "ops_per_sec"],
 * });
 * assert.throws(() => tableOptions("results", { data: "ds", format: "xml" }), /invalid format: xml/);
 * ```
 */
export function tableOptions(name: string, raw: OptionValues): TableCommandOptions {
  return {
    name,
    data: datasetOption(raw.data),
    format: optionalFormat(raw.format),
    columns: raw.columns ? String(raw.columns).split(",").map((c) => c.trim()) : undefined,
  };
}

/** The columns asked for, checked against those the table offers (before anything is read). */
function checkColumns(name: string, asked: readonly string[], offered: readonly string[]): void {
  const unknown = asked.filter((c) => !offered.includes(c));
  if (unknown.length) {
    throw new TypeError(
      `invalid column: ${unknown.join(", ")} (table ${name} has: ${offered.join(", ")})`,
    );
  }
}

/**
 * A table of a dataset as `kvlab table` shows it: `results` joined with every column of its
 * runs, the columns that can name arms (`ARM_COLUMNS`: label, server, server_version, tool,
 * tool_version, transport, server_io_threads) shown after `run_id`; other tables as stored.
 * With `columns`, only those are read (and `run_id`, to join the runs on).
 *
 * @param data The dataset, or its directory.
 * @param name The table.
 * @param columns Only these columns. @default {every column}
 * @returns The frame with every selectable column (or those asked for), and the columns shown
 * by default.
 * @throws {TypeError} For an unknown table, or a column it does not have (the message lists
 * its columns).
 */
export function tableView(
  data: DatasetRef,
  name: string,
  columns?: readonly string[],
): { frame: pl.DataFrame; shown: string[] } {
  const ds = Dataset.of(data);
  const own = tableSpec(name).map((c) => c.name);
  if (name !== "results") {
    if (columns) checkColumns(name, columns, own);
    const table = loadTable(ds, name, {
      columns: columns && [...new Set(columns)],
      everyAttempt: true,
    });
    return { frame: table, shown: table.columns };
  }
  const fromRuns = tableSpec("runs").map((c) => c.name).filter((c) => !own.includes(c));
  if (columns) checkColumns(name, columns, [...own, ...fromRuns]);
  const pick = (offered: readonly string[], always: string[]) =>
    columns && [...new Set([...always, ...columns.filter((c) => offered.includes(c))])];
  // runs first, read once: the results' schema check uses them
  // every run, also superseded attempts of plan cells: a table shows what the dataset holds
  const runs = loadTable(ds, "runs", {
    columns: pick(fromRuns, ["run_id", "schema_version"]),
    everyAttempt: true,
  });
  const table = loadTable(ds, "results", {
    runs,
    columns: pick(own, ["run_id"]),
    everyAttempt: true,
  });
  const extra = runs.columns.filter((c) => c === "run_id" || fromRuns.includes(c))
    .filter((c) => c === "run_id" || !columns || columns.includes(c));
  const frame = table.join(runs.select(...extra), { on: "run_id", how: "left" });
  const rest = own.filter((c) => c !== "run_id");
  return { frame, shown: ["run_id", ...ARM_COLUMNS, ...rest] };
}

/**
 * Prints the table.
 *
 * @param o Which table, which columns, which format.
 * @param out Where to print.
 * @throws {TypeError} For a column the table does not have (the message lists its columns).
 */
export function tableCommand(o: TableCommandOptions, out: Output): void {
  const { frame, shown } = tableView(o.data, o.name, o.columns);
  const format = peopleFormat(o.format, out.isTerminal);
  // on a terminal, results' ~60 columns would be hundreds of characters wide: the main ones
  const narrow = format === "text" && o.columns === undefined && o.name === "results";
  const columns = o.columns ??
    (narrow ? TERMINAL_RESULTS.filter((c) => frame.columns.includes(c)) : shown);
  if (narrow) {
    out.printErr(
      `showing ${columns.length} of ${frame.columns.length} columns: --columns a,b,c picks ` +
        `others, --format csv or json gives all\n`,
    );
  }
  const picked = frame.select(...columns);
  // Markdown and text round by unit (column names kept, for --columns); CSV and JSON are exact
  out.print(
    format === "csv" || format === "json"
      ? formatTable(picked, format)
      : formatForPeople(picked, format, { headers: false }),
  );
}

/** The `results` columns `kvlab table results` shows on a terminal without `--columns`. */
export const TERMINAL_RESULTS = [
  "run_id",
  "label",
  "server",
  "tool",
  "test",
  "clients",
  "pipeline",
  "data_size_bytes",
  "requested_ops_per_sec",
  "ops_per_sec",
  "p50_latency_ms",
  "p99_latency_ms",
  "complete",
];

/**
 * Declares `kvlab table`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link tableCommand} does the work.
 */
export function declareTable(program: Command, out: Output): void {
  program.command("table")
    .description("Print a table of a dataset.")
    .argument("<name>", `table: ${Object.keys(TABLES).join(", ")}`)
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .option("--columns <list>", "comma-separated columns to show")
    .action((name: string, opts) => tableCommand(readOptions(() => tableOptions(name, opts)), out));
}
