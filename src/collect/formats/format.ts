/**
 * The contract every output format implements: what a format recognises, which command words
 * are its tool's, how it reads a block of text (a stream of lines, or a whole text) and what it
 * makes of it — one {@link FormatRun}, the rows of one stored run. Ingest and the live
 * collectors know formats only through this contract and the registry (`registry.ts`); a new
 * format is a new folder implementing it and one line in `FORMATS`.
 *
 * Readers are pure: text in, rows out, no clock, no file. The one exception is a tool that writes
 * several files per run ({@link FileSet}): its set reads them together.
 *
 * @module
 */

import type {
  HdrHistogramsRow,
  LatencyDistributionRow,
  MemoryRow,
  ResultsRow,
  ServerInfoRow,
  TimeSeriesRow,
} from "../../schema.ts";
import type { RunWriter } from "../../store/writer.ts";

/** How a benchmark client reaches the server. */
export type Transport = "tcp" | "tls" | "unix" | "rdma";

/** A command line read into the tool that ran and its arguments. */
export interface ParsedCommand {
  /** The tool, when a format of the registry claims the program (`redis-benchmark`, …). */
  tool: string | undefined;
  /** The program word as written (`./src/valkey-benchmark`). */
  program: string;
  /** Arguments after the program word. */
  args: string[];
}

/** A tool's live progress, as a plan shows it (redis-benchmark's `rps=` lines, memtier's). */
export type ProgressEvent =
  /** `TEST: rps=… (overall: …) avg_msec=…` (6.2+) or `TEST: 123.45` (≤6.0). */
  | { kind: "progress"; test: string; opsPerSec: number | null; overallOpsPerSec: number | null }
  /** A test's result was printed (report header, -q line or CSV row). */
  | { kind: "done"; test: string; opsPerSec: number | null };

/** Fields of one `memory` row a text gives (the rest stay null). */
export type MemoryFields = Partial<Omit<MemoryRow, "run_id" | "step" | "server">>;

/** The rows of one run a format makes, by table (`run_id` filled in). */
export interface FormatTables {
  results?: ResultsRow[];
  latency_distribution?: LatencyDistributionRow[];
  time_series?: TimeSeriesRow[];
  hdr_histograms?: HdrHistogramsRow[];
  server_info?: ServerInfoRow[];
}

/** Something a reader noticed: a line it could not read, a value it did not keep. */
export interface FormatWarning {
  /** The line, when the warning is about one. */
  line?: number;
  message: string;
  /** The text of the line (at most 200 characters). */
  text?: string;
}

/** What the text (or its command line) says of the run, besides its rows. */
export interface RunFacts {
  /** `host:port` the tool ran against. */
  target?: string | null;
  transport?: Transport;
  startedAt?: Date | null;
  /** The server the text names (an INFO reply), and its version. */
  server?: string;
  serverVersion?: string | null;
  toolVersion?: string | null;
}

/**
 * What a format made of one block of text: the rows of one run, its status and facts.
 * Strings in it are not yet redacted: whoever stores it redacts them.
 */
export interface FormatRun {
  /** `runs.output_format` (`full`, `quiet`, `csv`, `json`, `stdout`, `info`, …). */
  outputFormat: string;
  /** `runs.tool` when the text says it better than its command (a capture's `redis-cli`). */
  tool?: string;
  status: "complete" | "incomplete" | "failed";
  /** Why the run failed or is incomplete, or the tool's own error lines; null when neither. */
  error: string | null;
  /** The tests (result rows) the run holds. */
  tests: number;
  tables: FormatTables;
  /** Fields of the run's `memory` rows, one row each (a capture's). */
  memory?: MemoryFields[];
  /** What a fill run wrote (`target_keys`, `value_size_bytes`), for captures printed after it. */
  fill?: MemoryFields;
  facts?: RunFacts;
  warnings: FormatWarning[];
  /** Fields of the run's manifest this format keeps (tool errors, progress skipped, files, …). */
  manifest?: Record<string, unknown>;
}

/** Where a block of text is, for errors and rows. */
export interface ReadContext {
  /** The file, for errors. */
  file: string;
  /** The command typed before the text, when there was one. */
  command?: ParsedCommand;
}

/** A reader of one block's lines, in order: long outputs are never held whole. */
export interface LineReader {
  /**
   * Reads one physical line.
   *
   * @param text The line without its line ending (it may hold `\r` redraws).
   * @param line Its 1-based number in the file.
   * @param terminated Whether it ended with a newline (false for a cut file's last line).
   */
  push(text: string, line: number, terminated: boolean): void;
  /** The command, learnt after reading began (a `script(1)` banner names it). */
  learnCommand?(command: ParsedCommand): void;
  /** Rows finished and not yet taken. */
  readonly pendingRows: number;
  /**
   * Takes the rows finished so far (a very long output is written in parts).
   *
   * @param runId The run they belong to.
   */
  take(runId: string): FormatTables;
  /**
   * Ends the block.
   *
   * @param runId The run its rows belong to.
   * @returns The run (its rows less those taken).
   * @throws {ParseError} When nothing in the block was this format's text.
   */
  finish(runId: string): FormatRun;
}

/** The parts every format has. */
interface FormatBase {
  /** Its name in the registry (`redis-benchmark`, `memtier-stdout`, `redis-info`, …). */
  readonly name: string;
  /** The tool whose output it is: `runs.tool` when no command says otherwise. */
  readonly tool: string;
  /** A phrase naming it in errors: `memtier_benchmark JSON`. */
  readonly description: string;
  /**
   * What `kvlab ingest` reads of it, in the list of known formats an error gives; a format that
   * is read only beside another (an HDR percentile file) has none.
   */
  readonly reads?: string;
  /** Whether its runs are benchmark results: `kvlab ingest --tool` can name its programs. */
  readonly results: boolean;
  /**
   * Whether one line of a text's start (trimmed, one `\r`-drawn piece) says the text is this
   * format's. The registry asks the formats in order; the first that recognises any line wins.
   */
  recognizes(line: string): boolean;
  /** The command words of its tool: output typed after `$ <program> …` is read with it. */
  readonly programs?: readonly string[];
  /**
   * An older or rarer form of its tool's output (memtier 1.x): a command's output is read with
   * it only when the text says so, never by default.
   */
  readonly variant?: boolean;
  /**
   * For a command of one of its programs: null when its output is this format's, else why it is
   * skipped (`docker command other than stats`).
   */
  accepts?(args: readonly string[]): string | null;
  /**
   * A capture printed after a run (DBSIZE, INFO memory, docker stats): what it says for that
   * run's `memory` row; null for a command that measures no memory.
   */
  capture?(text: string, command: ParsedCommand): MemoryFields | null;
  /** The files one run of its tool writes together, when it writes several. */
  readonly files?: FileSet;
}

/** A format read line by line. */
export interface LinesFormat extends FormatBase {
  readonly reading: "lines";
  /** A reader for one block. */
  reader(ctx: ReadContext): LineReader;
}

/** A format read as a whole text once its block ends. */
export interface TextFormat extends FormatBase {
  readonly reading: "text";
  /** The longest block it reads, in bytes. */
  readonly maxBytes: number;
  /**
   * Reads a block.
   *
   * @param text The block (a command's output, or a whole file).
   * @param ctx Where it is: `firstLine` and `lastLine`, its first and last lines' numbers in the
   * file; `runId`, the run its rows go to.
   * @returns The run.
   * @throws {ParseError} When the text is not this format's.
   */
  read(
    text: string,
    ctx: ReadContext & { firstLine: number; lastLine: number; runId: string },
  ): FormatRun;
}

/** One output format: the pure reader of one tool's text. */
export type OutputFormat = LinesFormat | TextFormat;

/** One file of a multi-file run, found by name and recognised by its content. */
export interface SetFile {
  /** Where to read it. */
  path: string;
  /** Its name, as stored with the run's raw files. */
  name: string;
  /** The format that reads it (one of the set's `formats`). */
  format: string;
}

/**
 * The files one run of a tool writes together (memtier's JSON, stdout, stderr and HDR files,
 * by base name), read as one run. Reading them touches the files: they can be larger than
 * memory, and are read in chunks.
 */
export interface FileSet {
  /** The formats of its files, in the order a run reads them (its first file is its source). */
  readonly formats: readonly string[];
  /**
   * The names of a folder that would be one run with a file, by name alone.
   *
   * @param name The file's name.
   * @param names The folder's names (the file's among them).
   * @returns Each with the format its name suggests, the file's own first.
   */
  siblings(name: string, names: readonly string[]): { name: string; format: string }[];
  /** The longest file it reads, in bytes. */
  readonly maxBytes: number;
  /**
   * Reads the files of one run: each file's redacted bytes become the run's raw files.
   *
   * @param files The run's files, in reading order.
   * @param writer The run's writer (raw files, and parts of a long series).
   * @returns The run.
   * @throws {ParseError} When no file can be read.
   */
  read(files: readonly SetFile[], writer: RunWriter): Promise<FormatRun>;
}

/**
 * The status of a run from what was read: failed with no test, incomplete when cut.
 *
 * @param tests The tests read.
 * @param complete Whether the output was whole.
 * @returns The status.
 *
 * @example
 * ```ts
 * import { runStatus } from "./format.ts";
 * import assert from "node:assert/strict";
 * assert.equal(runStatus(0, true), "failed");
 * assert.equal(runStatus(3, false), "incomplete");
 * assert.equal(runStatus(3, true), "complete");
 * ```
 */
export function runStatus(tests: number, complete: boolean): FormatRun["status"] {
  if (tests === 0) return "failed";
  return complete ? "complete" : "incomplete";
}
