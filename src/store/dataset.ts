/**
 * One handle on one dataset: the only owner of its layout. {@link Dataset.open} gives writers
 * (a batch of many runs, or one run), readers (its Parquet files, one table scanned lazily or
 * read with the filter pushed into the scan, run facts, raw bytes, manifests), its claims' tmp sweeping, its per-cell locks, compaction, and the
 * few places inside it other code needs a path to (a stream copy, the pid files of children,
 * a run's folder). Code outside `src/store/` never builds a path inside a dataset: it opens a
 * `Dataset` and asks it.
 *
 * A CLI command opens its `--data` once and hands the handle around; library functions also
 * take a directory string ({@link DatasetRef}) and open it themselves, for notebooks and scripts.
 *
 * @example
 * ```ts
 * import { Dataset } from "./dataset.ts";
 * import assert from "node:assert/strict";
 * const ds = Dataset.open(Deno.makeTempDirSync());
 * assert.deepEqual(ds.runFacts(["run_id"]), []);
 * assert.equal(Dataset.of(ds), ds);
 * assert.equal(Dataset.of(ds.dir).dir, ds.dir);
 * ```
 *
 * @module
 */

import type pl from "nodejs-polars";
import {
  compactDataset,
  type CompactOptions,
  type CompactResult,
  finishKilledCompaction,
} from "./compact.ts";
import { type DatasetFiles, datasetFiles } from "./layout.ts";
import {
  readDatasetTable,
  runFacts,
  runManifest,
  type RunRaw,
  runRaw,
  scanDatasetTable,
  type TableFilter,
} from "./read.ts";
import { storeRaw } from "./_batch.ts";
import { RunsFollower } from "./runs_follower.ts";
import { autoCompact } from "./auto_compact.ts";
import { CellLocks, type CellLocksOptions } from "./locks.ts";
import { sweepTmp } from "./tmp.ts";
import { DatasetWriter, type DatasetWriterOptions, RunWriter } from "./writer.ts";

export type { DatasetFiles, RunRaw, TableFilter };

/** A dataset, or its directory (opened on use). */
export type DatasetRef = Dataset | string;

/** A dataset directory and everything kvlab does inside it. */
export class Dataset {
  /** The dataset directory (it may not exist yet: writers create it). */
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir.length > 1 ? dir.replace(/\/+$/, "") : dir;
  }

  /**
   * Opens a dataset directory (nothing is read or created until asked).
   *
   * @param dir The directory.
   * @returns The handle.
   * @throws {TypeError} For an empty path.
   */
  static open(dir: string): Dataset {
    if (typeof dir !== "string" || dir.trim() === "") {
      throw new TypeError("invalid dataset directory: an empty path");
    }
    return new Dataset(dir);
  }

  /**
   * The handle for a dataset or a directory.
   *
   * @param ref A handle (returned as it is) or a directory (opened).
   * @returns The handle.
   */
  static of(ref: DatasetRef): Dataset {
    return ref instanceof Dataset ? ref : Dataset.open(ref);
  }

  // --- writers

  /** A writer of many runs in batches (ingest). */
  writer(options: DatasetWriterOptions = {}): DatasetWriter {
    return new DatasetWriter(this.dir, options);
  }

  /** A writer of one run, in a batch of its own (live collectors). */
  runWriter(runId: string): RunWriter {
    return new RunWriter(this.dir, runId);
  }

  /**
   * Stores a raw file (already redacted) content-addressed under `raw/`, moving it from `tmp/`.
   *
   * @param tmpPath The file, under this dataset's `tmp/`.
   * @param sha256 Its content hash.
   * @returns The stored path.
   */
  storeRaw(tmpPath: string, sha256: string): string {
    return storeRaw(this.dir, tmpPath, sha256);
  }

  /** Where a run's files are while it is written (named in disk-full errors). */
  runFolder(runId: string): string {
    return `${this.dir}/tmp/${runId}`;
  }

  /** A new path under `tmp/` for a copy of a stream (stdin, a pipe) that ingest reads twice. */
  streamCopyPath(): string {
    Deno.mkdirSync(`${this.dir}/tmp`, { recursive: true });
    return `${this.dir}/tmp/stream-${crypto.randomUUID()}`;
  }

  /** The folder of the pid files of tools kvlab runs for this dataset (reaped when orphaned). */
  childrenDir(): string {
    return `${this.dir}/locks/children`;
  }

  /**
   * Removes what writers that are gone left: their entries under `tmp/`, and the batches a
   * compaction killed after its rename had merged but not yet removed (with its lock; see
   * {@link finishKilledCompaction}). Every writer calls it before it writes.
   *
   * @returns The entries removed under `tmp/`.
   */
  sweepTmp(): string[] {
    const removed = sweepTmp(this.dir);
    finishKilledCompaction(this.dir);
    return removed;
  }

  /** The per-cell locks of plan runs. */
  cellLocks(options: CellLocksOptions = {}): CellLocks {
    return new CellLocks(this.dir, options);
  }

  /** Merges small batches into few large ones (see {@link compactDataset}). */
  compact(options: CompactOptions = {}): CompactResult {
    return compactDataset(this.dir, options);
  }

  /**
   * Compacts when the dataset holds many small batches (a writer calls it after its batch is
   * visible and its claims are done); never throws. See `auto_compact.ts`.
   *
   * @returns What was merged, or null when nothing was done.
   */
  autoCompact(): CompactResult | null {
    return autoCompact(this.dir);
  }

  // --- readers

  /** The Parquet files of every table, and the batches. */
  files(): DatasetFiles {
    return datasetFiles(this.dir);
  }

  /**
   * One table, scanned lazily with its columns, the filter on the scan (polars reads only the
   * columns asked for and keeps only the rows that pass while it reads).
   *
   * @param table A schema table (`runs`, `results`, …) or a layout table.
   * @param filter Run ids, tests, a predicate, the columns wanted.
   * @returns The lazy frame; nothing is read until it is collected.
   * @throws {TypeError} For an unknown table or column.
   * @throws {DatasetError} When the directory is not a dataset, or a file of it is damaged.
   */
  scan(table: string, filter: TableFilter = {}): pl.LazyDataFrame {
    return scanDatasetTable(this.dir, table, filter);
  }

  /**
   * One table read into memory, narrowed in the scan (see {@link Dataset.scan}); a file polars
   * fails on is named, and files a concurrent compaction removed are listed again.
   *
   * @param table A schema table or a layout table.
   * @param filter Run ids, tests, a predicate, the columns wanted.
   * @returns The frame.
   * @throws {TypeError} For an unknown table or column.
   * @throws {DatasetError} When the directory is not a dataset, or a file of it is damaged.
   *
   * @example
   * ```ts
   * import { Dataset } from "./dataset.ts";
   * import pl from "nodejs-polars";
   * import assert from "node:assert/strict";
   * const ds = Dataset.open(Deno.makeTempDirSync());
   * const df = ds.read("results", { tests: ["SET"], where: pl.col("complete"), columns: ["run_id"] });
   * assert.deepEqual([df.height, df.columns], [0, ["run_id"]]);
   * assert.throws(() => ds.read("results", { columns: ["opsPerSec"] }), /invalid column: opsPerSec/);
   * ```
   */
  read(table: string, filter: TableFilter = {}): pl.DataFrame {
    return readDatasetTable(this.dir, table, filter);
  }

  /**
   * Some columns of the runs, as records in run id order (none for a missing directory).
   *
   * @param columns Columns of `runs`.
   * @param filter Which runs (a predicate, run ids), pushed into the scan.
   * @returns One record per run.
   */
  runFacts(
    columns: readonly string[],
    filter: Omit<TableFilter, "columns"> = {},
  ): Record<string, unknown>[] {
    return runFacts(this.dir, columns, filter);
  }

  /** Some columns of the runs stored since the last look, this process's own left out. */
  followRuns(columns: readonly string[]): RunsFollower {
    return new RunsFollower(this.dir, columns);
  }

  /** Where a run's raw bytes are. */
  runRaw(runId: string): RunRaw[] {
    return runRaw(this.dir, runId);
  }

  /** A run's manifest, or null. */
  runManifest(runId: string): Record<string, unknown> | null {
    return runManifest(this.dir, runId);
  }
}
