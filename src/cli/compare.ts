/**
 * `kvlab compare`: each arm against a baseline per test, with a bootstrap interval and a verdict.
 *
 * @module
 */

import type { OptionValues } from "commander";
import type pl from "nodejs-polars";
import { compare } from "../analyze/compare.ts";
import { type TableFormat, tableFormat } from "../analyze/format.ts";
import { loadResults } from "../analyze/load.ts";
import { formatForPeople } from "../analyze/present.ts";
import type { Output } from "./_exit.ts";

/** What `kvlab compare` compares. */
export interface CompareCommandOptions {
  /** Dataset directory. */
  data: string;
  /** The column whose values are the arms. */
  by: string;
  /** The baseline arm. */
  baseline: string;
  /** @default {"ops_per_sec"} */
  metric: string;
  /** @default {"md"} */
  format: TableFormat;
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
 * ```
 */
export function compareOptions(raw: OptionValues): CompareCommandOptions {
  return {
    data: String(raw.data),
    by: String(raw.by),
    baseline: String(raw.baseline),
    metric: String(raw.metric),
    format: tableFormat(raw.format),
  };
}

/**
 * The columns of a comparison worth a Markdown table: without the per-arm spread, the
 * direction, the baseline name and an all-empty `also_differs`.
 *
 * @param c A comparison from `compare()`.
 * @returns The narrower frame.
 */
export function compactCompare(c: pl.DataFrame): pl.DataFrame {
  const keep = c.columns.filter((col) =>
    !/^(baseline_min|baseline_max|candidate_min|candidate_max)_|^direction$|^baseline$/.test(col) &&
    !(col === "also_differs" && c.getColumn(col).nullCount() === c.height)
  );
  return c.select(...keep);
}

/**
 * Prints the comparison (compact in Markdown, every column in CSV and JSON).
 *
 * @param o What to compare.
 * @param out Where to print.
 */
export function compareCommand(o: CompareCommandOptions, out: Output): void {
  const c = compare(loadResults(o.data), { by: o.by, baseline: o.baseline, metric: o.metric });
  out.print(formatForPeople(o.format === "md" ? compactCompare(c) : c, o.format));
}
