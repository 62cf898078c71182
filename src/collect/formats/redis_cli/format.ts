/**
 * redis-cli / valkey-cli replies as {@link OutputFormat}s: `--latency` output and a `DBSIZE`
 * reply (a file that is one of them is a snapshot run; DBSIZE printed after a fill gives its key
 * count), and any other reply typed in a transcript, kept as a raw run.
 *
 * @module
 */

import type { FormatRun, TextFormat } from "../format.ts";
import { CAPTURE_MAX_BYTES, CLI_PROGRAMS } from "../info/format.ts";
import { parseDbsize } from "./redis_cli.ts";

/** A capture run with no rows but its memory rows. */
function snapshot(outputFormat: string, memory: FormatRun["memory"] = []): FormatRun {
  return {
    tool: "redis-cli",
    outputFormat,
    status: "complete",
    error: null,
    tests: 0,
    tables: {},
    memory,
    warnings: [],
  };
}

/**
 * `redis-cli --latency` / `--latency-history` output: kept as a run of its own (no rows yet).
 *
 * @example
 * ```ts
 * import { cliLatencyFormat } from "./format.ts";
 * import assert from "node:assert/strict";
 * assert.equal(cliLatencyFormat.recognizes("min: 0, max: 1, avg: 0.25 (4 samples)"), true);
 * assert.equal(cliLatencyFormat.accepts!(["--latency-history", "-i", "1"]), null);
 * ```
 */
export const cliLatencyFormat: TextFormat = {
  name: "redis-cli-latency",
  tool: "redis-cli",
  description: "redis-cli --latency output",
  reads: "redis-cli --latency",
  results: false,
  reading: "text",
  maxBytes: CAPTURE_MAX_BYTES,
  programs: CLI_PROGRAMS,
  recognizes: (t) => /^min: \d+, max: \d+, avg: /.test(t) || /^\d+ \d+ \d+\.\d\d \d+$/.test(t),
  accepts: (args) => args.some((a) => a.startsWith("--latency")) ? null : "not --latency",
  capture: () => null,
  read: () => snapshot("cli-latency"),
};

/**
 * A DBSIZE reply (`(integer) 42` on a terminal, `42` in a pipe).
 *
 * @example
 * ```ts
 * import { dbsizeFormat } from "./format.ts";
 * import assert from "node:assert/strict";
 * const run = dbsizeFormat.read("(integer) 7\n", { file: "d", firstLine: 1, lastLine: 1, runId: "r" });
 * assert.deepEqual(run.memory, [{ source_line: 1, keys: 7 }]);
 * const cmd = { tool: "redis-cli", program: "redis-cli", args: ["-p", "6380", "DBSIZE"] };
 * assert.deepEqual(dbsizeFormat.capture!("(integer) 42\n", cmd), { keys: 42 });
 * ```
 */
export const dbsizeFormat: TextFormat = {
  name: "redis-cli-dbsize",
  tool: "redis-cli",
  description: "a DBSIZE reply",
  reads: "DBSIZE",
  results: false,
  reading: "text",
  maxBytes: CAPTURE_MAX_BYTES,
  programs: CLI_PROGRAMS,
  recognizes: (t) => /^(\(integer\)\s*)?\d+$/.test(t),
  accepts: (args) => args.some((a) => a.toLowerCase() === "dbsize") ? null : "not DBSIZE",
  capture: (text) => ({ keys: parseDbsize(text) }),
  read(text, { lastLine }) {
    const keys = parseDbsize(text);
    return snapshot("dbsize", keys === null ? [] : [{ source_line: lastLine, keys }]);
  },
};

/**
 * Any other redis-cli / valkey-cli command typed in a transcript (`PING`, `CONFIG GET`, …): its
 * reply is kept as a raw run. Never recognised by its text alone.
 *
 * @example
 * ```ts
 * import { cliReplyFormat } from "./format.ts";
 * import assert from "node:assert/strict";
 * assert.equal(cliReplyFormat.accepts!(["ping"]), null);
 * assert.equal(cliReplyFormat.capture!("PONG\n", { tool: "redis-cli", program: "redis-cli", args: ["ping"] }), null);
 * ```
 */
export const cliReplyFormat: TextFormat = {
  name: "redis-cli-reply",
  tool: "redis-cli",
  description: "a redis-cli reply",
  results: false,
  reading: "text",
  maxBytes: CAPTURE_MAX_BYTES,
  programs: CLI_PROGRAMS,
  recognizes: () => false,
  accepts: () => null,
  capture: () => null,
  read: () => snapshot("raw"),
};
