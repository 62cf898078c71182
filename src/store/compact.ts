/**
 * Compaction: merges many small batches of a dataset into few large ones, atomically and
 * safely against readers and writers working at the same time. A merged batch is built under
 * `tmp/`, holds `replaces.json` (the batches it merges) and is renamed into `batches/` in one
 * step; only then are the batches it replaces removed. A reader that lists both the merged
 * batch and one it replaces leaves the replaced one out (see `datasetFiles`), so no run is
 * ever counted twice; a reader that listed a removed batch lists again. Writers never touch
 * batches in place, so they are never in the way.
 *
 * @module
 */

import { markWriter, sweepTmp, unmarkWriter } from "./tmp.ts";
import { BATCHES, columnTypes, datasetFiles, REPLACES, scanFiles, tableOfFile } from "./layout.ts";
import { DatasetError } from "../errors.ts";
import { thisWriter, writerGone } from "./_claims.ts";
import { newRunId } from "./writer.ts";

/** Options of {@link compactDataset}. */
export interface CompactOptions {
  /**
   * Size a merged batch aims at, in MB of Parquet (batches at least this big are left alone).
   * @default {128}
   */
  targetMb?: number;
  /**
   * The clock, for merged batch ids.
   * @default {() => new Date()}
   */
  now?: () => Date;
}

/** What a compaction did. */
export interface CompactResult {
  /** Batches before and after. */
  batchesBefore: number;
  batchesAfter: number;
  /** Parquet files before and after (raw files aside). */
  filesBefore: number;
  filesAfter: number;
  /** The merged batches written. */
  merged: string[];
}

interface BatchInfo {
  id: string;
  dir: string;
  bytes: number;
  files: string[];
}

/**
 * Merges the small batches of a dataset (see the module doc). Batches holding a table this
 * kvlab does not know are left alone; so are per-run folders of the old layout.
 *
 * @param dataDir The dataset directory.
 * @param options Target size and clock.
 * @returns What was merged.
 * @throws {DatasetError} When another compaction of the dataset is running, or a file is
 * damaged (named).
 *
 * @example
 * ```ts
 * import { compactDataset } from "./compact.ts";
 * import assert from "node:assert/strict";
 * const r = compactDataset(Deno.makeTempDirSync());
 * assert.deepEqual([r.batchesBefore, r.batchesAfter, r.merged], [0, 0, []]);
 * ```
 */
export function compactDataset(dataDir: string, options: CompactOptions = {}): CompactResult {
  const target = (options.targetMb ?? 128) * 1e6;
  const now = options.now ?? (() => new Date());
  const unlock = lock(dataDir);
  try {
    sweepTmp(dataDir); // what a killed compaction or ingest left under tmp/
    removeReplaced(dataDir);
    const batches = listBatches(dataDir);
    const result: CompactResult = {
      batchesBefore: batches.length,
      batchesAfter: batches.length,
      filesBefore: batches.reduce((n, b) => n + b.files.length, 0),
      filesAfter: 0,
      merged: [],
    };
    for (const group of groups(batches.filter((b) => b.bytes < target), target)) {
      const id = merge(dataDir, group, newRunId(now()));
      result.merged.push(id);
      for (const b of group) retire(dataDir, b.id);
    }
    const after = listBatches(dataDir);
    result.batchesAfter = after.length;
    result.filesAfter = after.reduce((n, b) => n + b.files.length, 0);
    return result;
  } finally {
    unlock();
  }
}

/** Batches in place, with their table files and size; batches with unknown tables left out. */
function listBatches(dataDir: string): BatchInfo[] {
  const out: BatchInfo[] = [];
  for (const dir of datasetFiles(dataDir).batches) {
    const files: string[] = [];
    let bytes = 0;
    let known = true;
    for (const e of Deno.readDirSync(dir)) {
      const table = tableOfFile(e.name);
      if (table === null) continue;
      try {
        columnTypes(table);
      } catch {
        known = false;
      }
      files.push(`${dir}/${e.name}`);
      bytes += Deno.statSync(`${dir}/${e.name}`).size;
    }
    if (known) out.push({ id: dir.slice(dir.lastIndexOf("/") + 1), dir, bytes, files });
  }
  return out;
}

/** Consecutive batches (by id, so by time) grouped up to the target size; singles dropped. */
function groups(batches: BatchInfo[], target: number): BatchInfo[][] {
  const out: BatchInfo[][] = [];
  let cur: BatchInfo[] = [];
  let size = 0;
  for (const b of batches) {
    if (cur.length > 0 && size + b.bytes > target) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(b);
    size += b.bytes;
  }
  out.push(cur);
  return out.filter((g) => g.length > 1);
}

/** Writes the merged batch under tmp/ and renames it into place. */
function merge(dataDir: string, group: BatchInfo[], id: string): string {
  const tmp = `${dataDir}/tmp/${id}`;
  Deno.mkdirSync(tmp, { recursive: true });
  // marked with its writer: a compaction killed before the rename leaves it to the next
  // writer's sweep (`tmp.ts`)
  markWriter(tmp);
  try {
    const byTable = new Map<string, string[]>();
    for (const b of group) {
      for (const f of b.files) {
        const t = tableOfFile(f.slice(f.lastIndexOf("/") + 1))!;
        byTable.set(t, [...byTable.get(t) ?? [], f]);
      }
    }
    for (const [table, files] of byTable) {
      // streamed: a merged table is never held whole in memory
      scanFiles(dataDir, table, files).sinkParquet(`${tmp}/${table}.parquet`).collectSync();
    }
    Deno.writeTextFileSync(`${tmp}/${REPLACES}`, JSON.stringify(group.map((b) => b.id)) + "\n");
    Deno.renameSync(tmp, `${dataDir}/${BATCHES}/${id}`);
    unmarkWriter(tmp);
    return id;
  } catch (e) {
    Deno.removeSync(tmp, { recursive: true });
    unmarkWriter(tmp);
    throw e;
  }
}

/** Moves a replaced batch out of `batches/` in one rename, then removes it. */
function retire(dataDir: string, id: string): void {
  const gone = `${dataDir}/tmp/retired-${id}-${crypto.randomUUID().slice(0, 8)}`;
  markWriter(gone);
  try {
    Deno.renameSync(`${dataDir}/${BATCHES}/${id}`, gone);
    Deno.removeSync(gone, { recursive: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  unmarkWriter(gone);
}

/** Removes batches a merged batch in place replaces (left by a compaction that was killed). */
function removeReplaced(dataDir: string): string[] {
  const ids = replacedInPlace(dataDir);
  for (const id of ids) retire(dataDir, id);
  return ids;
}

/**
 * Finishes what a compaction killed after its rename left (`kill -9`, a power cut): the batches
 * its merged batch replaces, still in `batches/` (readers leave them out), are removed, and its
 * `tmp/compact.lock` with them. Nothing is done while another compaction runs (it does the
 * same), and nothing is read but the merged batches' `replaces.json` when nothing is left over.
 * Writers call it before they write (`Dataset.sweepTmp`).
 *
 * @param dataDir The dataset directory.
 * @returns The ids of the batches removed.
 *
 * @example
 * ```ts
 * import { finishKilledCompaction } from "./compact.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(finishKilledCompaction(Deno.makeTempDirSync()), []);
 * ```
 */
export function finishKilledCompaction(dataDir: string): string[] {
  const stale = replacedInPlace(dataDir);
  let locked = false;
  try {
    Deno.statSync(`${dataDir}/tmp/compact.lock`);
    locked = true;
  } catch { /* no lock */ }
  if (stale.length === 0 && !locked) return [];
  let unlock: () => void;
  try {
    unlock = lock(dataDir);
  } catch (e) {
    if (e instanceof DatasetError) return []; // a compaction is running: it removes them
    throw e;
  }
  try {
    return removeReplaced(dataDir);
  } finally {
    unlock();
  }
}

/** Batches in `batches/` that a merged batch also in place replaces. */
function replacedInPlace(dataDir: string): string[] {
  const root = `${dataDir}/${BATCHES}`;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(root)];
  } catch {
    return [];
  }
  const present = new Set(entries.map((e) => e.name));
  const out: string[] = [];
  for (const e of entries) {
    let ids: unknown;
    try {
      ids = JSON.parse(Deno.readTextFileSync(`${root}/${e.name}/${REPLACES}`));
    } catch {
      continue;
    }
    if (Array.isArray(ids)) out.push(...ids.filter((id) => present.has(String(id))).map(String));
  }
  return out;
}

/** Takes the dataset's compaction lock (`tmp/compact.lock`); a lock of a dead process is taken over. */
function lock(dataDir: string): () => void {
  const path = `${dataDir}/tmp/compact.lock`;
  Deno.mkdirSync(`${dataDir}/tmp`, { recursive: true });
  const text = JSON.stringify({ writer: thisWriter() });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      Deno.writeTextFileSync(path, text, { createNew: true });
      return () => Deno.removeSync(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
      let holder: unknown;
      try {
        holder = JSON.parse(Deno.readTextFileSync(path)).writer;
      } catch { /* being written */ }
      if (!writerGone(holder as never)) break;
      Deno.removeSync(path);
    }
  }
  throw new DatasetError(
    `${path}: another compaction of this dataset is running; wait for it (if its process is ` +
      `gone on another host, remove this file)`,
  );
}
