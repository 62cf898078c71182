/**
 * Tables for people: numbers rounded by unit (rates to 2 decimals, ms to 3, ratios and
 * factors to 2, percentages to 1) and units in the headers, as Markdown (for blogs), CSV, JSON
 * or aligned text (for a terminal).
 *
 * @module
 */

import pl from "nodejs-polars";
import { formatTable, renderCells, tableCells, type TableFormat } from "./format.ts";
import { decimalsFor, headerFor } from "./units.ts";

export { decimalsFor, headerFor } from "./units.ts";

/** Options of {@link formatForPeople}. */
export interface PeopleOptions {
  /** Units in headers (`(ops/s)`, `(ms)`). @default {true} */
  headers?: boolean;
}

/**
 * Formats a frame for people: Markdown, CSV and text cells with fixed decimals by unit (numbers
 * stay right-aligned), JSON numbers rounded the same way.
 *
 * @param df The frame, columns named with their units (`p50_latency_ms`).
 * @param format `md`, `csv`, `json` or `text` (aligned columns for a terminal).
 * @param options Whether headers show units.
 * @returns The text, ending with a newline.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { formatForPeople } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET"], ratio: [1.01754], p50_latency_ms: [0.34] });
 * assert.equal(formatForPeople(df, "md"), "| test | ratio | p50 latency (ms) |\n|---|---:|---:|\n| SET | 1.02 | 0.340 |\n");
 * assert.equal(formatForPeople(df, "text"), "test  ratio  p50 latency (ms)\n----  -----  ----------------\nSET    1.02             0.340\n");
 * ```
 */
export function formatForPeople(
  df: pl.DataFrame,
  format: TableFormat,
  options: PeopleOptions = {},
): string {
  const headers = options.headers ?? true;
  const cols = df.columns;
  const out = cols.map((c) => {
    const d = decimalsFor(c);
    const s = df.getColumn(c);
    const name = headers ? headerFor(c) : c;
    if (d === null || !s.isNumeric()) return s.alias(name);
    if (format === "json") return s.cast(pl.Float64).round(d).alias(name);
    const vals = (s.toArray() as (number | null)[]).map((
      v,
    ) => (v === null || v === undefined ? null : v.toFixed(d)));
    return pl.Series(name, vals, pl.String);
  });
  const frame = pl.DataFrame(out);
  if (format === "json") return formatTable(frame, "json");
  // numbers formatted as strings keep their right alignment
  const cells = tableCells(frame);
  return renderCells({ ...cells, numeric: cols.map((c) => df.getColumn(c).isNumeric()) }, format);
}
