/**
 * Tables for people: a DataFrame as Markdown (for blogs), CSV or JSON.
 *
 * @module
 */

import type pl from "nodejs-polars";

/** Output formats of {@link formatTable}. */
export type TableFormat = "md" | "csv" | "json";

/**
 * Checks a format name.
 *
 * @throws {TypeError} `invalid format: …` for anything but md, csv, json.
 */
export function tableFormat(name: string): TableFormat {
  switch (name) {
    case "md":
    case "csv":
    case "json":
      return name;
    default:
      throw new TypeError(`invalid format: ${name} (expected md, csv or json)`);
  }
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (v instanceof Date) return v.toISOString();
  if (typeof v === "number") {
    return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(12)));
  }
  return String(v);
}

/**
 * Formats a DataFrame.
 *
 * @param df The frame.
 * @param format `md`, `csv` or `json`.
 * @returns The text, ending with a newline.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { formatTable } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET", "GET"], ops_per_sec: [109769.48, 107874.87] });
 * assert.equal(
 *   formatTable(df, "md"),
 *   "| test | ops_per_sec |\n|---|---:|\n| SET | 109769.48 |\n| GET | 107874.87 |\n",
 * );
 * assert.equal(formatTable(df, "csv"), "test,ops_per_sec\nSET,109769.48\nGET,107874.87\n");
 * ```
 */
export function formatTable(df: pl.DataFrame, format: TableFormat): string {
  const cols = df.columns;
  const records = df.toRecords() as Record<string, unknown>[];
  switch (format) {
    case "md": {
      const numeric = cols.map((c) => df.getColumn(c).isNumeric());
      const esc = (s: string) => s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
      const lines = [
        `| ${cols.map(esc).join(" | ")} |`,
        `|${numeric.map((n) => n ? "---:" : "---").join("|")}|`,
        ...records.map((r) => `| ${cols.map((c) => esc(cell(r[c]))).join(" | ")} |`),
      ];
      return lines.join("\n") + "\n";
    }
    case "csv": {
      const q = (s: string) => /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
      return [
        cols.map(q).join(","),
        ...records.map((r) => cols.map((c) => q(cell(r[c]))).join(",")),
      ]
        .join("\n") + "\n";
    }
    case "json":
      return JSON.stringify(
        records.map((r) => {
          const o: Record<string, unknown> = {};
          for (const c of cols) {
            const v = r[c];
            o[c] = v instanceof Date
              ? v.toISOString()
              : typeof v === "bigint"
              ? Number(v)
              : v ?? null;
          }
          return o;
        }),
        null,
        2,
      ) + "\n";
  }
}
