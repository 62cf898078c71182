/**
 * `kvlab ingest`: reads raw outputs and transcripts from disk, streams them through the pure
 * parsers, and writes one run per benchmark command into a dataset. Files are claimed by
 * content hash, so ingesting the same bytes twice is reported and skipped.
 *
 * The work is split by job: this module walks paths, claims files and drives the rest;
 * `_blocks.ts` splits lines into blocks (pure), `_run.ts` assembles and writes runs,
 * `_snapshot_rows.ts` reads captures into memory and server_info rows, `_ingest_batch.ts` holds
 * the batch whose claims complete when it is committed.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";
import { BlockSplitter } from "./_blocks.ts";
import { type FileGroup, findFileGroup, ingestFileGroup, singleFileGroup } from "./_file_set.ts";
import { type IngestedRun, type IngestOptions, RunAssembler } from "./_run.ts";
import { IngestInputError, type IngestSource, openSource } from "./_source.ts";
import { type FileOutcome, IngestBatch } from "./_ingest_batch.ts";
import { readLineBatches, sha256File } from "../../text/read_lines.ts";
import { Dataset } from "../../store/dataset.ts";
import { folderNames, type WalkedInput, walkInputs } from "./_walk.ts";
import { collectEvery } from "../../system/memory.ts";
import { diskFullAt } from "../../system/disk.ts";
import { formatOfTool, ingestTool, knownFormats } from "../formats/registry.ts";
import {
  claimKey,
  claimSource,
  type DatasetWriter,
  otherClaims,
  releaseClaim,
} from "../../store/writer.ts";

export { IngestInputError };
export type { FileOutcome, IngestedRun, IngestOptions };

/**
 * Lists the files under the given paths: files as given, folders walked recursively in name
 * order, skipping hidden entries and the folders in `skip` (the dataset being written, when it
 * lies inside an input folder: kvlab never reads its own dataset back as input). Symbolic links
 * are followed, to files and to folders; a folder is walked once (by real path), so a link
 * cycle ends.
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
  for await (const f of walkInputs(paths, skip)) if (!f.empty) yield f.path;
}

/**
 * Ingests every file under the paths. A file that fails does not stop the others. Runs are
 * written in batches: the runs of many files go into one batch, committed when it is large or
 * old enough, at the end, and when `options.signal` stops ingest; the runs of one file are
 * always in one batch, so they become visible together. The files of one run of a tool that
 * writes several (memtier_benchmark's `X.json`, `X.txt`, `X.stderr.txt`, `X_hdr_*`) make one
 * run, reported once. `-` (or
 * `/dev/stdin`) reads standard input, and a pipe (`<(cmd)`) is read once, as a stream. Leftovers
 * in the dataset's `tmp/` of writers that are gone are removed first.
 *
 * @param paths Files and folders (walked as {@link expandPaths} does; the dataset is skipped).
 * @param options The dataset and the labels stored on every run.
 * @param onFile Called for each file, for progress output (an ingested file once its batch
 *   is in place).
 * @returns One outcome per file, in order; a folder with no file is an error outcome.
 * @throws {TypeError} For a `tool` ingest does not read (see `INGEST_TOOLS`), before any file.
 */
export async function ingestPaths(
  paths: readonly string[],
  options: IngestOptions,
  onFile?: (outcome: FileOutcome) => void,
): Promise<FileOutcome[]> {
  if (options.tool !== undefined) ingestTool(options.tool);
  Dataset.of(options.data).sweepTmp();
  const out: FileOutcome[] = [];
  const batch = new IngestBatch(options);
  const names = folderNames();
  const read = new Set<string>(); // files already read into a run of several files
  try {
    for await (const input of walkInputs(paths, [Dataset.of(options.data).dir])) {
      if (options.signal?.aborted) break;
      if (read.has(input.path)) continue;
      const outcome = input.empty
        ? emptyFolder(input.path)
        : await ingestInto(input, { options, batch, names });
      if (outcome.with) [outcome.path, ...outcome.with].forEach((f) => read.add(f));
      out.push(outcome);
      // an ingested file is reported when its batch is in place
      if (outcome.status !== "ingested") onFile?.(outcome);
      if (batch.due) await batch.commit(onFile);
    }
    await batch.commit(onFile);
  } catch (e) {
    // the batch's folder, a claim: a full disk names the dataset
    throw diskFullAt(e, Dataset.of(options.data).dir);
  } finally {
    await batch.abort();
  }
  return out;
}

function emptyFolder(path: string): FileOutcome {
  const error = new IngestInputError(
    `no files found under ${path} (hidden files and the dataset itself are skipped)`,
  );
  return { path, status: "error", runs: [], skipped: [], error };
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
  Dataset.of(options.data).sweepTmp();
  const batch = new IngestBatch(options);
  try {
    const outcome = await ingestInto({ path, given: true }, {
      options,
      batch,
      names: folderNames(),
    });
    await batch.commit();
    return outcome;
  } catch (e) {
    throw diskFullAt(e, Dataset.of(options.data).dir);
  } finally {
    await batch.abort();
  }
}

/** How a claimed file's runs are made. */
type Reader = (outcome: FileOutcome, dataset: DatasetWriter) => Promise<void>;

/**
 * Ingests one input into the current batch (its claim is completed when the batch is): the
 * run of a group of files, or the runs of a file's lines.
 */
async function ingestInto(
  input: WalkedInput,
  { options, batch, names }: {
    options: IngestOptions;
    batch: IngestBatch;
    /** The names in a folder (groups of files are found among them). */
    names: (dir: string) => readonly string[];
  },
): Promise<FileOutcome> {
  const now = options.now ?? (() => new Date());
  const path = input.path === "-" ? "stdin" : input.path;
  const outcome: FileOutcome = { path, status: "ingested", runs: [], skipped: [] };
  let src: IngestSource;
  try {
    if (!input.given && (await Deno.stat(input.path).catch(() => null))?.isFifo) {
      throw new IngestInputError(
        `${path}: a FIFO inside a folder is not read (name it on the command line to read it)`,
      );
    }
    src = await openSource(input.path, Dataset.of(options.data));
  } catch (e) {
    return {
      ...outcome,
      status: "error",
      error: diskFullAt(e, Dataset.of(options.data).dir) as Error,
    };
  }
  try {
    const group = fileGroupOf(src, { path, options, names });
    let sha = src.sha256;
    let read: Reader = (o, dataset) => ingestLines(src, { sha, outcome: o, dataset, options, now });
    if (group) {
      const leader = group.files[0];
      outcome.with = group.files.map((m) => m.path).filter((p) => p !== leader.path);
      const leaderSha = leader.path === src.readPath ? src.sha256 : await sha256File(leader.path);
      sha = await groupSha(group, src);
      const source = { path: leader.path === src.readPath ? path : leader.path, sha: leaderSha };
      outcome.path = source.path;
      read = async (o, dataset) =>
        void o.runs.push(await ingestFileGroup(group, { source, options, now, dataset }));
    }
    return await claimAndRead(outcome, { sha, options, batch, now, read });
  } finally {
    src.dispose();
  }
}

/** The run of several files a source belongs to (as `--tool`, when given, says to read it). */
function fileGroupOf(
  src: IngestSource,
  { path, options, names }: {
    path: string;
    options: IngestOptions;
    names: (dir: string) => readonly string[];
  },
): FileGroup | null {
  const forced = options.tool === undefined ? undefined : formatOfTool(options.tool);
  if (options.tool !== undefined && !forced?.files) return null;
  if (src.readPath !== src.path) {
    return singleFileGroup(src.readPath, { name: basename(path), forced });
  }
  return findFileGroup(src.path, { names, forced });
}

/** One hash for a group's files: the same files again are a duplicate. */
async function groupSha(group: FileGroup, src: IngestSource): Promise<string> {
  if (group.files.length === 1) return src.sha256;
  const shas: string[] = [];
  for (const m of group.files) {
    shas.push(m.path === src.readPath ? src.sha256 : await sha256File(m.path));
  }
  const bytes = new TextEncoder().encode(shas.join("\n"));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Claims a source by its bytes and labels, reads it, and adds it to the batch. */
async function claimAndRead(
  outcome: FileOutcome,
  { sha, options, batch, now, read }: {
    sha: string;
    options: IngestOptions;
    batch: IngestBatch;
    now: () => Date;
    read: Reader;
  },
): Promise<FileOutcome> {
  // One claim per content and labels: the same bytes with the same labels are a duplicate; the
  // same bytes under other labels are ingested, and flagged.
  const key = claimKey(sha, labelsOf(options));
  const dataset = batch.writer;
  const claim = await claimSource(Dataset.of(options.data).dir, key, {
    sourcePath: outcome.path,
    now: now(),
    batch: batch.id,
  });
  if (!claim.claimed) {
    return { ...outcome, status: "duplicate", duplicateOf: claim.existing.run_ids };
  }
  const earlier = otherClaims(Dataset.of(options.data).dir, key);
  if (earlier.length > 0) outcome.sameBytesAs = earlier;
  const mark = dataset.batch.mark();
  try {
    await read(outcome, dataset);
  } catch (e) {
    outcome.status = "error";
    // a full disk names the dataset (the OS and polars name no file)
    outcome.error = diskFullAt(e, Dataset.of(options.data).dir) as Error;
  }
  if (outcome.status === "error" && outcome.runs.length > 0) {
    // the runs of a file become visible together or not at all
    dataset.batch.rollback(mark, new Set(outcome.runs.map((r) => r.runId)));
    outcome.runs = [];
  }
  if (outcome.runs.length === 0) {
    await releaseClaim(Dataset.of(options.data).dir, key);
    if (outcome.status === "ingested") {
      outcome.status = "error";
      outcome.error ??= new ParseError(
        `expected ${knownFormats()}; no benchmark command made a run`,
        { file: outcome.path, line: 1, column: 1, text: "" },
      );
    }
  } else {
    batch.add(key, outcome);
  }
  return outcome;
}

/** Rows kept in memory per run before they are written as a Parquet part. */
const PART_ROWS = 20_000;

/** Bytes of a file read between two garbage collections (see `system/memory.ts`). */
const COLLECT_EVERY_BYTES = 8 << 20;

/** The runs of a file's lines. */
async function ingestLines(
  src: IngestSource,
  { sha, outcome, dataset, options, now }: {
    sha: string;
    outcome: FileOutcome;
    dataset: DatasetWriter;
    options: IngestOptions;
    now: () => Date;
  },
): Promise<void> {
  const path = outcome.path;
  const splitter = new BlockSplitter(path, { labels: options.labelFrom !== "none" });
  let blocks = 0;
  const file = await Deno.open(src.readPath, { read: true });
  const size = (await file.stat()).size;
  const runs = new RunAssembler({ path, sha, size, file }, {
    options,
    now,
    sink: outcome,
    dataset,
  });
  // V8 lets the heap of a long read grow with its garbage: collected every few MiB read
  const read = collectEvery(COLLECT_EVERY_BYTES);
  try {
    for await (const batch of readLineBatches(src.readPath)) {
      read(batch.length > 0 ? batch[batch.length - 1].byteEnd - batch[0].byteStart : 0);
      for (const l of batch) {
        const done = splitter.push(l);
        if (done) {
          if (options.signal?.aborted) throw new DOMException("ingest stopped", "AbortError");
          blocks++;
          runs.add(done, splitter.sawCommand);
        }
      }
      const b = splitter.current;
      if (b?.kind === "read" && b.reader && b.reader.pendingRows > PART_ROWS) runs.flush(b);
      // what the batch wrote as Parquet parts is native memory, freed here
      await dataset.batch.release();
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
    throw new ParseError(`expected ${knownFormats()}, found an empty file`, {
      file: path,
      line: 1,
      column: 1,
      text: "",
    });
  }
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

/** The labels a file is ingested under: the same bytes under other labels are another claim. */
function labelsOf(o: IngestOptions): Record<string, unknown> {
  return {
    server: o.server ?? null,
    serverVersion: o.serverVersion ?? null,
    label: o.label ?? null,
    tool: o.tool ?? null,
    ...(o.labelFrom === "none" ? { labelFrom: "none" } : {}),
    toolVersion: o.toolVersion ?? null,
    tags: o.tags ?? {},
  };
}
