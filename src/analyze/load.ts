/**
 * Loading a kvlab dataset into nodejs-polars: each table is scanned lazily over
 * `runs/* /<table>.parquet`, and results come joined with their runs. Analysis code reads
 * datasets only through here (never through the parsers).
 *
 * @module
 */

import pl from "nodejs-polars";
import { DatasetError } from "../errors.ts";
import { schemaOf, tableFrame } from "../frame.ts";
import { SCHEMA_MAJOR, type TableName, tableSpec } from "../schema.ts";

/** The run folders of a dataset (finished runs only; `tmp/` is never read). */
export function listRuns(dataDir: string): string[] {
  const ids: string[] = [];
  try {
    for (const e of Deno.readDirSync(`${dataDir}/runs`)) {
      if (e.isDirectory && !e.name.startsWith(".")) ids.push(e.name);
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      try {
        Deno.statSync(dataDir);
      } catch {
        throw new DatasetError(`${dataDir}: no such dataset directory`);
      }
      return [];
    }
    throw e;
  }
  return ids.sort();
}

/**
 * Scans one table of a dataset lazily. A dataset with no rows for the table gives an empty
 * frame with the table's columns.
 *
 * @param dataDir The dataset directory.
 * @param table Any table of the schema (`runs`, `results`, `time_series`, `hdr_histograms`, …).
 * @throws {TypeError} For an unknown table.
 * @throws {DatasetError} When the directory is not a dataset.
 */
export function scanTable(dataDir: string, table: TableName | string): pl.LazyDataFrame {
  tableSpec(table);
  // A run holds `<table>.parquet`, or `<table>.part-NNNN.parquet` parts for long outputs.
  const any = listRuns(dataDir).some((id) =>
    exists(`${dataDir}/runs/${id}/${table}.parquet`) ||
    exists(`${dataDir}/runs/${id}/${table}.part-0000.parquet`)
  );
  if (!any) return tableFrame(table as TableName, []).lazy();
  // Runs written by an older 1.x lack the newer columns: they read as nulls.
  return pl.scanParquet(`${dataDir}/runs/*/${table}.*parquet`, {
    schema: schemaOf(table as TableName),
    missingColumns: "insert",
    extraColumns: "ignore",
  } as never);
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Loads one table into memory, checking the runs' schema version.
 *
 * @throws {DatasetError} When a run was written by a newer, incompatible kvlab.
 *
 * @example
 * ```ts
 * import { loadTable } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * assert.equal(loadTable(dir, "results").height, 0);
 * assert.ok(loadTable(dir, "results").columns.includes("ops_per_sec"));
 * ```
 */
export function loadTable(dataDir: string, table: TableName | string): pl.DataFrame {
  const df = scanTable(dataDir, table).collectSync();
  if (table === "runs") checkVersions(df);
  return df;
}

function checkVersions(runs: pl.DataFrame): void {
  if (runs.height === 0) return;
  const versions = runs.getColumn("schema_version").unique().toArray() as string[];
  for (const v of versions) {
    const major = Number(String(v).split(".")[0]);
    if (major !== SCHEMA_MAJOR) {
      const ids = runs.filter(pl.col("schema_version").eq(pl.lit(v))).getColumn("run_id").head(3)
        .toArray();
      throw new DatasetError(
        `runs ${ids.join(", ")} use schema ${v}; this kvlab reads schema ${SCHEMA_MAJOR}.x`,
      );
    }
  }
}

/** Options of {@link loadResults}. */
export interface LoadResultsOptions {
  /**
   * Keep only tests the tool finished (`complete`), so that cut tests never count as results.
   * @default {true}
   */
  completeOnly?: boolean;
}

/**
 * Loads the results of a dataset joined with their runs (server, label, tool, transport, …):
 * one row per test per run.
 *
 * @example
 * ```ts
 * import { loadResults } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = loadResults(Deno.makeTempDirSync());
 * assert.equal(df.height, 0);
 * assert.ok(df.columns.includes("server") && df.columns.includes("ops_per_sec"));
 * ```
 */
export function loadResults(dataDir: string, options: LoadResultsOptions = {}): pl.DataFrame {
  const runs = loadTable(dataDir, "runs");
  let results = scanTable(dataDir, "results");
  if (options.completeOnly ?? true) results = results.filter(pl.col("complete"));
  // a stable order: runs by id (time first), tests as printed
  return results.join(runs.lazy(), { on: "run_id", how: "left" }).sort(["run_id", "test_index"])
    .collectSync();
}
