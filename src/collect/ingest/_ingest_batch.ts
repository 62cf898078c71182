/**
 * What happened to each file of an ingest ({@link FileOutcome}) and the batch their runs go to
 * ({@link IngestBatch}): a file's claim is completed when its batch is committed (visible), and
 * released when the batch fails or is dropped. Private to `ingest/`.
 *
 * @module
 */

import type { IngestedRun, IngestOptions } from "./_run.ts";
import { Dataset } from "../../store/dataset.ts";
import { markWriter, unmarkWriter } from "../../store/tmp.ts";
import { diskFullAt } from "../../system/disk.ts";
import {
  type ClaimKey,
  completeClaim,
  type DatasetWriter,
  releaseClaim,
} from "../../store/writer.ts";

/** What happened to one file. */
export interface FileOutcome {
  path: string;
  status: "ingested" | "duplicate" | "error";
  runs: IngestedRun[];
  /** Blocks of a transcript that made no run, and why. */
  skipped: { line: number; reason: string }[];
  /** For duplicates: the runs the same bytes were ingested as before. */
  duplicateOf?: string[];
  /**
   * The same bytes were ingested before under other labels (server, label, …): this file's
   * runs repeat those, and are flagged (raw_sha256) rather than read as a second measurement.
   */
  sameBytesAs?: { path: string; runIds: string[] }[];
  /** Other files read into the same run (a memtier run's stdout, stderr and HDR files). */
  with?: string[];
  error?: Error;
}

/** The files of the batch being written, whose claims are completed when it is committed. */
export class IngestBatch {
  readonly writer: DatasetWriter;
  readonly #now: () => Date;
  #files: { key: ClaimKey; outcome: FileOutcome }[] = [];
  /** The batch folder marked as this writer's (see `store/tmp.ts`). */
  #marked: string | undefined;

  constructor(options: IngestOptions) {
    this.#now = options.now ?? (() => new Date());
    this.writer = Dataset.of(options.data).writer({ now: this.#now });
  }

  get due(): boolean {
    return this.writer.due;
  }

  /** The current batch's id, its folder marked as this writer's. */
  get id(): string {
    const b = this.writer.batch;
    if (this.#marked !== b.tmp) {
      this.#unmark();
      markWriter(b.tmp);
      this.#marked = b.tmp;
    }
    return b.id;
  }

  /** Records a file whose runs are in the batch. */
  add(key: ClaimKey, outcome: FileOutcome): void {
    this.#files.push({ key, outcome });
  }

  /** Makes the batch visible, then marks its files' claims done. */
  async commit(onFile?: (outcome: FileOutcome) => void): Promise<void> {
    const files = this.#files;
    this.#files = [];
    try {
      this.writer.commit();
    } catch (e) {
      // nothing of the batch is visible: its files can be ingested again
      for (const f of files) {
        await releaseClaim(this.writer.dataDir, f.key);
        f.outcome.status = "error";
        f.outcome.error = diskFullAt(e, this.writer.dataDir) as Error;
        f.outcome.runs = [];
      }
      files.forEach((f) => onFile?.(f.outcome));
      return;
    } finally {
      this.#unmark();
    }
    for (const { key, outcome } of files) {
      const ids = outcome.runs.map((r) => r.runId);
      await completeClaim(this.writer.dataDir, key, {
        sourcePath: outcome.path,
        runIds: ids,
        now: this.#now(),
      });
      onFile?.(outcome);
    }
    // the batch is visible and its claims done: merge small batches when there are many
    if (files.length > 0) Dataset.of(this.writer.dataDir).autoCompact();
  }

  /** Drops what was not committed (after an error or a stop) and releases its claims. */
  async abort(): Promise<void> {
    this.writer.abort();
    this.#unmark();
    for (const f of this.#files) await releaseClaim(this.writer.dataDir, f.key);
    this.#files = [];
  }

  #unmark(): void {
    if (this.#marked !== undefined) unmarkWriter(this.#marked);
    this.#marked = undefined;
  }
}
