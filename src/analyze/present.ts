/**
 * Tables for people: numbers rounded by unit (rates to 2 decimals, ms to 3, ratios and
 * factors to 2, percentages to 1) and units in the headers, as Markdown (for blogs), CSV or
 * JSON.
 *
 * @module
 */

import pl from "nodejs-polars";
import { formatTable, type TableFormat } from "./format.ts";

/**
 * The decimals a column is shown with, from its name; null for columns left as they are.
 *
 * @example
 * ```ts
 * import { decimalsFor } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(decimalsFor("baseline_median_ops_per_sec"), 2);
 * assert.equal(decimalsFor("p99_latency_ms"), 3);
 * assert.equal(decimalsFor("ratio_ci_low"), 2);
 * assert.equal(decimalsFor("clients"), null);
 * ```
 */
export function decimalsFor(column: string): number | null {
  if (/per_sec$/.test(column)) return 2;
  if (/_mib$/.test(column)) return 2;
  if (/_per_key$/.test(column)) return 1;
  if (/^r_squared$/.test(column)) return 4;
  if (/_ms$/.test(column)) return 3;
  if (/^ratio|_ratio$|factor/.test(column)) return 2;
  if (/_pct$/.test(column)) return 1;
  if (/_s$/.test(column)) return 2;
  if (column === "nines") return 2;
  return null;
}

/**
 * A header with its unit: `baseline_median_ops_per_sec` → `baseline median (ops/s)`.
 *
 * @example
 * ```ts
 * import { headerFor } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(headerFor("baseline_median_ops_per_sec"), "baseline median (ops/s)");
 * assert.equal(headerFor("ops_per_sec"), "throughput (ops/s)");
 * assert.equal(headerFor("p99_latency_ms"), "p99 latency (ms)");
 * assert.equal(headerFor("p50_latency_change_pct"), "p50 latency change (%)");
 * assert.equal(headerFor("data_size_bytes"), "data size (bytes)");
 * ```
 */
export function headerFor(column: string): string {
  const rules: [RegExp, string][] = [
    [/^(.*?)_?ops_per_sec$/, "ops/s"],
    [/^(.*)_ms$/, "ms"],
    [/^(.*)_pct$/, "%"],
    [/^(.*)_bytes$/, "bytes"],
    [/^(.*)_mib$/, "MiB"],
    [/^(.*)_bytes_per_key$/, "bytes/key"],
    [/^(.*)_per_sec$/, "/s"],
    [/^(.*)_s$/, "s"],
  ];
  for (const [re, unit] of rules) {
    const m = re.exec(column);
    if (m) return `${(m[1].trim() || "throughput").replace(/_/g, " ")} (${unit})`;
  }
  return column.replace(/_/g, " ");
}

/** Options of {@link formatForPeople}. */
export interface PeopleOptions {
  /** Units in headers (`(ops/s)`, `(ms)`). @default {true} */
  headers?: boolean;
}

/**
 * Formats a frame for people: Markdown/CSV cells with fixed decimals by unit, JSON numbers
 * rounded the same way.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { formatForPeople } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET"], ratio: [1.01754], p50_latency_ms: [0.34] });
 * assert.equal(formatForPeople(df, "md"), "| test | ratio | p50 latency (ms) |\n|---|---:|---:|\n| SET | 1.02 | 0.340 |\n");
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
  // keep numeric alignment in Markdown for the formatted columns
  const text = formatTable(frame, format);
  if (format !== "md") return text;
  const lines = text.split("\n");
  lines[1] = "|" + cols.map((c) => (df.getColumn(c).isNumeric() ? "---:" : "---")).join("|") + "|";
  return lines.join("\n");
}
