/**
 * Loading a kvlab dataset into nodejs-polars: each table is scanned lazily over an explicit
 * list of its Parquet files (the batches in place, and the per-run folders of older datasets),
 * and results come joined with their runs. Analysis code reads datasets only through here
 * (never through the parsers). A damaged file is named, never skipped.
 *
 * @module
 */

import pl from "nodejs-polars";
import { Dataset, type DatasetRef } from "../store/dataset.ts";
import { damaged, datasetFiles, scanFiles } from "../store/layout.ts";
import { DatasetError } from "../errors.ts";
import { SCHEMA_MAJOR, type TableName, tableSpec } from "../schema.ts";

/**
 * The runs of a dataset, by id (finished runs only; `tmp/` is never read).
 *
 * @param data The dataset, or its directory.
 * @returns The run ids, sorted.
 * @throws {DatasetError} When the directory is not a dataset.
 */
export function listRuns(data: DatasetRef): string[] {
  const dataDir = Dataset.of(data).dir;
  const ids = collectChecked(
    dataDir,
    "runs",
    (files) => scanFiles(dataDir, "runs", files).select("run_id").collectSync(),
  );
  return [...new Set(ids.getColumn("run_id").toArray() as string[])].sort();
}

/**
 * Scans one table of a dataset lazily. A dataset with no rows for the table gives an empty
 * frame with the table's columns.
 *
 * @param data The dataset, or its directory.
 * @param table Any table of the schema (`runs`, `results`, `time_series`, `hdr_histograms`, …).
 * @throws {TypeError} For an unknown table.
 * @throws {DatasetError} When the directory is not a dataset, or a file of it is damaged.
 */
export function scanTable(data: DatasetRef, table: TableName | string): pl.LazyDataFrame {
  const dataDir = Dataset.of(data).dir;
  tableSpec(table);
  return scanFiles(dataDir, table, datasetFiles(dataDir).tables.get(table) ?? []);
}

/**
 * Collects a table, naming the file when polars fails on one (a changed column type, a
 * damaged footer), and listing the files again when one went away meanwhile (a compaction
 * replaced it).
 */
function collectChecked(
  dataDir: string,
  table: string,
  collect: (files: readonly string[]) => pl.DataFrame,
): pl.DataFrame {
  for (let attempt = 0;; attempt++) {
    const files = datasetFiles(dataDir).tables.get(table) ?? [];
    try {
      return collect(files);
    } catch (e) {
      if (/No such file|os error 2|not found/i.test(String(e)) && attempt < 3) continue;
      throw blame(e, { dataDir, table, files });
    }
  }
}

/** The error naming the file that polars failed on, found by reading the files one by one. */
function blame(
  e: unknown,
  at: { dataDir: string; table: string; files: readonly string[] },
): Error {
  const { dataDir, table, files } = at;
  if (e instanceof DatasetError) return e;
  for (const f of files) {
    try {
      scanFiles(dataDir, table, [f]).collectSync();
    } catch (one) {
      return damaged(f, String((one as Error).message ?? one).split("\n")[0]);
    }
  }
  return e as Error;
}

/**
 * Loads one table into memory, checking the runs' schema version.
 *
 * @throws {DatasetError} When a run was written by a newer, incompatible kvlab, or a file is
 * damaged (the message names it).
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
export function loadTable(data: DatasetRef, table: TableName | string): pl.DataFrame {
  const dataDir = Dataset.of(data).dir;
  tableSpec(table);
  const df = collectChecked(dataDir, table, (f) => scanFiles(dataDir, table, f).collectSync());
  if (table === "runs") checkVersions(df);
  else if (df.height > 0) {
    checkVersions(
      collectChecked(
        dataDir,
        "runs",
        (f) => scanFiles(dataDir, "runs", f).select("run_id", "schema_version").collectSync(),
      ),
    );
  }
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
export function loadResults(data: DatasetRef, options: LoadResultsOptions = {}): pl.DataFrame {
  const dataDir = Dataset.of(data).dir;
  const runs = loadTable(dataDir, "runs");
  const results = collectChecked(dataDir, "results", (files) => {
    const scan = scanFiles(dataDir, "results", files);
    return (options.completeOnly ?? true ? scan.filter(pl.col("complete")) : scan).collectSync();
  });
  // A stable order: runs by id (time first), tests as printed. Joining the results onto the
  // runs sorted by id, keeping the order of both sides, moves every row once; the plain join
  // followed by a sort moves the whole wide frame twice (most of the time of a large load).
  const columns = [...results.columns, ...runs.columns.filter((c) => !results.columns.includes(c))];
  if (runs.getColumn("run_id").nUnique() === runs.height) {
    const joined = runs.sort("run_id").join(results, {
      on: "run_id",
      how: "inner",
      maintainOrder: "left_right",
    } as never).select(...columns);
    if (joined.height === results.height && testsInOrder(joined)) return joined;
  }
  // results without their run, a run stored twice, or tests written out of order
  return results.join(runs, { on: "run_id", how: "left" }).sort(["run_id", "test_index"])
    .select(...columns);
}

/** Whether, within each run (rows of a run adjacent), test indexes rise, none missing. */
function testsInOrder(df: pl.DataFrame): boolean {
  if (df.height === 0) return true;
  const id = pl.col("run_id");
  const test = pl.col("test_index");
  const ok = df.select(
    id.neq(id.shift(1)).or(test.gtEq(test.shift(1))).fillNull(true).all()
      .and(test.isNull().any().not()).alias("ok"),
  );
  return ok.getColumn("ok").toArray()[0] === true;
}
