/**
 * Typed polars frames of the schema's tables: every frame of a table has the same columns in
 * the same order with the same types, whatever rows it holds.
 *
 * @module
 */

import pl from "nodejs-polars";
import { type ColumnSpec, type Row, type TableName, TABLES } from "./schema.ts";

/** The polars type of a schema column type. */
export function dtype(t: ColumnSpec["type"]): pl.DataType {
  switch (t) {
    case "string":
      return pl.Utf8;
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
 * @throws {TypeError} When a non-nullable column gets a null.
 */
export function tableFrame(table: TableName, rows: readonly Row[]): pl.DataFrame {
  const spec = TABLES[table];
  const series = spec.map((col) => {
    const values = rows.map((r) => {
      const v = r[col.name];
      if (v === undefined || v === null || (typeof v === "number" && !Number.isFinite(v))) {
        if (!col.nullable) {
          throw new TypeError(`${table}.${col.name} must not be null (run ${String(r.run_id)})`);
        }
        return null;
      }
      return v;
    });
    return pl.Series(col.name, values, dtype(col.type));
  });
  return pl.DataFrame(series);
}
