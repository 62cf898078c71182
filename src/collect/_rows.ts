/**
 * Rows of the dataset tables built from parsed results, shared by ingest and live collection.
 *
 * @module
 */

import type { MemoryRow, RunsRow, ServerConfigRow, ServerInfoRow } from "../schema.ts";
import type { HostFacts } from "./host.ts";
import { type InfoField, infoNumber, infoRows } from "./formats/info/info.ts";
import type { MemoryFields } from "./formats/format.ts";
import type { ServerSnapshot } from "./server.ts";
import type { RunInput } from "../store/writer.ts";

/** What a writer says of a run: the `runs` columns, with tags as an object. */
export type RunFields = Omit<RunInput, "tags" | "warning_count"> & {
  /** User tags (stored as a JSON object). @default {} */
  tags?: Readonly<Record<string, string>>;
  /** @default 0 */
  warning_count?: number;
};

/**
 * The `runs` row of a run, the one builder every collector and ingest use: tags become their
 * JSON column, host facts (when given) fill the host columns.
 *
 * @example
 * ```ts
 * import { runRow } from "./_rows.ts";
 * import assert from "node:assert/strict";
 * const now = new Date("2026-11-30T00:00:00Z");
 * const row = runRow({
 *   run_id: "r1", tool: "redis-benchmark", server: "redis", transport: "tcp",
 *   ingested_at: now, status: "complete", output_format: "csv", tags: { arm: "a" },
 * });
 * assert.equal(row.tags, '{"arm":"a"}');
 * assert.equal(row.warning_count, 0);
 * ```
 */
export function runRow(fields: RunFields, host?: HostFacts): RunInput {
  return {
    ...fields,
    tags: JSON.stringify(fields.tags ?? {}),
    warning_count: fields.warning_count ?? 0,
    ...(host ? hostColumns(host) : {}),
  };
}

/** `server_info` and `server_config` rows of server snapshots (`before`, `after`, …). */
export function snapshotRows(
  runId: string,
  snaps: ReadonlyArray<
    readonly [string, Pick<ServerSnapshot, "info" | "dbsize" | "config"> | undefined]
  >,
): { info: ServerInfoRow[]; config: ServerConfigRow[] } {
  const info: ServerInfoRow[] = [];
  const config: ServerConfigRow[] = [];
  for (const [phase, snap] of snaps) {
    if (!snap) continue;
    info.push(...infoRows(runId, phase, snap.info));
    if (snap.dbsize !== null) {
      info.push({
        run_id: runId,
        phase,
        section: "DBSIZE",
        key: "dbsize",
        value: String(snap.dbsize),
        value_num: snap.dbsize,
      });
    }
    for (const [key, value] of snap.config) config.push({ run_id: runId, phase, key, value });
  }
  return { info, config };
}

/** The host columns of a `runs` row. */
export type HostColumns = Pick<
  RunsRow,
  | "host"
  | "host_cpu_model"
  | "host_cpu_count"
  | "host_memory_bytes"
  | "host_kernel"
  | "host_os"
  | "deno_version"
>;

/** The host columns of a `runs` row. */
export function hostColumns(host: HostFacts): HostColumns {
  return {
    host: host.hostname,
    host_cpu_model: host.cpuModel,
    host_cpu_count: host.cpuCount,
    host_memory_bytes: host.memoryBytes,
    host_kernel: host.kernel,
    host_os: host.os,
    deno_version: host.denoVersion,
  };
}

/** A `memory` row of step `at.step` on `at.server`: every measurement null, then the given fields. */
export function memoryRow(
  runId: string,
  { step, server }: { step: number; server: string },
  fields: MemoryFields,
): MemoryRow {
  return {
    run_id: runId,
    step,
    server,
    keys: null,
    target_keys: null,
    value_size_bytes: null,
    used_memory_bytes: null,
    used_memory_rss_bytes: null,
    used_memory_peak_bytes: null,
    process_rss_bytes: null,
    container_memory_bytes: null,
    container_name: null,
    source_line: null,
    elapsed_s: null,
    ...fields,
  };
}

/** The server CPU columns of a `runs` row. */
export type ServerCpuColumns = Pick<RunsRow, "server_cpu_user_s" | "server_cpu_sys_s">;

/**
 * The server's CPU time over a run: INFO `used_cpu_user` and `used_cpu_sys` of the after
 * snapshot minus the before one. Null when either snapshot (or the field) is missing, or when the
 * delta is negative (the server restarted in between).
 *
 * @param before INFO fields before the run.
 * @param after INFO fields after the run.
 * @returns `server_cpu_user_s` and `server_cpu_sys_s`.
 *
 * @example
 * ```ts
 * import { serverCpuColumns } from "./_rows.ts";
 * import assert from "node:assert/strict";
 * const info = (user: number, sys: number) => [
 *   { section: "CPU", key: "used_cpu_user", value: String(user), valueNum: user },
 *   { section: "CPU", key: "used_cpu_sys", value: String(sys), valueNum: sys },
 * ];
 * assert.deepEqual(serverCpuColumns(info(1.25, 0.5), info(3.75, 1)), {
 *   server_cpu_user_s: 2.5, server_cpu_sys_s: 0.5,
 * });
 * assert.deepEqual(serverCpuColumns(info(1, 1), undefined), {
 *   server_cpu_user_s: null, server_cpu_sys_s: null,
 * });
 * assert.equal(serverCpuColumns(info(9, 9), info(1, 1)).server_cpu_user_s, null);
 * ```
 */
export function serverCpuColumns(
  before: readonly InfoField[] | undefined,
  after: readonly InfoField[] | undefined,
): ServerCpuColumns {
  const delta = (key: string): number | null => {
    const a = infoNumber(before, key);
    const b = infoNumber(after, key);
    if (a === null || b === null || b < a) return null;
    // INFO prints 6 decimals: keep the difference at that precision
    return Math.round((b - a) * 1e6) / 1e6;
  };
  return { server_cpu_user_s: delta("used_cpu_user"), server_cpu_sys_s: delta("used_cpu_sys") };
}

/** The server columns of a `runs` row that come from its snapshots. */
export type ServerColumns =
  & Pick<
    RunsRow,
    | "server"
    | "server_version"
    | "server_io_threads"
    | "server_maxmemory_bytes"
    | "server_config_status"
  >
  & ServerCpuColumns;

/**
 * The server columns of a collected run's `runs` row: identity, io-threads (CONFIG, else INFO),
 * maxmemory (INFO, else CONFIG) and CONFIG status from the before snapshot, and the server's CPU
 * time over the run from both ({@link serverCpuColumns}).
 *
 * @param before The snapshot before the run (absent when the server was unreachable).
 * @param after The snapshot after it.
 * @returns The columns (`server` is `unknown` without a snapshot).
 *
 * @example
 * ```ts
 * import { serverColumns } from "./_rows.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(serverColumns(undefined, undefined), {
 *   server: "unknown", server_version: null, server_io_threads: null,
 *   server_maxmemory_bytes: null, server_config_status: null,
 *   server_cpu_user_s: null, server_cpu_sys_s: null,
 * });
 * ```
 */
export function serverColumns(
  before: Pick<ServerSnapshot, "info" | "config" | "identity" | "configStatus"> | undefined,
  after: Pick<ServerSnapshot, "info"> | undefined,
): ServerColumns {
  const ioThreads = before?.config.find(([k]) => k === "io-threads")?.[1] ??
    before?.info.find((f) => f.key === "io_threads_active" || f.key === "io_threads")?.value;
  const maxmemory = infoNumber(before?.info, "maxmemory") ??
    Number(before?.config.find(([k]) => k === "maxmemory")?.[1] ?? NaN);
  return {
    server: before?.identity.server ?? "unknown",
    server_version: before?.identity.version ?? null,
    server_io_threads: ioThreads !== undefined ? Number(ioThreads) : null,
    server_maxmemory_bytes: Number.isFinite(maxmemory) ? maxmemory : null,
    server_config_status: before?.configStatus ?? null,
    ...serverCpuColumns(before?.info, after?.info),
  };
}
