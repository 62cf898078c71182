/**
 * `docker stats` output as an {@link OutputFormat}: a file that is one docker stats table is a
 * snapshot run with a `memory` row per container; `docker stats NAME` printed after a fill gives
 * that fill's container memory.
 *
 * @module
 */

import type { MemoryFields, TextFormat } from "../format.ts";
import { type DockerStatsRow, parseDockerStats } from "./docker_stats.ts";

/**
 * The `memory` columns of one container's `docker stats` line (nulls when there is none).
 *
 * @param row The container's line, or undefined.
 * @returns `container_memory_bytes` and `container_name`.
 *
 * @example
 * ```ts
 * import { containerMemory } from "./format.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(containerMemory(undefined), { container_memory_bytes: null, container_name: null });
 * ```
 */
export function containerMemory(
  row: Pick<DockerStatsRow, "memUsageBytes" | "name"> | undefined,
): Pick<MemoryFields, "container_memory_bytes" | "container_name"> {
  return { container_memory_bytes: row?.memUsageBytes ?? null, container_name: row?.name ?? null };
}

/**
 * `docker stats` output (the table, or `--format '{{json .}}'` lines).
 *
 * @example
 * ```ts
 * import { dockerStatsFormat } from "./format.ts";
 * import assert from "node:assert/strict";
 * const text = "CONTAINER ID   NAME    CPU %     MEM USAGE / LIMIT     MEM %     NET I/O   BLOCK I/O   PIDS\n" +
 *   "0123456789ab   redis   0.10%     3MiB / 1GiB     0.30%     0B / 0B   0B / 0B     5\n";
 * const cmd = { tool: "docker", program: "docker", args: ["stats", "--no-stream", "redis"] };
 * assert.equal(dockerStatsFormat.capture!(text, cmd)?.container_memory_bytes, 3 * 1024 * 1024);
 * assert.equal(dockerStatsFormat.accepts!(["ps"]), "docker command other than stats");
 * ```
 */
export const dockerStatsFormat: TextFormat = {
  name: "docker-stats",
  tool: "docker",
  description: "docker stats output",
  reads: "docker stats",
  results: false,
  reading: "text",
  maxBytes: 16 << 20,
  programs: ["docker"],
  recognizes: (t) => /^CONTAINER ID\s+NAME/.test(t) || /^\{"BlockIO":/.test(t),
  accepts: (args) => args[0] === "stats" ? null : "docker command other than stats",
  capture(text, command) {
    const words = command.args.map((a) => a.toLowerCase());
    const rows = parseDockerStats(text);
    const named = rows.find((r) => words.includes(r.name.toLowerCase())) ??
      (rows.length === 1 ? rows[0] : undefined);
    return named ? containerMemory(named) : {};
  },
  read(text, { firstLine }) {
    return {
      tool: "docker",
      outputFormat: "docker-stats",
      status: "complete",
      error: null,
      tests: 0,
      tables: {},
      memory: parseDockerStats(text, firstLine).map((r) => ({
        ...containerMemory(r),
        source_line: r.line,
      })),
      warnings: [],
    };
  },
};
