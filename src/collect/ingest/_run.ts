/**
 * Run assembly for ingest: turns the blocks of one file into runs with the registry's formats
 * and adds them to the dataset's current batch; at the end of the file, one redacted copy of the
 * whole file is stored, content-addressed, and each run points to its byte and line range in it.
 * A run is committed when the next one starts, so the DBSIZE / INFO / docker stats captures
 * printed after a fill can add its memory row.
 *
 * @module
 */

import { Dataset } from "../../store/dataset.ts";
import { createHash } from "node:crypto";
import { ParseError, UnknownFormatError } from "../../errors.ts";
import type { MemoryRow } from "../../schema.ts";
import { type Block, blockFormat, type ReadBlock } from "./_blocks.ts";
import { copyRangeSync, hashRangeSync, readRangeSync } from "../../text/read_lines.ts";
import { memoryRow } from "../_rows.ts";
import { describeText, detectText } from "../formats/detect.ts";
import type { FormatRun, MemoryFields, OutputFormat } from "../formats/format.ts";
import { knownFormats, toolFromFileName } from "../formats/registry.ts";
import { type RedactState, redactText } from "../../text/redact.ts";
import type { DatasetWriter, RawRef, RunWriter } from "../../store/writer.ts";
import { newRunId } from "../../store/writer.ts";
import {
  formatRunRecord,
  type IngestedRun,
  ingestedRun,
  type IngestOptions,
  type RunOrigin,
} from "./_stored_run.ts";

export type { IngestedRun, IngestOptions };

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
  run: FormatRun;
  origin: RunOrigin;
  memory: MemoryRow[];
}

/** A long block's run, written in Parquet parts as it is read. */
interface Parts {
  writer: RunWriter;
}

/**
 * Makes the runs of one file, block by block: {@link add} each finished block, {@link flush}
 * a long block's finished rows as it goes, {@link end} at the end, {@link abort} on an error.
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
  /** The first block with no command that no format could read (the file's error if it has no run). */
  #unreadable: ParseError | undefined;
  /** Memory rows made from this file so far. */
  #memorySteps = 0;
  readonly #names = new Map<OutputFormat, { tool?: string; version?: string }>();

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

  /** Writes the rows the current (long) block's reader has finished so far as Parquet parts. */
  flush(b: ReadBlock): void {
    if (!b.reader) return;
    this.#parts ??= { writer: this.#dataset.run(newRunId(this.#now())) };
    const tables = b.reader.take(this.#parts.writer.runId);
    for (const [table, rows] of Object.entries(tables)) {
      this.#parts.writer.writePart(table as "results", rows as never[]);
    }
  }

  /**
   * Makes the run of a finished block.
   *
   * @param b The block.
   * @param sawCommand Whether the file had a command at a prompt by the time the block ended.
   */
  add(b: Block, sawCommand: boolean): void {
    if (b.kind === "skip") {
      this.#parts = undefined;
      if (b.reason) this.#sink.skipped.push({ line: b.firstLine, reason: redactText(b.reason) });
      return;
    }
    const format = blockFormat(b);
    if (b.command && format.capture) {
      // a capture typed after a run: its own raw run, and its facts for the run's memory row
      this.#parts = undefined;
      if (b.nonBlank === 0) return;
      if (this.#pending) this.#addMemoryFacts(this.#pending, b);
      this.#sink.runs.push(this.#commit(this.#prepare(b, rawRun())));
      return;
    }
    const made = this.#read(b, sawCommand);
    if (made === undefined || "skip" in made) {
      this.#parts?.writer.abort();
      this.#parts = undefined;
      if (made) this.#sink.skipped.push({ line: b.firstLine, reason: made.skip });
      return;
    }
    this.#commitPending();
    this.#pending = this.#prepare(b, made);
    this.#parts = undefined;
  }

  /** Commits the last run, and stores the file's raw copy that every run points to. */
  end(): void {
    this.#commitPending();
    if (this.#spans.length > 0) this.#storeRawCopy();
    // a file with no run at all: what its text looked like, where kvlab could not read it
    else if (this.#unreadable) throw this.#unreadable;
  }

  /** Drops what is written and not committed (after an error). */
  abort(): void {
    this.#parts?.writer.abort();
    this.#pending?.writer.abort();
  }

  #commitPending(): void {
    if (this.#pending) this.#sink.runs.push(this.#commit(this.#pending));
    this.#pending = undefined;
  }

  #commit(p: Pending): IngestedRun {
    const record = formatRunRecord(p.run, { ...p.origin, memory: p.memory });
    p.writer.commit(record);
    return ingestedRun(p.run, {
      runId: p.writer.runId,
      tool: record.run.tool,
      line: p.origin.source.firstLine ?? 1,
    });
  }

  /** The run a format reads in a block, why it is skipped, or undefined for prose. */
  #read(b: ReadBlock, sawCommand: boolean): FormatRun | { skip: string } | undefined {
    const path = this.#src.path;
    const format = blockFormat(b);
    // the run's writer: its id is in every row the format makes
    this.#parts ??= { writer: this.#dataset.run(newRunId(this.#now())) };
    const runId = this.#parts.writer.runId;
    try {
      if (format.reading === "lines") return b.reader!.finish(runId);
      if (b.byteEnd - b.byteStart > format.maxBytes) {
        if (b.command) return { skip: `${path}:${b.firstLine}: output too long` };
        throw new ParseError(`at most ${format.maxBytes} bytes of ${format.description}`, {
          file: path,
          line: b.firstLine,
          column: 1,
          text: "",
        });
      }
      const { text, firstLine } = this.#output(b);
      const run = format.read(redactText(text), {
        file: path,
        command: b.command?.parsed,
        firstLine,
        lastLine: b.lastLine,
        runId,
      });
      // a command typed with nothing of any tool's after it (a fence, prose): not a run
      if (b.command && run.tests === 0 && detectText(b.sample.join("\n")).kind !== "format") {
        return { skip: `${path}:${b.firstLine}: the command printed nothing kvlab reads` };
      }
      // a paste's report no format could read (no command ran here): listed, not a failed run
      const unreadable = run.tests === 0 && run.status === "failed" && !b.command &&
        run.warnings.find((w) => /^\S+:\d+:\d+: /.test(w.message));
      if (unreadable) {
        const m = /^(\S+):(\d+):(\d+): (.*)$/s.exec(unreadable.message)!;
        const at = { file: m[1], line: Number(m[2]), column: Number(m[3]), text: "" };
        this.#unreadable ??= new ParseError(`${m[4]}; this looks like ${format.description}`, at);
        return { skip: redactText(`${unreadable.message}; not read`) };
      }
      return run;
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      if (!b.command) {
        const detected = detectText(b.sample.join("\n"));
        const kind = describeText(detected);
        const at = { file: path, line: e.line, column: 1, text: e.text };
        // prose (a transcript's, a post's) is not output: the file's error only when it makes no
        // run at all; text a format knows is output kvlab could not read, and is listed
        if (detected.kind !== "format") {
          if (!sawCommand) {
            this.#unreadable ??= new UnknownFormatError(
              `expected ${knownFormats()}; this looks like ${kind}`,
              at,
            );
          }
          return undefined;
        }
        const said = e.message.slice(`${e.file}:${e.line}:${e.column}: `.length);
        this.#unreadable ??= new ParseError(`${said}; this looks like ${kind}`, at);
        return { skip: redactText(`${e.message}; ${kind}, not read`) };
      }
      if (b.nonBlank === 0) return { skip: `${path}:${b.firstLine}: command printed no output` };
      // its message names the file and line already
      return { skip: redactText(e.message) };
    }
  }

  /** The tool and version the file's name gives, for a format's programs (asked once each). */
  #fromName(format: OutputFormat): { tool?: string; version?: string } {
    let named = this.#names.get(format);
    if (named === undefined) {
      named = toolFromFileName(basename(this.#src.path), format);
      this.#names.set(format, named);
    }
    return named;
  }

  /** The run of a block: its origin, memory rows and writer, written to tmp/. */
  #prepare(b: ReadBlock, run: FormatRun): Pending {
    const { path, sha } = this.#src;
    const writer = this.#parts?.writer ?? this.#dataset.run(newRunId(this.#now()));
    const runId = writer.runId;
    const cmd = b.command;
    const origin: RunOrigin = {
      runId,
      options: this.#options,
      now: this.#now(),
      ...(cmd
        ? {
          command: {
            text: cmd.text,
            tool: cmd.parsed.tool,
            host: cmd.host,
            prompt: cmd.prompt,
          },
        }
        : {}),
      fromName: this.#fromName(blockFormat(b)),
      source: { path, sha, firstLine: b.firstLine, lastLine: b.lastLine },
      rawLineOffset: b.firstLine - 1,
      ...(b.label !== undefined && this.#options.labelFrom !== "none" ? { heading: b.label } : {}),
      rawSha256: hashRangeSync(this.#src.file, b.byteStart, b.byteEnd),
      startedAt: b.startedAt,
    };
    this.#spans.push({
      runId,
      start: b.byteStart,
      end: b.byteEnd,
      first: b.firstLine,
      last: b.lastLine,
    });
    const server = run.facts?.server ?? this.#options.server ?? "unknown";
    const memory = (run.memory ?? []).map((fields) =>
      memoryRow(runId, { step: this.#memorySteps++, server }, fields)
    );
    return { writer, run, origin, memory };
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
   * Reads a capture printed after a run (DBSIZE, INFO memory, docker stats) into that run's
   * memory row: one row per fill, made from what the fill wrote and filled in as captures come.
   */
  #addMemoryFacts(p: Pending, b: ReadBlock): void {
    if (p.run.fill === undefined) return;
    const format = blockFormat(b);
    let row = p.memory.at(-1);
    if (!row) {
      const server = p.origin.options.server ?? "unknown";
      row = memoryRow(p.writer.runId, { step: this.#memorySteps++, server }, p.run.fill);
      p.memory.push(row);
    }
    const facts: MemoryFields | null = format.capture!(this.#output(b).text, b.command!.parsed);
    if (facts === null) return;
    Object.assign(row, facts);
    row.source_line = b.lastLine;
  }

  /** A block's output: its text after the command's lines, and the line it starts at. */
  #output(b: ReadBlock): { text: string; firstLine: number } {
    const text = new TextDecoder().decode(readRangeSync(this.#src.file, b.byteStart, b.byteEnd));
    const cmd = b.command;
    if (!cmd) return { text, firstLine: b.firstLine };
    const skip = cmd.lastLine - cmd.line + 1;
    return { text: text.split("\n").slice(skip).join("\n"), firstLine: cmd.lastLine + 1 };
  }
}

/** The run a capture typed in a transcript makes of itself: its raw bytes, no rows. */
function rawRun(): FormatRun {
  return {
    outputFormat: "raw",
    status: "complete",
    error: null,
    tests: 0,
    tables: {},
    warnings: [],
  };
}

function basename(p: string): string {
  const s = p.lastIndexOf("/");
  return s < 0 ? p : p.slice(s + 1);
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
