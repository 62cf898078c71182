/**
 * Ingest of memtier_benchmark output: a run's files found together by base name (the JSON with
 * its stdout, stderr and `--hdr-file-prefix` files, or any of them alone), or a
 * `memtier_benchmark …` command and its output in a transcript. The pure parsers read each file,
 * {@link memtierRows} makes the rows, and one run is written with every file's (redacted) raw
 * bytes.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";
import type { MemtierBlock } from "./_blocks.ts";
import type { IngestedRun, IngestOptions } from "./_run.ts";
import { memtierCommandFacts } from "../formats/memtier/flags.ts";
import {
  MEMTIER_FILE_ORDER,
  memtierSiblings,
  memtierVersionOfName,
} from "../formats/memtier/files.ts";
import { runRow } from "../_rows.ts";
import { type MemtierFileKind, memtierFileKind } from "./detect.ts";
import { type HdrFileName, parseHdrFileName, parseHdrIntervalLog } from "../formats/memtier/hdr.ts";
import { parseMemtierJson } from "../formats/memtier/json/parse.ts";
import { parseMemtierProgress } from "../formats/memtier/progress.ts";
import { parseMemtierReport } from "../formats/memtier/report.ts";
import {
  type MemtierHdrLog,
  type MemtierParsed,
  type MemtierRows,
  memtierRows,
} from "../formats/memtier/rows.ts";
import { redactCommandLine, redactText } from "../../text/redact.ts";
import { decodeText } from "../../text/decode.ts";
import { type DatasetWriter, newRunId, type RunInput } from "../../store/writer.ts";
import {
  readMemtierJsonFile,
  type StreamedJson,
  writeMemtierSeries,
} from "../formats/memtier/json/file.ts";

/** One file of a memtier run. */
export interface MemtierMember {
  /** Where to read it. */
  path: string;
  /** Its name, as stored with the run's raw files. */
  name: string;
  /** What it is, by its content. */
  kind: MemtierFileKind;
}

/** The files of one memtier run, the first of them the run's source (its leader). */
export interface MemtierGroup {
  members: MemtierMember[];
}

/** What writing a memtier run needs. */
export interface MemtierContext {
  options: IngestOptions;
  now: () => Date;
  dataset: DatasetWriter;
}

/** Bytes of one memtier file kvlab reads whole (its JSON with a per-second series is large). */
export const MEMTIER_FILE_MAX_BYTES = 256 << 20;

/** Bytes of a file's start read to tell what it is. */
const SNIFF_BYTES = 64 << 10;

/**
 * The memtier run a file belongs to: the files of its folder with the same base name whose
 * text is memtier's (see {@link memtierSiblings}), JSON first. Null when the file itself is not
 * memtier output (unless `forced`: `--tool memtier_benchmark`).
 *
 * @param path The file.
 * @param names The non-hidden file names of a folder (cached by the caller).
 * @param forced Read the file as memtier's even when its text does not say so.
 * @returns The group, or null.
 */
export function findMemtierGroup(
  path: string,
  names: (dir: string) => readonly string[],
  forced = false,
): MemtierGroup | null {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
  const name = path.slice(slash + 1);
  const listed = names(dir);
  const siblings = memtierSiblings(name, listed.includes(name) ? listed : [...listed, name]);
  const members: MemtierMember[] = [];
  const empty: MemtierMember[] = [];
  for (const s of siblings) {
    const p = s.name === name ? path : `${dir === "/" ? "" : dir}/${s.name}`;
    const kind = sniff(p);
    // an empty file (a killed run's stdout) is kept with its run's other files
    if (kind === "empty") empty.push({ path: p, name: s.name, kind: s.kind });
    else if (kind !== null) members.push({ path: p, name: s.name, kind });
    else if (forced && p === path) members.push({ path: p, name: s.name, kind: s.kind });
  }
  if (members.length > 0) members.push(...empty);
  if (!members.some((m) => m.path === path)) return null;
  members.sort((a, b) => MEMTIER_FILE_ORDER.indexOf(a.kind) - MEMTIER_FILE_ORDER.indexOf(b.kind));
  return { members };
}

/**
 * The memtier group of one file read on its own (a stream's copy): its kind from its text.
 *
 * @param path Where to read it.
 * @param name Its name.
 * @param forced Read it as memtier's even when its text does not say so.
 * @returns The group, or null when the text is not memtier's.
 */
export function singleMemtierGroup(
  path: string,
  name: string,
  forced = false,
): MemtierGroup | null {
  const sniffed = sniff(path);
  const kind = sniffed === "empty" ? null : sniffed ?? (forced ? "stdout" : null);
  return kind === null ? null : { members: [{ path, name, kind }] };
}

/** What a file's start says it is: one of memtier's files, empty, or neither (null). */
function sniff(path: string): MemtierFileKind | "empty" | null {
  let f: Deno.FsFile;
  try {
    f = Deno.openSync(path, { read: true });
  } catch {
    return null;
  }
  try {
    const buf = new Uint8Array(SNIFF_BYTES);
    let n = 0;
    while (n < buf.length) {
      const got = f.readSync(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    // UTF-16 (with or without a BOM) read like UTF-8
    const text = decodeText(buf.subarray(0, n & ~1));
    return text.trim() === "" ? "empty" : memtierFileKind(text);
  } finally {
    f.close();
  }
}

/** A file's text, redacted, and whether redaction changed it. */
interface ReadFile {
  member: MemtierMember;
  /** Its text (empty for the JSON read in chunks). */
  text: string;
  redacted: boolean;
  /** The JSON read in chunks. */
  json?: StreamedJson;
}

/**
 * Writes the run of a memtier group into the current batch: every member's redacted bytes as
 * the run's raw files, rows from the JSON (else stdout, else stderr progress), the interval logs
 * as `hdr_histograms` rows; percentile `.txt` files are kept as raw only.
 *
 * @param group The run's files.
 * @param source The leader's path as given and its SHA-256 (stored as the run's source).
 * @param ctx Labels, clock and dataset.
 * @returns The run.
 * @throws {ParseError} When no file of the group can be read as memtier's.
 */
export async function ingestMemtierGroup(
  group: MemtierGroup,
  source: { path: string; sha: string },
  ctx: MemtierContext,
): Promise<IngestedRun> {
  for (const m of group.members) {
    const size = Deno.statSync(m.path).size;
    if (size > MEMTIER_FILE_MAX_BYTES) {
      throw new ParseError(
        `a memtier_benchmark file of at most ${MEMTIER_FILE_MAX_BYTES >> 20} MiB ` +
          `(this one has ${size} bytes)`,
        { file: m.path, line: 1, column: 1, text: "" },
      );
    }
  }
  const writer = ctx.dataset.run(newRunId(ctx.now()));
  try {
    return await writeGroup(group, { source, ctx, writer });
  } catch (e) {
    writer.abort();
    throw e;
  }
}

/**
 * The run of a group, into `writer`: its JSON (the first) read in chunks and its series
 * written in parts as it is read again (see `../formats/memtier/json/file.ts`), its other files read whole.
 */
async function writeGroup(
  group: MemtierGroup,
  { source, ctx, writer }: {
    source: { path: string; sha: string };
    ctx: MemtierContext;
    writer: ReturnType<DatasetWriter["run"]>;
  },
): Promise<IngestedRun> {
  let streamed: { name: string; rawPath: string } | undefined;
  const files: ReadFile[] = group.members.map((m) => {
    const rawPath = writer.rawPath(m.name);
    if (m.kind === "json" && !streamed) {
      streamed = { name: m.name, rawPath };
      const read = readMemtierJsonFile(m.path, { file: m.name, rawPath });
      return { member: m, text: "", redacted: read.redacted, json: read };
    }
    const raw = decodeText(Deno.readFileSync(m.path));
    const text = redactText(raw);
    Deno.writeTextFileSync(rawPath, text);
    return { member: m, text, redacted: text !== raw };
  });
  const { parsed, warnings, firstError } = parseGroup(files);
  const hdrOnly = files.every((f) => f.member.kind.startsWith("hdr-"));
  if (!parsed.json && !parsed.report && !parsed.stderr && !parsed.hdr?.length) {
    throw firstError ?? new ParseError(
      "a memtier_benchmark JSON, stdout, stderr or .hgrm interval log " +
        "(an HDR percentile .txt is kept only with its run's other files)",
      { file: source.path, line: 1, column: 1, text: "" },
    );
  }
  const rows = memtierRows(parsed, writer.runId);
  rows.warnings.unshift(...warnings);
  if (streamed && parsed.json && parsed.jsonFile === streamed.name) {
    await writeMemtierSeries(streamed.rawPath, { file: streamed.name, rows, writer });
  }
  const leader = group.members[0];
  const run = memtierRunRow(rows, { runId: writer.runId, ctx, hdrOnly, parsed });
  run.source_path = source.path;
  run.source_sha256 = source.sha;
  run.tool_version ??= memtierVersionOfName(leader.name);
  return commitRun(writer, {
    run,
    rows,
    manifest: {
      memtier_files: group.members.map((m) => ({ name: m.name, kind: m.kind })),
      raw_redacted: files.some((f) => f.redacted),
    },
  });
}

/**
 * Writes the run of a `memtier_benchmark …` command in a transcript: its output read as stdout
 * and stderr together, the command line's flags (memtier's defaults for the others) filling
 * what the output does not say.
 *
 * @param b The block.
 * @param read `text`, its bytes as text (command line included); `source`, the transcript's
 * path and SHA-256; `ctx`, labels, clock and dataset.
 * @returns The run.
 */
export function ingestMemtierBlock(
  b: MemtierBlock,
  { text, source, ctx }: {
    text: string;
    source: { path: string; sha: string };
    ctx: MemtierContext;
  },
): IngestedRun {
  const red = redactText(text);
  const lines = red.split("\n");
  // blank lines in place of the command, so that lines read are the transcript's
  const skip = b.command.lastLine - b.command.line + 1;
  const output = "\n".repeat(b.firstLine - 1 + skip) + lines.slice(skip).join("\n");
  const facts = memtierCommandFacts(b.command.parsed.args);
  const file = source.path;
  const warnings: string[] = [];
  const report = tryParse(() => parseMemtierReport(output, { file }), warnings);
  const parsed: MemtierParsed = {
    report,
    // warnings name the transcript (lines are the transcript's), not memtier's "stdout"
    reportFile: file,
    stderr: parseMemtierProgress(output),
    settings: facts.settings,
  };
  const writer = ctx.dataset.run(newRunId(ctx.now()));
  Deno.writeTextFileSync(writer.rawPath(basename(source.path)), red);
  const rows = memtierRows(parsed, writer.runId);
  rows.warnings.unshift(...warnings);
  const run = memtierRunRow(rows, { runId: writer.runId, ctx, hdrOnly: false, parsed });
  Object.assign(run, {
    command: redactCommandLine(b.command.text),
    host: b.command.host ?? null,
    target: facts.target,
    transport: facts.transport,
    started_at: b.startedAt ?? run.started_at ?? null,
    source_path: source.path,
    source_sha256: source.sha,
    source_line_start: b.firstLine,
    source_line_end: b.lastLine,
  });
  return commitRun(writer, {
    run,
    rows,
    manifest: {
      raw_line_offset: b.firstLine - 1,
      prompt: b.command.prompt,
      raw_redacted: red !== text,
    },
  });
}

/** Parses each file by its kind; a file that is not what its start said becomes a warning. */
function parseGroup(files: readonly ReadFile[]) {
  const warnings: string[] = [];
  const hdr: MemtierHdrLog[] = [];
  const parsed: MemtierParsed = { hdr };
  let firstError: ParseError | undefined;
  const note = (e: ParseError) => {
    firstError ??= e;
    warnings.push(e.message);
  };
  for (const { member: m, text, json } of files) {
    const file = m.name;
    try {
      if (json) {
        if (json.error) throw json.error;
        parsed.json = json.json;
        parsed.jsonFile = m.name;
      } else if (m.kind === "json" && !parsed.json) {
        parsed.json = parseMemtierJson(text, { file });
        parsed.jsonFile = m.name;
      } else if (m.kind === "stdout" && !parsed.report) {
        parsed.report = parseMemtierReport(text, { file });
        parsed.reportFile = m.name;
        // stdout and stderr in one file (2>&1): its progress too
        if (!files.some((f) => f.member.kind === "stderr")) {
          parsed.stderr = parseMemtierProgress(text);
        }
      } else if (m.kind === "stderr" && !parsed.stderr) {
        parsed.stderr = parseMemtierProgress(text);
      } else if (m.kind === "hdr-log") {
        const log = parseHdrIntervalLog(text, { file });
        hdr.push({ file, name: hdrName(m.name), log });
      }
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      note(e);
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
 * The `runs` row of a memtier run. Status: complete when memtier finished (for interval logs
 * alone: every log whole), incomplete when there are results (or intervals), else failed.
 */
function memtierRunRow(
  rows: MemtierRows,
  { runId, ctx, hdrOnly, parsed }: {
    runId: string;
    ctx: MemtierContext;
    /** The run is HDR interval logs alone. */
    hdrOnly: boolean;
    parsed: MemtierParsed;
  },
): RunInput {
  const o = ctx.options;
  const logs = parsed.hdr ?? [];
  const status: IngestedRun["status"] = hdrOnly
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
  return runRow({
    run_id: runId,
    tool: "memtier_benchmark",
    tool_version: o.toolVersion ?? null,
    command: null,
    server: o.server ?? "unknown",
    server_version: o.serverVersion ?? null,
    target: targetOfJson(parsed),
    transport: "tcp",
    label: o.label ?? null,
    tags: o.tags,
    started_at: startedAt(parsed),
    ingested_at: ctx.now(),
    status,
    output_format: hdrOnly ? "hgrm" : rows.source,
    error: reason === null ? null : redactText(reason),
    warning_count: rows.warnings.length,
  });
}

function targetOfJson(parsed: MemtierParsed): string | null {
  const c = parsed.json?.configuration;
  return c?.server ? `${c.server}:${c.port ?? 6379}` : null;
}

function startedAt(parsed: MemtierParsed): Date | null {
  const ms = (parsed.json?.blocks ?? []).map((b) => b.runtime?.startTimeMs ?? Infinity);
  const first = Math.min(...ms);
  if (Number.isFinite(first)) return new Date(first);
  const s = (parsed.hdr ?? []).map((h) => h.log.startTimeS ?? Infinity);
  const log = Math.min(...s);
  return Number.isFinite(log) ? new Date(log * 1000) : null;
}

/** Commits a memtier run with its rows; the manifest's warnings are added, redacted. */
function commitRun(
  writer: ReturnType<DatasetWriter["run"]>,
  { run, rows, manifest }: { run: RunInput; rows: MemtierRows; manifest: Record<string, unknown> },
): IngestedRun {
  writer.commit({
    run,
    tables: {
      results: rows.results,
      latency_distribution: rows.latency_distribution,
      time_series: rows.time_series,
      hdr_histograms: rows.hdr_histograms,
    },
    raw: [],
    manifest: { ...manifest, warnings: rows.warnings.map((w) => redactText(w)) },
  });
  return {
    runId: writer.runId,
    status: run.status as IngestedRun["status"],
    tool: "memtier_benchmark",
    tests: rows.results.length,
    line: Number(run.source_line_start ?? 1),
    warnings: rows.warnings.length,
  };
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}
