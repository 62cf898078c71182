/**
 * One-line shapes of redis-benchmark / valkey-benchmark output that both the report parser and
 * the live-progress reader know (report header, `-q` result, progress), and the readers of the
 * one-line results: a `-q` line and a `--csv` row.
 *
 * @module
 */

import { splitCsvLine } from "./_csv.ts";
import { emptyTest, setColumns } from "./_redis_benchmark_fields.ts";
import type { RedisBenchmarkFormat, RedisBenchmarkTest } from "./_redis_benchmark_types.ts";

/** `====== SET ======`: the header of a test's report. */
export const RE_HEADER = /^====== (.*) ======\s*$/;
/** `SET: 109769.48 requests per second, p50=0.231 msec` (`-q`; no p50 up to 6.0). */
export const RE_QUIET =
  /^(.+?): ([\d.]+|-?nan|inf) requests per second(?:, p50=([\d.]+|-?nan|inf) msec)?\s*$/;
/** `SET: rps=51613.5 (overall: 51613.5) avg_msec=0.586 (overall: 0.586)`: 6.2+ progress. */
export const RE_PROGRESS =
  /^(.+?): rps=(\S+) \(overall: (\S+)\) avg_msec=(\S+) \(overall: (\S+)\)\s*$/;
/** `SET: 65975.77`: ≤6.0 progress. */
export const RE_PROGRESS_LEGACY = /^(.+?): ([\d.]+|-?nan|inf)\s*$/;

/** The columns of a ≤6.0 `--csv` row, which has no header: `"SET","41562.76"`. */
const LEGACY_CSV_COLUMNS = ["test", "rps"];

/** A result read from one line, or why there is none. */
export type LineResult =
  /** A finished test. */
  | { kind: "test"; test: RedisBenchmarkTest; format: RedisBenchmarkFormat }
  /** The `--csv` header (6.2+): the column names of the rows that follow. */
  | { kind: "header"; header: string[] }
  /** The last line, cut while the tool printed it: not a result. */
  | { kind: "cut" }
  /** A line not understood; `output` tells whether it is redis-benchmark output all the same. */
  | { kind: "warn"; message: string; output: boolean };

/**
 * Reads a `-q` line matched by {@link RE_QUIET}.
 *
 * @param m The match.
 * @param line The line number.
 * @param terminated Whether the line ended with a newline.
 * @returns The test, or `cut` when an unterminated line is not printed to its end.
 */
export function readQuietLine(m: RegExpExecArray, line: number, terminated: boolean): LineResult {
  const text = m[0];
  if (!terminated && !/^.+: \d+\.\d\d requests per second(, p50=\d+\.\d{3} msec)?$/.test(text)) {
    return { kind: "cut" };
  }
  const [, title, rps, p50] = m;
  const test = emptyTest(title, line);
  setColumns(test, "quiet", ["rps", "p50"], [rps, p50]);
  test.complete = true;
  return { kind: "test", test, format: p50 === undefined ? "quiet-legacy" : "quiet" };
}

/**
 * Reads a `--csv` line: the 6.2+ header, a row under it, or a ≤6.0 two-field row.
 *
 * @param s The line.
 * @param line The line number.
 * @param terminated Whether the line ended with a newline.
 * @param header The `--csv` header read before, if any.
 * @param legacySeen Whether a ≤6.0 two-field row was read before.
 * @returns What the line holds.
 */
export function readCsvLine(
  s: string,
  line: number,
  terminated: boolean,
  header: readonly string[] | undefined,
  legacySeen: boolean,
): LineResult {
  const f = splitCsvLine(s.trim());
  if (f === undefined) {
    if (header || legacySeen) return { kind: "cut" };
    return { kind: "warn", message: "unrecognized line", output: false };
  }
  if (f[0] === "test" && f[1] === "rps") return { kind: "header", header: f };
  if (header) {
    if (f.length !== header.length) {
      return terminated
        ? { kind: "warn", message: `expected ${header.length} CSV fields`, output: true }
        : { kind: "cut" };
    }
    if (!terminated && !/"\d+\.\d{3}"$/.test(s.trim())) return { kind: "cut" };
    const test = emptyTest(f[0], line);
    setColumns(test, "csv", header, f);
    test.complete = true;
    return { kind: "test", test, format: "csv" };
  }
  if (f.length === 2 && /^(\d+(\.\d*)?|-?nan|inf)$/.test(f[1])) {
    if (!terminated && !/"\d+\.\d\d"$/.test(s.trim())) return { kind: "cut" };
    const test = emptyTest(f[0], line);
    setColumns(test, "csv", LEGACY_CSV_COLUMNS, f);
    test.complete = test.opsPerSec !== null;
    return { kind: "test", test, format: "csv-legacy" };
  }
  return {
    kind: "warn",
    message: "expected a CSV header or a 2-field legacy CSV row",
    output: false,
  };
}
