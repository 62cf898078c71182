/**
 * Parser for redis-benchmark and valkey-benchmark output, every variant from Redis 2.x to
 * Valkey 8.x: the ≤6.0 report (`x% <= N milliseconds`), the 6.2+ report (percentile and
 * cumulative distributions, summary table, Valkey's RPS summary), `-q` with and without p50,
 * `--csv` with and without header, live progress (`\r`-separated, skipped), `script(1)`
 * captures, CRLF copies and cut files.
 *
 * Parsing is pure: text in, numbers out. {@link RedisBenchmarkParser} takes lines one at a time
 * so that large files can be streamed; {@link parseRedisBenchmark} parses a whole text.
 *
 * @module
 */

import { ParseError } from "../errors.ts";
import { isScriptBanner, segments, splitLines } from "./_lines.ts";
import { splitCsvLine } from "./_csv.ts";
import { BENCHMARK_DEFAULTS, type BenchmarkArgs } from "./command.ts";

/** Which output variant a run was printed in. */
export type RedisBenchmarkFormat =
  /** 6.2+ default report with distributions and a summary table. */
  | "full"
  /** ≤6.0 default report: `x% <= N milliseconds` and `N requests per second`. */
  | "full-legacy"
  /** `-q` with `, p50=… msec` (6.2+). */
  | "quiet"
  /** `-q` without p50 (≤6.0). */
  | "quiet-legacy"
  /** `--csv` with the header row (6.2+). */
  | "csv"
  /** `--csv` without header, two fields (≤6.0). */
  | "csv-legacy"
  /** Variants mixed in one output. */
  | "mixed"
  /** No result at all (only errors or progress). */
  | "none";

/** Which block of a report a latency distribution row comes from. */
export type DistributionKind = "percentile" | "cumulative" | "legacy";

/** One row of a latency distribution block. */
export interface DistributionRow {
  /** Block the row was printed in. */
  distribution: DistributionKind;
  /** Percent of requests at or below `latencyMs` (0–100). */
  percentile: number;
  /** Latency bound, ms. */
  latencyMs: number;
  /** Cumulative count of requests at or below `latencyMs`; `null` in ≤6.0 output. */
  count: number | null;
  /** Line of the raw text. */
  sourceLine: number;
}

/** One test of one run, as printed (plus what the command line says, once merged). */
export interface RedisBenchmarkTest {
  /** Normalized test name: `SET`, `LRANGE_100`, `LPUSH_FOR_LRANGE`, `MSET`, … */
  test: string;
  /** The title as printed: `LRANGE_100 (first 100 elements)`. */
  testTitle: string;
  clients: number | null;
  threads: number | null;
  pipeline: number | null;
  dataSizeBytes: number | null;
  requests: number | null;
  keyspace: number | null;
  durationS: number | null;
  opsPerSec: number | null;
  avgLatencyMs: number | null;
  minLatencyMs: number | null;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
  p99LatencyMs: number | null;
  maxLatencyMs: number | null;
  keepAlive: boolean | null;
  /** `host configuration "save"` as printed ("" when save is disabled). */
  hostConfigSave: string | null;
  /** `host configuration "appendonly"` as printed. */
  hostConfigAppendonly: string | null;
  /** Number of cluster nodes in `--cluster` mode. */
  clusterNodes: number | null;
  /** Valkey `--rps`: the requested rate. */
  requestedOpsPerSec: number | null;
  /** Valkey `--rps`: RPS distribution (reqs/sec) avg/min/p50/p95/p99/max. */
  rpsAvg: number | null;
  rpsMin: number | null;
  rpsP50: number | null;
  rpsP95: number | null;
  rpsP99: number | null;
  rpsMax: number | null;
  /** Last live-progress throughput of a test that did not finish: never a result. */
  lastProgressOpsPerSec: number | null;
  /** Whether the tool finished printing this test's result. */
  complete: boolean;
  /** Line of the raw text the test's result (or report header) was read from. */
  sourceLine: number;
  /** Latency distribution rows of this test. */
  distribution: DistributionRow[];
}

/** A note about a line that was not understood or looked wrong. */
export interface ParseWarning {
  line: number;
  message: string;
  text: string;
}

/** What a redis-benchmark output holds. */
export interface RedisBenchmarkRun {
  format: RedisBenchmarkFormat;
  /** The tests (those not already taken with {@link RedisBenchmarkParser.takeCompleted}). */
  tests: RedisBenchmarkTest[];
  /** Number of tests in the whole output, taken ones included. */
  testCount: number;
  /** True when every test finished and nothing was cut. */
  complete: boolean;
  /** Error messages printed by the tool (connection refused, server errors …). */
  errors: { line: number; text: string }[];
  warnings: ParseWarning[];
  /** Number of live-progress updates skipped. */
  progressUpdates: number;
}

/** Options of {@link parseRedisBenchmark}. */
export interface ParseRedisBenchmarkOptions {
  /**
   * Name of the file the text came from, used in errors.
   * @default {"<text>"}
   */
  file?: string;
  /**
   * Line number of the text's first line in that file (for blocks of a transcript).
   * @default {1}
   */
  firstLine?: number;
  /**
   * The command's flags, when known: fill what the output does not print (pipeline, keyspace,
   * and everything in `-q` / `--csv` modes). Printed values win.
   */
  args?: BenchmarkArgs;
}

/**
 * Parses redis-benchmark / valkey-benchmark output.
 *
 * @param text The raw output.
 * @param options See {@link ParseRedisBenchmarkOptions}.
 * @returns The tests, each marked complete or not, with their latency distributions.
 * @throws {ParseError} When the text holds no redis-benchmark output at all (empty, binary,
 * another tool's output).
 *
 * @example
 * ```ts
 * import { parseRedisBenchmark } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const run = parseRedisBenchmark(
 *   "SET: 109769.48 requests per second, p50=0.231 msec\n" +
 *     "LRANGE_100 (first 100 elements): 64350.06 requests per second, p50=0.391 msec\n",
 * );
 * assert.equal(run.format, "quiet");
 * assert.equal(run.tests[1].test, "LRANGE_100");
 * assert.equal(run.tests[1].opsPerSec, 64350.06);
 * assert.equal(run.tests[1].p50LatencyMs, 0.391);
 * assert.equal(run.complete, true);
 * ```
 */
export function parseRedisBenchmark(
  text: string,
  options: ParseRedisBenchmarkOptions = {},
): RedisBenchmarkRun {
  const parser = new RedisBenchmarkParser(options);
  for (const l of splitLines(text, options.firstLine ?? 1)) {
    parser.push(l.text, l.line, l.terminated);
  }
  return parser.finish();
}

/**
 * The normalized name of a printed test title.
 *
 * @example
 * ```ts
 * import { normalizeTestName } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeTestName("LRANGE_100 (first 100 elements)"), "LRANGE_100");
 * assert.equal(normalizeTestName("LPUSH (needed to benchmark LRANGE)"), "LPUSH_FOR_LRANGE");
 * assert.equal(normalizeTestName("MSET (10 keys)"), "MSET");
 * assert.equal(normalizeTestName("PING_BULK"), "PING_MBULK");
 * assert.equal(normalizeTestName("set foo bar"), "SET_FOO_BAR");
 * ```
 */
export function normalizeTestName(title: string): string {
  const t = title.trim();
  if (/^LPUSH \(needed to benchmark LRANGE\)$/i.test(t)) return "LPUSH_FOR_LRANGE";
  const base = t.replace(/\s*\([^)]*\)\s*$/, "").trim();
  const name = base.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  if (name === "PING_BULK") return "PING_MBULK"; // renamed in Redis 6.0
  return name === "" ? "UNKNOWN" : name;
}

// ---------------------------------------------------------------------------------------------

const RE_HEADER = /^====== (.*) ======\s*$/;
const RE_REQUESTS = /^\s*(\d+) requests completed in ([\d.]+) seconds\s*$/;
const RE_CLIENTS = /^\s*(\d+) parallel clients\s*$/;
const RE_PAYLOAD = /^\s*(\d+) bytes payload\s*$/;
const RE_KEEPALIVE = /^\s*keep alive: (\d+)\s*$/;
const RE_HOSTCFG = /^\s*host configuration "(save|appendonly)": ?(.*?)\s*$/;
const RE_CLUSTER = /^\s*cluster mode: yes \((\d+) \w+\)\s*$/;
const RE_NODECFG = /^\s*(node \[\d+\] configuration:|save: .*|appendonly: .*)\s*$/;
const RE_MULTITHREAD = /^\s*multi-thread: (yes|no)\s*$/;
const RE_THREADS = /^\s*threads: (\d+)\s*$/;
const RE_DIST = /^\s*([\d.]+)% <= ([\d.]+) milliseconds \(cumulative count (\d+)\)\s*$/;
const RE_DIST_LEGACY = /^\s*([\d.]+)% <= ([\d.]+) milliseconds\s*$/;
const RE_THROUGHPUT = /^\s*throughput summary: ([\d.]+|-?nan|inf) requests per second\s*$/;
const RE_RPS_LEGACY = /^\s*([\d.]+|-?nan|inf) requests per second\s*$/;
const RE_TARGET_RPS = /^\s*target RPS: ([\d.]+)\s*$/;
const RE_COLUMNS = /^\s*(avg|min|p\d+(?:\.\d+)?|max)(\s+(avg|min|p\d+(?:\.\d+)?|max))+\s*$/;
const RE_VALUES = /^\s*(-?[\d.]+|-?nan|inf)(\s+(-?[\d.]+|-?nan|inf))+\s*$/;
const RE_QUIET =
  /^(.+?): ([\d.]+|-?nan|inf) requests per second(?:, p50=([\d.]+|-?nan|inf) msec)?\s*$/;
const RE_PROGRESS = /^(.+?): rps=(\S+) \(overall: (\S+)\) avg_msec=(\S+) \(overall: (\S+)\)\s*$/;
const RE_PROGRESS_LEGACY = /^(.+?): ([\d.]+|-?nan|inf)\s*$/;
const RE_IDLE = /^clients: \d+\s*$/;
// Error messages redis-benchmark / valkey-benchmark print (stdout or stderr captured together).
const RE_TOOL_ERROR =
  /^(Node \S+ replied with error|Could not connect to (Redis|server) at|Could not negotiate a TLS connection|Error from server:|Error writing to the server|Error:|ERROR:|ERR |NOAUTH|WRONGPASS|Invalid option|Unrecognized option|Invalid value|Writing to socket|Reading from socket|Failed to fetch cluster configuration|Failed to update cluster slots|Cluster node .* unreachable|FATAL:)/;
const RE_WARNING = /^(WARNING|WARN)\b:?\s*(.*)$/;

type Section = "header" | "rps" | "percentile" | "cumulative" | "legacy" | "summary" | "done";

function num(s: string | undefined): number | null {
  if (s === undefined) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

function emptyTest(title: string, sourceLine: number): RedisBenchmarkTest {
  return {
    test: normalizeTestName(title),
    testTitle: title,
    clients: null,
    threads: null,
    pipeline: null,
    dataSizeBytes: null,
    requests: null,
    keyspace: null,
    durationS: null,
    opsPerSec: null,
    avgLatencyMs: null,
    minLatencyMs: null,
    p50LatencyMs: null,
    p95LatencyMs: null,
    p99LatencyMs: null,
    maxLatencyMs: null,
    keepAlive: null,
    hostConfigSave: null,
    hostConfigAppendonly: null,
    clusterNodes: null,
    requestedOpsPerSec: null,
    rpsAvg: null,
    rpsMin: null,
    rpsP50: null,
    rpsP95: null,
    rpsP99: null,
    rpsMax: null,
    lastProgressOpsPerSec: null,
    complete: false,
    sourceLine,
    distribution: [],
  };
}

/**
 * Incremental redis-benchmark parser: {@link push} physical lines in order, then
 * {@link finish}. Pure: no I/O, no clock.
 *
 * @example
 * ```ts
 * import { RedisBenchmarkParser } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const p = new RedisBenchmarkParser();
 * p.push('"SET","41562.76"', 1, true);
 * p.push('"GET","38491.14"', 2, true);
 * const run = p.finish();
 * assert.equal(run.format, "csv-legacy");
 * assert.deepEqual(run.tests.map((t) => t.opsPerSec), [41562.76, 38491.14]);
 * ```
 */
export class RedisBenchmarkParser {
  readonly #file: string;
  #args: BenchmarkArgs | undefined;
  readonly #tests: RedisBenchmarkTest[] = [];
  readonly #warnings: ParseWarning[] = [];
  readonly #errors: { line: number; text: string }[] = [];
  readonly #formats = new Set<RedisBenchmarkFormat>();
  #current: RedisBenchmarkTest | undefined;
  #section: Section = "done";
  #columns: string[] | undefined;
  #csvHeader: string[] | undefined;
  #progress: { title: string; opsPerSec: number | null; line: number } | undefined;
  #progressUpdates = 0;
  #lastLine = 0;
  #sawAny = false;
  #cut = false;
  #anyIncomplete = false;
  #testCount = 0;
  #pendingRows = 0;
  readonly #names = new Set<string>();
  #firstText: { line: number; text: string } | undefined;

  /** @param options Only `file` and `args` are used here. */
  constructor(options: ParseRedisBenchmarkOptions = {}) {
    this.#file = options.file ?? "<text>";
    this.#args = options.args;
  }

  #push(t: RedisBenchmarkTest): void {
    this.#tests.push(t);
    this.#names.add(t.test);
    this.#testCount++;
    this.#pendingRows += 1 + t.distribution.length;
    if (!t.complete) this.#anyIncomplete = true;
  }

  /** Rows (tests and distribution rows) finished and not yet taken with {@link takeCompleted}. */
  get pendingRows(): number {
    return this.#pendingRows;
  }

  /**
   * Takes the tests finished so far, for callers that stream a very long output (`-l` loops)
   * to storage. {@link finish} then returns only the tests not taken.
   */
  takeCompleted(): RedisBenchmarkTest[] {
    const out = this.#tests.splice(0);
    this.#pendingRows = 0;
    if (this.#args) { for (const t of out) applyBenchmarkArgs(t, this.#args, this.#warnings); }
    return out;
  }

  /** Sets the command's flags (when they are learnt after parsing began, e.g. from a banner). */
  setArgs(args: BenchmarkArgs): void {
    this.#args = args;
  }

  /**
   * Feeds one physical line.
   *
   * @param text The line without its line ending (it may hold `\r` progress overwrites).
   * @param line Its 1-based line number.
   * @param terminated Whether it ended with a newline (false for the last line of a cut file).
   */
  push(text: string, line: number, terminated = true): void {
    this.#lastLine = line;
    if (this.#firstText === undefined && text.trim() !== "") this.#firstText = { line, text };
    const segs = segments(text);
    for (let i = 0; i < segs.length; i++) {
      // Only the last drawn piece of the last line can be cut off mid-print.
      this.#segment(segs[i], line, terminated || i < segs.length - 1);
    }
  }

  #segment(s: string, line: number, terminated: boolean): void {
    const c0 = s.charCodeAt(0);
    // Lines starting with '=' — a report header.
    if (c0 === 61 /* = */) {
      const m = RE_HEADER.exec(s);
      if (m) return this.#startReport(m[1], line);
    }
    // Distribution rows start with a digit; so do summary values and legacy rps.
    if (this.#current && this.#section !== "done") {
      if (this.#reportLine(s, line, terminated)) return;
    }
    if (c0 === 34 /* " */) return this.#csvLine(s, line, terminated);
    const trimmed = s.trim();
    if (trimmed === "...") return this.#warn(line, "elided output", s);
    if (isScriptBanner(trimmed)) return;
    let m = RE_PROGRESS.exec(trimmed);
    if (m) return this.#progressLine(m[1], num(m[3]), line);
    m = RE_QUIET.exec(trimmed);
    if (m) return this.#quietLine(m[1], m[2], m[3], line, terminated, trimmed);
    if (RE_IDLE.test(trimmed)) return;
    m = RE_WARNING.exec(trimmed);
    if (m) {
      this.#sawAny = true;
      return this.#warn(line, "tool warning", trimmed);
    }
    if (RE_TOOL_ERROR.test(trimmed)) {
      this.#sawAny = true;
      this.#errors.push({ line, text: trimmed });
      return;
    }
    m = RE_PROGRESS_LEGACY.exec(trimmed);
    if (m && this.#looksLikeTitle(m[1])) return this.#progressLine(m[1], num(m[2]), line);
    // The last line, cut while the tool printed a result: the test did not finish.
    m = /^(.+?): [\d.]+( |$)/.exec(trimmed);
    if (!terminated && m && this.#looksLikeTitle(m[1])) {
      this.#cutLine(line, s);
      this.#progress = { title: m[1], opsPerSec: null, line };
      return;
    }
    // A report header cut before its last `======`.
    if (!terminated && trimmed.startsWith("======")) return this.#cutLine(line, s);
    this.#warn(line, "unrecognized line", s);
  }

  #looksLikeTitle(title: string): boolean {
    // Test titles are upper-case command names, maybe with a "(…)" suffix, or custom commands.
    return /^[A-Za-z_][\w-]*( [^:]*)?$/.test(title) && title.length < 200;
  }

  #warn(line: number, message: string, text: string): void {
    if (this.#warnings.length < 1000) {
      this.#warnings.push({ line, message, text: text.slice(0, 200) });
    }
  }

  #cutLine(line: number, text: string): void {
    this.#sawAny = true;
    this.#warn(line, "line cut off at end of output", text);
    this.#cut = true;
  }

  #closeCurrent(): void {
    const cur = this.#current;
    if (cur) {
      this.#push(cur);
      this.#current = undefined;
    }
    this.#section = "done";
    this.#columns = undefined;
  }

  #startReport(title: string, line: number): void {
    this.#closeCurrent();
    this.#sawAny = true;
    this.#progress = undefined;
    this.#current = emptyTest(title, line);
    this.#section = "header";
  }

  /** A line inside a report (after `====== T ======`); returns false when not one. */
  #reportLine(s: string, line: number, terminated: boolean): boolean {
    const cur = this.#current!;
    let m: RegExpExecArray | null;
    const c0 = s.charCodeAt(0);
    // Fast path: distribution rows are the bulk of a report.
    if ((c0 >= 48 && c0 <= 57) || c0 === 32) {
      m = RE_DIST.exec(s);
      if (m) {
        if (!terminated) {
          this.#cutLine(line, s);
          return true;
        }
        const kind: DistributionKind = this.#section === "cumulative" ? "cumulative" : "percentile";
        if (this.#section !== "percentile" && this.#section !== "cumulative") {
          this.#warn(line, "distribution row outside a distribution block", s);
        }
        cur.distribution.push({
          distribution: kind,
          percentile: Number(m[1]),
          latencyMs: Number(m[2]),
          count: Number(m[3]),
          sourceLine: line,
        });
        return true;
      }
      m = RE_DIST_LEGACY.exec(s);
      if (m && terminated) {
        this.#section = "legacy";
        this.#formats.add("full-legacy");
        cur.distribution.push({
          distribution: "legacy",
          percentile: Number(m[1]),
          latencyMs: Number(m[2]),
          count: null,
          sourceLine: line,
        });
        return true;
      }
    }
    const t = s.trim();
    if (t === "") return true;
    switch (this.#section) {
      case "header": {
        if ((m = RE_REQUESTS.exec(s))) {
          cur.requests = Number(m[1]);
          cur.durationS = Number(m[2]);
        } else if ((m = RE_CLIENTS.exec(s))) cur.clients = Number(m[1]);
        else if ((m = RE_PAYLOAD.exec(s))) cur.dataSizeBytes = Number(m[1]);
        else if ((m = RE_KEEPALIVE.exec(s))) cur.keepAlive = m[1] !== "0";
        else if ((m = RE_HOSTCFG.exec(s))) {
          if (m[1] === "save") cur.hostConfigSave = m[2];
          else cur.hostConfigAppendonly = m[2];
        } else if ((m = RE_CLUSTER.exec(s))) cur.clusterNodes = Number(m[1]);
        else if (RE_NODECFG.test(s)) { /* per-node config in cluster mode: not a result */ }
        else if ((m = RE_MULTITHREAD.exec(s))) {
          if (m[1] === "no") cur.threads = 1;
        } else if ((m = RE_THREADS.exec(s))) cur.threads = Number(m[1]);
        else return this.#sectionStart(t, line);
        return true;
      }
      case "rps": {
        if ((m = RE_TARGET_RPS.exec(s))) cur.requestedOpsPerSec = Number(m[1]);
        else if (t === "RPS distribution (reqs/sec):") { /* table follows */ }
        else if (RE_COLUMNS.test(s)) this.#columns = t.split(/\s+/);
        else if (RE_VALUES.test(s) && this.#columns) {
          const v = t.split(/\s+/);
          this.#columns.forEach((c, i) => {
            const x = num(v[i]);
            if (c === "avg") cur.rpsAvg = x;
            else if (c === "min") cur.rpsMin = x;
            else if (c === "p50") cur.rpsP50 = x;
            else if (c === "p95") cur.rpsP95 = x;
            else if (c === "p99") cur.rpsP99 = x;
            else if (c === "max") cur.rpsMax = x;
          });
          this.#columns = undefined;
        } else return this.#sectionStart(t, line);
        return true;
      }
      case "summary": {
        if ((m = RE_THROUGHPUT.exec(s))) {
          if (!terminated) {
            this.#cutLine(line, s);
            return true;
          }
          cur.opsPerSec = num(m[1]);
        } else if (t === "latency summary (msec):") { /* table follows */ }
        else if (RE_COLUMNS.test(s)) this.#columns = t.split(/\s+/);
        else if (RE_VALUES.test(s) && this.#columns) {
          const v = t.split(/\s+/);
          if (v.length !== this.#columns.length || !terminated) {
            this.#cutLine(line, s);
            return true;
          }
          this.#columns.forEach((c, i) => {
            const x = num(v[i]);
            if (c === "avg") cur.avgLatencyMs = x;
            else if (c === "min") cur.minLatencyMs = x;
            else if (c === "p50") cur.p50LatencyMs = x;
            else if (c === "p95") cur.p95LatencyMs = x;
            else if (c === "p99") cur.p99LatencyMs = x;
            else if (c === "max") cur.maxLatencyMs = x;
          });
          cur.complete = true;
          this.#formats.add("full");
          this.#closeCurrent();
        } else return this.#sectionStart(t, line);
        return true;
      }
      case "legacy":
      case "percentile":
      case "cumulative": {
        m = RE_RPS_LEGACY.exec(s);
        if (m && this.#section === "legacy") {
          if (!terminated) {
            this.#cutLine(line, s);
            return true;
          }
          cur.opsPerSec = num(m[1]);
          cur.complete = true;
          this.#closeCurrent();
          return true;
        }
        return this.#sectionStart(t, line);
      }
      default:
        return false;
    }
  }

  /** Section titles of a 6.2+ report. */
  #sectionStart(t: string, line: number): boolean {
    const cur = this.#current!;
    switch (t) {
      case "RPS Summary:":
        this.#section = "rps";
        return true;
      case "Latency by percentile distribution:":
        this.#section = "percentile";
        return true;
      case "Cumulative distribution of latencies:":
        this.#section = "cumulative";
        return true;
      case "Summary:":
        this.#section = "summary";
        return true;
    }
    // ≤6.0: the rps line can follow the header directly when no latency line was printed.
    const m = RE_RPS_LEGACY.exec(t);
    if (m && this.#section === "header") {
      cur.opsPerSec = num(m[1]);
      cur.complete = true;
      this.#formats.add("full-legacy");
      this.#closeCurrent();
      return true;
    }
    if (t === "..." || t === cur.testTitle || t === cur.test) {
      this.#warn(line, "elided or annotated output", t);
      return true;
    }
    return false;
  }

  #progressLine(title: string, overall: number | null, line: number): void {
    this.#sawAny = true;
    this.#progressUpdates++;
    if (this.#current) this.#closeCurrentAsCut();
    this.#progress = { title, opsPerSec: overall, line };
  }

  /** A report that stopped before its summary, followed by something else. */
  #closeCurrentAsCut(): void {
    const cur = this.#current;
    if (cur && !cur.complete) this.#cut = true;
    this.#closeCurrent();
  }

  #quietLine(
    title: string,
    rps: string,
    p50: string | undefined,
    line: number,
    terminated: boolean,
    text: string,
  ): void {
    this.#sawAny = true;
    if (this.#current) this.#closeCurrentAsCut();
    if (!terminated && !/^.+: \d+\.\d\d requests per second(, p50=\d+\.\d{3} msec)?$/.test(text)) {
      return this.#cutLine(line, text);
    }
    this.#progress = undefined;
    const t = emptyTest(title, line);
    t.opsPerSec = num(rps);
    t.p50LatencyMs = num(p50);
    t.complete = true;
    this.#formats.add(p50 === undefined ? "quiet-legacy" : "quiet");
    this.#push(t);
  }

  #csvLine(s: string, line: number, terminated: boolean): void {
    const f = splitCsvLine(s.trim());
    if (f === undefined) {
      if (this.#csvHeader || this.#formats.has("csv-legacy")) return this.#cutLine(line, s);
      return this.#warn(line, "unrecognized line", s);
    }
    if (f[0] === "test" && f[1] === "rps") {
      this.#sawAny = true;
      this.#csvHeader = f;
      return;
    }
    if (this.#csvHeader) {
      this.#sawAny = true;
      if (f.length !== this.#csvHeader.length) {
        return terminated
          ? this.#warn(line, `expected ${this.#csvHeader.length} CSV fields`, s)
          : this.#cutLine(line, s);
      }
      if (!terminated && !/"\d+\.\d{3}"$/.test(s.trim())) return this.#cutLine(line, s);
      const t = emptyTest(f[0], line);
      this.#csvHeader.forEach((h, i) => {
        const x = num(f[i]);
        switch (h) {
          case "rps":
            t.opsPerSec = x;
            break;
          case "avg_latency_ms":
            t.avgLatencyMs = x;
            break;
          case "min_latency_ms":
            t.minLatencyMs = x;
            break;
          case "p50_latency_ms":
            t.p50LatencyMs = x;
            break;
          case "p95_latency_ms":
            t.p95LatencyMs = x;
            break;
          case "p99_latency_ms":
            t.p99LatencyMs = x;
            break;
          case "max_latency_ms":
            t.maxLatencyMs = x;
            break;
        }
      });
      t.complete = true;
      this.#formats.add("csv");
      this.#push(t);
      return;
    }
    if (f.length === 2 && /^(\d+(\.\d*)?|-?nan|inf)$/.test(f[1])) {
      this.#sawAny = true;
      if (!terminated && !/"\d+\.\d\d"$/.test(s.trim())) return this.#cutLine(line, s);
      const t = emptyTest(f[0], line);
      t.opsPerSec = num(f[1]);
      t.complete = t.opsPerSec !== null;
      this.#formats.add("csv-legacy");
      this.#push(t);
      return;
    }
    this.#warn(line, "expected a CSV header or a 2-field legacy CSV row", s);
  }

  /**
   * Ends the input and returns the run.
   *
   * @throws {ParseError} When nothing in the input was redis-benchmark output.
   */
  finish(): RedisBenchmarkRun {
    this.#closeCurrentAsCut();
    if (this.#progress) {
      // The tool was stopped while this test ran: keep it, marked incomplete.
      const t = emptyTest(this.#progress.title, this.#progress.line);
      t.lastProgressOpsPerSec = this.#progress.opsPerSec;
      this.#push(t);
      this.#cut = true;
      this.#progress = undefined;
    }
    if (!this.#sawAny) {
      const first = this.#firstText;
      throw new ParseError(
        first === undefined
          ? "expected redis-benchmark or valkey-benchmark output, found an empty input"
          : "expected redis-benchmark or valkey-benchmark output (a `====== TEST ======` report, " +
            "`TEST: N requests per second` lines, or --csv rows)",
        { file: this.#file, line: first?.line ?? 1, column: 1, text: first?.text ?? "" },
      );
    }
    if (this.#args) {
      for (const t of this.#tests) applyBenchmarkArgs(t, this.#args, this.#warnings);
      const missing = missingTests(this.#args, [...this.#names]);
      if (missing.length > 0) {
        this.#cut = true;
        this.#warn(
          this.#lastLine,
          `tests asked for with -t but not in the output: ${missing.join(", ")}`,
          "",
        );
      }
    }
    const formats = [...this.#formats];
    const format: RedisBenchmarkFormat = formats.length === 0
      ? "none"
      : formats.length === 1
      ? formats[0]
      : formats.every((f) => f.startsWith("full"))
      ? "full-legacy"
      : "mixed";
    const complete = !this.#cut && this.#testCount > 0 && !this.#anyIncomplete;
    return {
      format,
      tests: this.#tests,
      testCount: this.#testCount,
      complete,
      errors: this.#errors,
      warnings: this.#warnings,
      progressUpdates: this.#progressUpdates,
    };
  }
}

// What each -t name runs, as redis-benchmark / valkey-benchmark select tests (test_is_selected).
const T_FLAG_TESTS: Record<string, string[]> = {
  ping: ["PING_INLINE", "PING_MBULK"],
  ping_inline: ["PING_INLINE"],
  ping_mbulk: ["PING_MBULK"],
  lrange: ["LPUSH_FOR_LRANGE", "LRANGE_100", "LRANGE_300", "LRANGE_500", "LRANGE_600"],
  lrange_100: ["LPUSH_FOR_LRANGE", "LRANGE_100"],
  lrange_300: ["LPUSH_FOR_LRANGE", "LRANGE_300"],
  lrange_500: ["LPUSH_FOR_LRANGE", "LRANGE_500"],
  lrange_600: ["LPUSH_FOR_LRANGE", "LRANGE_600"],
};
const SIMPLE_TESTS = new Set([
  "set",
  "get",
  "incr",
  "lpush",
  "rpush",
  "lpop",
  "rpop",
  "sadd",
  "hset",
  "spop",
  "zadd",
  "zpopmin",
  "mset",
  "xadd",
]);

/**
 * The tests a `-t` list asks for that are not in the output (in loop mode, or with a custom
 * command, nothing is expected).
 *
 * @example
 * ```ts
 * import { missingTests, parseBenchmarkArgs } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const args = parseBenchmarkArgs(["-t", "set,get,lrange_100"]);
 * assert.deepEqual(missingTests(args, ["SET", "GET", "LPUSH_FOR_LRANGE"]), ["LRANGE_100"]);
 * ```
 */
export function missingTests(args: BenchmarkArgs, found: readonly string[]): string[] {
  if (!args.tests || args.loop || args.customCommand) return [];
  const want = new Set<string>();
  for (const name of args.tests) {
    if (T_FLAG_TESTS[name]) T_FLAG_TESTS[name].forEach((t) => want.add(t));
    else if (SIMPLE_TESTS.has(name)) want.add(name.toUpperCase());
  }
  const have = new Set(found);
  return [...want].filter((t) => !have.has(t));
}

/**
 * Fills a test's run parameters from the command's flags where the output did not print them,
 * and notes where the two disagree. Tool defaults apply to flags that were not given.
 */
export function applyBenchmarkArgs(
  t: RedisBenchmarkTest,
  args: BenchmarkArgs,
  warnings: ParseWarning[] = [],
): void {
  const fill = (
    key: "clients" | "requests" | "dataSizeBytes" | "pipeline" | "threads",
    given: number | undefined,
  ) => {
    const value = given ?? BENCHMARK_DEFAULTS[key];
    if (t[key] === null) t[key] = value;
    else if (given !== undefined && t[key] !== given && t.complete && key !== "requests") {
      warnings.push({
        line: t.sourceLine,
        message: `output says ${key}=${t[key]} but the command says ${given}`,
        text: t.testTitle,
      });
    }
  };
  fill("clients", args.clients);
  fill("dataSizeBytes", args.dataSizeBytes);
  fill("pipeline", args.pipeline);
  fill("threads", args.threads);
  fill("requests", args.requests);
  if (t.keyspace === null && args.keyspace !== undefined) t.keyspace = args.keyspace;
  if (t.keepAlive === null && args.keepAlive !== undefined) t.keepAlive = args.keepAlive;
  if (t.requestedOpsPerSec === null && args.requestedOpsPerSec !== undefined) {
    t.requestedOpsPerSec = args.requestedOpsPerSec;
  }
}

/** What one piece of live output says while redis-benchmark runs. */
export type ProgressEvent =
  /** `TEST: rps=… (overall: …) avg_msec=…` (6.2+) or `TEST: 123.45` (≤6.0). */
  | { kind: "progress"; test: string; opsPerSec: number | null; overallOpsPerSec: number | null }
  /** A test's result was printed (report header, -q line or CSV row). */
  | { kind: "done"; test: string; opsPerSec: number | null };

/**
 * Reads one drawn piece of live output (a segment between `\r`/`\n`) as progress. Pure.
 *
 * @example
 * ```ts
 * import { progressEvent } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.deepEqual(progressEvent("SET: rps=51613.5 (overall: 51613.5) avg_msec=0.586 (overall: 0.586)"), {
 *   kind: "progress", test: "SET", opsPerSec: 51613.5, overallOpsPerSec: 51613.5,
 * });
 * assert.deepEqual(progressEvent("GET: rps=0.0 (overall: -nan) avg_msec=-nan (overall: -nan)"), {
 *   kind: "progress", test: "GET", opsPerSec: 0, overallOpsPerSec: null,
 * });
 * assert.deepEqual(progressEvent("====== SET ======"), { kind: "done", test: "SET", opsPerSec: null });
 * assert.equal(progressEvent("  50 parallel clients"), undefined);
 * assert.equal(progressEvent("  throughput summary: 52219.32 requests per second"), undefined);
 * ```
 */
export function progressEvent(segment: string): ProgressEvent | undefined {
  const t = segment.trim();
  let m = RE_PROGRESS.exec(t);
  if (m) {
    return {
      kind: "progress",
      test: normalizeTestName(m[1]),
      opsPerSec: num(m[2]),
      overallOpsPerSec: num(m[3]),
    };
  }
  m = RE_HEADER.exec(t);
  if (m) return { kind: "done", test: normalizeTestName(m[1]), opsPerSec: null };
  m = RE_QUIET.exec(t);
  if (m && m[1] !== "throughput summary") {
    return { kind: "done", test: normalizeTestName(m[1]), opsPerSec: num(m[2]) };
  }
  if (t.startsWith('"') && !t.startsWith('"test"')) {
    const f = splitCsvLine(t);
    if (f && f.length >= 2 && /^[\d.]+$/.test(f[1])) {
      return { kind: "done", test: normalizeTestName(f[0]), opsPerSec: num(f[1]) };
    }
  }
  m = RE_PROGRESS_LEGACY.exec(t);
  if (m && /^[A-Z][A-Z0-9_]*( \(.*\))?$/.test(m[1])) {
    return {
      kind: "progress",
      test: normalizeTestName(m[1]),
      opsPerSec: num(m[2]),
      overallOpsPerSec: num(m[2]),
    };
  }
  return undefined;
}

/**
 * Turns a stream of output chunks into {@link ProgressEvent}s (keeps the partial segment
 * between chunks). Pure apart from the callback.
 */
export class ProgressReader {
  #rest = "";
  readonly #decoder = new TextDecoder();
  /** @param onEvent Called for each event. */
  constructor(readonly onEvent: (e: ProgressEvent) => void) {}
  /** Feeds a chunk of stdout. */
  push(chunk: Uint8Array): void {
    const text = this.#rest + this.#decoder.decode(chunk, { stream: true });
    const parts = text.split(/[\r\n]/);
    this.#rest = parts.pop() ?? "";
    for (const p of parts) {
      const e = p.trim() === "" ? undefined : progressEvent(p);
      if (e) this.onEvent(e);
    }
  }
}
