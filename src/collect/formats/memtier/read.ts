/**
 * A memtier_benchmark run read as one {@link FormatRun}: from the files it wrote together (its
 * JSON, read in chunks, with its stdout, stderr and `--hdr-file-prefix` files), or from one text
 * (a transcript's `memtier_benchmark …` output, a file alone). {@link memtierRows} makes the rows;
 * what a file is comes from its format (`format.ts`).
 *
 * @module
 */

import { ParseError } from "../../../errors.ts";
import { decodeText } from "../../../text/decode.ts";
import { redactText } from "../../../text/redact.ts";
import type { RunWriter } from "../../../store/writer.ts";
import type { FormatRun, ParsedCommand, SetFile } from "../format.ts";
import type { MemtierFileKind } from "./files.ts";
import { memtierCommandFacts } from "./flags.ts";
import { type HdrFileName, parseHdrFileName, parseHdrIntervalLog } from "./hdr.ts";
import { readMemtierJsonFile, type StreamedJson, writeMemtierSeries } from "./json/file.ts";
import { parseMemtierJson } from "./json/parse.ts";
import { parseMemtierProgress } from "./progress.ts";
import { parseMemtierReport } from "./report.ts";
import { type MemtierHdrLog, type MemtierParsed, type MemtierRows, memtierRows } from "./rows.ts";

/** The kind of a memtier file from its format's name (`memtier-json` → `json`). */
export function kindOfFormat(format: string): MemtierFileKind {
  return format.replace(/^memtier-/, "") as MemtierFileKind;
}

/** One file of a run, read: its text (redacted) or its JSON read in chunks. */
interface ReadFile {
  name: string;
  kind: MemtierFileKind;
  /** Its text (empty for the JSON read in chunks). */
  text: string;
  redacted: boolean;
  json?: StreamedJson;
}

/**
 * Reads the files of one run into its rows: every file's redacted bytes become the run's raw
 * files, rows come from the JSON (else stdout, else stderr progress), the interval logs give
 * `hdr_histograms` rows; percentile `.txt` files are kept as raw only.
 *
 * @param files The run's files, in reading order (see `memtierFiles`).
 * @param writer The run's writer (raw files, and the parts of a long series).
 * @returns The run.
 * @throws {ParseError} When no file of the run can be read as memtier's.
 */
export async function readMemtierFiles(
  files: readonly SetFile[],
  writer: RunWriter,
): Promise<FormatRun> {
  let streamed: { name: string; rawPath: string } | undefined;
  const read: ReadFile[] = files.map((f) => {
    const kind = kindOfFormat(f.format);
    const rawPath = writer.rawPath(f.name);
    if (kind === "json" && !streamed) {
      streamed = { name: f.name, rawPath };
      const json = readMemtierJsonFile(f.path, { file: f.name, rawPath });
      return { name: f.name, kind, text: "", redacted: json.redacted, json };
    }
    const raw = decodeText(Deno.readFileSync(f.path));
    const text = redactText(raw);
    Deno.writeTextFileSync(rawPath, text);
    return { name: f.name, kind, text, redacted: text !== raw };
  });
  const { parsed, warnings, firstError } = parseFiles(read);
  const hdrOnly = read.every((f) => f.kind.startsWith("hdr-"));
  if (!parsed.json && !parsed.report && !parsed.stderr && !parsed.hdr?.length) {
    throw firstError ?? new ParseError(
      "a memtier_benchmark JSON, stdout, stderr or .hgrm interval log " +
        "(an HDR percentile .txt is kept only with its run's other files)",
      { file: files[0]?.path ?? "<none>", line: 1, column: 1, text: "" },
    );
  }
  const rows = memtierRows(parsed, writer.runId);
  rows.warnings.unshift(...warnings);
  if (streamed && parsed.json && parsed.jsonFile === streamed.name) {
    await writeMemtierSeries(streamed.rawPath, { file: streamed.name, rows, writer });
  }
  return memtierRun(rows, {
    parsed,
    hdrOnly,
    manifest: {
      memtier_files: read.map((f) => ({ name: f.name, kind: f.kind })),
      raw_redacted: read.some((f) => f.redacted),
    },
  });
}

/**
 * Reads one memtier text: a transcript's `memtier_benchmark …` output (stdout and stderr
 * together), its command's flags (memtier's defaults for the others) filling what the output
 * does not say; or one file of a run read alone.
 *
 * @param text The text (secrets already redacted by the caller, or not: rows keep no text).
 * @param ctx `file`, for messages; `kind`, what the text is; `command`, the command typed
 * before it; `firstLine`, its first line in the file (lines in warnings are the file's);
 * `runId`, the run.
 * @returns The run.
 * @throws {ParseError} When the text is not the kind of memtier file it was taken for.
 */
export function readMemtierText(
  text: string,
  { file, kind, command, firstLine, runId }: {
    file: string;
    kind: MemtierFileKind;
    command?: ParsedCommand;
    firstLine: number;
    runId: string;
  },
): FormatRun {
  // blank lines before it, so that lines read are the file's
  const output = "\n".repeat(firstLine - 1) + text;
  const facts = command ? memtierCommandFacts(command.args) : undefined;
  const warnings: string[] = [];
  let parsed: MemtierParsed;
  if (kind === "stdout") {
    parsed = {
      report: tryParse(() => parseMemtierReport(output, { file }), warnings),
      // warnings name the file (lines are its), not memtier's "stdout"
      reportFile: file,
      stderr: parseMemtierProgress(output),
      settings: facts?.settings,
    };
  } else if (kind === "stderr") {
    parsed = { stderr: parseMemtierProgress(output), settings: facts?.settings };
  } else if (kind === "json") {
    parsed = { json: parseMemtierJson(text, { file }), jsonFile: file };
  } else if (kind === "hdr-log") {
    parsed = { hdr: [{ file, name: hdrName(file), log: parseHdrIntervalLog(text, { file }) }] };
  } else {
    throw new ParseError(
      "a memtier_benchmark JSON, stdout, stderr or .hgrm interval log " +
        "(an HDR percentile .txt is kept only with its run's other files)",
      { file, line: firstLine, column: 1, text: "" },
    );
  }
  const rows = memtierRows(parsed, runId);
  rows.warnings.unshift(...warnings);
  const run = memtierRun(rows, { parsed, hdrOnly: kind === "hdr-log", manifest: {} });
  if (facts) run.facts = { ...run.facts, target: facts.target, transport: facts.transport };
  return run;
}

/** Parses each file by its kind; a file that is not what its start said becomes a warning. */
function parseFiles(files: readonly ReadFile[]) {
  const warnings: string[] = [];
  const hdr: MemtierHdrLog[] = [];
  const parsed: MemtierParsed = { hdr };
  let firstError: ParseError | undefined;
  for (const { name: file, kind, text, json } of files) {
    try {
      if (json) {
        if (json.error) throw json.error;
        parsed.json = json.json;
        parsed.jsonFile = file;
      } else if (kind === "json" && !parsed.json) {
        parsed.json = parseMemtierJson(text, { file });
        parsed.jsonFile = file;
      } else if (kind === "stdout" && !parsed.report) {
        parsed.report = parseMemtierReport(text, { file });
        parsed.reportFile = file;
        // stdout and stderr in one file (2>&1): its progress too
        if (!files.some((f) => f.kind === "stderr")) parsed.stderr = parseMemtierProgress(text);
      } else if (kind === "stderr" && !parsed.stderr) {
        parsed.stderr = parseMemtierProgress(text);
      } else if (kind === "hdr-log") {
        hdr.push({ file, name: hdrName(file), log: parseHdrIntervalLog(text, { file }) });
      }
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      firstError ??= e;
      warnings.push(e.message);
    }
  }
  return { parsed, warnings, firstError };
}

/** What an interval log's name says; a name memtier does not write reads as run 1's. */
function hdrName(name: string): HdrFileName {
  return parseHdrFileName(name) ??
    { prefix: name.replace(/\.hgrm$/, ""), test: "FULL", runIndex: 1, format: "interval-log" };
}

function tryParse<T>(parse: () => T, warnings: string[]): T | null {
  try {
    return parse();
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    warnings.push(e.message);
    return null;
  }
}

/**
 * The run of memtier rows. Status: complete when memtier finished (for interval logs alone:
 * every log whole), incomplete when there are results (or intervals), else failed.
 */
function memtierRun(
  rows: MemtierRows,
  { parsed, hdrOnly, manifest }: {
    parsed: MemtierParsed;
    /** The run is HDR interval logs alone. */
    hdrOnly: boolean;
    manifest: Record<string, unknown>;
  },
): FormatRun {
  const logs = parsed.hdr ?? [];
  const status: FormatRun["status"] = hdrOnly
    ? logs.length > 0 && logs.every((h) => h.log.complete)
      ? "complete"
      : rows.hdr_histograms.length > 0
      ? "incomplete"
      : "failed"
    : rows.complete
    ? "complete"
    : rows.results.length > 0
    ? "incomplete"
    : "failed";
  const reason = status === "complete"
    ? null
    : hdrOnly
    ? "HDR interval log cut short"
    : rows.reason;
  const c = parsed.json?.configuration;
  return {
    outputFormat: hdrOnly ? "hgrm" : rows.source,
    tool: "memtier_benchmark",
    status,
    error: reason,
    tests: rows.results.length,
    tables: {
      results: rows.results,
      latency_distribution: rows.latency_distribution,
      time_series: rows.time_series,
      hdr_histograms: rows.hdr_histograms,
    },
    facts: {
      target: c?.server ? `${c.server}:${c.port ?? 6379}` : null,
      transport: "tcp",
      startedAt: startedAt(parsed),
    },
    warnings: rows.warnings.map((message) => ({ message })),
    manifest,
  };
}

function startedAt(parsed: MemtierParsed): Date | null {
  const ms = (parsed.json?.blocks ?? []).map((b) => b.runtime?.startTimeMs ?? Infinity);
  const first = Math.min(...ms);
  if (Number.isFinite(first)) return new Date(first);
  const s = (parsed.hdr ?? []).map((h) => h.log.startTimeS ?? Infinity);
  const log = Math.min(...s);
  return Number.isFinite(log) ? new Date(log * 1000) : null;
}
