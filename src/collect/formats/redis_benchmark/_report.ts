/**
 * The reader of one test's full report, from its `====== TEST ======` header to its result:
 * the ≤6.0 layout (header facts, `x% <= N milliseconds`, `N requests per second`) and the 6.2+
 * one (header facts, Valkey's `RPS Summary:`, `Latency by percentile distribution:`,
 * `Cumulative distribution of latencies:`, `Summary:` with its latency table).
 *
 * @module
 */

import type { Origin } from "./_checks.ts";
import { emptyTest, isBuiltinTitle, NUMBER, readNumber, setColumns } from "./_fields.ts";
import type { DistributionKind, RedisBenchmarkFormat, RedisBenchmarkTest } from "./_types.ts";

const N = `(${NUMBER})`;
const RE_REQUESTS = new RegExp(String.raw`^\s*${N} requests completed in ${N} seconds\s*$`);
const RE_CLIENTS = new RegExp(String.raw`^\s*${N} parallel clients\s*$`);
const RE_PAYLOAD = new RegExp(String.raw`^\s*${N} bytes payload\s*$`);
const RE_KEEPALIVE = /^\s*keep alive: (\S+)\s*$/;
const RE_HOSTCFG = /^\s*host configuration "(save|appendonly)": ?(.*?)\s*$/;
const RE_CLUSTER = /^\s*cluster mode: yes \((\d+) \w+\)\s*$/;
const RE_NODECFG = /^\s*(node \[\d+\] configuration:|save: .*|appendonly: .*)\s*$/;
const RE_MULTITHREAD = /^\s*multi-thread: (yes|no)\s*$/;
const RE_THREADS = /^\s*threads: (\d+)\s*$/;
// `<=` may be wrapped in Markdown backticks by a paste: 99.76% `<=` 1 milliseconds
const RE_DIST = new RegExp(
  String.raw`^\s*${N}% \`?<=\`? ${N} milliseconds \(cumulative count ${N}\)\s*$`,
);
const RE_DIST_LEGACY = new RegExp(String.raw`^\s*${N}% \`?<=\`? ${N} milliseconds\s*$`);
const RE_THROUGHPUT = new RegExp(String.raw`^\s*throughput summary: ${N} requests per second\s*$`);
const RE_RPS_LEGACY = new RegExp(String.raw`^\s*${N} requests per second\s*$`);
const RE_TARGET_RPS = new RegExp(String.raw`^\s*target RPS: ${N}\s*$`);
const RE_COLUMNS = /^\s*(avg|min|p\d+(?:\.\d+)?|max)(\s+(avg|min|p\d+(?:\.\d+)?|max))+\s*$/;
const RE_VALUES = new RegExp(String.raw`^\s*${N}(\s+${N})+\s*$`);

/** The block of a report being read; `done` when no report is open. */
type Section = "header" | "rps" | "percentile" | "cumulative" | "legacy" | "summary" | "done";

/** Where a {@link ReportReader} hands what it reads. */
export interface ReportSink {
  /** A test whose report ended, finished or not, and where each of its fields was printed. */
  test(t: RedisBenchmarkTest, origins: ReadonlyMap<string, Origin>): void;
  /** A line that looked wrong. */
  warn(line: number, message: string, text: string): void;
  /** The last line, cut while the tool printed it. */
  cut(line: number, text: string): void;
  /** The output variant a finished report was printed in. */
  format(f: RedisBenchmarkFormat): void;
}

/** Reads the lines of one report at a time; the parser hands it the lines of an open report. */
export class ReportReader {
  readonly #sink: ReportSink;
  #current: RedisBenchmarkTest | undefined;
  #section: Section = "done";
  #columns: string[] | undefined;
  /** Where each field of the open report's test was printed. */
  #origins = new Map<string, Origin>();

  /** @param sink Where tests, warnings and cut lines go. */
  constructor(sink: ReportSink) {
    this.#sink = sink;
  }

  /** Whether a report is open (its header read, its result not yet). */
  get open(): boolean {
    return this.#current !== undefined && this.#section !== "done";
  }

  /** Opens the report of a test (closing the one open, if any). */
  start(title: string, line: number): void {
    this.close();
    this.#current = emptyTest(title, line);
    this.#origins = new Map();
    this.#section = "header";
  }

  /** Hands the open report's test, finished or not, to the sink. */
  close(): void {
    const cur = this.#current;
    if (cur) {
      this.#sink.test(cur, this.#origins);
      this.#current = undefined;
    }
    this.#section = "done";
    this.#columns = undefined;
  }

  /**
   * Closes the open report because something else followed it.
   *
   * @returns Whether the report stopped before its result.
   */
  closeAsCut(): boolean {
    const cut = this.#current !== undefined && !this.#current.complete;
    this.close();
    return cut;
  }

  /**
   * Reads a line of the open report.
   *
   * @returns `false` when the line is not part of a report.
   */
  line(s: string, line: number, terminated: boolean): boolean {
    if (this.#distributionRow(s, line, terminated)) return true;
    const t = s.trim();
    if (t === "") return true;
    switch (this.#section) {
      case "header":
        return this.#headerLine(s, t, line);
      case "rps":
        return this.#rpsLine(s, t, line);
      case "summary":
        return this.#summaryLine(s, t, line, terminated);
      case "legacy":
      case "percentile":
      case "cumulative":
        return this.#legacyResult(s, t, line, terminated);
      default:
        return false;
    }
  }

  /** Sets a number field of the open report's test, noting where it was printed. */
  #set(
    field:
      | "requests"
      | "durationS"
      | "clients"
      | "dataSizeBytes"
      | "requestedOpsPerSec"
      | "opsPerSec",
    value: string,
    origin: { line: number; text: string },
  ): void {
    this.#current![field] = readNumber(value);
    this.#origins.set(field, origin);
  }

  /** Sets the fields of a printed table row, noting where they were printed. */
  #setColumns(
    table: "rps" | "summary",
    values: string[],
    origin: { line: number; text: string },
  ): void {
    for (const f of setColumns(this.#current!, table, { columns: this.#columns!, values })) {
      this.#origins.set(f, origin);
    }
  }

  /** Fast path: distribution rows are the bulk of a report. */
  #distributionRow(s: string, line: number, terminated: boolean): boolean {
    const c0 = s.charCodeAt(0);
    // Digits, blanks, and the first characters of `-0.5`, `+1`, `.5`, `nan`, `inf`.
    if (!((c0 >= 48 && c0 <= 57) || " -+.ni".includes(s[0]))) return false;
    const cur = this.#current!;
    let m = RE_DIST.exec(s);
    if (m) {
      if (!terminated) {
        this.#sink.cut(line, s);
        return true;
      }
      const kind: DistributionKind = this.#section === "cumulative" ? "cumulative" : "percentile";
      if (this.#section !== "percentile" && this.#section !== "cumulative") {
        this.#sink.warn(line, "distribution row outside a distribution block", s);
      }
      cur.distribution.push({
        distribution: kind,
        percentile: readNumber(m[1])!,
        latencyMs: readNumber(m[2])!,
        count: readNumber(m[3]),
        sourceLine: line,
      });
      return true;
    }
    m = RE_DIST_LEGACY.exec(s);
    if (m && terminated) {
      this.#section = "legacy";
      this.#sink.format("full-legacy");
      cur.distribution.push({
        distribution: "legacy",
        percentile: readNumber(m[1])!,
        latencyMs: readNumber(m[2])!,
        count: null,
        sourceLine: line,
      });
      return true;
    }
    return false;
  }

  /** The facts a report prints under its header, before its first block. */
  #headerLine(s: string, t: string, line: number): boolean {
    const cur = this.#current!;
    let m: RegExpExecArray | null;
    if ((m = RE_REQUESTS.exec(s))) {
      this.#set("requests", m[1], { line, text: s });
      this.#set("durationS", m[2], { line, text: s });
    } else if ((m = RE_CLIENTS.exec(s))) this.#set("clients", m[1], { line, text: s });
    else if ((m = RE_PAYLOAD.exec(s))) {
      // A custom command's "payload" is the length of the encoded command, not `-d`.
      if (isBuiltinTitle(cur.testTitle)) this.#set("dataSizeBytes", m[1], { line, text: s });
    } else if ((m = RE_KEEPALIVE.exec(s))) {
      if (/^\d+$/.test(m[1])) cur.keepAlive = m[1] !== "0";
      else this.#sink.warn(line, "unrecognized line", s);
    } else if ((m = RE_HOSTCFG.exec(s))) {
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

  /** Valkey's `RPS Summary:` block (with `--rps`). */
  #rpsLine(s: string, t: string, line: number): boolean {
    const m = RE_TARGET_RPS.exec(s);
    if (m) this.#set("requestedOpsPerSec", m[1], { line, text: s });
    else if (t === "RPS distribution (reqs/sec):") { /* table follows */ }
    else if (RE_COLUMNS.test(s)) this.#columns = t.split(/\s+/);
    else if (RE_VALUES.test(s) && this.#columns) {
      this.#setColumns("rps", t.split(/\s+/), { line, text: s });
      this.#columns = undefined;
    } else return this.#sectionStart(t, line);
    return true;
  }

  /** The 6.2+ `Summary:` block: throughput, then the latency table that ends the report. */
  // positional: called for each line of a report, with the shape of line() (the parser's hot path)
  #summaryLine(s: string, t: string, line: number, terminated: boolean): boolean {
    const cur = this.#current!;
    const m = RE_THROUGHPUT.exec(s);
    if (m) {
      if (!terminated && !/ \d+\.\d\d requests per second\s*$/.test(s)) {
        this.#sink.cut(line, s);
        return true;
      }
      this.#set("opsPerSec", m[1], { line, text: s });
    } else if (t === "latency summary (msec):") { /* table follows */ }
    else if (RE_COLUMNS.test(s)) this.#columns = t.split(/\s+/);
    else if (RE_VALUES.test(s) && this.#columns) {
      const v = t.split(/\s+/);
      // a last line with no newline after it is whole when every value has its three decimals
      // (the tool prints them with %.3f): a file saved or pasted without a final newline
      const whole = terminated || v.every((x) => /^\d+\.\d{3}$/.test(x));
      if (v.length !== this.#columns.length || !whole) {
        this.#sink.cut(line, s);
        return true;
      }
      this.#setColumns("summary", v, { line, text: s });
      cur.complete = true;
      this.#sink.format("full");
      this.close();
    } else return this.#sectionStart(t, line);
    return true;
  }

  /** After distribution rows: the ≤6.0 `N requests per second` that ends the report. */
  // positional: called for each ≤6.0 distribution line, with the shape of line() (hot path)
  #legacyResult(
    s: string,
    t: string,
    line: number,
    terminated: boolean,
  ): boolean {
    const m = RE_RPS_LEGACY.exec(s);
    if (m && this.#section === "legacy") {
      // "… requests per second" printed to its end is whole, newline or not
      if (!terminated && !/^\s*\d+\.\d\d requests per second\s*$/.test(s)) {
        this.#sink.cut(line, s);
        return true;
      }
      this.#set("opsPerSec", m[1], { line, text: s });
      this.#current!.complete = true;
      this.close();
      return true;
    }
    return this.#sectionStart(t, line);
  }

  /** Section titles of a 6.2+ report, and lines that may stand between sections. */
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
      this.#set("opsPerSec", m[1], { line, text: t });
      cur.complete = true;
      this.#sink.format("full-legacy");
      this.close();
      return true;
    }
    if (t === "..." || t === cur.testTitle || t === cur.test) {
      this.#sink.warn(line, "elided or annotated output", t);
      return true;
    }
    return false;
  }
}
