/**
 * An INFO reply as an {@link OutputFormat}: a file that is one INFO reply is a snapshot run
 * (the server it names, its fields as `server_info` rows, a `memory` row); an INFO printed after
 * a fill (`redis-cli info memory`) fills that fill's `memory` row.
 *
 * @module
 */

import type { TextFormat } from "../format.ts";
import {
  infoNumber,
  infoRows,
  keyspaceKeys,
  memoryViews,
  parseInfo,
  serverIdentity,
} from "./info.ts";

/** Bytes of a standalone capture kvlab reads whole. */
export const CAPTURE_MAX_BYTES = 16 << 20;

/** The programs whose replies kvlab reads. */
export const CLI_PROGRAMS = ["redis-cli", "valkey-cli"] as const;

/**
 * `redis-cli INFO` output.
 *
 * @example
 * ```ts
 * import { infoFormat } from "./format.ts";
 * import assert from "node:assert/strict";
 * const text = "# Server\nvalkey_version:8.0.1\n# Memory\nused_memory:1000\n";
 * const run = infoFormat.read(text, { file: "i.txt", firstLine: 1, lastLine: 4, runId: "r1" });
 * assert.deepEqual([run.facts?.server, run.facts?.serverVersion], ["valkey", "8.0.1"]);
 * assert.deepEqual(run.memory, [{
 *   source_line: 4, keys: null, used_memory_bytes: 1000, used_memory_rss_bytes: null,
 *   used_memory_peak_bytes: null,
 * }]);
 * const cmd = { tool: "redis-cli", program: "redis-cli", args: ["info", "memory"] };
 * assert.equal(infoFormat.accepts!(cmd.args), null);
 * assert.equal(infoFormat.capture!("used_memory:7\n", cmd)?.used_memory_bytes, 7);
 * ```
 */
export const infoFormat: TextFormat = {
  name: "redis-info",
  tool: "redis-cli",
  description: "redis-cli INFO output",
  reads: "INFO",
  results: false,
  reading: "text",
  maxBytes: CAPTURE_MAX_BYTES,
  programs: CLI_PROGRAMS,
  recognizes: (t) =>
    /^# (Server|Memory|Clients|Keyspace|Stats)$/.test(t) || /^redis_version:/.test(t),
  accepts: (args) => args.some((a) => a.toLowerCase() === "info") ? null : "not INFO",
  capture: (text) => memoryViews(parseInfo(text)),
  read(text, { runId, lastLine }) {
    const info = parseInfo(text);
    const identity = serverIdentity(info);
    const memory = infoNumber(info, "used_memory", "used_memory_human") !== null
      ? [{ source_line: lastLine, keys: keyspaceKeys(info, text), ...memoryViews(info) }]
      : [];
    return {
      tool: "redis-cli",
      outputFormat: "info",
      status: "complete",
      error: null,
      tests: 0,
      tables: { server_info: infoRows(runId, "snapshot", info) },
      memory,
      facts: {
        ...(identity.server !== "unknown" ? { server: identity.server } : {}),
        ...(identity.version ? { serverVersion: identity.version } : {}),
      },
      warnings: [],
    };
  },
};
