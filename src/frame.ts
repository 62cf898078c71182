/**
 * Typed polars frames of the schema's tables: every frame of a table has the same columns in
 * the same order with the same types, whatever rows it holds.
 *
 * @module
 */

import pl from "nodejs-polars";
import { type ColumnSpec, type Row, type TableName, type TableRows, TABLES } from "./schema.ts";

/** The polars type of a schema column type. */
export function dtype(t: ColumnSpec["type"]): pl.DataType {
  switch (t) {
    case "string":
      return pl.String;
    case "int":
      return pl.Int64;
    case "float":
      return pl.Float64;
    case "bool":
      return pl.Bool;
    case "timestamp":
      return pl.Datetime("ms", "UTC");
  }
}

/**
 * Builds a polars DataFrame of a table from rows, with the schema's exact column order and
 * types (so every run's Parquet has the same schema, even for all-null columns).
 *
 * @throws {TypeError} When a non-nullable column gets a null, or a row has a key that is not a
 * column of the table (a misspelt column is never written as a silent null).
 *
 * @example
 * ```ts
 * import { tableFrame } from "@kvlab/kvlab";
 * import assert from "node:assert/strict";
 * const row = { run_id: "r", phase: "before", key: "maxmemory", value: "0" };
 * assert.equal(tableFrame("server_config", [row]).height, 1);
 * assert.throws(
 *   () => tableFrame("server_config", [{ ...row, vlaue: "0" } as typeof row]),
 *   /server_config has no column "vlaue"/,
 * );
 * ```
 */
export function tableFrame<T extends TableName>(
  table: T,
  rows: readonly TableRows[T][],
): pl.DataFrame {
  const spec = TABLES[table];
  if (rows.length === 0) {
    return pl.DataFrame(spec.map((col) => pl.Series(col.name, [], dtype(col.type))));
  }
  checkKeys(table, rows as unknown as readonly Row[]);
  // Small frames: one call into polars with the schema (much faster than a Series per column).
  // Large frames: a Series per column, typed arrays where there is no null.
  return rows.length <= 64
    ? byRecords(table, rows as unknown as readonly Row[])
    : byColumns(table, rows as unknown as readonly Row[]);
}

const COLUMN_NAMES = new Map<TableName, Set<string>>();

/** Throws on the first key of a row that is not a column of the table. */
function checkKeys(table: TableName, rows: readonly Row[]): void {
  let names = COLUMN_NAMES.get(table);
  if (!names) {
    names = new Set(TABLES[table].map((c) => c.name));
    COLUMN_NAMES.set(table, names);
  }
  for (const r of rows) {
    for (const k in r) {
      if (!names.has(k)) {
        throw new TypeError(
          `${table} has no column "${k}" (run ${String(r.run_id)}; columns: ${
            [...names].join(", ")
          })`,
        );
      }
    }
  }
}

function checkedValue(table: TableName, col: ColumnSpec, r: Row): unknown {
  const v = r[col.name];
  if (v === undefined || v === null || (typeof v === "number" && !Number.isFinite(v))) {
    if (!col.nullable) {
      throw new TypeError(`${table}.${col.name} must not be null (run ${String(r.run_id)})`);
    }
    return null;
  }
  return v;
}

function byRecords(table: TableName, rows: readonly Row[]): pl.DataFrame {
  const spec = TABLES[table];
  const records = rows.map((r) => {
    const o: Record<string, unknown> = {};
    for (const col of spec) o[col.name] = checkedValue(table, col, r);
    return o;
  });
  return pl.readRecords(records, { schema: schemaOf(table) } as never);
}

function byColumns(table: TableName, rows: readonly Row[]): pl.DataFrame {
  const n = rows.length;
  const fromNumbers: string[] = [];
  const frame = pl.DataFrame(TABLES[table].map((col) => {
    if (col.type === "float" || col.type === "int") {
      const numbers = numberColumn(table, col, rows);
      if (numbers) {
        // NaN marks a null (a non-finite value is null in the schema): no value goes through
        // polars' per-value conversion
        if (numbers.nulls > 0) fromNumbers.push(col.name);
        return pl.Series(col.name, numbers.values, pl.Float64);
      }
    }
    const values = new Array(n);
    let nulls = 0;
    for (let i = 0; i < n; i++) {
      const v = checkedValue(table, col, rows[i]);
      values[i] = v;
      if (v === null) nulls++;
    }
    if (nulls === n) {
      return pl.Series(col.name, [null], dtype(col.type)).extendConstant(null, n - 1);
    }
    return pl.Series(col.name, values, dtype(col.type));
  }));
  const ints = TABLES[table].filter((c) =>
    c.type === "int" && frame.getColumn(c.name).dtype.equals(pl.Float64)
  );
  if (fromNumbers.length === 0 && ints.length === 0) return frame;
  return frame.withColumns(
    ...fromNumbers.map((c) => pl.col(c).fillNan(null)),
  ).withColumns(...ints.map((c) => pl.col(c.name).cast(pl.Int64)));
}

/**
 * The values of a number column as a Float64Array, NaN for nulls; undefined when a value is
 * not a number (or, for an int column, not a whole number below 2^53), or every value is null.
 */
function numberColumn(
  table: TableName,
  col: ColumnSpec,
  rows: readonly Row[],
): { values: Float64Array; nulls: number } | undefined {
  const n = rows.length;
  const values = new Float64Array(n);
  let nulls = 0;
  const int = col.type === "int";
  for (let i = 0; i < n; i++) {
    const v = rows[i][col.name];
    if (typeof v === "number" && Number.isFinite(v)) {
      if (int && !Number.isSafeInteger(v)) return undefined;
      values[i] = v;
    } else if (v === undefined || v === null || typeof v === "number") {
      checkedValue(table, col, rows[i]); // throws for a null in a column that must have a value
      values[i] = NaN;
      nulls++;
    } else return undefined;
  }
  return nulls === n ? undefined : { values, nulls };
}

const SCHEMAS = new Map<TableName, Record<string, pl.DataType>>();

/** The polars schema of a table (column name → type), in column order. */
export function schemaOf(table: TableName): Record<string, pl.DataType> {
  let s = SCHEMAS.get(table);
  if (!s) {
    s = {};
    for (const col of TABLES[table]) s[col.name] = dtype(col.type);
    SCHEMAS.set(table, s);
  }
  return s;
}

/** Options of {@link rowsFrame}. */
export interface RowsFrameOptions {
  /**
   * Columns typed Float64 even when every value they hold is whole (analyze passes
   * `isFractional` from its units module: rates, milliseconds, medians, ratios).
   * @default {() => false}
   */
  fractional?: (column: string) => boolean;
}

/**
 * A frame from plain records (analysis results, not schema tables), keeping the first record's
 * column order: numbers become Int64 when all are whole (unless `fractional` names the column)
 * else Float64, booleans Bool, anything else String. Nulls stay null.
 *
 * @param rows Records with the same keys.
 * @param options How to tell fractional columns.
 * @returns The frame; an empty frame with no columns for no rows.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { rowsFrame } from "@kvlab/kvlab";
 * import assert from "node:assert/strict";
 * const df = rowsFrame([{ test: "SET", n: 2, median: 3 }, { test: "GET", n: 1, median: null }], {
 *   fractional: (c) => c === "median",
 * });
 * assert.deepEqual(df.columns, ["test", "n", "median"]);
 * assert.deepEqual(df.dtypes, [pl.String, pl.Int64, pl.Float64]);
 * ```
 */
export function rowsFrame(
  rows: readonly Record<string, unknown>[],
  options: RowsFrameOptions = {},
): pl.DataFrame {
  if (rows.length === 0) return pl.DataFrame({});
  const fractional = options.fractional ?? (() => false);
  const cols = Object.keys(rows[0]);
  return pl.DataFrame(cols.map((c) => {
    const vals = rows.map((r) => r[c] ?? null);
    const nonNull = vals.filter((v) => v !== null);
    if (nonNull.length > 0 && nonNull.every((v) => typeof v === "number")) {
      const whole = nonNull.every((v) => Number.isInteger(v)) && !fractional(c);
      return pl.Series(c, vals, whole ? pl.Int64 : pl.Float64);
    }
    if (nonNull.length > 0 && nonNull.every((v) => typeof v === "boolean")) {
      return pl.Series(c, vals, pl.Bool);
    }
    return pl.Series(c, vals.map((v) => (v === null ? null : String(v))), pl.String);
  }));
}
