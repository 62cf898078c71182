/**
 * One-line shapes of redis-benchmark / valkey-benchmark output that both the report parser and
 * the live-progress reader know (report header, `-q` result, progress), and the readers of the
 * one-line results: a `-q` line and a `--csv` row.
 *
 * @module
 */

import { splitCsvLine } from "../../../text/csv.ts";
import { emptyTest, NUMBER, setColumns } from "./_fields.ts";
import type { RedisBenchmarkFormat, RedisBenchmarkTest } from "./_types.ts";

/** `====== SET ======`: the header of a test's report. */
export const RE_HEADER = /^====== (.*) ======\s*$/;
/** `SET: 109769.48 requests per second, p50=0.231 msec` (`-q`; no p50 up to 6.0). */
export const RE_QUIET = new RegExp(
  `^(.+?): (${NUMBER}) requests per second(?:, p50=(${NUMBER}) msec)?\\s*$`,
);
/**
 * `SET: rps=51613.5 (overall: 51613.5) avg_msec=0.586 (overall: 0.586)`: 6.2+ progress. Valkey
 * 9.0+ adds ` 612482 requests` (or ` 3.8 seconds` with `--duration` / `--warmup`), and starts
 * the line with `Warming up ` during `--warmup`.
 */
export const RE_PROGRESS =
  /^(?:Warming up )?(.+?): rps=(\S+) \(overall: (\S+)\) avg_msec=(\S+) \(overall: (\S+)\)(?: \d+ requests| \S+ seconds)?\s*$/;
/** The start of a 6.2+ progress line, for one cut off at the end of the output. */
export const RE_PROGRESS_START = /^(?:Warming up )?(.+?): rps=\S*(?: \(overall: (\S+)\))?/;
/** `SET: 65975.77`: ≤6.0 progress. */
export const RE_PROGRESS_LEGACY = /^(.+?): ([\d.]+|-?nan|inf)\s*$/;
/** A `-q` line or ≤6.0 progress cut off inside its number: `GET: 8264`, `GET: -`, `GET: na`. */
export const RE_CUT_RESULT =
  /^(.+?): ([-+]?[\d.]*(?:[eE][-+]?\d*)?|[-+]?n(?:an?)?|[-+]?i(?:nf?)?)( |$)/;

/** Error messages redis-benchmark / valkey-benchmark print (stdout or stderr captured together). */
const RE_TOOL_ERROR = new RegExp(
  "^(" + [
    String.raw`(Cluster )?[Nn]ode \S+ replied with error`,
    "Could not connect to (Redis|server) at",
    "Could not negotiate a TLS connection",
    String.raw`Error from server( \S+)?:`,
    "Error writing to the server",
    "Error:",
    "ERROR:",
    "ERR ",
    "NOAUTH",
    "NOPERM",
    "WRONGPASS",
    "Invalid option",
    "Unrecognized option",
    "Invalid value",
    "Invalid cluster",
    "Invalid quoted string",
    "Invalid server port",
    "Options .* are mutually exclusive",
    "Writing to socket",
    "Reading from socket",
    "Failed to fetch cluster configuration",
    "Failed to update cluster slots",
    "Failed to initialize",
    "CLUSTER SLOTS ERROR:",
    "Cluster node .* unreachable",
    "Unexpected error reply",
    String.raw`All clients disconnected\.\.\. aborting`,
    "FATAL:",
  ].join("|") + ")",
);
const RE_WARNING = /^(WARNING|WARN)\b:?\s*(.*)$/;
/** `--cluster`: `Cluster has 3 master nodes:` (Redis) / `… primary nodes:` (Valkey). */
const RE_CLUSTER_NODES = /^Cluster has (\d+) (?:master|primary|replica|cluster) nodes:$/;
/** `--cluster`: one line per node, `Master 0: <id> 127.0.0.1:30001` / `Node 0(Primary): …`. */
const RE_CLUSTER_NODE =
  /^(?:(?:Master|Primary|Replica) \d+|Node \d+\((?:Primary|Replica|Master)\)): \S/;
/** `-I` (idle mode): `Creating 50 idle connections and waiting forever (Ctrl+C when done)`, `clients: 50`. */
const RE_IDLE = /^(clients: \d+|Creating \d+ idle connections and waiting forever.*)$/;

/** What a line that is neither a result nor progress is. */
export type OtherLine =
  | { kind: "warning" }
  | { kind: "error" }
  /** The `--cluster` preamble or idle mode: tool output that holds no result. */
  | { kind: "preamble"; output: boolean; clusterNodes?: number };

/**
 * Classifies a line that is neither a result nor progress: a tool warning, a tool error, or
 * the `--cluster` / idle-mode preamble.
 *
 * @param trimmed The line, trimmed.
 * @returns What it is, or `undefined` for a line the tool does not print.
 *
 * @example
 * ```ts
 * import { otherLine } from "./_lines.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(otherLine("Cluster has 3 primary nodes:"), {
 *   kind: "preamble", output: true, clusterNodes: 3,
 * });
 * assert.deepEqual(otherLine("All clients disconnected... aborting."), { kind: "error" });
 * assert.equal(otherLine("SET: 1.00 requests per second"), undefined);
 * ```
 */
export function otherLine(trimmed: string): OtherLine | undefined {
  // `clients: N` alone is too plain to tell that a text is redis-benchmark output.
  if (RE_IDLE.test(trimmed)) return { kind: "preamble", output: !trimmed.startsWith("clients:") };
  if (RE_CLUSTER_NODE.test(trimmed)) return { kind: "preamble", output: true };
  const m = RE_CLUSTER_NODES.exec(trimmed);
  if (m) return { kind: "preamble", output: true, clusterNodes: Number(m[1]) };
  if (RE_WARNING.test(trimmed)) return { kind: "warning" };
  if (RE_TOOL_ERROR.test(trimmed)) return { kind: "error" };
  return undefined;
}

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
  /**
   * A line not understood; `output` tells whether it is redis-benchmark output all the same,
   * `lost` whether a result was lost with it (the run is then not complete).
   */
  | { kind: "warn"; message: string; output: boolean; lost?: boolean };

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
  if (title.trim() === "throughput summary") {
    // A report's summary line whose report header was never read: not a test of its own.
    return { kind: "warn", message: "report summary outside a report", output: true, lost: true };
  }
  const test = emptyTest(title, line);
  setColumns(test, "quiet", { columns: ["rps", "p50"], values: [rps, p50] });
  test.complete = true;
  return { kind: "test", test, format: p50 === undefined ? "quiet-legacy" : "quiet" };
}

/**
 * Splits a `--csv` row whose title holds `"`: the tool prints `"%s"` without doubling quotes
 * (`"SET k "v"","1.00",…`), so the title is whatever stands before the last `fields` quoted
 * values.
 */
function splitTitleQuoted(s: string, fields: number): string[] | undefined {
  const m = new RegExp(`^"(.*)"${',"([^"]*)"'.repeat(fields)}$`).exec(s);
  return m ? m.slice(1) : undefined;
}

/** A row with a number in each value field (what the tool prints; a cut row has fewer). */
const RE_CSV_NUMBER = new RegExp(`^(${NUMBER})$`);

/**
 * Reads a `--csv` line: the 6.2+ header, a row under it, or a ≤6.0 two-field row.
 *
 * @param s The line.
 * @param at `line`, the line number; `terminated`, whether the line ended with a newline.
 * @param before `header`, the `--csv` header read before, if any; `legacySeen`, whether a ≤6.0
 * two-field row was read before.
 * @returns What the line holds.
 */
export function readCsvLine(
  s: string,
  { line, terminated }: { line: number; terminated: boolean },
  { header, legacySeen }: { header: readonly string[] | undefined; legacySeen: boolean },
): LineResult {
  const trimmed = s.trim();
  const want = header ? header.length : 2;
  let f = splitCsvLine(trimmed);
  if (f === undefined || f.length !== want) {
    const q = splitTitleQuoted(trimmed, want - 1);
    if (q && q.slice(1).every((v) => RE_CSV_NUMBER.test(v))) f = q;
  }
  if (f === undefined) {
    if (!terminated && (header || legacySeen)) return { kind: "cut" };
    if (header || legacySeen) {
      return { kind: "warn", message: "unreadable CSV row", output: true, lost: true };
    }
    return { kind: "warn", message: "unrecognized line", output: false };
  }
  if (f[0] === "test" && f[1] === "rps") return { kind: "header", header: f };
  if (header) {
    if (f.length !== header.length) {
      return terminated
        ? {
          kind: "warn",
          message: `expected ${header.length} CSV fields`,
          output: true,
          lost: true,
        }
        : { kind: "cut" };
    }
    if (!terminated && !/"\d+\.\d{3}"$/.test(trimmed)) return { kind: "cut" };
    const test = emptyTest(f[0], line);
    setColumns(test, "csv", { columns: header, values: f });
    test.complete = true;
    return { kind: "test", test, format: "csv" };
  }
  if (f.length === 2 && RE_CSV_NUMBER.test(f[1])) {
    if (!terminated && !/"\d+\.\d\d"$/.test(trimmed)) return { kind: "cut" };
    const test = emptyTest(f[0], line);
    setColumns(test, "csv", { columns: LEGACY_CSV_COLUMNS, values: f });
    test.complete = true;
    return { kind: "test", test, format: "csv-legacy" };
  }
  return {
    kind: "warn",
    message: "expected a CSV header or a 2-field legacy CSV row",
    output: false,
  };
}
