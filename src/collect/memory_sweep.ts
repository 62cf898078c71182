/**
 * Memory collection: a key-count sweep over a Redis client (fill to each target with pipelined
 * SETs, wait until memory settles, then read DBSIZE, INFO memory, the server process's RSS from
 * /proc and the container's memory from `docker stats`), a `docker stats` sampler, and a
 * process RSS reader. Every loop is bounded in keys and time.
 *
 * @module
 */

import type { MemoryRow } from "../schema.ts";
import { infoNumber, memoryRow, memoryViews, runRow, snapshotRows } from "./_rows.ts";
import { type DockerStatsRow, parseDockerStats } from "./docker_stats.ts";
import { type HostFacts, hostFacts } from "./host.ts";
import { parseInfo } from "./info.ts";
import { DenoProcessRunner, type ProcessRunner, ToolNotFoundError } from "./process.ts";
import { connect, type ServerSnapshot, snapshotServer } from "./server.ts";
import { newRunId, type RunInput, RunWriter } from "./store.ts";
import { isLocal, type ServerTarget, transportOf } from "./target.ts";

/** No Docker engine could be reached (or no docker client is installed). */
export class DockerUnavailableError extends Error {
  /** @param message What docker said. */
  constructor(message: string) {
    super(message);
    this.name = "DockerUnavailableError";
  }
}

/**
 * One `docker stats --no-stream --format '{{json .}}' [NAME]` sample.
 *
 * @throws {DockerUnavailableError} When docker is missing or no engine answers (with docker's
 * own message, e.g. "Cannot connect to the Docker daemon at unix:///var/run/docker.sock").
 */
export async function dockerStats(
  runner: ProcessRunner,
  container?: string,
): Promise<DockerStatsRow[]> {
  let r;
  try {
    r = await runner.run({
      argv: [
        "docker",
        "stats",
        "--no-stream",
        "--format",
        "{{json .}}",
        ...(container ? [container] : []),
      ],
      timeoutMs: 15_000,
      capture: true,
    });
  } catch (e) {
    if (e instanceof ToolNotFoundError) {
      throw new DockerUnavailableError("docker: not found on PATH (no Docker client)");
    }
    throw e;
  }
  const err = new TextDecoder().decode(r.stderr ?? new Uint8Array()).trim();
  if (r.code !== 0) {
    throw new DockerUnavailableError(
      `docker stats failed (exit ${r.code ?? r.signal}): ${err || "no message"}` +
        (/Cannot connect to the Docker daemon/.test(err)
          ? " — no Docker engine is running here; container memory is left empty"
          : ""),
    );
  }
  return parseDockerStats(new TextDecoder().decode(r.stdout ?? new Uint8Array()));
}

/**
 * The resident set size of a local process: `VmRSS` from /proc/<pid>/status, or `ps -o rss=`
 * when /proc cannot be read (Deno asks for --allow-all to read /proc); null when the process is
 * not on this machine.
 */
export async function processRssBytes(pid: number, runner?: ProcessRunner): Promise<number | null> {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    if (m) return Number(m[1]) * 1024;
  } catch { /* not readable here: ask ps */ }
  if (!runner) return null;
  try {
    const r = await runner.run({
      argv: ["ps", "-o", "rss=", "-p", String(pid)],
      timeoutMs: 5000,
      capture: true,
    });
    const kb = Number(new TextDecoder().decode(r.stdout ?? new Uint8Array()).trim());
    return r.code === 0 && Number.isFinite(kb) && kb > 0 ? kb * 1024 : null;
  } catch {
    return null;
  }
}

/** Options of {@link runMemorySweep}. */
export interface MemorySweepOptions {
  /** Dataset directory. */
  data: string;
  target: ServerTarget;
  /** Stored as the run's label. */
  label?: string;
  /** Key counts to measure at, ascending. */
  keyCounts: number[];
  /** @default {3} */
  valueSizeBytes?: number;
  /** FLUSHDB before the sweep (the server must be one you may empty). @default {false} */
  flush?: boolean;
  /** Container whose `docker stats` memory to record. */
  container?: string;
  /** Runner for `docker` (when `container` is set). */
  runner?: ProcessRunner;
  /** SETs per pipeline. @default {1000} */
  batch?: number;
  /** Limit on keys, to keep every loop bounded. @default {20_000_000} */
  maxKeys?: number;
  /** Limit on the sweep's duration. @default {600} */
  maxDurationS?: number;
  tags?: Record<string, string>;
  plan?: { name: string; cell: string; repetition: number };
  onProgress?: (e: { step: number; keys: number; target: number }) => void;
  signal?: AbortSignal;
  /** @default {() => new Date()} */
  now?: () => Date;
}

/** What a sweep came to. */
export interface MemorySweepResult {
  runId: string;
  status: "complete" | "incomplete" | "failed";
  steps: number;
  reason: string | null;
  /** Set when container memory was asked for and docker could not give it. */
  dockerError: string | null;
}

/**
 * Fills a server to each key count in turn and records its memory at each step, as one run
 * with `memory` rows (keys `key:%012d`, 16 bytes, as redis-benchmark -r names them).
 *
 * @throws {RangeError} For key counts that are not ascending positive integers, or above maxKeys.
 */
export async function runMemorySweep(o: MemorySweepOptions): Promise<MemorySweepResult> {
  const counts = o.keyCounts;
  if (
    counts.length === 0 ||
    counts.some((c, i) => !Number.isInteger(c) || c < 1 || (i > 0 && c <= counts[i - 1]))
  ) {
    throw new RangeError(
      `invalid key counts: ${counts.join(", ")} (expected ascending positive integers)`,
    );
  }
  const maxKeys = o.maxKeys ?? 20_000_000;
  if (counts[counts.length - 1] > maxKeys) {
    throw new RangeError(`invalid key count ${counts.at(-1)}: above maxKeys ${maxKeys}`);
  }
  const now = o.now ?? (() => new Date());
  const valueSize = o.valueSizeBytes ?? 3;
  const value = "x".repeat(valueSize);
  const batch = o.batch ?? 1000;
  const runner = o.runner ?? new DenoProcessRunner();
  const deadline = Date.now() + (o.maxDurationS ?? 600) * 1000;
  const writer = new RunWriter(o.data, newRunId(now()));
  const startedAt = now();
  const t0 = Date.now();
  const host = hostFacts();
  let reason: string | null = null;
  let dockerError: string | null = null;
  const memory: MemoryRow[] = [];
  let before;
  let after;
  try {
    before = await snapshotServer(o.target);
    const client = await connect(o.target, 10_000);
    try {
      if (o.flush) await client.flushdb();
      let next = Number(await client.dbsize());
      const pid = infoNumber(before.info, "process_id");
      const local = isLocal(o.target);
      for (const [step, target] of counts.entries()) {
        while (next < target) {
          if (o.signal?.aborted) throw new Error("interrupted (Ctrl-C / SIGTERM)");
          if (Date.now() > deadline) {
            throw new Error(`stopped after ${o.maxDurationS ?? 600} s (maxDurationS)`);
          }
          const p = client.pipeline();
          const end = Math.min(target, next + batch);
          for (let i = next; i < end; i++) p.set(`key:${String(i).padStart(12, "0")}`, value);
          await p.exec();
          next = end;
          o.onProgress?.({ step, keys: next, target });
        }
        // settle: used_memory stable (±0.1 %) over two reads 200 ms apart, at most 3 s
        let last = -1;
        for (let k = 0; k < 15; k++) {
          const used = infoNumber(parseInfo(await client.info("memory")), "used_memory") ?? 0;
          if (last > 0 && Math.abs(used - last) / last < 0.001) break;
          last = used;
          await new Promise((r) => setTimeout(r, 200));
        }
        const info = parseInfo(await client.info("memory"));
        let container: { bytes: number | null; name: string } | null = null;
        if (o.container && dockerError === null) {
          try {
            const rows = await dockerStats(runner, o.container);
            const r = rows.find((x) => x.name === o.container) ?? rows[0];
            if (r) container = { bytes: r.memUsageBytes, name: r.name };
          } catch (e) {
            if (!(e instanceof DockerUnavailableError)) throw e;
            dockerError = e.message;
          }
        }
        memory.push(memoryRow(writer.runId, step, before.identity.server, {
          keys: Number(await client.dbsize()),
          target_keys: target,
          value_size_bytes: valueSize,
          ...memoryViews(info),
          process_rss_bytes: local && pid !== null ? await processRssBytes(pid, runner) : null,
          container_memory_bytes: container?.bytes ?? null,
          container_name: container?.name ?? null,
          elapsed_s: (Date.now() - t0) / 1000,
        }));
      }
    } finally {
      client.disconnect();
    }
  } catch (e) {
    reason = (e as Error).message;
  }
  try {
    after = await snapshotServer(o.target);
  } catch { /* the before snapshot stays */ }
  const status: MemorySweepResult["status"] = memory.length === counts.length
    ? "complete"
    : memory.length > 0
    ? "incomplete"
    : "failed";
  const snaps = snapshotRows(writer.runId, [["before", before], ["after", after]]);
  writer.commit({
    run: memoryRun(o, {
      runId: writer.runId,
      tool: "kvlab-memory-sweep",
      command: `memory sweep: ${counts.join(",")} keys, ${valueSize}-byte values${
        o.flush ? ", FLUSHDB first" : ""
      }`,
      before,
      host,
      startedAt,
      finishedAt: now(),
      status,
      reason,
      dockerError,
    }),
    tables: { memory, server_info: snaps.info, server_config: snaps.config },
    raw: [],
    manifest: { key_counts: counts, value_size_bytes: valueSize, docker_error: dockerError, host },
  });
  return { runId: writer.runId, status, steps: memory.length, reason, dockerError };
}

/** Options of {@link runMemorySampler}. */
export interface MemorySamplerOptions {
  data: string;
  target: ServerTarget;
  label?: string;
  /** @default {1000} */
  intervalMs?: number;
  /** Bounded: at most 24 h. */
  durationS: number;
  /** Container whose `docker stats` memory to record. */
  container?: string;
  runner?: ProcessRunner;
  tags?: Record<string, string>;
  onSample?: (row: MemoryRow) => void;
  signal?: AbortSignal;
  now?: () => Date;
}

/**
 * Samples a server's memory every interval for a bounded time: DBSIZE, INFO memory, the server
 * process's RSS (local servers) and the container's memory (when named and a Docker engine
 * answers), as `memory` rows with `elapsed_s`, in one run.
 *
 * @throws {RangeError} For an interval under 50 ms or a duration outside (0, 86400] s.
 */
export async function runMemorySampler(o: MemorySamplerOptions): Promise<MemorySweepResult> {
  const intervalMs = o.intervalMs ?? 1000;
  if (!(intervalMs >= 50)) throw new RangeError(`invalid interval: ${intervalMs} ms (at least 50)`);
  if (!(o.durationS > 0 && o.durationS <= 86400)) {
    throw new RangeError(`invalid duration: ${o.durationS} s (0 < d ≤ 86400)`);
  }
  const now = o.now ?? (() => new Date());
  const runner = o.runner ?? new DenoProcessRunner();
  const writer = new RunWriter(o.data, newRunId(now()));
  const startedAt = now();
  const host = hostFacts();
  const memory: MemoryRow[] = [];
  let reason: string | null = null;
  let dockerError: string | null = null;
  let before;
  try {
    before = await snapshotServer(o.target);
    const pid = infoNumber(before.info, "process_id");
    const local = isLocal(o.target);
    const client = await connect(o.target, 10_000);
    const t0 = Date.now();
    try {
      for (let i = 0; Date.now() - t0 <= o.durationS * 1000 && i < 1_000_000; i++) {
        if (o.signal?.aborted) break;
        const info = parseInfo(await client.info("memory"));
        let container: DockerStatsRow | undefined;
        if (o.container && dockerError === null) {
          try {
            container = (await dockerStats(runner, o.container)).find((r) =>
              r.name === o.container
            );
          } catch (e) {
            if (!(e instanceof DockerUnavailableError)) throw e;
            dockerError = e.message;
          }
        }
        const row = memoryRow(writer.runId, i, before.identity.server, {
          keys: Number(await client.dbsize()),
          ...memoryViews(info),
          process_rss_bytes: local && pid !== null ? await processRssBytes(pid, runner) : null,
          container_memory_bytes: container?.memUsageBytes ?? null,
          container_name: container?.name ?? null,
          elapsed_s: (Date.now() - t0) / 1000,
        });
        memory.push(row);
        o.onSample?.(row);
        const wait = t0 + (i + 1) * intervalMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    } finally {
      client.disconnect();
    }
  } catch (e) {
    reason = (e as Error).message;
  }
  const status: MemorySweepResult["status"] = reason
    ? (memory.length ? "incomplete" : "failed")
    : "complete";
  writer.commit({
    run: memoryRun(o, {
      runId: writer.runId,
      tool: "kvlab-memory-sampler",
      command: `memory sampler: every ${intervalMs} ms for ${o.durationS} s${
        o.container ? `, container ${o.container}` : ""
      }`,
      before,
      host,
      startedAt,
      finishedAt: now(),
      status,
      reason,
      dockerError,
    }),
    tables: { memory },
    raw: [],
    manifest: { interval_ms: intervalMs, duration_s: o.durationS, docker_error: dockerError, host },
  });
  return { runId: writer.runId, status, steps: memory.length, reason, dockerError };
}

/** The `runs` row of a memory sweep or sampler run. */
function memoryRun(
  o: {
    target: ServerTarget;
    label?: string;
    tags?: Record<string, string>;
    plan?: MemorySweepOptions["plan"];
  },
  r: {
    runId: string;
    tool: string;
    command: string;
    before: ServerSnapshot | undefined;
    host: HostFacts;
    startedAt: Date;
    finishedAt: Date;
    status: MemorySweepResult["status"];
    reason: string | null;
    dockerError: string | null;
  },
): RunInput {
  return runRow({
    run_id: r.runId,
    tool: r.tool,
    tool_version: null,
    command: r.command,
    server: r.before?.identity.server ?? "unknown",
    server_version: r.before?.identity.version ?? null,
    target: o.target.display,
    transport: transportOf(o.target),
    label: o.label ?? null,
    tags: o.tags,
    started_at: r.startedAt,
    ingested_at: r.finishedAt,
    finished_at: r.finishedAt,
    status: r.status,
    output_format: "none",
    error: r.reason ?? (r.dockerError ? `container memory: ${r.dockerError}` : null),
    warning_count: r.dockerError ? 1 : 0,
    plan_name: o.plan?.name ?? null,
    plan_cell: o.plan?.cell ?? null,
    repetition: o.plan?.repetition ?? null,
    server_maxmemory_bytes: infoNumber(r.before?.info, "maxmemory"),
    server_config_status: r.before?.configStatus ?? null,
  }, r.host);
}
