/**
 * Live collection with memtier_benchmark: builds the argv once from one typed flags object
 * ({@link MemtierFlags}), snapshots the server (INFO, CONFIG, DBSIZE) before and after, runs the
 * tool through an injectable `ProcessRunner` with `--json-out-file` and
 * `--hdr-file-prefix` writing into the run folder, reports progress from its stderr line, parses
 * every file with the pure parsers, and commits one run ({@link memtierRows}).
 *
 * @module
 */

import { ParseError } from "../../errors.ts";
import * as collector from "../collector.ts";
import type { CollectedRun, Measurement, StoredRun } from "../collector.ts";
import { parseHdrFileName, parseHdrIntervalLog } from "../formats/memtier/hdr.ts";
import type { MemtierJson } from "../formats/memtier/json/parse.ts";
import { readMemtierJsonFile, writeMemtierSeries } from "../formats/memtier/json/file.ts";
import { type MemtierProgress, parseMemtierProgress } from "../formats/memtier/progress.ts";
import { parseMemtierReport } from "../formats/memtier/report.ts";
import { type MemtierHdrLog, type MemtierRows, memtierRows } from "../formats/memtier/rows.ts";
import type { ProcessResult } from "../process.ts";
import { redactArgv, redactRawText, redactSecret } from "../../text/redact.ts";
import type { RunWriter } from "../../store/writer.ts";
import type { ServerTarget } from "../target.ts";

/** memtier_benchmark's flags other than the connection (which comes from the target). */
export interface MemtierFlags {
  /** `-t`. memtier's default: 4. */
  threads?: number;
  /** `-c`: connections per thread. memtier's default: 50. */
  clients?: number;
  /** `--ratio` SET:GET (`1:10`, `1:0` for writes only). */
  ratio?: string;
  /** `-d`. memtier's default: 32. */
  dataSizeBytes?: number;
  /** `--key-pattern` SET:GET: `R:R` (random), `P:P` (parallel ranges), `S:S`, `G:G`. */
  keyPattern?: string;
  /** `--key-minimum`. memtier's default: 0. */
  keyMinimum?: number;
  /** `--key-maximum`. memtier's default: 10000000. */
  keyMaximum?: number;
  /** `--key-prefix`. */
  keyPrefix?: string;
  /** `--pipeline`. */
  pipeline?: number;
  /** `--test-time`, seconds (instead of `requests`). */
  testTimeS?: number;
  /** `-n` per client, or `allkeys` (every key of the range once, with `P:P`). */
  requests?: number | "allkeys";
  /** `--rate-limiting`: requests per second per connection. */
  rateLimit?: number;
  /** `-x`. */
  runCount?: number;
  /** `--print-all-runs` (every run's block, with `runCount` > 1). */
  printAllRuns?: boolean;
  /** `--print-percentiles`. memtier's default: 50, 99, 99.9. */
  printPercentiles?: number[];
  /** `--hide-histogram` (the JSON keeps the distribution). */
  hideHistogram?: boolean;
}

/** One memtier_benchmark run to make: the program, the server and its flags. */
export interface MemtierCall extends MemtierFlags {
  /**
   * `memtier_benchmark` or a path to one.
   * @default {"memtier_benchmark"}
   */
  tool?: string;
  target: ServerTarget;
}

/** Where memtier writes its files (`--json-out-file`, `--hdr-file-prefix`). */
export interface MemtierFiles {
  json?: string;
  hdrPrefix?: string;
}

/** The raw file names a collected run keeps memtier's files under. */
const JSON_FILE = "memtier.json";
const HDR_PREFIX = "hdr";

/**
 * The argv of a memtier_benchmark run, from its typed flags (never re-parsed): the connection
 * from the target (`-s`/`-p` or `-S`, `-a [user:]password`, `--select-db`, `--tls`), then the
 * flags given, then the output files.
 *
 * @param call The run.
 * @param files Output files (paths as memtier should see them).
 * @returns The program and its arguments.
 *
 * @example
 * ```ts
 * import { memtierArgv, parseServerUrl, redactArgv } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const argv = memtierArgv({
 *   target: parseServerUrl("redis://:pw@127.0.0.1:6380/2"), threads: 2, clients: 10,
 *   ratio: "1:10", dataSizeBytes: 256, keyMaximum: 100000, testTimeS: 10, rateLimit: 100,
 * }, { json: "memtier.json" });
 * assert.deepEqual(redactArgv(argv), [
 *   "memtier_benchmark", "-s", "127.0.0.1", "-p", "6380", "-a", "***", "--select-db=2",
 *   "--protocol=redis", "-t", "2", "-c", "10", "--ratio=1:10", "-d", "256",
 *   "--key-maximum=100000", "--test-time=10", "--rate-limiting=100",
 *   "--json-out-file=memtier.json",
 * ]);
 * ```
 */
export function memtierArgv(call: MemtierCall, files: MemtierFiles = {}): string[] {
  const t = call.target;
  const argv = [call.tool ?? "memtier_benchmark"];
  if (t.socket !== undefined) argv.push("-S", t.socket);
  else argv.push("-s", t.host, "-p", String(t.port));
  if (t.password !== undefined) argv.push("-a", t.user ? `${t.user}:${t.password}` : t.password);
  if (t.db) argv.push(`--select-db=${t.db}`);
  if (t.tls) argv.push("--tls");
  argv.push("--protocol=redis");
  const f = call;
  const opt = (flag: string, v: number | string | undefined, eq = true) => {
    if (v !== undefined) argv.push(...(eq ? [`${flag}=${v}`] : [flag, String(v)]));
  };
  opt("-t", f.threads, false);
  opt("-c", f.clients, false);
  opt("--ratio", f.ratio);
  opt("-d", f.dataSizeBytes, false);
  opt("--key-pattern", f.keyPattern);
  // memtier refuses --key-minimum=0 although 0 is its own default: leave it to memtier
  opt("--key-minimum", f.keyMinimum || undefined);
  opt("--key-maximum", f.keyMaximum);
  opt("--key-prefix", f.keyPrefix);
  opt("--pipeline", f.pipeline);
  opt("--test-time", f.testTimeS);
  opt("-n", f.requests, false);
  opt("--rate-limiting", f.rateLimit);
  opt("-x", f.runCount, false);
  if (f.printAllRuns) argv.push("--print-all-runs");
  opt("--print-percentiles", f.printPercentiles?.join(","));
  if (f.hideHistogram) argv.push("--hide-histogram");
  opt("--json-out-file", files.json);
  opt("--hdr-file-prefix", files.hdrPrefix);
  return argv;
}

/** Options of {@link runMemtier}: those of a redis-benchmark run, with memtier's progress. */
export interface MemtierRunOptions extends collector.ToolRunOptions {
  /** The tool's version, when already known (else it is stored as unknown). */
  toolVersion?: string | null;
  /** Each progress line memtier draws on stderr (about once a second). */
  onProgress?: (p: MemtierProgress) => void;
}

/** A stored memtier run, with its total rate (what a fixed-rate step judges). */
export interface MemtierRun extends CollectedRun {
  /** `ops_per_sec` of the run's last complete `TOTALS` row; null when there is none. */
  achievedOpsPerSec: number | null;
}

/** What running memtier gave, before it is stored. */
interface Measured extends Measurement {
  result?: ProcessResult;
  rows?: MemtierRows;
  reason: string | null;
}

/**
 * Runs memtier_benchmark once and stores the run (complete, incomplete or failed) with its raw
 * stdout, stderr, JSON and HDR files. Does not throw for a server that is down, a tool that
 * fails or an interrupt: those become a stored run with a reason. Throws only for a tool that is
 * not installed ({@link ToolNotFoundError}) or a dataset that cannot be written.
 *
 * @param call The run: program, server and flags.
 * @param options Dataset, runner, labels, progress (see {@link MemtierRunOptions}).
 * @returns The stored run's id, status and reason, and its total rate.
 */
export async function runMemtier(
  call: MemtierCall,
  options: MemtierRunOptions,
): Promise<MemtierRun> {
  const shown = memtierArgv(call, { json: JSON_FILE, hdrPrefix: HDR_PREFIX });
  const { measured, ...run } = await collector.collectRun(options, {
    target: call.target,
    // as started: `taskset -c LIST …` when the plan pins the client
    command: collector.argvToCommand(redactArgv(options.runner.shown?.(shown) ?? shown)),
    measure: (writer) => measure(call, options, writer),
    store: (m) => stored(options, m, shown),
  });
  return {
    ...run,
    achievedOpsPerSec: measured.rows?.results.findLast((r) => r.test === "TOTALS" && r.complete)
      ?.ops_per_sec ?? null,
  };
}

/** How a measured memtier run is stored. */
function stored(o: MemtierRunOptions, m: Measured, shown: string[]): StoredRun {
  const rows = m.rows;
  const status: CollectedRun["status"] = !rows || rows.results.length === 0
    ? "failed"
    : rows.complete && m.result?.code === 0 && !m.result.interrupted && !m.result.timedOut
    ? "complete"
    : "incomplete";
  return {
    status,
    reason: status === "complete" ? null : m.reason,
    tests: rows?.results.filter((r) => r.complete).length ?? 0,
    interrupted: (m.result?.interrupted || o.signal?.aborted) ?? false,
    columns: {
      tool: "memtier_benchmark",
      tool_version: o.toolVersion ?? null,
      output_format: rows?.source ?? "none",
      warning_count: rows?.warnings.length ?? 0,
      tool_exit_code: m.result?.code ?? null,
    },
    tables: {
      results: rows?.results ?? [],
      latency_distribution: rows?.latency_distribution ?? [],
      time_series: rows?.time_series ?? [],
      hdr_histograms: rows?.hdr_histograms ?? [],
    },
    manifest: {
      argv_redacted: redactArgv(shown),
      process: m.result ? collector.processFacts(m.result) : null,
      warnings: rows?.warnings ?? [],
    },
  };
}

/**
 * Snapshots the server, runs memtier with its files written into the run folder, snapshots
 * again, and reads every file memtier wrote.
 */
async function measure(call: MemtierCall, o: MemtierRunOptions, w: RunWriter): Promise<Measured> {
  let rawDir = "";
  const ran = await collector.runToolBetweenSnapshots(call.target, o, () => {
    rawDir = w.rawPath(JSON_FILE).replace(/\/[^/]*$/, "");
    return {
      argv: memtierArgv(call, { json: `${rawDir}/${JSON_FILE}`, hdrPrefix: `${rawDir}/hdr` }),
      stdoutPath: w.rawPath("stdout.txt"),
      stderrPath: w.rawPath("stderr.txt"),
      onStderr: o.onProgress ? progressReader(o.onProgress) : undefined,
    };
  });
  if (!ran.result) return ran;
  const { before, after, result } = ran;

  const hdrFiles = [...Deno.readDirSync(rawDir)].map((e) => e.name)
    .filter((n) => parseHdrFileName(n)?.prefix === HDR_PREFIX).sort();
  for (const name of hdrFiles) w.rawPath(name); // kept with the run
  const secret = call.target.password ?? "";
  const text = (name: string) => readScrubbed(`${rawDir}/${name}`, secret);
  const stderr = parseMemtierProgress(text("stderr.txt") ?? "");
  // the JSON in chunks (a long run's per-second series is never held): redacted into a copy
  // that replaces it, its series written in parts once the rows are known
  const jsonPath = `${rawDir}/${JSON_FILE}`;
  let json: MemtierJson | undefined;
  if (exists(jsonPath)) {
    const copy = `${jsonPath}.redacted`;
    json = tryParse(() =>
      readMemtierJsonFile(jsonPath, { file: JSON_FILE, rawPath: copy, secret }).json ?? undefined
    );
    Deno.renameSync(copy, jsonPath);
  }
  const report = tryParse(() => parseMemtierReport(text("stdout.txt") ?? "", { file: "stdout" }));
  const hdr: MemtierHdrLog[] = hdrFiles.filter((n) => n.endsWith(".hgrm")).flatMap((file) => {
    const log = tryParse(() => parseHdrIntervalLog(text(file) ?? "", { file }));
    return log ? [{ file, name: parseHdrFileName(file)!, log }] : [];
  });
  const rows = memtierRows({ json, jsonFile: JSON_FILE, report, stderr, hdr }, w.runId);
  if (json) await writeMemtierSeries(jsonPath, { file: JSON_FILE, rows, writer: w });
  return {
    before,
    after,
    result,
    rows,
    reason: describeEnd(result, rows, { other: stderr.other, signal: o.signal }),
  };
}

/** A stderr chunk reader that calls back with each progress line memtier draws. */
function progressReader(cb: (p: MemtierProgress) => void): (chunk: Uint8Array) => void {
  const decoder = new TextDecoder();
  let pending = "";
  return (chunk) => {
    pending += decoder.decode(chunk, { stream: true });
    const pieces = pending.split(/[\r\n]/);
    pending = pieces.pop() ?? "";
    for (const piece of pieces) {
      const p = parseMemtierProgress(piece + "\n").progress[0];
      if (p) cb(p);
    }
  };
}

/** A raw file's text with secrets replaced (rewritten in place when one was there); null if absent. */
function readScrubbed(path: string, secret: string): string | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  let clean = redactRawText(text);
  // only secrets long enough to be told apart from ordinary output
  clean = redactSecret(clean, secret);
  if (clean !== text) Deno.writeTextFileSync(path, clean);
  return clean;
}

/** Whether a file is there. */
function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** The parse, or undefined for text that is not the tool's (a cut or empty file). */
function tryParse<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch (e) {
    if (e instanceof ParseError) return undefined;
    throw e;
  }
}

function describeEnd(
  r: ProcessResult,
  rows: MemtierRows,
  { other, signal }: { other: readonly { text: string }[]; signal?: AbortSignal },
): string | null {
  const errText = other.map((l) => l.text.trim()).filter(Boolean).slice(0, 3).join("; ");
  if (r.interrupted) return `interrupted (${collector.stopCause(signal)}); partial output kept`;
  if (r.timedOut) return `timed out; partial output kept${errText ? `: ${errText}` : ""}`;
  if (r.code !== 0) return `exited with ${r.code ?? r.signal}${errText ? `: ${errText}` : ""}`;
  if (rows.reason) return rows.reason + (errText ? `: ${errText}` : "");
  return null;
}
