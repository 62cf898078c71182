/**
 * `kvlab ingest`: reads raw outputs and transcripts from disk, streams them through the pure
 * parsers, and writes one run per benchmark command into a dataset. Files are claimed by
 * content hash, so ingesting the same bytes twice is reported and skipped.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { ParseError, UnknownFormatError } from "../errors.ts";
import type { MemoryRow } from "../schema.ts";
import {
  type ByteLine,
  copyRangeSync,
  readLineBatches,
  readRangeSync,
  sha256File,
} from "./_read_lines.ts";
import { type BenchmarkArgs, parseBenchmarkArgs } from "./command.ts";
import { describeKind, type DetectedKind, detectKind, KNOWN_FORMATS } from "./detect.ts";
import { redactCommandLine, redactRawText, type RedactState, redactUrl } from "./redact.ts";
import { RedisBenchmarkParser, type RedisBenchmarkRun } from "./redis_benchmark.ts";
import { infoNumber, memoryRow, memoryViews, runRow, snapshotRows, testRows } from "./_rows.ts";
import type { MemoryFields } from "./_rows.ts";
import { parseDockerStats } from "./docker_stats.ts";
import { parseInfo, serverIdentity } from "./info.ts";
import { parseDbsize } from "./redis_cli.ts";
import {
  claimDir,
  claimPath,
  claimSource,
  completeClaim,
  newRunId,
  releaseClaim,
  type RunRecord,
  RunWriter,
} from "./store.ts";
import { readPrompt, type TranscriptCommand, TranscriptSplitter } from "./transcript.ts";

/** Options of {@link ingestFile} and {@link ingestPaths}. */
export interface IngestOptions {
  /** Dataset directory. */
  data: string;
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
 * order, skipping hidden entries.
 *
 * @throws {Deno.errors.NotFound} When a path does not exist.
 */
export async function* expandPaths(paths: readonly string[]): AsyncGenerator<string> {
  for (const p of paths) {
    const info = await Deno.stat(p);
    if (info.isDirectory) {
      const entries: Deno.DirEntry[] = [];
      for await (const e of Deno.readDir(p)) if (!e.name.startsWith(".")) entries.push(e);
      entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      for (const e of entries) {
        const child = `${p.replace(/\/+$/, "")}/${e.name}`;
        if (e.isDirectory) yield* expandPaths([child]);
        else if (e.isFile) yield child;
      }
    } else {
      yield p;
    }
  }
}

/**
 * Ingests every file under the paths. A file that fails does not stop the others.
 *
 * @param onFile Called after each file, for progress output.
 */
export async function ingestPaths(
  paths: readonly string[],
  options: IngestOptions,
  onFile?: (outcome: FileOutcome) => void,
): Promise<FileOutcome[]> {
  const out: FileOutcome[] = [];
  for await (const file of expandPaths(paths)) {
    const outcome = await ingestFile(file, options);
    onFile?.(outcome);
    out.push(outcome);
  }
  return out;
}

/**
 * Ingests one file into the dataset.
 *
 * @returns The outcome; errors in the file are returned (status `"error"`), not thrown.
 */
export async function ingestFile(path: string, options: IngestOptions): Promise<FileOutcome> {
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
  const key = `${sha}-${labelsKey(options)}`;
  const claim = await claimSource(options.data, key, path, now());
  if (!claim.claimed) {
    return { ...outcome, status: "duplicate", duplicateOf: claim.existing.run_ids };
  }
  const earlier = otherClaims(options.data, sha, key);
  if (earlier.length > 0) outcome.sameBytesAs = earlier;
  try {
    await ingestClaimed(path, sha, options, now, outcome);
  } catch (e) {
    outcome.status = "error";
    outcome.error = e as Error;
  }
  if (outcome.runs.length === 0) {
    await releaseClaim(options.data, key);
    if (outcome.status === "ingested") {
      outcome.status = "error";
      outcome.error ??= new ParseError(
        `expected ${KNOWN_FORMATS}; no benchmark command made a run`,
        {
          file: path,
          line: 1,
          column: 1,
          text: "",
        },
      );
    }
  } else {
    await completeClaim(options.data, key, path, outcome.runs.map((r) => r.runId), now());
  }
  return outcome;
}

type BlockKind = "benchmark" | "capture" | "implicit" | "skip";

interface Block {
  kind: BlockKind;
  command: TranscriptCommand | undefined;
  args: BenchmarkArgs | undefined;
  parser: RedisBenchmarkParser | undefined;
  firstLine: number;
  lastLine: number;
  byteStart: number;
  byteEnd: number;
  nonBlank: number;
  sample: string[];
  startedAt: Date | null;
  skipReason?: string;
  /** Set once the block streams parts to storage (very long outputs). */
  writer?: RunWriter;
  /** Tests already written as parts. */
  written: number;
}

/** Rows kept in memory per run before they are written as a Parquet part. */
const PART_ROWS = 20_000;

/** What one ingest of one file shares between its blocks. */
interface FileContext {
  path: string;
  sha: string;
  size: number;
  file: Deno.FsFile;
  options: IngestOptions;
  now: () => Date;
  /** Memory rows made from this file so far. */
  memorySteps: number;
}

async function ingestClaimed(
  path: string,
  sha: string,
  options: IngestOptions,
  now: () => Date,
  outcome: FileOutcome,
): Promise<void> {
  const splitter = new TranscriptSplitter();
  let block: Block | undefined;
  let blocks = 0;
  let sawCommand = false;
  const file = await Deno.open(path, { read: true });
  const ctx: FileContext = {
    path,
    sha,
    size: (await file.stat()).size,
    file,
    options,
    now,
    memorySteps: 0,
  };

  // A benchmark run is committed when the next one starts (or at the end), so that the
  // DBSIZE / INFO / docker stats blocks printed after it can add its memory rows.
  let pending: Pending | undefined;
  const commitPending = () => {
    if (pending) outcome.runs.push(commitRun(pending, ctx));
    pending = undefined;
  };
  const finishBlock = (b: Block) => {
    blocks++;
    const made = finishBlockToRun(b, ctx, sawCommand);
    if (made === undefined) return;
    if ("skip" in made) {
      outcome.skipped.push({ line: b.firstLine, reason: made.skip });
      return;
    }
    if (b.kind === "capture") {
      if (pending) addMemoryFacts(pending, b, ctx);
      outcome.runs.push(commitRun(made, ctx));
    } else {
      commitPending();
      pending = made;
    }
  };

  try {
    for await (const batch of readLineBatches(path)) {
      for (const l of batch) {
        const e = splitter.push(l);
        if (e.kind === "command") {
          sawCommand = true;
          if (block) finishBlock(block);
          block = startBlock(e.command, l, path);
        } else if (e.kind === "continuation") {
          if (block) {
            block.lastLine = l.line;
            block.byteEnd = l.byteEnd;
            Object.assign(block, classify(e.command, path));
          }
        } else {
          block ??= startBlock(undefined, l, path);
          feed(block, l);
        }
      }
      if (block?.parser && block.parser.pendingRows > PART_ROWS) flushPart(block, ctx);
    }
    if (block) finishBlock(block);
    commitPending();
  } catch (e) {
    block?.writer?.abort();
    pending?.writer.abort();
    throw e;
  } finally {
    file.close();
  }
  if (blocks === 0 || ctx.size === 0) {
    throw new ParseError(`expected ${KNOWN_FORMATS}, found an empty file`, {
      file: path,
      line: 1,
      column: 1,
      text: "",
    });
  }
}

/** Writes the tests a long block has finished so far as a Parquet part. */
function flushPart(b: Block, ctx: FileContext): void {
  b.writer ??= new RunWriter(ctx.options.data, newRunId(ctx.now()));
  const tests = b.parser!.takeCompleted();
  const rows = testRows(b.writer.runId, tests, b.written);
  b.writer.writePart("results", rows.results);
  b.writer.writePart("latency_distribution", rows.distribution);
  b.written += tests.length;
}

function classify(
  command: TranscriptCommand | undefined,
  path: string,
): Pick<Block, "kind" | "args" | "parser" | "skipReason" | "command"> {
  if (command === undefined) {
    return {
      kind: "implicit",
      command,
      args: undefined,
      parser: new RedisBenchmarkParser({ file: path }),
    };
  }
  const tool = command.parsed.tool;
  switch (tool) {
    case "redis-benchmark":
    case "valkey-benchmark": {
      try {
        const args = parseBenchmarkArgs(command.parsed.args);
        return {
          kind: "benchmark",
          command,
          args,
          parser: new RedisBenchmarkParser({ file: path, args }),
        };
      } catch (e) {
        return {
          kind: "skip",
          command,
          args: undefined,
          parser: undefined,
          skipReason: `${path}:${command.line}: ${(e as Error).message}`,
        };
      }
    }
    case "redis-cli":
    case "valkey-cli":
      return { kind: "capture", command, args: undefined, parser: undefined };
    case "docker":
      if (command.parsed.args[0] === "stats") {
        return { kind: "capture", command, args: undefined, parser: undefined };
      }
      return {
        kind: "skip",
        command,
        args: undefined,
        parser: undefined,
        skipReason: "docker command other than stats",
      };
    case "memtier_benchmark":
      return {
        kind: "skip",
        command,
        args: undefined,
        parser: undefined,
        skipReason: "memtier_benchmark output is not ingested yet",
      };
    default:
      return { kind: "skip", command, args: undefined, parser: undefined, skipReason: "" };
  }
}

function startBlock(command: TranscriptCommand | undefined, l: ByteLine, path: string): Block {
  return {
    ...classify(command, path),
    firstLine: l.line,
    lastLine: l.line,
    byteStart: l.byteStart,
    byteEnd: command ? l.byteEnd : l.byteStart,
    nonBlank: 0,
    sample: [],
    startedAt: null,
    written: 0,
  };
}

function feed(b: Block, l: ByteLine): void {
  b.lastLine = l.line;
  b.byteEnd = l.byteEnd;
  if (l.text.trim() === "") return;
  b.nonBlank++;
  if (b.sample.length < 50) b.sample.push(l.text);
  if (b.startedAt === null && l.text.startsWith("Script started on ")) {
    const cmd = /\[COMMAND="((?:[^"\\]|\\.)*)"/.exec(l.text);
    if (cmd && b.kind === "implicit" && b.command === undefined) {
      const c = readPrompt(`$ ${cmd[1].replace(/\\(.)/g, "$1")}`, l.line);
      if (c && (c.parsed.tool === "redis-benchmark" || c.parsed.tool === "valkey-benchmark")) {
        try {
          b.args = parseBenchmarkArgs(c.parsed.args);
          b.parser!.setArgs(b.args);
          b.command = { ...c, prompt: "script" };
        } catch { /* a command kvlab cannot read: keep the output without it */ }
      }
    }
    const m = /^Script started on (\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)([+-]\d\d:?\d\d|Z)?/.exec(
      l.text,
    );
    if (m) {
      const d = new Date(`${m[1]}T${m[2]}${m[3] ?? "Z"}`);
      if (!Number.isNaN(d.getTime())) b.startedAt = d;
    }
  }
  b.parser?.push(l.text, l.line, l.terminated);
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

function finishBlockToRun(
  b: Block,
  ctx: FileContext,
  sawCommand: boolean,
): Pending | { skip: string } | undefined {
  const path = ctx.path;
  if (b.kind === "skip") return b.skipReason ? { skip: b.skipReason } : undefined;
  if (b.kind === "capture") {
    if (b.nonBlank === 0) return undefined;
    return prepareRun(b, ctx, undefined);
  }
  let parsed: RedisBenchmarkRun;
  try {
    parsed = b.parser!.finish();
  } catch (e) {
    b.writer?.abort();
    if (!(e instanceof ParseError)) throw e;
    if (b.kind === "implicit") {
      if (sawCommand) return undefined; // prose before the first command of a transcript
      const kind = detectKind(b.sample.join("\n"));
      const snapshot = prepareSnapshot(b, ctx, kind);
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
    return { skip: `${path}:${b.firstLine}: ${e.message}` };
  }
  return prepareRun(b, ctx, parsed);
}

/** A run written to tmp/ but not yet committed. */
interface Pending {
  writer: RunWriter;
  record: RunRecord;
  info: IngestedRun;
  memory: MemoryRow[];
  args: BenchmarkArgs | undefined;
}

function prepareRun(
  b: Block,
  ctx: FileContext,
  parsed: RedisBenchmarkRun | undefined,
): Pending {
  const { path, options } = ctx;
  const writer = b.writer ?? new RunWriter(options.data, newRunId(ctx.now()));
  const runId = writer.runId;
  const fromName = toolFromFileName(path);
  const cmd = b.command;
  const tool = cmd?.parsed.tool ?? options.tool ?? fromName.tool ?? "unknown";
  const args = b.args;
  const status: IngestedRun["status"] = parsed === undefined
    ? "complete"
    : parsed.testCount === 0
    ? "failed"
    : parsed.complete
    ? "complete"
    : "incomplete";
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
    ingested_at: ctx.now(),
    status,
    output_format: parsed?.format ?? "raw",
    error: parsed && parsed.errors.length > 0 ? parsed.errors.map((e) => e.text).join("\n") : null,
    warning_count: warnings.length,
    source_path: path,
    source_sha256: ctx.sha,
    source_line_start: b.firstLine,
    source_line_end: b.lastLine,
  });
  const rows = testRows(runId, parsed?.tests ?? [], b.written);
  const whole = b.byteStart === 0 && b.byteEnd === ctx.size;
  const rawName = whole ? basename(path) : `${basename(path)}.L${b.firstLine}-L${b.lastLine}`;
  // The raw block, copied in chunks (a long output is never held whole), secrets redacted;
  // its hash (before redaction) tells identical blocks apart from real repeats.
  const state: RedactState = { secretNext: false };
  let redacted = false;
  const hash = createHash("sha256");
  copyRangeSync(ctx.file, b.byteStart, b.byteEnd, writer.rawPath(rawName), (chunk) => {
    hash.update(chunk);
    const r = redactBytes(chunk, state);
    redacted ||= r.redacted;
    return r.bytes;
  });
  run.raw_sha256 = hash.digest("hex");
  const record: RunRecord = {
    run,
    tables: { results: rows.results, latency_distribution: rows.distribution },
    raw: [],
    manifest: {
      raw_redacted: redacted,
      raw_line_offset: b.firstLine - 1,
      prompt: cmd?.prompt ?? null,
      tool_errors: parsed?.errors ?? [],
      progress_updates_skipped: parsed?.progressUpdates ?? 0,
      warnings,
    },
  };
  return {
    writer,
    record,
    args,
    memory: [],
    info: {
      runId,
      status,
      tool,
      tests: parsed?.testCount ?? 0,
      line: b.firstLine,
      warnings: warnings.length,
    },
  };
}

/** Bytes of a standalone capture kvlab reads whole (INFO, docker stats, DBSIZE, latency). */
const SNAPSHOT_MAX_BYTES = 16 << 20;

/**
 * A file that is one capture of another tool (an INFO reply, a docker stats table, a DBSIZE
 * reply, redis-cli --latency output) becomes a snapshot run: INFO gives the server and its real
 * version, `server_info` rows and a memory row; docker stats a memory row per container; DBSIZE
 * a memory row with the key count. Returns undefined for anything else.
 */
function prepareSnapshot(b: Block, ctx: FileContext, kind: DetectedKind): Pending | undefined {
  if (b.byteEnd - b.byteStart > SNAPSHOT_MAX_BYTES) return undefined;
  const text = new TextDecoder().decode(readRangeSync(ctx.file, b.byteStart, b.byteEnd));
  const dbsize = kind === "unknown" ? parseDbsize(text) : null;
  if (
    kind !== "redis-info" && kind !== "docker-stats" && kind !== "redis-cli-latency" &&
    dbsize === null
  ) {
    return undefined;
  }
  const p = prepareRun(b, ctx, undefined);
  const run = p.record.run;
  const runId = p.writer.runId;
  const memRow = (extra: MemoryFields): MemoryRow =>
    memoryRow(runId, ctx.memorySteps++, run.server, { source_line: b.lastLine, ...extra });
  run.tool = kind === "docker-stats" ? "docker" : "redis-cli";
  if (kind === "redis-info") {
    const info = parseInfo(text);
    const id = serverIdentity(info);
    // the INFO says which server this is; its own version wins over redis_version
    if (id.server !== "unknown") run.server = id.server;
    if (id.version) run.server_version = id.version;
    run.output_format = "info";
    p.record.tables.server_info = snapshotRows(runId, [["snapshot", {
      info,
      dbsize: null,
      config: [],
    }]]).info;
    const keys = info.filter((f) => /^db\d+\.keys$/.test(f.key)).reduce(
      (n, f) => n + (f.valueNum ?? 0),
      0,
    );
    if (infoNumber(info, "used_memory", "used_memory_human") !== null) {
      p.memory.push(memRow({
        keys: info.some((f) => f.section.toLowerCase() === "keyspace") ? keys : null,
        ...memoryViews(info),
      }));
    }
  } else if (kind === "docker-stats") {
    run.output_format = "docker-stats";
    for (const r of parseDockerStats(text, b.firstLine)) {
      p.memory.push(
        memRow({
          container_memory_bytes: r.memUsageBytes,
          container_name: r.name,
          source_line: r.line,
        }),
      );
    }
  } else if (kind === "redis-cli-latency") {
    run.output_format = "cli-latency";
  } else {
    run.output_format = "dbsize";
    p.memory.push(memRow({ keys: dbsize }));
  }
  return p;
}

function commitRun(p: Pending, _ctx: FileContext): IngestedRun {
  if (p.memory.length > 0) p.record.tables.memory = p.memory;
  p.writer.commit(p.record);
  return p.info;
}

/**
 * Reads DBSIZE, INFO (memory) and docker stats blocks printed after a fill run into its memory
 * row: one row per fill, filled in as the blocks come.
 */
function addMemoryFacts(p: Pending, b: Block, ctx: FileContext): void {
  const cmd = b.command;
  if (!cmd || b.nonBlank === 0) return;
  const text = new TextDecoder().decode(readRangeSync(ctx.file, b.byteStart, b.byteEnd)).split("\n")
    .slice(cmd.lastLine - cmd.line + 1).join("\n");
  const args = cmd.parsed.args.map((a) => a.toLowerCase());
  let row = p.memory.at(-1);
  if (!row) {
    const a = p.args;
    row = memoryRow(p.writer.runId, ctx.memorySteps++, p.record.run.server, {
      target_keys: a && a.tests?.length === 1 && a.tests[0] === "set" ? a.requests ?? null : null,
      value_size_bytes: a ? a.dataSizeBytes ?? 3 : null,
    });
    p.memory.push(row);
  }
  if (cmd.parsed.tool === "docker") {
    const rows = parseDockerStats(text);
    const named = rows.find((r) => args.includes(r.name.toLowerCase())) ??
      (rows.length === 1 ? rows[0] : undefined);
    if (named) {
      row.container_memory_bytes = named.memUsageBytes;
      row.container_name = named.name;
    }
  } else if (args.includes("dbsize")) {
    row.keys = parseDbsize(text);
  } else if (args.includes("info")) {
    Object.assign(row, memoryViews(parseInfo(text)));
  } else {
    return;
  }
  row.source_line = b.lastLine;
}

/** Redacts secrets in raw bytes; bytes with no secret are kept exactly as they were. */
function redactBytes(
  bytes: Uint8Array,
  state: RedactState,
): { bytes: Uint8Array; redacted: boolean } {
  const text = new TextDecoder().decode(bytes);
  const red = redactRawText(text, state);
  if (red === text) return { bytes, redacted: false };
  return { bytes: new TextEncoder().encode(red), redacted: true };
}

function targetOf(args: BenchmarkArgs): string {
  if (args.socket) return `unix:${args.socket}`;
  return redactUrl(`${args.host ?? "127.0.0.1"}:${args.port ?? 6379}`);
}

/** 12 hex digits naming the labels a file is ingested under. */
function labelsKey(o: IngestOptions): string {
  const labels = {
    server: o.server ?? null,
    serverVersion: o.serverVersion ?? null,
    label: o.label ?? null,
    tool: o.tool ?? null,
    toolVersion: o.toolVersion ?? null,
    tags: o.tags ?? {},
  };
  return createHash("sha256").update(JSON.stringify(labels)).digest("hex").slice(0, 12);
}

/** Claims of the same bytes under other labels. */
function otherClaims(
  dataDir: string,
  sha: string,
  key: string,
): { path: string; runIds: string[] }[] {
  const out: { path: string; runIds: string[] }[] = [];
  const dir = claimDir(dataDir, sha);
  const mine = claimPath(dataDir, key);
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (!e.name.endsWith(".json") || `${dir}/${e.name}` === mine) continue;
      try {
        const c = JSON.parse(Deno.readTextFileSync(`${dir}/${e.name}`));
        out.push({ path: c.source_path, runIds: c.run_ids ?? [] });
      } catch { /* being written */ }
    }
  } catch { /* no claims for these bytes yet */ }
  return out;
}
