/**
 * Tables for people: a DataFrame as Markdown (for blogs), CSV, JSON, or aligned plain text (for
 * a terminal).
 *
 * @module
 */

import type pl from "nodejs-polars";

/** Output formats of {@link formatTable}: `text` is aligned columns for a terminal. */
export type TableFormat = "md" | "csv" | "json" | "text";

/**
 * Checks a format name.
 *
 * @param name The name, e.g. from `--format`.
 * @returns The format.
 * @throws {TypeError} `invalid format: …` for anything but md, csv, json, text.
 *
 * @example
 * ```ts
 * import { tableFormat } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(tableFormat("text"), "text");
 * assert.throws(() => tableFormat("xml"), /invalid format: xml \(expected md, csv, json or text\)/);
 * ```
 */
export function tableFormat(name: string): TableFormat {
  switch (name) {
    case "md":
    case "csv":
    case "json":
    case "text":
      return name;
    default:
      throw new TypeError(`invalid format: ${name} (expected md, csv, json or text)`);
  }
}

/** A table as strings: what Markdown, CSV and text layouts are drawn from. */
export interface TableCells {
  /** Column headers. */
  headers: string[];
  /** One array of cells per row, in header order. */
  rows: string[][];
  /** Per column: right-aligned (numbers) or not. */
  numeric: boolean[];
}

/** A value as a cell: numbers exact (`full`, round-trip) or to 12 significant digits. */
function cell(v: unknown, full: boolean): string {
  if (v === null || v === undefined) return "";
  if (v instanceof Date) return v.toISOString();
  if (typeof v === "number" && !full && !Number.isInteger(v)) {
    return String(Number(v.toPrecision(12)));
  }
  return String(v);
}

/**
 * The cells of a frame, values as written by {@link formatTable}: numbers to 12 significant
 * digits (hiding float noise such as `0.30000000000000004`) or, with `full`, exact (they read
 * back as the same number), dates as ISO 8601, nulls empty.
 *
 * @param df The frame.
 * @param full Numbers exact, as CSV writes them.
 * @returns Its headers, rows and which columns are numeric.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { tableCells } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const c = tableCells(pl.DataFrame({ test: ["SET"], n: [3] }));
 * assert.deepEqual(c, { headers: ["test", "n"], rows: [["SET", "3"]], numeric: [false, true] });
 * ```
 */
export function tableCells(df: pl.DataFrame, full = false): TableCells {
  const cols = df.columns;
  const records = df.toRecords() as Record<string, unknown>[];
  return {
    headers: cols,
    rows: records.map((r) => cols.map((c) => cell(r[c], full))),
    numeric: cols.map((c) => df.getColumn(c).isNumeric()),
  };
}

/**
 * Lays out cells as Markdown, CSV or aligned text (columns padded to their widest cell, numbers
 * right-aligned, a dashed rule under the headers).
 *
 * @param cells The table.
 * @param format `md`, `csv` or `text`.
 * @returns The text, ending with a newline.
 *
 * @example
 * ```ts
 * import { renderCells } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const cells = { headers: ["test", "ops/s"], rows: [["SET", "9.5"], ["LRANGE_100", "10.25"]], numeric: [false, true] };
 * assert.equal(
 *   renderCells(cells, "text"),
 *   "test        ops/s\n----------  -----\nSET           9.5\nLRANGE_100  10.25\n",
 * );
 * assert.equal(renderCells(cells, "md"), "| test | ops/s |\n|---|---:|\n| SET | 9.5 |\n| LRANGE_100 | 10.25 |\n");
 * ```
 */
export function renderCells(cells: TableCells, format: "md" | "csv" | "text"): string {
  const { headers, rows, numeric } = cells;
  switch (format) {
    case "md": {
      const esc = (s: string) => s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
      return [
        `| ${headers.map(esc).join(" | ")} |`,
        `|${numeric.map((n) => n ? "---:" : "---").join("|")}|`,
        ...rows.map((r) => `| ${r.map(esc).join(" | ")} |`),
      ].join("\n") + "\n";
    }
    case "csv": {
      const q = (s: string) => /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
      return [headers, ...rows].map((r) => r.map(q).join(",")).join("\n") + "\n";
    }
    case "text": {
      const flat = (s: string) => s.replace(/\r?\n/g, " ");
      const widths = headers.map((h, i) =>
        Math.max(h.length, ...rows.map((r) => flat(r[i]).length))
      );
      const line = (r: string[]) =>
        r.map((s, i) => numeric[i] ? flat(s).padStart(widths[i]) : flat(s).padEnd(widths[i]))
          .join("  ").trimEnd();
      return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)]
        .join("\n") + "\n";
    }
  }
}

/**
 * Formats a DataFrame. CSV and JSON keep every number exact; Markdown and text show 12
 * significant digits.
 *
 * @param df The frame.
 * @param format `md`, `csv`, `json` or `text`.
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
 * assert.deepEqual(JSON.parse(formatTable(df, "json"))[1], { test: "GET", ops_per_sec: 107874.87 });
 * const third = pl.DataFrame({ ratio: [1 / 3] });
 * assert.equal(formatTable(third, "csv"), "ratio\n0.3333333333333333\n");
 * assert.equal(formatTable(third, "md"), "| ratio |\n|---:|\n| 0.333333333333 |\n");
 * ```
 */
export function formatTable(df: pl.DataFrame, format: TableFormat): string {
  if (format !== "json") return renderCells(tableCells(df, format === "csv"), format);
  const cols = df.columns;
  return JSON.stringify(
    (df.toRecords() as Record<string, unknown>[]).map((r) => {
      const o: Record<string, unknown> = {};
      for (const c of cols) {
        const v = r[c];
        o[c] = v instanceof Date ? v.toISOString() : typeof v === "bigint" ? Number(v) : v ?? null;
      }
      return o;
    }),
    null,
    2,
  ) + "\n";
}
