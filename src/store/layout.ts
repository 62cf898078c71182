/**
 * The on-disk layout of a kvlab dataset, shared by the writers (`writer.ts`, `_batch.ts`), the
 * readers (`read.ts`) and compaction: where batches, raw files and claims live, which Parquet
 * files hold a table (batches, and the per-run folders of schema 1.0–1.2 datasets), the one
 * place they are scanned ({@link scanFiles}, which counts each scan: `reads.ts`), and a cheap
 * check that names a damaged file. Only `src/store/` imports it (`test/architecture_test.ts`):
 * code outside asks a `Dataset`. See SCHEMA.md, "Layout".
 *
 * @module
 */

import pl from "nodejs-polars";
import { DatasetError } from "../errors.ts";
import { schemaOf } from "../frame.ts";
import { type TableName, TABLES } from "../schema.ts";
import { countRead } from "./reads.ts";

/** Folder of the batches: `batches/<batch_id>/<table>.parquet`. */
export const BATCHES = "batches";
/** Folder of the raw files: `raw/<sha256[0:2]>/<sha256>`. */
export const RAW = "raw";
/** Folder of per-run folders written by kvlab before batches (read only). */
export const OLD_RUNS = "runs";
/** In a compacted batch: the JSON list of the batches it replaces. */
export const REPLACES = "replaces.json";
/** Layout table of a batch: one row per run, its manifest as JSON. */
export const MANIFESTS = "run_manifests";
/** Layout table of a batch: where each run's raw bytes are (file, byte and line range). */
export const RAW_REFS = "run_raw";

/** Column types of the layout tables (not part of the schema: they say where things are). */
export const LAYOUT_TYPES: Record<string, Record<string, pl.DataType>> = {
  [MANIFESTS]: { run_id: pl.String, manifest: pl.String },
  [RAW_REFS]: {
    run_id: pl.String,
    name: pl.String,
    raw_sha256: pl.String,
    byte_start: pl.Int64,
    byte_end: pl.Int64,
    line_start: pl.Int64,
    line_end: pl.Int64,
    redacted: pl.Bool,
  },
};

/**
 * The column types of a schema table or a layout table.
 *
 * @param table The table.
 * @returns Column name → polars type, in column order.
 * @throws {TypeError} For an unknown table.
 */
export function columnTypes(table: string): Record<string, pl.DataType> {
  if (table in TABLES) return schemaOf(table as TableName);
  const t = LAYOUT_TYPES[table];
  if (!t) throw new TypeError(`invalid table: ${table}`);
  return t;
}

/**
 * Scans Parquet files of one table lazily, with the table's columns and types: columns a file
 * lacks (written by an older 1.x) read as nulls, columns this kvlab does not know are left out.
 * Files of the old per-run layout are scanned by one glob (there may be many thousands). Every
 * scan of a dataset's Parquet files is built here, and counted (`reads.ts`).
 *
 * @param dataDir The dataset directory.
 * @param table The table.
 * @param files Its files (see {@link datasetFiles}).
 * @returns The lazy frame (empty, with the columns, when there is no file).
 */
export function scanFiles(
  dataDir: string,
  table: string,
  files: readonly string[],
): pl.LazyDataFrame {
  const schema = columnTypes(table);
  if (files.length > 0) countRead(table); // every reader scans here (`reads.ts`)
  const options = { schema, missingColumns: "insert", extraColumns: "ignore" } as never;
  const old = `${dataDir}/${OLD_RUNS}/`;
  const scans: pl.LazyDataFrame[] = [];
  let sawOld = false;
  for (const f of files) {
    if (f.startsWith(old)) sawOld = true;
    else scans.push(pl.scanParquet(f, options));
  }
  if (sawOld) scans.unshift(pl.scanParquet(`${old}*/${table}.*parquet`, options));
  if (scans.length === 0) {
    return pl.DataFrame(Object.entries(schema).map(([n, t]) => pl.Series(n, [], t))).lazy();
  }
  return scans.length === 1 ? scans[0] : pl.concat(scans, { how: "vertical" });
}

/** The Parquet files of a dataset, by table, and the folders they came from. */
export interface DatasetFiles {
  /** Table (schema tables and the layout tables) → files, in batch order. */
  tables: Map<string, string[]>;
  /** Batch folders in place and not replaced by a compacted batch, in id order. */
  batches: string[];
  /** Per-run folders of the old layout (`runs/<run_id>`), in id order. */
  oldRuns: string[];
}

/** `<table>.parquet` or `<table>.<part>.parquet`. */
const TABLE_FILE = /^([a-z][a-z0-9_]*)\.(?:[^/]*\.)?parquet$/;

/**
 * The table a file of a batch or run folder holds, or null for a file that is not a table.
 *
 * @param name A file name.
 * @returns The table's name, or null.
 *
 * @example
 * ```ts
 * import { tableOfFile } from "./layout.ts";
 * import assert from "node:assert/strict";
 * assert.equal(tableOfFile("results.parquet"), "results");
 * assert.equal(tableOfFile("results.part-0003.parquet"), "results");
 * assert.equal(tableOfFile("run.json"), null);
 * ```
 */
export function tableOfFile(name: string): string | null {
  return TABLE_FILE.exec(name)?.[1] ?? null;
}

function names(dir: string): { name: string; isDirectory: boolean }[] {
  const out: { name: string; isDirectory: boolean }[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (!e.name.startsWith(".")) out.push({ name: e.name, isDirectory: e.isDirectory });
  }
  return out.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function listOrEmpty(dir: string): { name: string; isDirectory: boolean }[] {
  try {
    return names(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

/**
 * Lists the Parquet files of a dataset, table by table: batches in place (a batch replaced by a
 * compacted one that is also in place is left out, so a compaction racing this listing never
 * counts a run twice) and per-run folders of the old layout. Every file is checked to be
 * Parquet ({@link checkParquetFile}), and every folder to hold its `runs` rows.
 *
 * @param dataDir The dataset directory.
 * @returns The files.
 * @throws {DatasetError} When the directory does not exist, or a file or folder is damaged
 * (the message names it and says what to do).
 */
export function datasetFiles(dataDir: string): DatasetFiles {
  try {
    Deno.statSync(dataDir);
  } catch {
    throw new DatasetError(`${dataDir}: no such dataset directory`);
  }
  // a batch that a compaction removes while it is listed: list again
  for (let attempt = 0;; attempt++) {
    try {
      return listFiles(dataDir);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound) || attempt >= 5) throw e;
    }
  }
}

function listFiles(dataDir: string): DatasetFiles {
  const tables = new Map<string, string[]>();
  const replaced = new Set<string>();
  const found: { dir: string; id: string; files: string[] }[] = [];
  for (const e of listOrEmpty(`${dataDir}/${BATCHES}`)) {
    if (!e.isDirectory) continue;
    const dir = `${dataDir}/${BATCHES}/${e.name}`;
    const files = listOrEmpty(dir).map((f) => f.name);
    if (files.includes(REPLACES)) {
      for (const id of readReplaces(`${dir}/${REPLACES}`)) replaced.add(id);
    }
    found.push({ dir, id: e.name, files });
  }
  const batches = found.filter((b) => !replaced.has(b.id));
  const oldRuns: string[] = [];
  for (const e of listOrEmpty(`${dataDir}/${OLD_RUNS}`)) {
    if (!e.isDirectory) continue;
    const dir = `${dataDir}/${OLD_RUNS}/${e.name}`;
    oldRuns.push(dir);
    batches.push({ dir, id: e.name, files: listOrEmpty(dir).map((f) => f.name) });
  }
  for (const b of batches) {
    let hasRuns = false;
    let hasTables = false;
    for (const f of b.files) {
      const table = tableOfFile(f);
      if (table === null) continue;
      hasTables = true;
      if (table === "runs") hasRuns = true;
      const path = `${b.dir}/${f}`;
      checkParquetFile(path);
      const list = tables.get(table);
      if (list) list.push(path);
      else tables.set(table, [path]);
    }
    if (hasTables && !hasRuns) {
      throw new DatasetError(
        `${b.dir} holds rows but no runs.parquet, so its rows belong to no run: restore ` +
          `runs.parquet from a backup, or move the folder out of the dataset`,
      );
    }
  }
  return {
    tables,
    batches: batches.filter((b) => !b.dir.includes(`/${OLD_RUNS}/`)).map((b) => b.dir),
    oldRuns,
  };
}

function readReplaces(path: string): string[] {
  try {
    const ids = JSON.parse(Deno.readTextFileSync(path));
    if (Array.isArray(ids) && ids.every((x) => typeof x === "string")) return ids;
  } catch (e) {
    // its batch was merged again and removed while listed: `datasetFiles` lists again
    if (e instanceof Deno.errors.NotFound) throw e;
  }
  throw new DatasetError(
    `${path}: not a JSON list of batch ids; restore it from a backup or move its batch out of ` +
      `the dataset`,
  );
}

const MAGIC = [0x50, 0x41, 0x52, 0x31]; // "PAR1"

/**
 * Checks that a file looks like a whole Parquet file (the `PAR1` magic at both ends), so a
 * truncated, empty or foreign file is named instead of failing a whole query, or being
 * skipped.
 *
 * @param path The file.
 * @throws {DatasetError} Naming the file and what to do.
 *
 * @example
 * ```ts
 * import { checkParquetFile } from "./layout.ts";
 * import assert from "node:assert/strict";
 * const f = Deno.makeTempFileSync({ suffix: ".parquet" });
 * assert.throws(() => checkParquetFile(f), new RegExp(`${f}: empty file`));
 * ```
 */
export function checkParquetFile(path: string): void {
  const f = Deno.openSync(path, { read: true });
  let problem: string | null = null;
  try {
    const size = f.statSync().size;
    if (size === 0) problem = "empty file";
    else if (size < 12) problem = "too short to be Parquet";
    else {
      const head = new Uint8Array(4);
      const tail = new Uint8Array(4);
      f.readSync(head);
      f.seekSync(size - 4, Deno.SeekMode.Start);
      f.readSync(tail);
      if (!MAGIC.every((b, i) => head[i] === b)) problem = "not a Parquet file";
      else if (!MAGIC.every((b, i) => tail[i] === b)) problem = "truncated Parquet file";
    }
  } finally {
    f.close();
  }
  if (problem !== null) throw damaged(path, problem);
}

/**
 * The error for a damaged dataset file: its path, the problem, and what to do.
 *
 * @param path The file.
 * @param problem What is wrong with it.
 * @returns The error.
 */
export function damaged(path: string, problem: string): DatasetError {
  return new DatasetError(
    `${path}: ${problem}. kvlab never rewrites a file in place, so this file was damaged ` +
      `outside kvlab (a full disk, a partial copy) or was not written by kvlab: move it out of ` +
      `the dataset (or restore it from a backup) and run the command again; the runs it held ` +
      `come back by ingesting their source files again`,
  );
}

/**
 * Where a raw file is stored: `raw/<sha256[0:2]>/<sha256>`.
 *
 * @param dataDir The dataset directory.
 * @param sha256 The SHA-256 of the stored (redacted) bytes.
 * @returns The path.
 *
 * @example
 * ```ts
 * import { rawPathOf } from "./layout.ts";
 * import assert from "node:assert/strict";
 * assert.equal(rawPathOf("d", "ab" + "0".repeat(62)), `d/raw/ab/ab${"0".repeat(62)}`);
 * ```
 */
export function rawPathOf(dataDir: string, sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new TypeError(`invalid raw hash: ${sha256}`);
  return `${dataDir}/${RAW}/${sha256.slice(0, 2)}/${sha256}`;
}
