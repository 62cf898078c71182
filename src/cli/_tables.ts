/**
 * How commands print tables: for people (rounded by unit, units in headers; Markdown, or aligned
 * text on a terminal) or for programs (CSV and JSON, every column at full precision, the
 * schema's snake_case names with units in them).
 *
 * @module
 */

import type pl from "nodejs-polars";
import { formatTable, type TableFormat } from "../analyze/format.ts";
import { formatForPeople } from "../analyze/present.ts";

/**
 * The format a table for people is printed in: the one asked for, else aligned text on a
 * terminal and Markdown in a pipe (so a redirect gives a table a blog post takes as it is).
 *
 * @param format The `--format` given, if any.
 * @param isTerminal Whether stdout is a terminal.
 * @returns The format.
 *
 * @example
 * ```ts
 * import { peopleFormat } from "./_tables.ts";
 * import assert from "node:assert/strict";
 * assert.equal(peopleFormat(undefined, true), "text");
 * assert.equal(peopleFormat(undefined, false), "md");
 * assert.equal(peopleFormat("md", true), "md");
 * ```
 */
export function peopleFormat(format: TableFormat | undefined, isTerminal = false): TableFormat {
  return format ?? (isTerminal ? "text" : "md");
}

/**
 * A table as the format asks: CSV and JSON get `full` as it is, at full precision; Markdown and
 * text get `forPeople(full)`, rounded by unit with units in the headers.
 *
 * @param full The whole frame.
 * @param format The format.
 * @param forPeople The columns people see.
 * @returns The text.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { tableText } from "./_tables.ts";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET"], ratio: [1.017541], direction: ["higher is better"] });
 * const people = (d: pl.DataFrame) => d.select("test", "ratio");
 * assert.equal(tableText(df, "csv", people), "test,ratio,direction\nSET,1.017541,higher is better\n");
 * assert.equal(tableText(df, "md", people), "| test | ratio |\n|---|---:|\n| SET | 1.02 |\n");
 * ```
 */
export function tableText(
  full: pl.DataFrame,
  format: TableFormat,
  forPeople: (df: pl.DataFrame) => pl.DataFrame = (df) => df,
): string {
  return format === "csv" || format === "json"
    ? formatTable(full, format)
    : formatForPeople(forPeople(full), format);
}
