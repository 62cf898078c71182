/**
 * Writing runs into a dataset directory in batches: the rows of many runs are buffered and
 * written as one Parquet file per table per batch, under `tmp/<batch_id>/`, and the batch folder
 * is renamed into `batches/` in one step, so readers see every run of a batch or none, and
 * nothing is ever rewritten in place. Raw outputs are stored once, content-addressed
 * (`raw/<aa>/<sha256>`); each run points to its byte and line range. A collector writes one run
 * as a batch of its own ({@link RunWriter}); ingest writes many runs per batch
 * ({@link DatasetWriter}). Sources are claimed in `sources/` (see `_claims.ts`).
 *
 * @module
 */

import { KVLAB_VERSION } from "../version.ts";
import { MANIFESTS, RAW_REFS } from "./layout.ts";
import { DatasetError } from "../errors.ts";
import { type RunsRow, SCHEMA_VERSION, type TableName, type TableRows } from "../schema.ts";
import { Batch, hashFileSync, type RawRef, storeRaw } from "./_batch.ts";

export {
  claimDir,
  type ClaimKey,
  claimKey,
  claimPath,
  claimSource,
  type ClaimWriter,
  completeClaim,
  otherClaims,
  releaseClaim,
  type SourceClaim,
} from "./_claims.ts";
export type { RawRef } from "./_batch.ts";

/** kvlab's own version, stored with every run. */
export { KVLAB_VERSION };

/** A raw file to keep with a run. */
export interface RawFile {
  /** File name inside `raw/` (no slashes). */
  name: string;
  /** Its bytes, exactly. */
  bytes: Uint8Array;
}

/** A `runs` row as a writer gives it: schema_version and kvlab_version are the store's. */
export type RunInput = Omit<RunsRow, "schema_version" | "kvlab_version">;

/** A table other than `runs`. */
export type RowTable = Exclude<TableName, "runs">;

/** Rows of the tables other than `runs`, by table name. */
export type RunTables = { [K in RowTable]?: TableRows[K][] };

/** Everything one run folder holds. */
export interface RunRecord {
  /** The `runs` row (schema_version and kvlab_version are filled in by the store). */
  run: RunInput;
  /** Rows of the other tables, by table name. */
  tables: RunTables;
  /** Raw files, byte for byte. */
  raw: RawFile[];
  /** Extra manifest content for run.json (warnings, block lines, …). */
  manifest?: Record<string, unknown>;
}

/**
 * A new run id: the UTC time to the second and 12 random hex digits, so ids sort by time and
 * two writers never make the same one.
 *
 * @example
 * ```ts
 * import { newRunId } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const id = newRunId(new Date("2026-11-29T21:12:35Z"));
 * assert.match(id, /^20261129T211235Z-[0-9a-f]{12}$/);
 * ```
 */
export function newRunId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  const rand = crypto.getRandomValues(new Uint8Array(6));
  return `${stamp}-${[...rand].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Writes one run. Standalone (`new RunWriter(dir, id)`), the run is a batch of its own
 * (`batches/<run_id>/`), visible when {@link commit} returns; given a {@link Batch} (see
 * {@link DatasetWriter.run}), the run joins that batch and becomes visible with it. A long run
 * can write its tables in parts as it goes ({@link writePart}), so memory stays flat.
 */
export class RunWriter {
  readonly dataDir: string;
  readonly runId: string;
  readonly #batch: Batch;
  readonly #own: boolean;
  readonly #rawDir: string;
  readonly #rawNames: string[] = [];
  readonly #parted = new Set<string>();
  #done = false;

  /**
   * @param dataDir The dataset directory (created if missing).
   * @param runId A new run id (see {@link newRunId}).
   * @param batch The batch the run joins; by default a batch of its own, named after the run.
   * @throws {TypeError} For an id that is not a plain name.
   */
  constructor(dataDir: string, runId: string, batch?: Batch) {
    if (!/^[\w.-]+$/.test(runId) || runId.startsWith(".")) {
      throw new TypeError(`invalid run_id: ${runId}`);
    }
    this.dataDir = dataDir;
    this.runId = runId;
    this.#own = batch === undefined;
    this.#batch = batch ?? new Batch(dataDir, runId);
    this.#rawDir = `${this.#batch.tmp}/raw-${runId}`;
  }

  /**
   * The path of a raw file of the run, for callers that stream a large raw output into it (it
   * must then not be listed again in {@link commit}'s `raw`). It is stored, content-addressed,
   * when the run is committed.
   *
   * @throws {TypeError} For a name with a slash or `.`/`..`.
   */
  rawPath(name: string): string {
    checkRawName(name);
    Deno.mkdirSync(this.#rawDir, { recursive: true });
    if (!this.#rawNames.includes(name)) this.#rawNames.push(name);
    return `${this.#rawDir}/${name}`;
  }

  /** Writes one part of a table (call again for the next part). Empty row lists are ignored. */
  writePart<T extends RowTable>(table: T, rows: readonly TableRows[T][]): void {
    if (rows.length === 0) return;
    this.#parted.add(table);
    this.#batch.writeOwnPart(table, rows as never, this.runId);
  }

  /**
   * Adds the run (its `runs` row, the last rows, raw files and manifest) to its batch; a
   * standalone run's batch is then moved into `batches/` in one rename.
   *
   * @param record The run.
   * @returns The run id.
   * @throws {DatasetError} If the run already exists (it is never overwritten).
   */
  commit(record: RunRecord): string {
    if (this.#done) throw new DatasetError(`run ${this.runId} was already committed or aborted`);
    try {
      const run: RunsRow = {
        schema_version: SCHEMA_VERSION,
        kvlab_version: KVLAB_VERSION,
        ...record.run,
      };
      if (run.run_id !== this.runId) {
        throw new TypeError(`run_id ${String(run.run_id)} is not ${this.runId}`);
      }
      for (const f of record.raw) {
        Deno.writeFileSync(this.rawPath(f.name), f.bytes);
      }
      const refs = this.#storeRaw(record.manifest?.raw_redacted);
      const b = this.#batch;
      b.add("runs", [run as never]);
      // tables in the record's order, then those written only in parts
      const tables = new Set(["runs"]);
      for (const name of Object.keys(record.tables) as RowTable[]) {
        const rows = (record.tables[name] ?? []) as never[];
        if (this.#parted.has(name)) tables.add(name);
        if (rows.length === 0) continue;
        tables.add(name);
        if (this.#parted.has(name)) this.writePart(name, rows);
        else b.add(name, rows);
      }
      for (const name of this.#parted) tables.add(name);
      const manifest = { raw_files: this.#rawNames, tables: [...tables], ...record.manifest };
      b.add(MANIFESTS, [{ run_id: this.runId, manifest: JSON.stringify(manifest) }]);
      b.add(RAW_REFS, refs as never[]);
      b.addRun(this.runId);
      if (this.#own) b.commit();
      this.#done = true;
      return this.runId;
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  /** Stores the run's raw files (content-addressed) and says where they are. */
  #storeRaw(redacted: unknown): RawRef[] {
    const refs: RawRef[] = [];
    for (const name of this.#rawNames) {
      const path = `${this.#rawDir}/${name}`;
      const { sha256, size, lines } = hashFileSync(path);
      storeRaw(this.dataDir, path, sha256);
      refs.push({
        run_id: this.runId,
        name,
        raw_sha256: sha256,
        byte_start: 0,
        byte_end: size,
        line_start: lines > 0 ? 1 : null,
        line_end: lines > 0 ? lines : null,
        redacted: typeof redacted === "boolean" ? redacted : null,
      });
    }
    if (this.#rawNames.length > 0) Deno.removeSync(this.#rawDir, { recursive: true });
    return refs;
  }

  /** Drops what was written (after an error). */
  abort(): void {
    this.#done = true;
    if (this.#own) this.#batch.abort();
    else this.#batch.dropOwnParts(this.runId);
    try {
      Deno.removeSync(this.#rawDir, { recursive: true });
    } catch { /* none */ }
  }
}

function checkRawName(name: string): void {
  if (!/^[^/\\]+$/.test(name) || name === "." || name === "..") {
    throw new TypeError(`invalid raw file name: ${name}`);
  }
}

/** Options of {@link DatasetWriter}. */
export interface DatasetWriterOptions {
  /**
   * Rows (all tables) after which {@link DatasetWriter.due} says the batch should be committed.
   * @default {2_000_000}
   */
  maxRows?: number;
  /**
   * Age of a batch (ms) after which {@link DatasetWriter.due} says it should be committed.
   * @default {60_000}
   */
  maxAgeMs?: number;
  /**
   * The clock, for batch ids.
   * @default {() => new Date()}
   */
  now?: () => Date;
}

/**
 * Writes many runs per batch: {@link run} gives a {@link RunWriter} that joins the current
 * batch; {@link commit} makes the batch visible (call it when {@link due}, at the end, and on
 * a stop signal); the next run starts a new batch.
 *
 * @example
 * ```ts
 * import { DatasetWriter, newRunId } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * const w = new DatasetWriter(dir);
 * for (const i of [1, 2]) {
 *   const id = newRunId(new Date());
 *   w.run(id).commit({
 *     run: {
 *       run_id: id, tool: "redis-benchmark", server: "redis", transport: "tcp", tags: "{}",
 *       ingested_at: new Date(), status: "complete", output_format: "quiet", warning_count: 0,
 *     },
 *     tables: {},
 *     raw: [{ name: `out${i}.txt`, bytes: new TextEncoder().encode("SET: 1 requests\n") }],
 *   });
 * }
 * assert.equal([...Deno.readDirSync(dir)].some((e) => e.name === "batches"), false);
 * assert.equal(w.commit().length, 2);
 * assert.equal([...Deno.readDirSync(`${dir}/batches`)].length, 1);
 * assert.equal([...Deno.readDirSync(`${dir}/raw`)].length, 1); // the same bytes, stored once
 * ```
 */
export class DatasetWriter {
  readonly dataDir: string;
  readonly #maxRows: number;
  readonly #maxAgeMs: number;
  readonly #now: () => Date;
  #batch: Batch | undefined;

  /**
   * @param dataDir The dataset directory (created if missing).
   * @param options Thresholds and clock.
   */
  constructor(dataDir: string, options: DatasetWriterOptions = {}) {
    this.dataDir = dataDir;
    this.#maxRows = options.maxRows ?? 2_000_000;
    this.#maxAgeMs = options.maxAgeMs ?? 60_000;
    this.#now = options.now ?? (() => new Date());
  }

  /** The batch being written (started on first use). */
  get batch(): Batch {
    this.#batch ??= new Batch(this.dataDir, newRunId(this.#now()));
    return this.#batch;
  }

  /**
   * Adds where runs' raw bytes are in a stored raw file (ingest stores one redacted copy of a
   * whole source file, then points each of its runs at its byte and line range) to the batch.
   *
   * @param refs One per run and raw file.
   */
  addRawRefs(refs: readonly RawRef[]): void {
    this.batch.add(RAW_REFS, refs as never[]);
  }

  /** A writer for one run of the current batch. */
  run(runId: string): RunWriter {
    return new RunWriter(this.dataDir, runId, this.batch);
  }

  /** Whether the current batch is large or old enough to be committed. */
  get due(): boolean {
    const b = this.#batch;
    return b !== undefined &&
      (b.rowCount >= this.#maxRows || Date.now() - b.startedAt >= this.#maxAgeMs);
  }

  /**
   * Makes the current batch visible (one rename); the next run starts a new one.
   *
   * @returns The runs made visible.
   */
  commit(): string[] {
    const b = this.#batch;
    this.#batch = undefined;
    return b ? b.commit() : [];
  }

  /** Drops the current batch: none of its runs becomes visible. */
  abort(): void {
    this.#batch?.abort();
    this.#batch = undefined;
  }
}

/**
 * Writes one run into a dataset in one step, as a batch of its own (see {@link RunWriter}).
 *
 * @param dataDir The dataset directory (created if missing).
 * @param record What the run holds; `record.run.run_id` names it.
 * @returns The run id.
 * @throws {DatasetError} If a run with that id already exists.
 */
export function writeRun(dataDir: string, record: RunRecord): Promise<string> {
  try {
    return Promise.resolve(new RunWriter(dataDir, String(record.run.run_id ?? "")).commit(record));
  } catch (e) {
    return Promise.reject(e);
  }
}
