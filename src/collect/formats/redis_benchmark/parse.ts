/**
 * Parser for redis-benchmark and valkey-benchmark output, every variant from Redis 2.x to
 * Valkey 8.x: the ≤6.0 report (`x% <= N milliseconds`), the 6.2+ report (percentile and
 * cumulative distributions, summary table, Valkey's RPS summary), `-q` with and without p50,
 * `--csv` with and without header, live progress (`\r`-separated, skipped), `script(1)`
 * captures, CRLF copies and cut files.
 *
 * A number that cannot be true (negative, `nan`/`inf`, a rate above {@link MAX_OPS_PER_SEC},
 * percentiles out of order) is never kept as a result: its test is marked not complete and a
 * warning names the line and the value (rules in `_checks.ts`).
 *
 * Parsing is pure: text in, numbers out. {@link RedisBenchmarkParser} takes lines one at a time
 * so that large files can be streamed; {@link parseRedisBenchmark} parses a whole text.
 *
 * This module re-exports the rest of the redis-benchmark API: the records
 * (`_types.ts`), {@link normalizeTestName}, the command-flag merge
 * (`params.ts`) and the live-progress reader (`progress.ts`).
 *
 * @module
 */

import { ParseError } from "../../../errors.ts";
import type { BenchmarkArgs } from "./flags.ts";
import { isScriptBanner, segments, splitLines } from "../../../text/lines.ts";
import { dropImpossible, type Origin } from "./_checks.ts";
import { emptyTest, num } from "./_fields.ts";
import {
  type LineResult,
  otherLine,
  RE_CUT_RESULT,
  RE_HEADER,
  RE_PROGRESS,
  RE_PROGRESS_LEGACY,
  RE_PROGRESS_START,
  RE_QUIET,
  readCsvLine,
  readQuietLine,
} from "./_lines.ts";
import { ReportReader } from "./_report.ts";
import type {
  ParseRedisBenchmarkOptions,
  ParseWarning,
  RedisBenchmarkFormat,
  RedisBenchmarkRun,
  RedisBenchmarkTest,
} from "./_types.ts";
import { applyBenchmarkArgs, missingTests } from "./params.ts";

export type * from "./_types.ts";
export { normalizeTestName } from "./_fields.ts";
export { MAX_OPS_PER_SEC } from "./_checks.ts";
export { applyBenchmarkArgs, BENCHMARK_TEST_NAMES, missingTests } from "./params.ts";
export { progressEvent, ProgressReader } from "./progress.ts";

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
  readonly #report: ReportReader;
  #csvHeader: string[] | undefined;
  #progress: { title: string; opsPerSec: number | null; line: number; text: string } | undefined;
  /** Node count of the `--cluster` preamble, for tests whose output does not print it. */
  #clusterNodes: number | null = null;
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
    this.#report = new ReportReader({
      test: (t, origins) => this.#push(t, (f) => origins.get(f)),
      warn: (line, message, text) => this.#warn(line, message, text),
      cut: (line, text) => this.#cutLine(line, text),
      format: (f) => {
        this.#formats.add(f);
      },
    });
  }

  /**
   * Takes a test the output ended, after clearing its impossible values.
   *
   * @param origin Where a field was printed (the test's own line when not given).
   */
  #push(t: RedisBenchmarkTest, origin: (field: string) => Origin | undefined = () => undefined) {
    const own = { line: t.sourceLine, text: t.testTitle };
    dropImpossible(t, (f) => origin(f) ?? own, (l, m, text) => this.#warn(l, m, text));
    if (t.clusterNodes === null) t.clusterNodes = this.#clusterNodes;
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
   *
   * @returns The tests finished since the last call, with the command's flags merged.
   */
  takeCompleted(): RedisBenchmarkTest[] {
    const out = this.#tests.splice(0);
    this.#pendingRows = 0;
    if (this.#args) { for (const t of out) applyBenchmarkArgs(t, this.#args, this.#warnings); }
    return out;
  }

  /**
   * Sets the command's flags (when they are learnt after parsing began, e.g. from a banner).
   *
   * @param args The flags; see {@link ParseRedisBenchmarkOptions.args}.
   */
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

  /** One drawn piece of a line: tried as each kind of line in turn. */
  #segment(s: string, line: number, terminated: boolean): void {
    // a report pasted as a Markdown code block is indented (four spaces): its lines are the same
    const c0 = s.charCodeAt(0) === 32 || s.charCodeAt(0) === 9
      ? s.trimStart().charCodeAt(0)
      : s.charCodeAt(0);
    // Lines starting with '=' — a report header.
    if (c0 === 61 /* = */) {
      const m = RE_HEADER.exec(s.trimStart());
      if (m) return this.#startReport(m[1], line);
    }
    // Distribution rows start with a digit; so do summary values and legacy rps.
    if (this.#report.open && this.#report.line(s, line, terminated)) return;
    if (c0 === 34 /* " */) {
      const r = readCsvLine(s.trimStart(), { line, terminated }, {
        header: this.#csvHeader,
        legacySeen: this.#formats.has("csv-legacy"),
      });
      return this.#lineResult(r, line, s);
    }
    const trimmed = s.trim();
    if (trimmed === "...") return this.#warn(line, "elided output", s);
    if (isScriptBanner(trimmed)) return;
    let m = RE_PROGRESS.exec(trimmed);
    if (m) return this.#progressLine(m[1], num(m[3]), { line, text: trimmed });
    m = RE_QUIET.exec(trimmed);
    if (m) return this.#quietLine(m, line, terminated);
    if (this.#otherLine(trimmed, line)) return;
    if (!terminated && RE_PROGRESS_START.test(trimmed)) return this.#cutSegment(s, trimmed, line);
    m = RE_PROGRESS_LEGACY.exec(trimmed);
    if (m && this.#looksLikeTitle(m[1])) {
      return this.#progressLine(m[1], num(m[2]), { line, text: trimmed });
    }
    if (!terminated) return this.#cutSegment(s, trimmed, line);
    this.#warn(line, "unrecognized line", s);
  }

  /** A line that holds no result: tool warnings and errors, `--cluster` and idle preambles. */
  #otherLine(trimmed: string, line: number): boolean {
    const o = otherLine(trimmed);
    if (o === undefined) return false;
    if (o.kind === "preamble") {
      if (o.output) this.#sawAny = true;
      if (o.clusterNodes !== undefined) this.#clusterNodes = o.clusterNodes;
      return true;
    }
    this.#sawAny = true;
    if (o.kind === "warning") this.#warn(line, "tool warning", trimmed);
    else this.#errors.push({ line, text: trimmed });
    return true;
  }

  /** The last piece of the output, cut off while the tool printed it. */
  #cutSegment(s: string, trimmed: string, line: number): void {
    // Live progress cut inside its text: the test was running; keep its last known rate.
    let m = RE_PROGRESS_START.exec(trimmed);
    if (m) {
      const before = this.#progress?.title === m[1] ? this.#progress.opsPerSec : null;
      this.#progressLine(m[1], m[2] === undefined ? before : num(m[2]), { line, text: trimmed });
      return this.#cutLine(line, s);
    }
    // A result (or ≤6.0 progress) cut inside its number: the test did not finish.
    m = RE_CUT_RESULT.exec(trimmed);
    if (m && this.#looksLikeTitle(m[1])) {
      this.#cutLine(line, s);
      this.#progress = { title: m[1], opsPerSec: null, line, text: trimmed };
      return;
    }
    // A report header cut before its last `======`.
    if (trimmed.startsWith("======")) return this.#cutLine(line, s);
    this.#warn(line, "unrecognized line", s);
  }

  #looksLikeTitle(title: string): boolean {
    // Test titles are upper-case command names, maybe with a "(…)" suffix, or custom commands.
    // Custom command titles are its arguments, and may hold `:` (`SET key:__rand_int__ v`).
    return /^[A-Za-z_][\w-]*( .*)?$/.test(title) && title.length < 200;
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

  #startReport(title: string, line: number): void {
    this.#report.start(title, line);
    this.#sawAny = true;
    this.#progress = undefined;
  }

  #progressLine(
    title: string,
    overall: number | null,
    { line, text }: { line: number; text: string },
  ): void {
    this.#sawAny = true;
    this.#progressUpdates++;
    this.#closeCurrentAsCut();
    this.#progress = { title, opsPerSec: overall, line, text };
  }

  /** A report that stopped before its summary, followed by something else. */
  #closeCurrentAsCut(): void {
    if (this.#report.closeAsCut()) this.#cut = true;
  }

  #quietLine(m: RegExpExecArray, line: number, terminated: boolean): void {
    this.#sawAny = true;
    this.#closeCurrentAsCut();
    const r = readQuietLine(m, line, terminated);
    if (r.kind === "test") this.#progress = undefined;
    this.#lineResult(r, line, m[0]);
  }

  /** Takes what a `-q` line or a `--csv` line held. */
  #lineResult(r: LineResult, line: number, text: string): void {
    switch (r.kind) {
      case "cut":
        return this.#cutLine(line, text);
      case "warn":
        if (r.output) this.#sawAny = true;
        if (r.lost) this.#cut = true;
        return this.#warn(line, r.message, text);
      case "header":
        this.#sawAny = true;
        this.#csvHeader = r.header;
        return;
      case "test":
        this.#sawAny = true;
        this.#formats.add(r.format);
        this.#push(r.test, () => ({ line, text }));
        return;
    }
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
      const { title, line, text, opsPerSec } = this.#progress;
      const t = emptyTest(title, line);
      t.lastProgressOpsPerSec = opsPerSec;
      this.#push(t, () => ({ line, text }));
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
    // A tool error means the tool stopped early (most exit): later tests never ran.
    const complete = !this.#cut && this.#testCount > 0 && !this.#anyIncomplete &&
      this.#errors.length === 0;
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
