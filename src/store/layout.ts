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

/** An entry of a dataset folder. */
interface Entry {
  name: string;
  isDirectory: boolean;
  isFile: boolean;
  isSymlink: boolean;
}

function names(dir: string): Entry[] {
  const out: Entry[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (!e.name.startsWith(".")) {
      out.push({
        name: e.name,
        isDirectory: e.isDirectory,
        isFile: e.isFile,
        isSymlink: e.isSymlink,
      });
    }
  }
  return out.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function listOrEmpty(dir: string): Entry[] {
  try {
    return names(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
}

/**
 * What a symbolic link inside a dataset is, followed only while it stays in the dataset: the
 * entry it points to, or the error that names the link and where it leads (out of the dataset,
 * or nowhere).
 */
function followInside(root: string, path: string): Entry | DatasetError {
  let target: string;
  try {
    target = Deno.realPathSync(path);
  } catch {
    let to = "?";
    try {
      to = Deno.readLinkSync(path);
    } catch { /* removed meanwhile */ }
    return new DatasetError(
      `${path}: a symbolic link to ${to}, which does not exist; remove the link (or restore ` +
        `what it pointed to inside the dataset)`,
    );
  }
  const inside = Deno.realPathSync(root);
  if (target !== inside && !target.startsWith(inside + "/")) {
    return new DatasetError(
      `${path}: a symbolic link out of the dataset (to ${target}); kvlab does not follow links ` +
        `out of a dataset: move what it points to into the dataset in its place, or remove ` +
        `the link`,
    );
  }
  const st = Deno.statSync(path);
  const name = path.slice(path.lastIndexOf("/") + 1);
  return { name, isDirectory: st.isDirectory, isFile: st.isFile, isSymlink: false };
}

/**
 * An entry of `batches/` (or of the old `runs/`) as a folder to read, or the error that names
 * what is in a folder's place: a file, or a link out of the dataset.
 */
function batchFolder(root: string, dir: string, e: Entry): string {
  const path = `${dir}/${e.name}`;
  const seen = e.isSymlink ? followInside(root, path) : e;
  if (seen instanceof DatasetError) throw seen;
  if (seen.isDirectory) return path;
  throw new DatasetError(
    `${path}: a file where a batch folder should be, so the runs of the batch are missing: ` +
      `restore the folder from a backup (or move the file out of the dataset and ingest its ` +
      `runs' source files again)`,
  );
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

/**
 * Checks that a path inside a dataset is not a symbolic link out of it (nor a link to nothing):
 * kvlab reads and writes only inside the dataset.
 *
 * @param dataDir The dataset directory.
 * @param path A path inside it (a missing path passes).
 * @throws {DatasetError} Naming the link and where it leads.
 *
 * @example
 * ```ts
 * import { checkInside } from "./layout.ts";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * Deno.symlinkSync("/etc", `${dir}/batches`);
 * assert.throws(() => checkInside(dir, `${dir}/batches`), /a symbolic link out of the dataset \(to \/etc\)/);
 * checkInside(dir, `${dir}/raw`);
 * ```
 */
export function checkInside(dataDir: string, path: string): void {
  let link: boolean;
  try {
    link = Deno.lstatSync(path).isSymlink;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
  if (!link) return;
  const seen = followInside(dataDir, path);
  if (seen instanceof DatasetError) throw seen;
}

function listFiles(dataDir: string): DatasetFiles {
  checkInside(dataDir, `${dataDir}/${BATCHES}`);
  checkInside(dataDir, `${dataDir}/${OLD_RUNS}`);
  const tables = new Map<string, string[]>();
  const replaced = new Set<string>();
  const found: { dir: string; id: string; files: string[] }[] = [];
  for (const e of listOrEmpty(`${dataDir}/${BATCHES}`)) {
    const dir = batchFolder(dataDir, `${dataDir}/${BATCHES}`, e);
    const files = tableFiles(dataDir, dir);
    if (files.includes(REPLACES)) {
      for (const id of readReplaces(`${dir}/${REPLACES}`)) replaced.add(id);
    }
    found.push({ dir, id: e.name, files });
  }
  const batches = found.filter((b) => !replaced.has(b.id));
  const oldRuns: string[] = [];
  for (const e of listOrEmpty(`${dataDir}/${OLD_RUNS}`)) {
    const dir = batchFolder(dataDir, `${dataDir}/${OLD_RUNS}`, e);
    oldRuns.push(dir);
    batches.push({ dir, id: e.name, files: tableFiles(dataDir, dir) });
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

/**
 * The names in a batch folder, each table file checked to be a file in the dataset: a folder in
 * a table file's place, or a link out of the dataset, is named.
 */
function tableFiles(root: string, dir: string): string[] {
  return listOrEmpty(dir).map((f) => {
    if (tableOfFile(f.name) === null) return f.name;
    const path = `${dir}/${f.name}`;
    const seen = f.isSymlink ? followInside(root, path) : f;
    if (seen instanceof DatasetError) throw seen;
    if (seen.isDirectory) throw damaged(path, "a folder, not a Parquet file");
    return f.name;
  });
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
