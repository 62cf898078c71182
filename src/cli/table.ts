/**
 * `kvlab table`: print one table of a dataset as Markdown, CSV or JSON.
 *
 * @module
 */

import type { OptionValues } from "commander";
import { formatTable, type TableFormat, tableFormat } from "../analyze/format.ts";
import { loadTable } from "../analyze/load.ts";
import type { Output } from "./_exit.ts";

/** What `kvlab table` prints. */
export interface TableCommandOptions {
  /** The table: runs, results, latency_distribution, … */
  name: string;
  /** Dataset directory. */
  data: string;
  /** @default {"md"} */
  format: TableFormat;
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
 * assert.deepEqual(tableOptions("results", { data: "ds", format: "csv", columns: "test, ops_per_sec" }), {
 *   name: "results", data: "ds", format: "csv", columns: ["test", "ops_per_sec"],
 * });
 * assert.throws(() => tableOptions("results", { data: "ds", format: "xml" }), /invalid format: xml/);
 * ```
 */
export function tableOptions(name: string, raw: OptionValues): TableCommandOptions {
  return {
    name,
    data: String(raw.data),
    format: tableFormat(raw.format),
    columns: raw.columns ? String(raw.columns).split(",").map((c) => c.trim()) : undefined,
  };
}

/**
 * Prints the table.
 *
 * @param o Which table, which columns, which format.
 * @param out Where to print.
 * @throws {TypeError} For a column the table does not have (the message lists its columns).
 */
export function tableCommand(o: TableCommandOptions, out: Output): void {
  let df = loadTable(o.data, o.name);
  if (o.columns) {
    const unknown = o.columns.filter((c) => !df.columns.includes(c));
    if (unknown.length) {
      throw new TypeError(
        `invalid column: ${unknown.join(", ")} (table ${o.name} has: ${df.columns.join(", ")})`,
      );
    }
    df = df.select(...o.columns);
  }
  out.print(formatTable(df, o.format));
}
