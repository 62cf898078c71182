/**
 * Tables for people: a DataFrame as Markdown (for blogs), CSV, JSON, or aligned plain text (for
 * a terminal).
 *
 * @module
 */

import pl from "nodejs-polars";
import { csvCell, markdownText, terminalText } from "../text/safe.ts";
import { JSON_TEXT_COLUMNS } from "../schema.ts";

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
  // column by column: one array per column, no row objects
  const values = cols.map((c) => df.getColumn(c).toArray() as unknown[]);
  const rows: string[][] = new Array(df.height);
  for (let i = 0; i < df.height; i++) rows[i] = values.map((v) => cell(v[i], full));
  return {
    headers: cols,
    rows,
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
      const esc = markdownText;
      return [
        `| ${headers.map(esc).join(" | ")} |`,
        `|${numeric.map((n) => n ? "---:" : "---").join("|")}|`,
        ...rows.map((r) => `| ${r.map(esc).join(" | ")} |`),
      ].join("\n") + "\n";
    }
    case "csv": {
      const quote = (s: string) => /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
      const q = (cell: string, i: number) => quote(numeric[i] ? cell : csvCell(cell));
      return [headers.map((h) => quote(csvCell(h))), ...rows.map((r) => r.map(q))]
        .map((r) => r.join(",")).join("\n") + "\n";
    }
    case "text": {
      const flat = (s: string) => terminalText(s.replace(/\r?\n/g, " "));
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
  switch (format) {
    case "csv": {
      // polars writes the CSV once every cell is the text JavaScript prints
      if (df.width === 0) return "\n";
      return guardedCsv(jsText(df), df).writeCSV({ quoteStyle: "necessary" }).toString();
    }
    case "json": {
      // a column of JSON text (runs.tags) is given as the object it holds
      const objects = df.columns.filter((c) =>
        JSON_TEXT_COLUMNS.has(c) && df.getColumn(c).dtype.equals(pl.String)
      );
      // polars writes the rows; JSON.parse + stringify gives JavaScript's numbers and layout
      const frame = objects.length ? undefined : jsonReady(df);
      if (!frame) return jsonRecords(df, objects);
      return JSON.stringify(JSON.parse(frame.writeJSON({ format: "json" }).toString()), null, 2) +
        "\n";
    }
    default:
      return renderCells(tableCells(df), format);
  }
}

// A cell {@link csvCell} changes: a formula's first character, or a control character.
const CSV_RISK =
  "^[=+\\-@\\t\\r]|[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f\\u202a-\\u202e\\u2066-\\u2069]";

/**
 * The text frame (see {@link jsText}) with its headers and the cells of the source's string
 * columns made inert by {@link csvCell} (numbers stay numbers); a column none of whose cells
 * needs it is left to polars.
 */
function guardedCsv(df: pl.DataFrame, source: pl.DataFrame): pl.DataFrame {
  const risky = df.columns.filter((c) => {
    const s = df.getColumn(c);
    return source.getColumn(c).dtype.equals(pl.String) && s.str.contains(CSV_RISK).any();
  });
  const fixed = risky.map((c) => {
    const values = df.getColumn(c).toArray() as (string | null)[];
    return pl.Series(c, values.map((v) => v === null ? null : csvCell(v)), pl.Utf8);
  });
  const text = fixed.length ? df.withColumns(...fixed) : df;
  const headers = text.columns.map(csvCell);
  return headers.some((h, i) => h !== text.columns[i])
    ? text.rename(Object.fromEntries(text.columns.map((c, i) => [c, headers[i]])))
    : text;
}

/**
 * The old way of writing JSON: through row objects (for columns polars writes differently, and
 * `objects`, columns of JSON text given as what they hold; text that is no JSON stays text).
 */
function jsonRecords(df: pl.DataFrame, objects: readonly string[] = []): string {
  const cols = df.columns;
  const parsed = (v: unknown) => {
    if (typeof v !== "string") return v ?? null;
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  };
  return JSON.stringify(
    (df.toRecords() as Record<string, unknown>[]).map((r) => {
      const o: Record<string, unknown> = {};
      for (const c of cols) {
        const v = r[c];
        o[c] = objects.includes(c)
          ? parsed(v)
          : v instanceof Date
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

/** `strftime` pattern of `Date.toISOString()`. */
const ISO_MS = "%Y-%m-%dT%H:%M:%S%.3fZ";

/** Polars' `1.5e-6` where JavaScript prints `0.0000015` (1e-6 ≤ |x| < 1e-5). */
const SMALL_EXPONENT = "^(-?)(\\d)(?:\\.(\\d+))?e-6$";

/**
 * A Float64 as `String(x)` prints it, computed in polars: integers below 2^53 without ".0",
 * 1e-6 ≤ |x| < 1e-5 positional; elsewhere polars' shortest round-trip text is JavaScript's.
 * Not for ±Infinity, NaN or integers ≥ 2^53 (see {@link oddFloats}).
 */
function floatText(x: pl.Expr): pl.Expr {
  const a = x.abs();
  return pl.when(x.eq(x.round(0)).and(a.lt(2 ** 53))).then(x.cast(pl.Int64).cast(pl.Utf8))
    .when(a.gtEq(1e-6).and(a.lt(1e-5))).then(
      x.cast(pl.Utf8).str.replace(SMALL_EXPONENT, "${1}0.00000${2}${3}"),
    )
    .otherwise(x.cast(pl.Utf8));
}

/** Float columns holding a value whose text polars writes unlike JavaScript. */
function oddFloats(df: pl.DataFrame, floats: string[]): Set<string> {
  if (!floats.length) return new Set();
  const checks = floats.map((c) => {
    const f = pl.col(c).cast(pl.Float64);
    return f.isFinite().not().or(f.abs().gtEq(2 ** 53)).any().alias(c);
  });
  const found = df.select(...checks).toRecords()[0] as Record<string, boolean | null>;
  return new Set(floats.filter((c) => found[c] === true));
}

/** How polars can write a column: as is, as text, or (`undefined`) not like JavaScript. */
function columnKind(dtype: pl.DataType): "plain" | "float" | "string" | "date" | undefined {
  switch (dtype.variant) {
    case "Float32":
    case "Float64":
      return "float";
    case "String":
      return "string";
    case "Datetime": {
      const [unit, zone] = (dtype as unknown as { inner: (string | null | undefined)[] }).inner;
      return unit === "ms" && (!zone || zone === "UTC") ? "date" : undefined;
    }
    case "Bool":
    case "Int8":
    case "Int16":
    case "Int32":
    case "Int64":
    case "UInt8":
    case "UInt16":
    case "UInt32":
    case "UInt64":
      return "plain";
    default:
      return undefined;
  }
}

/**
 * The frame with every cell as {@link cell} writes it for CSV (`full`): floats as `String(x)`,
 * dates as ISO 8601, empty strings as nulls (both print empty). Done in polars; a column polars
 * cannot write like JavaScript goes through {@link cell}, value by value.
 */
function jsText(df: pl.DataFrame): pl.DataFrame {
  const kinds = df.columns.map((c) => columnKind(df.getColumn(c).dtype));
  const odd = oddFloats(df, df.columns.filter((_, i) => kinds[i] === "float"));
  const exprs: pl.Expr[] = [];
  const series: pl.Series[] = [];
  df.columns.forEach((name, i) => {
    const x = pl.col(name);
    if (kinds[i] === undefined || odd.has(name)) {
      const values = df.getColumn(name).toArray() as unknown[];
      series.push(pl.Series(name, values.map((v) => cell(v, true) || null), pl.Utf8));
    } else if (kinds[i] === "float") exprs.push(floatText(x.cast(pl.Float64)).alias(name));
    else if (kinds[i] === "string") {
      exprs.push(pl.when(x.eq(pl.lit(""))).then(pl.lit(null)).otherwise(x).alias(name));
    } else if (kinds[i] === "date") exprs.push(x.dt.strftime(ISO_MS).alias(name));
    else exprs.push(x);
  });
  if (!exprs.length) return pl.DataFrame(series);
  const text = df.select(...exprs);
  return (series.length ? text.withColumns(...series) : text).select(...df.columns);
}

/**
 * The frame ready for polars' JSON writer (dates as ISO 8601), or `undefined` when a column
 * would come out unlike `JSON.stringify` of its values.
 */
function jsonReady(df: pl.DataFrame): pl.DataFrame | undefined {
  const kinds = df.columns.map((c) => columnKind(df.getColumn(c).dtype));
  if (kinds.includes(undefined)) return undefined;
  if (oddFloats(df, df.columns.filter((_, i) => kinds[i] === "float")).size) return undefined;
  return df.select(
    ...df.columns.map((c, i) => kinds[i] === "date" ? pl.col(c).dt.strftime(ISO_MS) : pl.col(c)),
  );
}
