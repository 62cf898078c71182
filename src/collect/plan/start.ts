/**
 * A plan server that kvlab starts itself, in place of `url:`: `start: { engine, version?,
 * config?, tls?, replicas?, cluster?: { shards, replicas } }` starts processes of the installed
 * binary on free loopback ports (`../topology/`); `start: { engine, container: true,
 * memory_limit?, cpus? }` runs it in a container of the image kvlab makes from that binary
 * (`../docker/`). Either lasts for the plan's duration. Reading the field is pure;
 * `./servers.ts` starts and removes what it names.
 *
 * @module
 */

import { SERVER_ENGINES, type ServerEngine } from "../docker/image.ts";
import { readTopologyStart, TOPOLOGY_FIELDS } from "./start_topology.ts";
import type { TopologySpec } from "../topology/spec.ts";
import type { PlanPath, PlanReader } from "./reader.ts";

/** How kvlab starts a plan's server. */
export interface ServerStart extends Partial<Omit<TopologySpec, "engine">> {
  /** The installed server to run: redis (`redis-server`) or valkey (`valkey-server`). */
  engine: ServerEngine;
  /** In a container; without it, processes of the installed binary. */
  container?: true;
  /** `docker run --memory` (no swap beyond it). */
  memoryLimitBytes?: number;
  /** `docker run --cpus`: a CPU quota (1.5 = one and a half CPUs' time). */
  cpus?: number;
}

/** The fields of `start:`. */
export const START_FIELDS = [
  "engine",
  "container",
  "memory_limit",
  "cpus",
  ...TOPOLOGY_FIELDS,
] as const;

/** Docker's smallest memory limit (6 MiB). */
export const MIN_MEMORY_LIMIT_BYTES = 6 * 2 ** 20;

/**
 * A memory limit as a plan gives it: bytes, or a number with a unit as docker takes it (`b`,
 * `k`, `m`, `g`, 1024-based; `KiB`, `MiB`, `GiB` and `MB`-style spellings mean the same).
 *
 * @param value The plan's value.
 * @returns Bytes, or null when it is not a size.
 *
 * @example
 * ```ts
 * import { parseMemoryLimit } from "./start.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseMemoryLimit("64m"), 64 * 2 ** 20);
 * assert.equal(parseMemoryLimit("1.5GiB"), 1.5 * 2 ** 30);
 * assert.equal(parseMemoryLimit(67108864), 67108864);
 * assert.equal(parseMemoryLimit("64 bananas"), null);
 * ```
 */
export function parseMemoryLimit(value: unknown): number | null {
  if (typeof value === "number") return Number.isInteger(value) && value > 0 ? value : null;
  if (typeof value !== "string") return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([bkmg]?)(?:i?b)?\s*$/i.exec(value);
  if (!m) return null;
  const scale = { "": 1, b: 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 }[m[2].toLowerCase()]!;
  const bytes = Math.round(Number(m[1]) * scale);
  return bytes > 0 ? bytes : null;
}

/**
 * Reads a server's `start:` (errors at the field's line).
 *
 * @param read The plan's reader.
 * @param path The `start` field of the server.
 * @returns How to start the server.
 */
export function readServerStart(read: PlanReader, path: PlanPath): ServerStart {
  read.section(path, START_FIELDS, "expected { engine: redis|valkey, … }");
  const engine = read.string([...path, "engine"]);
  if (!(SERVER_ENGINES as readonly string[]).includes(engine)) {
    read.fail([...path, "engine"], `expected ${SERVER_ENGINES.join(" or ")}`);
  }
  const container = read.value([...path, "container"]);
  if (container === undefined || container === false) {
    for (const k of ["memory_limit", "cpus"]) {
      if (read.value([...path, k]) !== undefined) {
        read.fail([...path, k], "needs container: true (a limit kvlab sets on a container)");
      }
    }
    return { engine: engine as ServerEngine, ...readTopologyStart(read, path) };
  }
  if (container !== true) read.fail([...path, "container"], "expected true or false");
  for (const k of TOPOLOGY_FIELDS) {
    if (read.value([...path, k]) !== undefined) {
      read.fail([...path, k], "not with container: true (kvlab starts it as processes)");
    }
  }
  const start: ServerStart = { engine: engine as ServerEngine, container: true };
  const limit = read.value([...path, "memory_limit"]);
  if (limit !== undefined) {
    const bytes = parseMemoryLimit(limit);
    if (bytes === null || bytes < MIN_MEMORY_LIMIT_BYTES) {
      read.fail(
        [...path, "memory_limit"],
        "expected a size of at least 6 MiB (docker's least): bytes, or 64m, 512MiB, 2g",
      );
    }
    start.memoryLimitBytes = bytes;
  }
  if (read.value([...path, "cpus"]) !== undefined) {
    start.cpus = read.number([...path, "cpus"], 0, { positive: true, max: 1024 });
  }
  return start;
}
