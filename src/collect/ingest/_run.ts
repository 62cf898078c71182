/**
 * Run assembly for ingest: turns the blocks of one file into runs (the `runs` row, the
 * results and memory tables) and adds them to the dataset's current batch; at the end of the
 * file, one redacted copy of the whole file is stored, content-addressed, and each run points
 * to its byte and line range in it. A benchmark run is committed when the next one starts, so
 * the DBSIZE / INFO / docker stats captures printed after a fill can add its memory row.
 *
 * @module
 */

import { Dataset, type DatasetRef } from "../../store/dataset.ts";
import { createHash } from "node:crypto";
import { ParseError, UnknownFormatError } from "../../errors.ts";
import type { MemoryRow } from "../../schema.ts";
import type { Block, CaptureBlock, ImplicitBlock, ParsedBlock } from "./_blocks.ts";
import { copyRangeSync, hashRangeSync, readRangeSync } from "../../text/read_lines.ts";
import { memoryRow, runRow, snapshotRows } from "../_rows.ts";
import { testRows } from "../redis_benchmark/rows.ts";
import { captureMemory, fillMemory, readCapture } from "../_snapshot_rows.ts";
import type { BenchmarkArgs } from "../command.ts";
import { describeKind, type DetectedKind, detectKind, KNOWN_FORMATS } from "./detect.ts";
import { redactCommandLine, type RedactState, redactText, redactUrl } from "../../text/redact.ts";
import type { RedisBenchmarkRun } from "../redis_benchmark/parse.ts";
import {
  type DatasetWriter,
  newRunId,
  type RawRef,
  type RunRecord,
  type RunWriter,
} from "../../store/writer.ts";

/** Options of `ingestFile` and `ingestPaths` (re-exported by `ingest.ts`). */
export interface IngestOptions {
  /** The dataset (or its directory). */
  data: DatasetRef;
  /** Label stored on every run. */
  label?: string;
  /**
   * Server name (redis, valkey, dragonfly, keydb, …) stored on every run.
   * @default {"unknown"}
   */
  server?: string;
  /** Server version stored on every run. */
  serverVersion?: string;
  /** Tool name, for outputs whose command is not known (otherwise taken from the file name). */
  tool?: string;
  /** Tool version. */
  toolVersion?: string;
  /** User tags stored as JSON on every run. */
  tags?: Record<string, string>;
  /**
   * The clock, for `ingested_at` and run ids.
   * @default {() => new Date()}
   */
  now?: () => Date;
  /**
   * Stops ingest between files (and abandons the file being read): what is complete is
   * committed, the rest is left for a retry.
   */
  signal?: AbortSignal;
}

/** One run written from a file. */
export interface IngestedRun {
  runId: string;
  status: "complete" | "incomplete" | "failed";
  tool: string;
  tests: number;
  /** First line of the run's block in the file. */
  line: number;
  warnings: number;
}

/** The file being ingested, open for reading its blocks' bytes. */
export interface SourceFile {
  path: string;
  sha: string;
  size: number;
  file: Deno.FsFile;
}

/** Where {@link RunAssembler} reports runs and skipped blocks. */
export interface RunSink {
  runs: IngestedRun[];
  skipped: { line: number; reason: string }[];
}

/** A run written to tmp/ but not yet committed. */
interface Pending {
  writer: RunWriter;
  record: RunRecord;
  info: IngestedRun;
  memory: MemoryRow[];
  args: BenchmarkArgs | undefined;
}

/** A long block's run, written in Parquet parts as it is read. */
interface Parts {
  writer: RunWriter;
  /** Tests already written. */
  written: number;
}

/** Bytes of a standalone capture kvlab reads whole (INFO, docker stats, DBSIZE, latency). */
const SNAPSHOT_MAX_BYTES = 16 << 20;

/**
 * Makes the runs of one file, block by block: {@link add} each finished block, {@link flush}
 * a long block's finished tests as it goes, {@link end} at the end, {@link abort} on an error.
 */
export class RunAssembler {
  readonly #src: SourceFile;
  readonly #options: IngestOptions;
  readonly #now: () => Date;
  readonly #sink: RunSink;
  readonly #dataset: DatasetWriter;
  /** Byte and line ranges of the runs made so far, for their raw references. */
  readonly #spans: { runId: string; start: number; end: number; first: number; last: number }[] =
    [];
  #pending: Pending | undefined;
  #parts: Parts | undefined;
  /** Memory rows made from this file so far. */
  #memorySteps = 0;

  /**
   * @param src The file, open.
   * @param to `options`, the labels stored on its runs; `now`, the clock; `sink`, where runs
   * and skipped blocks are reported; `dataset`, the batches the runs go to.
   */
  constructor(
    src: SourceFile,
    { options, now, sink, dataset }: {
      options: IngestOptions;
      now: () => Date;
      sink: RunSink;
      dataset: DatasetWriter;
    },
  ) {
    this.#dataset = dataset;
    this.#src = src;
    this.#options = options;
    this.#now = now;
    this.#sink = sink;
  }

  /** Writes the tests the current (long) block has finished so far as a Parquet part. */
  flush(b: ParsedBlock): void {
    this.#parts ??= { writer: this.#dataset.run(newRunId(this.#now())), written: 0 };
    const tests = b.parser.takeCompleted();
    const rows = testRows(this.#parts.writer.runId, tests, this.#parts.written);
    this.#parts.writer.writePart("results", rows.results);
    this.#parts.writer.writePart("latency_distribution", rows.distribution);
    this.#parts.written += tests.length;
  }

  /**
   * Makes the run of a finished block.
   *
   * @param b The block.
   * @param sawCommand Whether the file had a command at a prompt by the time the block ended.
   */
  add(b: Block, sawCommand: boolean): void {
    const made = this.#toRun(b, sawCommand);
    this.#parts = undefined;
    if (made === undefined) return;
    if ("skip" in made) {
      this.#sink.skipped.push({ line: b.firstLine, reason: made.skip });
    } else if (b.kind === "capture") {
      if (this.#pending) this.#addMemoryFacts(this.#pending, b);
      this.#sink.runs.push(commit(made));
    } else {
      this.#commitPending();
      this.#pending = made;
    }
  }

  /** Commits the last benchmark run, and stores the file's raw copy that every run points to. */
  end(): void {
    this.#commitPending();
    if (this.#spans.length > 0) this.#storeRawCopy();
  }

  /** Drops what is written and not committed (after an error). */
  abort(): void {
    this.#parts?.writer.abort();
    this.#pending?.writer.abort();
  }

  #commitPending(): void {
    if (this.#pending) this.#sink.runs.push(commit(this.#pending));
    this.#pending = undefined;
  }

  #toRun(b: Block, sawCommand: boolean): Pending | { skip: string } | undefined {
    const path = this.#src.path;
    if (b.kind === "skip") return b.reason ? { skip: redactText(b.reason) } : undefined;
    if (b.kind === "capture") return b.nonBlank === 0 ? undefined : this.#prepare(b, undefined);
    let parsed: RedisBenchmarkRun;
    try {
      parsed = b.parser.finish();
    } catch (e) {
      this.#parts?.writer.abort();
      this.#parts = undefined;
      if (!(e instanceof ParseError)) throw e;
      if (b.kind === "implicit") {
        if (sawCommand) return undefined; // prose before the first command of a transcript
        const kind = detectKind(b.sample.join("\n"));
        const snapshot = this.#snapshot(b, kind);
        if (snapshot) return snapshot;
        throw new UnknownFormatError(
          `expected ${KNOWN_FORMATS}; this looks like ${describeKind(kind)}` +
            (kind === "memtier_benchmark" || kind === "memtier_benchmark-json"
              ? ", which kvlab does not ingest yet"
              : ""),
          { file: path, line: e.line, column: 1, text: e.text },
        );
      }
      if (b.nonBlank === 0) return { skip: `${path}:${b.firstLine}: command printed no output` };
      return { skip: redactText(`${path}:${b.firstLine}: ${e.message}`) };
    }
    return this.#prepare(b, parsed);
  }

  /** The run of a block: its `runs` row, tables and redacted raw copy, written to tmp/. */
  #prepare(b: Block, parsed: RedisBenchmarkRun | undefined): Pending {
    const { path, sha } = this.#src;
    const options = this.#options;
    const writer = this.#parts?.writer ?? this.#dataset.run(newRunId(this.#now()));
    const runId = writer.runId;
    const fromName = toolFromFileName(path);
    const cmd = b.command;
    const tool = cmd?.parsed.tool ?? options.tool ?? fromName.tool ?? "unknown";
    const args = b.kind === "benchmark" || b.kind === "implicit" ? b.args : undefined;
    const status = runStatus(parsed);
    const warnings = parsed?.warnings ?? [];
    const run = runRow({
      run_id: runId,
      tool,
      tool_version: options.toolVersion ?? (cmd ? null : fromName.version ?? null),
      command: cmd ? redactCommandLine(cmd.text) : null,
      server: options.server ?? "unknown",
      server_version: options.serverVersion ?? null,
      host: cmd?.host ?? null,
      target: args ? targetOf(args) : null,
      transport: args?.transport ?? "tcp",
      label: options.label ?? null,
      tags: options.tags,
      started_at: b.startedAt,
      ingested_at: this.#now(),
      status,
      output_format: parsed?.format ?? "raw",
      error: parsed && parsed.errors.length > 0
        ? redactText(parsed.errors.map((e) => e.text).join("\n"))
        : null,
      warning_count: warnings.length,
      source_path: path,
      source_sha256: sha,
      source_line_start: b.firstLine,
      source_line_end: b.lastLine,
    });
    const rows = testRows(runId, parsed?.tests ?? [], this.#parts?.written ?? 0);
    run.raw_sha256 = hashRangeSync(this.#src.file, b.byteStart, b.byteEnd);
    this.#spans.push({
      runId,
      start: b.byteStart,
      end: b.byteEnd,
      first: b.firstLine,
      last: b.lastLine,
    });
    const record: RunRecord = {
      run,
      tables: { results: rows.results, latency_distribution: rows.distribution },
      raw: [],
      manifest: {
        raw_line_offset: b.firstLine - 1,
        prompt: cmd?.prompt ?? null,
        tool_errors: (parsed?.errors ?? []).map((e) => ({ ...e, text: redactText(e.text) })),
        progress_updates_skipped: parsed?.progressUpdates ?? 0,
        warnings: warnings.map((w) => ({
          ...w,
          message: redactText(w.message),
          text: redactText(w.text),
        })),
      },
    };
    const tests = parsed?.testCount ?? 0;
    const info = { runId, status, tool, tests, line: b.firstLine, warnings: warnings.length };
    return { writer, record, args, memory: [], info };
  }

  /**
   * Copies the whole file once, secrets redacted, in chunks (a long output is never held
   * whole), stores it content-addressed, and points each run to its bytes and lines in it.
   * The copy is cut at every run's first and last byte, so each run's range in the copy is
   * known even where redaction changed lengths.
   */
  #storeRawCopy(): void {
    const { path, file, size } = this.#src;
    const cuts = new Set<number>([0, size]);
    for (const s of this.#spans) cuts.add(s.start).add(s.end);
    const points = [...cuts].sort((a, b) => a - b);
    const at = new Map<number, number>([[0, 0]]);
    const redactedFrom = new Set<number>();
    const tmp = `${this.#dataset.batch.tmp}/source-${crypto.randomUUID()}`;
    const state: RedactState = { secretNext: false };
    const hash = createHash("sha256");
    let out = 0;
    const dest = Deno.openSync(tmp, { write: true, createNew: true });
    try {
      for (let i = 0; i + 1 < points.length; i++) {
        const transform = (chunk: Uint8Array) => {
          const r = redactBytes(chunk, state);
          if (r.redacted) redactedFrom.add(points[i]);
          hash.update(r.bytes);
          out += r.bytes.length;
          return r.bytes;
        };
        copyRangeSync(file, dest, { start: points[i], end: points[i + 1], transform });

        at.set(points[i + 1], out);
      }
    } finally {
      dest.close();
    }
    const sha256 = hash.digest("hex");
    Dataset.of(this.#options.data).storeRaw(tmp, sha256);
    const refs: RawRef[] = this.#spans.map((s) => ({
      run_id: s.runId,
      name: basename(path),
      raw_sha256: sha256,
      byte_start: at.get(s.start)!,
      byte_end: at.get(s.end)!,
      line_start: s.first,
      line_end: s.last,
      redacted: points.some((p) => p >= s.start && p < s.end && redactedFrom.has(p)),
    }));
    this.#dataset.addRawRefs(refs);
  }

  /**
   * A file that is one capture of another tool (an INFO reply, a docker stats table, a DBSIZE
   * reply, redis-cli --latency output) becomes a snapshot run (see {@link readCapture}): INFO
   * also names the server and its real version. Returns undefined for anything else.
   */
  #snapshot(b: ImplicitBlock, kind: DetectedKind): Pending | undefined {
    if (b.byteEnd - b.byteStart > SNAPSHOT_MAX_BYTES) return undefined;
    const snap = readCapture(this.#text(b), kind, { first: b.firstLine, last: b.lastLine });
    if (snap === null) return undefined;
    const p = this.#prepare(b, undefined);
    const run = p.record.run;
    run.tool = snap.tool;
    run.output_format = snap.outputFormat;
    // the INFO says which server this is; its own version wins over redis_version
    if (snap.identity && snap.identity.server !== "unknown") run.server = snap.identity.server;
    if (snap.identity?.version) run.server_version = snap.identity.version;
    if (snap.outputFormat === "info") {
      const snapshot = { info: snap.info, dbsize: null, config: [] };
      p.record.tables.server_info = snapshotRows(p.writer.runId, [["snapshot", snapshot]]).info;
    }
    for (const fields of snap.memory) {
      const at = { step: this.#memorySteps++, server: run.server };
      p.memory.push(memoryRow(p.writer.runId, at, fields));
    }
    return p;
  }

  /**
   * Reads DBSIZE, INFO (memory) and docker stats blocks printed after a fill run into its
   * memory row: one row per fill, filled in as the blocks come.
   */
  #addMemoryFacts(p: Pending, b: CaptureBlock): void {
    const cmd = b.command;
    if (b.nonBlank === 0) return;
    const text = this.#text(b).split("\n").slice(cmd.lastLine - cmd.line + 1).join("\n");
    let row = p.memory.at(-1);
    if (!row) {
      const server = p.record.run.server;
      row = memoryRow(p.writer.runId, { step: this.#memorySteps++, server }, fillMemory(p.args));

      p.memory.push(row);
    }
    const facts = captureMemory(cmd.parsed.tool ?? "", cmd.parsed.args, text);
    if (facts === null) return;
    Object.assign(row, facts);
    row.source_line = b.lastLine;
  }

  #text(b: Block): string {
    return new TextDecoder().decode(readRangeSync(this.#src.file, b.byteStart, b.byteEnd));
  }
}

function commit(p: Pending): IngestedRun {
  if (p.memory.length > 0) p.record.tables.memory = p.memory;
  p.writer.commit(p.record);
  return p.info;
}

function runStatus(parsed: RedisBenchmarkRun | undefined): IngestedRun["status"] {
  if (parsed === undefined) return "complete";
  if (parsed.testCount === 0) return "failed";
  return parsed.complete ? "complete" : "incomplete";
}

function basename(p: string): string {
  const s = p.lastIndexOf("/");
  return s < 0 ? p : p.slice(s + 1);
}

/** Tool and version from a file name such as `valkey-benchmark_8.0.1_…` or `redis-benchmark-7.0.15-csv.txt`. */
function toolFromFileName(path: string): { tool?: string; version?: string } {
  const m = /(redis-benchmark|valkey-benchmark)(?:[_-]v?(\d+\.\d+(?:\.\d+)?))?/.exec(
    basename(path),
  );
  return m ? { tool: m[1], version: m[2] } : {};
}

/** Redacts secrets in raw bytes; bytes with no secret are kept exactly as they were. */
function redactBytes(
  bytes: Uint8Array,
  state: RedactState,
): { bytes: Uint8Array; redacted: boolean } {
  const text = new TextDecoder().decode(bytes);
  const red = redactText(text, state);
  if (red === text) return { bytes, redacted: false };
  return { bytes: new TextEncoder().encode(red), redacted: true };
}

function targetOf(args: BenchmarkArgs): string {
  if (args.socket) return `unix:${args.socket}`;
  return redactUrl(`${args.host ?? "127.0.0.1"}:${args.port ?? 6379}`);
}
