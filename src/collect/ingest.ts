/**
 * `kvlab ingest`: reads raw outputs and transcripts from disk, streams them through the pure
 * parsers, and writes one run per benchmark command into a dataset. Files are claimed by
 * content hash, so ingesting the same bytes twice is reported and skipped.
 *
 * The work is split by job: this module walks paths, claims files and drives the rest;
 * `_blocks.ts` splits lines into blocks (pure), `_ingest_run.ts` assembles and writes runs,
 * `_snapshot_rows.ts` reads captures into memory and server_info rows.
 *
 * @module
 */

import { ParseError } from "../errors.ts";
import { BlockSplitter } from "./_blocks.ts";
import { type IngestedRun, type IngestOptions, RunAssembler } from "./_ingest_run.ts";
import { readLineBatches, sha256File } from "./_read_lines.ts";
import { ingestTool, KNOWN_FORMATS } from "./detect.ts";
import {
  type ClaimKey,
  claimKey,
  claimSource,
  completeClaim,
  DatasetWriter,
  otherClaims,
  releaseClaim,
} from "./store.ts";

export type { IngestedRun, IngestOptions };

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
  error?: Error;
}

/**
 * Lists the files under the given paths: files as given, folders walked recursively in name
 * order, skipping hidden entries and the folders in `skip` (the dataset being written, when it
 * lies inside an input folder: kvlab never reads its own dataset back as input).
 *
 * @param paths Files and folders.
 * @param skip Folders not to walk into (compared by real path).
 * @returns The files, one by one.
 * @throws {Deno.errors.NotFound} When a path does not exist.
 */
export async function* expandPaths(
  paths: readonly string[],
  skip: readonly string[] = [],
): AsyncGenerator<string> {
  const skipReal = new Set(skip.map(realOrSelf));
  for (const p of paths) {
    const info = await Deno.stat(p);
    if (info.isDirectory) {
      if (skipReal.has(realOrSelf(p))) continue;
      const entries: Deno.DirEntry[] = [];
      for await (const e of Deno.readDir(p)) if (!e.name.startsWith(".")) entries.push(e);
      entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      for (const e of entries) {
        const child = `${p.replace(/\/+$/, "")}/${e.name}`;
        if (e.isDirectory) yield* expandPaths([child], skip);
        else if (e.isFile) yield child;
      }
    } else {
      yield p;
    }
  }
}

function realOrSelf(p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}

/**
 * Ingests every file under the paths. A file that fails does not stop the others. Runs are
 * written in batches: the runs of many files go into one batch, committed when it is large or
 * old enough, at the end, and when `options.signal` stops ingest; the runs of one file are
 * always in one batch, so they become visible together.
 *
 * @param paths Files and folders (walked as {@link expandPaths} does; the dataset is skipped).
 * @param options The dataset and the labels stored on every run.
 * @param onFile Called for each file, for progress output (an ingested file once its batch
 *   is in place).
 * @returns One outcome per file, in order.
 * @throws {TypeError} For a `tool` ingest does not read (see `INGEST_TOOLS`), before any file.
 */
export async function ingestPaths(
  paths: readonly string[],
  options: IngestOptions,
  onFile?: (outcome: FileOutcome) => void,
): Promise<FileOutcome[]> {
  if (options.tool !== undefined) ingestTool(options.tool);
  const out: FileOutcome[] = [];
  const batch = new IngestBatch(options);
  try {
    for await (const file of expandPaths(paths, [options.data])) {
      if (options.signal?.aborted) break;
      const outcome = await ingestInto(file, options, batch);
      out.push(outcome);
      // an ingested file is reported when its batch is in place
      if (outcome.status !== "ingested") onFile?.(outcome);
      if (batch.due) await batch.commit(onFile);
    }
    await batch.commit(onFile);
  } finally {
    await batch.abort();
  }
  return out;
}

/**
 * Ingests one file into the dataset: one run per benchmark command (or per capture) in it.
 * The file is claimed by its bytes and labels first, so the same bytes under the same labels
 * are reported as a duplicate and not read again. Its runs become visible together, in one
 * batch.
 *
 * @param path The file.
 * @param options The dataset and the labels stored on every run.
 * @returns The outcome; errors in the file are returned (status `"error"`), not thrown.
 * @throws {TypeError} For a `tool` ingest does not read (see `INGEST_TOOLS`).
 *
 * @example
 * ```ts
 * import { ingestFile } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/q.txt`, "SET: 1.00 requests per second\n");
 * const first = await ingestFile(`${dir}/q.txt`, { data: `${dir}/data`, server: "redis" });
 * assert.equal(first.status, "ingested");
 * assert.deepEqual(first.runs.map((r) => [r.tool, r.tests]), [["unknown", 1]]);
 * const again = await ingestFile(`${dir}/q.txt`, { data: `${dir}/data`, server: "redis" });
 * assert.equal(again.status, "duplicate");
 * assert.deepEqual(again.duplicateOf, [first.runs[0].runId]);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export async function ingestFile(path: string, options: IngestOptions): Promise<FileOutcome> {
  if (options.tool !== undefined) ingestTool(options.tool);
  const batch = new IngestBatch(options);
  try {
    const outcome = await ingestInto(path, options, batch);
    await batch.commit();
    return outcome;
  } finally {
    await batch.abort();
  }
}

/** The files of the batch being written, whose claims are completed when it is committed. */
class IngestBatch {
  readonly writer: DatasetWriter;
  readonly #data: string;
  readonly #now: () => Date;
  #files: { key: ClaimKey; outcome: FileOutcome }[] = [];

  constructor(options: IngestOptions) {
    this.#data = options.data;
    this.#now = options.now ?? (() => new Date());
    this.writer = new DatasetWriter(options.data, { now: this.#now });
  }

  get due(): boolean {
    return this.writer.due;
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
        await releaseClaim(this.#data, f.key);
        f.outcome.status = "error";
        f.outcome.error = e as Error;
        f.outcome.runs = [];
      }
      files.forEach((f) => onFile?.(f.outcome));
      return;
    }
    for (const { key, outcome } of files) {
      const ids = outcome.runs.map((r) => r.runId);
      await completeClaim(this.#data, key, outcome.path, ids, this.#now());
      onFile?.(outcome);
    }
  }

  /** Drops what was not committed (after an error or a stop) and releases its claims. */
  async abort(): Promise<void> {
    this.writer.abort();
    for (const f of this.#files) await releaseClaim(this.#data, f.key);
    this.#files = [];
  }
}

/** Ingests one file into the current batch (its claim is completed when the batch is). */
async function ingestInto(
  path: string,
  options: IngestOptions,
  batch: IngestBatch,
): Promise<FileOutcome> {
  const now = options.now ?? (() => new Date());
  const outcome: FileOutcome = { path, status: "ingested", runs: [], skipped: [] };
  let sha: string;
  try {
    sha = await sha256File(path);
  } catch (e) {
    return { ...outcome, status: "error", error: e as Error };
  }
  // One claim per content and labels: the same bytes with the same labels are a duplicate; the
  // same bytes under other labels are ingested, and flagged.
  const key = claimKey(sha, labelsOf(options));
  const dataset = batch.writer;
  const claim = await claimSource(options.data, key, path, now(), dataset.batch.id);
  if (!claim.claimed) {
    return { ...outcome, status: "duplicate", duplicateOf: claim.existing.run_ids };
  }
  const earlier = otherClaims(options.data, key);
  if (earlier.length > 0) outcome.sameBytesAs = earlier;
  const mark = dataset.batch.mark();
  try {
    await ingestClaimed(path, sha, options, now, outcome, dataset);
  } catch (e) {
    outcome.status = "error";
    outcome.error = e as Error;
  }
  if (outcome.status === "error" && outcome.runs.length > 0) {
    // the runs of a file become visible together or not at all
    dataset.batch.rollback(mark, new Set(outcome.runs.map((r) => r.runId)));
    outcome.runs = [];
  }
  if (outcome.runs.length === 0) {
    await releaseClaim(options.data, key);
    if (outcome.status === "ingested") {
      outcome.status = "error";
      outcome.error ??= new ParseError(
        `expected ${KNOWN_FORMATS}; no benchmark command made a run`,
        { file: path, line: 1, column: 1, text: "" },
      );
    }
  } else {
    batch.add(key, outcome);
  }
  return outcome;
}

/** Rows kept in memory per run before they are written as a Parquet part. */
const PART_ROWS = 20_000;

async function ingestClaimed(
  path: string,
  sha: string,
  options: IngestOptions,
  now: () => Date,
  outcome: FileOutcome,
  dataset: DatasetWriter,
): Promise<void> {
  const splitter = new BlockSplitter(path);
  let blocks = 0;
  const file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  const runs = new RunAssembler({ path, sha, size, file }, options, now, outcome, dataset);
  try {
    for await (const batch of readLineBatches(path)) {
      for (const l of batch) {
        const done = splitter.push(l);
        if (done) {
          if (options.signal?.aborted) throw new DOMException("ingest stopped", "AbortError");
          blocks++;
          runs.add(done, splitter.sawCommand);
        }
      }
      const b = splitter.current;
      if ((b?.kind === "benchmark" || b?.kind === "implicit") && b.parser.pendingRows > PART_ROWS) {
        runs.flush(b);
      }
    }
    const last = splitter.end();
    if (last) {
      blocks++;
      runs.add(last, splitter.sawCommand);
    }
    runs.end();
  } catch (e) {
    runs.abort();
    throw e;
  } finally {
    file.close();
  }
  if (blocks === 0 || size === 0) {
    throw new ParseError(`expected ${KNOWN_FORMATS}, found an empty file`, {
      file: path,
      line: 1,
      column: 1,
      text: "",
    });
  }
}

/** The labels a file is ingested under: the same bytes under other labels are another claim. */
function labelsOf(o: IngestOptions): Record<string, unknown> {
  return {
    server: o.server ?? null,
    serverVersion: o.serverVersion ?? null,
    label: o.label ?? null,
    tool: o.tool ?? null,
    toolVersion: o.toolVersion ?? null,
    tags: o.tags ?? {},
  };
}
