/**
 * What server snapshots say for the `memory` and `server_info` tables: INFO replies, `docker
 * stats` lines and DBSIZE replies read into row fields. Shared by ingest (captures in files)
 * and the live memory collectors. Pure: text and parsed values in, row fields out.
 *
 * @module
 */

import type { MemoryRow } from "../schema.ts";
import { infoNumber, type MemoryFields, memoryViews } from "./_rows.ts";
import type { BenchmarkArgs } from "./formats/command.ts";
import type { DetectedKind } from "./ingest/detect.ts";
import { type DockerStatsRow, parseDockerStats } from "./formats/docker_stats/docker_stats.ts";
import {
  type InfoField,
  parseInfo,
  type ServerIdentity,
  serverIdentity,
} from "./formats/info/info.ts";
import { redactInfo } from "../text/redact.ts";
export { redactInfo };
import { parseDbsize } from "./formats/redis_cli/redis_cli.ts";

/**
 * The `memory` columns of one container's `docker stats` line (nulls when there is none).
 *
 * @param row The container's line, or undefined.
 * @returns `container_memory_bytes` and `container_name`.
 *
 * @example
 * ```ts
 * import { containerMemory } from "./_snapshot_rows.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(containerMemory(undefined), { container_memory_bytes: null, container_name: null });
 * ```
 */
export function containerMemory(
  row: Pick<DockerStatsRow, "memUsageBytes" | "name"> | undefined,
): Pick<MemoryRow, "container_memory_bytes" | "container_name"> {
  return { container_memory_bytes: row?.memUsageBytes ?? null, container_name: row?.name ?? null };
}

/**
 * The number of keys INFO's Keyspace section lists (the sum of `db*.keys`).
 *
 * @param info Parsed INFO fields.
 * @returns The sum, or null when the reply has no Keyspace section.
 *
 * @example
 * ```ts
 * import { keyspaceKeys } from "./_snapshot_rows.ts";
 * import { parseInfo } from "./formats/info/info.ts";
 * import assert from "node:assert/strict";
 * assert.equal(keyspaceKeys(parseInfo("# Keyspace\ndb0:keys=3,expires=0\ndb1:keys=2,expires=0\n")), 5);
 * assert.equal(keyspaceKeys(parseInfo("# Memory\nused_memory:1\n")), null);
 * ```
 */
export function keyspaceKeys(info: readonly InfoField[]): number | null {
  if (!info.some((f) => f.section.toLowerCase() === "keyspace")) return null;
  let keys = 0;
  for (const f of info) if (/^db\d+\.keys$/.test(f.key)) keys += f.valueNum ?? 0;
  return keys;
}

/**
 * The `memory` row of a target fill, before any snapshot: the keys it writes (a `-t set` run's
 * request count) and the value size (redis-benchmark's default of 3 bytes when not given).
 *
 * @param args The fill's benchmark flags, if known.
 * @returns `target_keys` and `value_size_bytes`.
 *
 * @example
 * ```ts
 * import { fillMemory } from "./_snapshot_rows.ts";
 * import { parseBenchmarkArgs } from "./formats/command.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(fillMemory(parseBenchmarkArgs(["-t", "set", "-n", "1000"])), {
 *   target_keys: 1000,
 *   value_size_bytes: 3,
 * });
 * assert.deepEqual(fillMemory(undefined), { target_keys: null, value_size_bytes: null });
 * ```
 */
export function fillMemory(args: BenchmarkArgs | undefined): MemoryFields {
  const a = args;
  return {
    target_keys: a && a.tests?.length === 1 && a.tests[0] === "set" ? a.requests ?? null : null,
    value_size_bytes: a ? a.dataSizeBytes ?? 3 : null,
  };
}

/**
 * What a capture printed after a fill (`redis-cli dbsize`, `redis-cli info memory`, `docker
 * stats <name>`) says for the fill's `memory` row.
 *
 * @param tool The capture's tool (`redis-cli`, `valkey-cli`, `docker`).
 * @param args Its arguments (a docker container named there is the one read).
 * @param text Its output.
 * @returns The fields it measures (none when docker stats names no matching container), or
 * null for a command that measures no memory.
 *
 * @example
 * ```ts
 * import { captureMemory } from "./_snapshot_rows.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(captureMemory("redis-cli", ["-p", "6380", "DBSIZE"], "(integer) 42\n"), { keys: 42 });
 * assert.equal(captureMemory("redis-cli", ["ping"], "PONG\n"), null);
 * ```
 */
export function captureMemory(
  tool: string,
  args: readonly string[],
  text: string,
): MemoryFields | null {
  const words = args.map((a) => a.toLowerCase());
  if (tool === "docker") {
    const rows = parseDockerStats(text);
    const named = rows.find((r) => words.includes(r.name.toLowerCase())) ??
      (rows.length === 1 ? rows[0] : undefined);
    return named ? containerMemory(named) : {};
  }
  if (words.includes("dbsize")) return { keys: parseDbsize(text) };
  if (words.includes("info")) return memoryViews(parseInfo(text));
  return null;
}

/** A standalone capture read whole: what its snapshot run holds. */
export interface CaptureSnapshot {
  /** The tool that printed it. */
  tool: "redis-cli" | "docker";
  /** The run's `output_format`. */
  outputFormat: "info" | "docker-stats" | "cli-latency" | "dbsize";
  /** The server an INFO reply names, else null. */
  identity: ServerIdentity | null;
  /** INFO fields, for `server_info` rows (empty for other captures), secrets redacted. */
  info: InfoField[];
  /** `memory` row fields, one per row, `source_line` set. */
  memory: MemoryFields[];
}

/**
 * Reads a file that is one capture of another tool: an INFO reply (server, version,
 * `server_info` fields, a memory row), a docker stats table (a memory row per container), a
 * DBSIZE reply (a memory row with the key count) or redis-cli --latency output (no rows).
 *
 * @param text The capture.
 * @param kind What {@link detectKind} made of it.
 * @param lines Its first and last line in the file.
 * @returns The snapshot, or null for any other text.
 *
 * @example
 * ```ts
 * import { readCapture } from "./_snapshot_rows.ts";
 * import assert from "node:assert/strict";
 * const s = readCapture("(integer) 7\n", "unknown", { first: 1, last: 1 })!;
 * assert.equal(s.outputFormat, "dbsize");
 * assert.deepEqual(s.memory, [{ source_line: 1, keys: 7 }]);
 * assert.equal(readCapture("hello\n", "unknown", { first: 1, last: 1 }), null);
 * const info = readCapture("# Replication\nmasterauth:pw\n", "redis-info", { first: 1, last: 2 })!;
 * assert.equal(info.info[0].value, "***");
 * ```
 */
export function readCapture(
  text: string,
  kind: DetectedKind,
  lines: { first: number; last: number },
): CaptureSnapshot | null {
  const row = (fields: MemoryFields): MemoryFields => ({ source_line: lines.last, ...fields });
  switch (kind) {
    case "redis-info": {
      const info = redactInfo(parseInfo(text));
      const memory = infoNumber(info, "used_memory", "used_memory_human") !== null
        ? [row({ keys: keyspaceKeys(info), ...memoryViews(info) })]
        : [];
      return {
        tool: "redis-cli",
        outputFormat: "info",
        identity: serverIdentity(info),
        info,
        memory,
      };
    }
    case "docker-stats":
      return {
        tool: "docker",
        outputFormat: "docker-stats",
        identity: null,
        info: [],
        memory: parseDockerStats(text, lines.first).map((r) =>
          row({ ...containerMemory(r), source_line: r.line })
        ),
      };
    case "redis-cli-latency":
      return {
        tool: "redis-cli",
        outputFormat: "cli-latency",
        identity: null,
        info: [],
        memory: [],
      };
    case "unknown": {
      const keys = parseDbsize(text);
      if (keys === null) return null;
      return {
        tool: "redis-cli",
        outputFormat: "dbsize",
        identity: null,
        info: [],
        memory: [row({ keys })],
      };
    }
    default:
      return null;
  }
}
