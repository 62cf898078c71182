/**
 * Reading a dataset's tables narrowly: a {@link TableFilter} (run ids, tests, a predicate, the
 * columns wanted) is put on the lazy Parquet scan before anything is collected, so polars reads
 * only the columns asked for and keeps only the rows that pass while it scans. A read names the
 * file polars failed on, and lists the files again when a concurrent compaction removed one.
 * Run facts, a run's raw bytes and its manifest are read the same way. Code outside
 * `src/store/` reaches all of this through a `Dataset`.
 *
 * @module
 */

import pl from "nodejs-polars";
import { DatasetError } from "../errors.ts";
import {
  checkInside,
  columnTypes,
  damaged,
  datasetFiles,
  MANIFESTS,
  OLD_RUNS,
  RAW_REFS,
  rawPathOf,
  scanFiles,
} from "./layout.ts";
import { pathExists } from "../system/disk.ts";

/** Which rows and columns of a table to read. Each field narrows the read; none reads it all. */
export interface TableFilter {
  /** Only the rows of these runs. @default {every run} */
  runIds?: readonly string[];
  /** Only the rows of these tests (a table with a `test` column). @default {every test} */
  tests?: readonly string[];
  /** Only the rows for which this predicate holds (`pl.col("complete")`). @default {every row} */
  where?: pl.Expr;
  /** Only these columns, in this order. @default {every column of the table} */
  columns?: readonly string[];
}

/** `column` is one of `values` (none: no row). */
function oneOf(column: string, values: readonly string[]): pl.Expr {
  return values.length === 0 ? pl.lit(false) : pl.col(column).isIn([...values]);
}

/** Checks a filter against a table's columns before anything is read. */
function checkFilter(table: string, filter: TableFilter): string[] {
  const known = Object.keys(columnTypes(table));
  const unknown = (filter.columns ?? []).filter((c) => !known.includes(c));
  if (unknown.length > 0) {
    throw new TypeError(
      `invalid column: ${unknown.join(", ")} (table ${table} has: ${known.join(", ")})`,
    );
  }
  if (filter.tests && !known.includes("test")) {
    throw new TypeError(`invalid filter: tests (table ${table} has no test column)`);
  }
  return known;
}

/** The filter put on a scan: rows first (polars pushes them into the Parquet reader), then columns. */
function narrow(scan: pl.LazyDataFrame, filter: TableFilter): pl.LazyDataFrame {
  const keep: pl.Expr[] = [];
  if (filter.runIds) keep.push(oneOf("run_id", filter.runIds));
  if (filter.tests) keep.push(oneOf("test", filter.tests));
  if (filter.where) keep.push(filter.where);
  const rows = keep.length === 0 ? scan : scan.filter(keep.reduce((a, b) => a.and(b)));
  return filter.columns ? rows.select(...filter.columns) : rows;
}

/**
 * A table of a dataset, scanned lazily over every batch (and old per-run folder) that holds
 * it, with the filter on the scan: nothing is read until the frame is collected.
 *
 * @param dataDir The dataset directory.
 * @param table The table (a schema table or a layout table).
 * @param filter The rows and columns wanted.
 * @returns The lazy frame (no rows, with the columns, for a dataset without the table).
 * @throws {TypeError} For an unknown table or column, or `tests` on a table without tests.
 * @throws {DatasetError} When the directory is not a dataset, or a file of it is damaged.
 *
 * @example
 * ```ts
 * import { scanDatasetTable } from "./read.ts";
 * import assert from "node:assert/strict";
 * const scan = scanDatasetTable(Deno.makeTempDirSync(), "results", {
 *   runIds: ["r1"], columns: ["run_id", "ops_per_sec"],
 * });
 * assert.deepEqual(scan.collectSync().columns, ["run_id", "ops_per_sec"]);
 * assert.throws(() => scanDatasetTable(Deno.makeTempDirSync(), "runs", { tests: ["SET"] }), /no test column/);
 * ```
 */
export function scanDatasetTable(
  dataDir: string,
  table: string,
  filter: TableFilter = {},
): pl.LazyDataFrame {
  checkFilter(table, filter);
  return narrow(scanFiles(dataDir, table, datasetFiles(dataDir).tables.get(table) ?? []), filter);
}

/**
 * Reads a table of a dataset into memory, narrowed in the scan (see {@link scanDatasetTable}).
 * When polars fails on a file (a changed column type, a damaged footer) the error names the
 * file; when a file went away meanwhile (a compaction replaced it) the files are listed again.
 *
 * @param dataDir The dataset directory.
 * @param table The table.
 * @param filter The rows and columns wanted.
 * @returns The frame.
 * @throws {TypeError} For an unknown table or column, or `tests` on a table without tests.
 * @throws {DatasetError} When the directory is not a dataset, or a file of it is damaged (the
 * message names it).
 *
 * @example
 * ```ts
 * import { readDatasetTable } from "./read.ts";
 * import assert from "node:assert/strict";
 * const df = readDatasetTable(Deno.makeTempDirSync(), "runs", { columns: ["run_id", "label"] });
 * assert.deepEqual([df.height, df.columns], [0, ["run_id", "label"]]);
 * assert.throws(() => readDatasetTable("/nonexistent-kvlab", "runs"), /no such dataset directory/);
 * ```
 */
export function readDatasetTable(
  dataDir: string,
  table: string,
  filter: TableFilter = {},
): pl.DataFrame {
  checkFilter(table, filter);
  for (let attempt = 0;; attempt++) {
    const files = datasetFiles(dataDir).tables.get(table) ?? [];
    try {
      return narrow(scanFiles(dataDir, table, files), filter).collectSync();
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
 * Rows of the `runs` table, a few columns, as plain records in run id order: what a writer
 * needs to know about the runs already in place (e.g. the plan cells done, for a resume).
 *
 * @param dataDir The dataset directory (a missing one has no runs).
 * @param columns Columns of `runs`.
 * @param filter Which runs (`where`, `runIds`), pushed into the scan.
 * @returns One record per run.
 * @throws {DatasetError} When a file of the dataset is damaged.
 *
 * @example
 * ```ts
 * import { runFacts } from "./read.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(runFacts(Deno.makeTempDirSync(), ["run_id", "plan_cell"]), []);
 * ```
 */
export function runFacts(
  dataDir: string,
  columns: readonly string[],
  filter: Omit<TableFilter, "columns"> = {},
): Record<string, unknown>[] {
  if (!pathExists(dataDir)) return [];
  const read = columns.includes("run_id") ? columns : ["run_id", ...columns];
  return readDatasetTable(dataDir, "runs", { ...filter, columns: read }).sort("run_id")
    .select(...columns).toRecords();
}

/** One raw file of a run, as stored (secrets redacted). */
export interface RunRaw {
  /** The file's name as the run knew it (`stdout.txt`, the source file's name). */
  name: string;
  /** The run's bytes in it (a transcript's block, or the whole file). */
  bytes: Uint8Array;
  /** Line of the stored file the bytes start at (1-based). */
  firstLine: number;
}

/** The files of an old-layout run's `raw/` folder, sorted; none when it has no such folder. */
function oldRawFiles(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].filter((e) => !e.name.startsWith(".")).map((e) => e.name)
      .sort();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

/**
 * The raw bytes of a run: its range of each stored raw file (new layout), or the files of
 * `runs/<id>/raw/` (old layout).
 *
 * @param dataDir The dataset directory.
 * @param runId The run.
 * @returns Its raw files (none for an unknown run).
 */
export function runRaw(dataDir: string, runId: string): RunRaw[] {
  const old = `${dataDir}/${OLD_RUNS}/${runId}/raw`;
  const oldFiles = oldRawFiles(old);
  if (oldFiles.length > 0) {
    return oldFiles.map((name) => {
      const m = /\.L(\d+)-L\d+$/.exec(name);
      const bytes = Deno.readFileSync(`${old}/${name}`);
      return { name, bytes, firstLine: m ? Number(m[1]) : 1 };
    });
  }
  const refs = readDatasetTable(dataDir, RAW_REFS, { runIds: [runId] }).toRecords();
  return refs.map((r) => {
    const path = rawPathOf(dataDir, String(r.raw_sha256));
    checkInside(dataDir, path);
    const f = Deno.openSync(path, { read: true });
    try {
      const start = Number(r.byte_start);
      const bytes = new Uint8Array(Number(r.byte_end) - start);
      f.seekSync(start, Deno.SeekMode.Start);
      for (let off = 0; off < bytes.length;) {
        const n = f.readSync(bytes.subarray(off));
        if (n === null) throw damaged(rawPathOf(dataDir, String(r.raw_sha256)), "truncated");
        off += n;
      }
      return { name: String(r.name), bytes, firstLine: Number(r.line_start ?? 1) };
    } finally {
      f.close();
    }
  });
}

/**
 * The manifest of a run: its `runs` row with what the writer added (raw files, tables, parse
 * warnings, the tool's errors, …), as `run.json` held in the old layout.
 *
 * @param dataDir The dataset directory.
 * @param runId The run.
 * @returns The manifest, or null for an unknown run.
 */
export function runManifest(dataDir: string, runId: string): Record<string, unknown> | null {
  try {
    return JSON.parse(Deno.readTextFileSync(`${dataDir}/${OLD_RUNS}/${runId}/run.json`));
  } catch { /* not an old-layout run */ }
  const rows = (table: string) => readDatasetTable(dataDir, table, { runIds: [runId] }).toRecords();
  const run = rows("runs")[0];
  if (!run) return null;
  const extra = rows(MANIFESTS)[0];
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(run)) {
    out[k] = (v as unknown) instanceof Date ? (v as unknown as Date).toISOString() : v;
  }
  return {
    ...out,
    raw_redacted: rows(RAW_REFS).some((r) => r.redacted === true),
    ...(extra ? JSON.parse(String(extra.manifest)) : {}),
  };
}
