/**
 * One batch of runs being written: rows of every table buffered across runs and spilled as
 * Parquet parts into `tmp/<batch_id>/` when the buffer grows (so memory stays flat), then the
 * whole folder renamed into `batches/<batch_id>` in one step: every run of a batch becomes
 * visible at once, or none does. Raw files go to `raw/<sha256[0:2]>/<sha256>`, content-addressed
 * by the stored (redacted) bytes, before the batch that points to them.
 *
 * @module
 */

import { createHash } from "node:crypto";
import pl from "nodejs-polars";
import { BATCHES, LAYOUT_TYPES, rawPathOf } from "./layout.ts";
import { DatasetError } from "../errors.ts";
import { tableFrame } from "../frame.ts";
import { markWriter, unmarkWriter } from "./tmp.ts";
import { releaseNativeMemory } from "../system/memory.ts";
import { type TableName, TABLES } from "../schema.ts";

/** Where a run's raw bytes are: a row of the batch's `run_raw` table. */
export interface RawRef {
  run_id: string;
  /** The file's name as the run knew it (`stdout.txt`, the source file's name). */
  name: string;
  /** SHA-256 of the stored (redacted) bytes: the file is `raw/<sha[0:2]>/<sha>`. */
  raw_sha256: string;
  /** The run's bytes in the stored file: `[byte_start, byte_end)`. */
  byte_start: number;
  byte_end: number;
  /** The run's lines in the stored file (1-based, inclusive), when known. */
  line_start: number | null;
  line_end: number | null;
  /** Whether secrets were replaced by *** in the stored bytes. */
  redacted: boolean | null;
}

type Row = Record<string, unknown>;

/** Rows buffered in a batch before they are written as a Parquet part. */
export const SPILL_ROWS = 20_000;

/**
 * A frame of a schema table or of a layout table (`run_manifests`, `run_raw`).
 *
 * @param table The table.
 * @param rows Its rows.
 * @returns The frame, with the table's columns and types.
 */
export function batchFrame(table: string, rows: readonly Row[]): pl.DataFrame {
  if (table in TABLES) return tableFrame(table as TableName, rows as never);
  const types = LAYOUT_TYPES[table];
  if (!types) throw new TypeError(`invalid table: ${table}`);
  return pl.DataFrame(
    Object.entries(types).map(([name, type]) =>
      pl.Series(name, rows.map((r) => r[name] ?? null), type)
    ),
  );
}

/** A point a batch can go back to (see {@link Batch.rollback}). */
export interface BatchMark {
  readonly parts: number;
}

/** One batch of runs being written under `tmp/`; see the module doc. */
export class Batch {
  readonly dataDir: string;
  readonly id: string;
  readonly tmp: string;
  /** When the batch was started (ms since the epoch), for time-based flushing. */
  readonly startedAt = Date.now();
  readonly #rows = new Map<string, Row[]>();
  #buffered = 0;
  #part = 0;
  /** Parts written, in order, with the run that owns each alone (or null for mixed parts). */
  readonly #parts: { path: string; table: string; owner: string | null }[] = [];
  readonly #runIds: string[] = [];
  #rowCount = 0;
  #done = false;
  /** Parts were written since the last {@link release}. */
  #unreleased = false;

  /**
   * @param dataDir The dataset directory.
   * @param id The batch id (a run id, see `newRunId`).
   * @throws {TypeError} For an id that is not a plain name.
   */
  constructor(dataDir: string, id: string) {
    if (!/^[\w.-]+$/.test(id) || id.startsWith(".")) throw new TypeError(`invalid run_id: ${id}`);
    this.dataDir = dataDir;
    this.id = id;
    this.tmp = `${dataDir}/tmp/${id}`;
    Deno.mkdirSync(this.tmp, { recursive: true });
    // who writes it: a later writer removes it once this process is gone (sweepTmp)
    markWriter(this.tmp);
  }

  /** The runs added so far. */
  get runIds(): readonly string[] {
    return this.#runIds;
  }

  /** Rows added so far, all tables. */
  get rowCount(): number {
    return this.#rowCount;
  }

  /** Records a run as part of the batch (its `runs` row goes through {@link add}). */
  addRun(runId: string): void {
    this.#runIds.push(runId);
  }

  /** Buffers rows of a table; spills every table as parts when the buffer is large. */
  add(table: string, rows: readonly Row[]): void {
    if (rows.length === 0) return;
    let list = this.#rows.get(table);
    if (!list) this.#rows.set(table, list = []);
    for (const r of rows) list.push(r);
    this.#buffered += rows.length;
    this.#rowCount += rows.length;
    if (this.#buffered >= SPILL_ROWS) this.spill();
  }

  /** Writes the buffered rows of every table as Parquet parts (still invisible). */
  spill(): void {
    for (const [table, rows] of this.#rows) {
      if (rows.length > 0) this.#writePart(table, rows, null);
    }
    this.#rows.clear();
    this.#buffered = 0;
  }

  /** Writes rows of one run as a part of their own (a long output written as it is read). */
  writeOwnPart(table: string, rows: readonly Row[], runId: string): void {
    if (rows.length === 0) return;
    this.#rowCount += rows.length;
    this.#writePart(table, rows, runId);
  }

  #writePart(table: string, rows: readonly Row[], owner: string | null): void {
    const path = `${this.tmp}/${table}.part-${String(this.#part++).padStart(4, "0")}.parquet`;
    batchFrame(table, rows).writeParquet(path);
    this.#parts.push({ path, table, owner });
    this.#unreleased = true;
  }

  /**
   * Frees the native memory of the parts written so far (see `system/memory.ts`: nodejs-polars
   * frames are freed only after a collection and a turn of the event loop). An async reader
   * calls it between chunks; nothing is done when no part was written since the last call.
   */
  async release(): Promise<void> {
    if (!this.#unreleased) return;
    this.#unreleased = false;
    await releaseNativeMemory();
  }

  /** The current point, to go back to with {@link rollback}. */
  mark(): BatchMark {
    return { parts: this.#parts.length };
  }

  /**
   * Removes every row of the given runs (added after `mark`), in the buffer and in the parts
   * written since, so a file that failed half-way leaves nothing in the batch.
   */
  rollback(mark: BatchMark, runIds: ReadonlySet<string>): void {
    if (runIds.size === 0) return;
    for (const [table, rows] of this.#rows) {
      const kept = rows.filter((r) => !runIds.has(String(r.run_id)));
      this.#buffered -= rows.length - kept.length;
      this.#rows.set(table, kept);
    }
    for (const p of this.#parts.slice(mark.parts)) {
      if (p.owner !== null) {
        if (runIds.has(p.owner)) Deno.removeSync(p.path);
        continue;
      }
      const df = pl.readParquet(p.path);
      const kept = df.filter(pl.col("run_id").isIn([...runIds]).not());
      Deno.removeSync(p.path);
      if (kept.height > 0) kept.writeParquet(p.path);
    }
    this.#parts.splice(
      mark.parts,
      this.#parts.length,
      ...this.#parts.slice(mark.parts).filter(
        (p) => exists(p.path),
      ),
    );
    const left = this.#runIds.filter((id) => !runIds.has(id));
    // not splice(…, ...left): a spread of a long file's runs overflows the stack
    this.#runIds.length = 0;
    for (const id of left) this.#runIds.push(id);
  }

  /** Drops what one run wrote as parts of its own (after that run failed). */
  dropOwnParts(runId: string): void {
    for (const p of this.#parts.filter((p) => p.owner === runId)) Deno.removeSync(p.path);
    const left = this.#parts.filter((p) => p.owner !== runId);
    this.#parts.splice(0, this.#parts.length, ...left);
  }

  /**
   * Writes what is buffered and moves the batch into `batches/` in one rename. A batch with no
   * run is dropped.
   *
   * @returns The runs made visible.
   * @throws {DatasetError} If a batch with this id is already in place (never overwritten).
   */
  commit(): string[] {
    if (this.#done) throw new DatasetError(`batch ${this.id} was already committed or aborted`);
    try {
      if (this.#runIds.length === 0) {
        this.abort();
        return [];
      }
      for (const [table, rows] of this.#rows) {
        if (rows.length === 0) continue;
        // a batch written in one go has one file per table
        const single = !this.#parts.some((p) => p.table === table);
        if (single) batchFrame(table, rows).writeParquet(`${this.tmp}/${table}.parquet`);
        else this.#writePart(table, rows, null);
      }
      this.#rows.clear();
      const final = `${this.dataDir}/${BATCHES}/${this.id}`;
      Deno.mkdirSync(`${this.dataDir}/${BATCHES}`, { recursive: true });
      if (exists(final)) {
        throw new DatasetError(`${final} already exists; runs are never overwritten`);
      }
      Deno.renameSync(this.tmp, final);
      unmarkWriter(this.tmp);
      this.#done = true;
      return [...this.#runIds];
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  /** Drops the batch (nothing of it was visible). */
  abort(): void {
    this.#done = true;
    this.#rows.clear();
    try {
      Deno.removeSync(this.tmp, { recursive: true });
    } catch { /* already gone */ }
    unmarkWriter(this.tmp);
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Moves a finished raw file into the dataset's content-addressed store (`raw/<aa>/<sha256>`);
 * when the same bytes are there already, the new copy is dropped.
 *
 * @param dataDir The dataset directory.
 * @param tmpPath The file, written under the dataset's `tmp/`.
 * @param sha256 The SHA-256 of its bytes.
 * @returns The stored file's path.
 */
export function storeRaw(dataDir: string, tmpPath: string, sha256: string): string {
  const final = rawPathOf(dataDir, sha256);
  if (exists(final)) {
    Deno.removeSync(tmpPath);
    return final;
  }
  Deno.mkdirSync(final.slice(0, final.lastIndexOf("/")), { recursive: true });
  // same name, same bytes: a rename over a copy another writer just stored changes nothing
  Deno.renameSync(tmpPath, final);
  return final;
}

/**
 * SHA-256 and line count of a file, read in chunks.
 *
 * @param path The file.
 * @returns Its hash, size and number of lines.
 */
export function hashFileSync(path: string): { sha256: string; size: number; lines: number } {
  const hash = createHash("sha256");
  const f = Deno.openSync(path, { read: true });
  const buf = new Uint8Array(1 << 20);
  let size = 0;
  let lines = 0;
  let last = 10;
  try {
    for (let n; (n = f.readSync(buf)) !== null;) {
      const chunk = buf.subarray(0, n);
      hash.update(chunk);
      size += n;
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
      last = chunk[n - 1];
    }
  } finally {
    f.close();
  }
  return { sha256: hash.digest("hex"), size, lines: lines + (last === 10 ? 0 : 1) };
}
