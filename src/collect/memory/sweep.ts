/**
 * Memory collection: a key-count sweep over a Redis client (fill to each target with pipelined
 * SETs, wait until memory settles, then read DBSIZE, INFO memory, the server process's RSS from
 * /proc and the container's memory from `docker stats`, `../docker/stats.ts`), a sampler of the
 * same views over time, and a process RSS reader. The sweep and the sampler share one skeleton
 * (snapshot, connect, loop of samples, snapshot, commit); every loop is bounded in keys and time.
 *
 * @module
 */

import type { MemoryRow, ResultsRow } from "../../schema.ts";
import type { Redis } from "ioredis";
import { memoryRow } from "../_rows.ts";
import type { MemoryFields } from "../formats/format.ts";
import { infoNumber, memoryViews } from "../formats/info/info.ts";
import { type CollectOptions, collectRun, type Measurement, snapshotAfter } from "../collector.ts";
import type { DockerStatsRow } from "../formats/docker_stats/docker_stats.ts";
import { dockerStats } from "../docker/stats.ts";
import { DockerUnavailableError } from "../docker/engine.ts";
import { parseInfo } from "../formats/info/info.ts";
import { DenoProcessRunner, type ProcessRunner } from "../process.ts";
import { connect, snapshotServer } from "../server.ts";
import { LIMITS } from "../limits.ts";
import { isLocal, type ServerTarget } from "../target.ts";
import { holdsListeningPort, titleNames } from "../../system/pids.ts";
import { readSystemFiles } from "../../system/proc.ts";

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

/** What the memory sweep and the sampler both take. */
export interface MemoryRunOptions extends CollectOptions {
  target: ServerTarget;
  /** Container whose `docker stats` memory to record. */
  container?: string;
  /** Runner for `docker` and `ps` (when `container` is set, or /proc cannot be read). */
  runner?: ProcessRunner;
  signal?: AbortSignal;
}

/** Options of {@link runMemorySweep}. */
export interface MemorySweepOptions extends MemoryRunOptions {
  /** Key counts to measure at, ascending. */
  keyCounts: number[];
  /** @default {3} */
  valueSizeBytes?: number;
  /** FLUSHDB before the sweep (the server must be one you may empty). @default {false} */
  flush?: boolean;
  /** SETs per pipeline. @default {1000} */
  batch?: number;
  /** Limit on keys, to keep every loop bounded. @default {20_000_000} */
  maxKeys?: number;
  /** Limit on the sweep's duration. @default {600} */
  maxDurationS?: number;
  onProgress?: (e: { step: number; keys: number; target: number }) => void;
}

/** What a sweep came to. */
export interface MemorySweepResult {
  runId: string;
  status: "complete" | "incomplete" | "failed";
  steps: number;
  reason: string | null;
  /** Set when container memory was asked for and docker could not give it. */
  dockerError: string | null;
  /** The reason the run was stored with (its container's OOM kill first, when it had one). */
  runReason: string | null;
  /** Why the process RSS was not read: the server's `process_id` is not the process on its
   * port (null when it was, or the server is not local). */
  rssNote: string | null;
  /** The `memory` rows the run stored, as committed. */
  memory: readonly MemoryRow[];
  /** The `results` rows the run stored (a memory run stores none). */
  results: readonly ResultsRow[];
}

/**
 * Fills a server to each key count in turn and records its memory at each step, as one run
 * with `memory` rows (keys `key:%012d`, 16 bytes, as redis-benchmark -r names them).
 *
 * @param o See {@link MemorySweepOptions}.
 * @returns The stored run's id, status and steps.
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
  const maxKeys = o.maxKeys ?? LIMITS.memoryKeys.max;
  if (counts[counts.length - 1] > maxKeys) {
    throw new RangeError(`invalid key count ${counts.at(-1)}: above maxKeys ${maxKeys}`);
  }
  const valueSize = o.valueSizeBytes ?? 3;
  const value = "x".repeat(valueSize);
  const batch = o.batch ?? 1000;
  const maxDurationS = o.maxDurationS ?? 600;
  const deadline = Date.now() + maxDurationS * 1000;
  return await memoryRun(o, {
    tool: "kvlab-memory-sweep",
    command: `memory sweep: ${counts.join(",")} keys, ${valueSize}-byte values${
      o.flush ? ", FLUSHDB first" : ""
    }`,
    manifest: { key_counts: counts, value_size_bytes: valueSize },
    snapshots: true,
    status: (rows) => rows === counts.length ? "complete" : rows > 0 ? "incomplete" : "failed",
    loop: async (client, sample) => {
      if (o.flush) await client.flushdb();
      let next = Number(await client.dbsize());
      for (const [step, target] of counts.entries()) {
        while (next < target) {
          if (o.signal?.aborted) throw new Error("interrupted (Ctrl-C / SIGTERM)");
          if (Date.now() > deadline) {
            throw new Error(`stopped after ${maxDurationS} s (maxDurationS)`);
          }
          const p = client.pipeline();
          const end = Math.min(target, next + batch);
          for (let i = next; i < end; i++) p.set(`key:${String(i).padStart(12, "0")}`, value);
          // a server gone mid-fill (an OOM kill) fails each SET: stop there, not after the last
          const failed = (await p.exec())?.find(([e]) => e);
          if (failed) throw failed[0];
          next = end;
          o.onProgress?.({ step, keys: next, target });
        }
        await settle(client);
        await sample(step, { target_keys: target, value_size_bytes: valueSize });
      }
    },
  });
}

/** Waits until used_memory is stable (±0.1 %) over two reads 200 ms apart, at most 3 s. */
async function settle(client: Redis): Promise<void> {
  let last = -1;
  for (let k = 0; k < 15; k++) {
    const used = infoNumber(parseInfo(await client.info("memory")), "used_memory") ?? 0;
    if (last > 0 && Math.abs(used - last) / last < 0.001) break;
    last = used;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Options of {@link runMemorySampler}. */
export interface MemorySamplerOptions extends MemoryRunOptions {
  /** @default {1000} */
  intervalMs?: number;
  /** Bounded: at most 24 h. */
  durationS: number;
  onSample?: (row: MemoryRow) => void;
}

/**
 * Samples a server's memory every interval for a bounded time: DBSIZE, INFO memory, the server
 * process's RSS (local servers) and the container's memory (when named and a Docker engine
 * answers), as `memory` rows with `elapsed_s`, in one run.
 *
 * @param o See {@link MemorySamplerOptions}.
 * @returns The stored run's id, status and samples (`steps`).
 * @throws {RangeError} For an interval under 50 ms or a duration outside (0, 86400] s.
 */
export async function runMemorySampler(o: MemorySamplerOptions): Promise<MemorySweepResult> {
  const intervalMs = o.intervalMs ?? 1000;
  if (!(intervalMs >= 50)) throw new RangeError(`invalid interval: ${intervalMs} ms (at least 50)`);
  if (!(o.durationS > 0 && o.durationS <= 86400)) {
    throw new RangeError(`invalid duration: ${o.durationS} s (0 < d ≤ 86400)`);
  }
  return await memoryRun(o, {
    tool: "kvlab-memory-sampler",
    command: `memory sampler: every ${intervalMs} ms for ${o.durationS} s${
      o.container ? `, container ${o.container}` : ""
    }`,
    manifest: { interval_ms: intervalMs, duration_s: o.durationS },
    snapshots: false,
    status: (rows, reason) => reason ? (rows ? "incomplete" : "failed") : "complete",
    loop: async (_client, sample) => {
      const t0 = Date.now();
      for (let i = 0; Date.now() - t0 <= o.durationS * 1000 && i < 1_000_000; i++) {
        if (o.signal?.aborted) break;
        const row = await sample(i); // not inside `onSample?.(…)`: that skips it when unset
        o.onSample?.(row);
        const wait = t0 + (i + 1) * intervalMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    },
  });
}

/** Reads one `memory` row now; `fields` adds what the caller knows (target keys, value size). */
type Sample = (step: number, fields?: MemoryFields) => Promise<MemoryRow>;

/** What makes a sweep or a sampler run; {@link memoryRun} does the rest. */
interface MemoryRunKind {
  tool: string;
  command: string;
  manifest: Record<string, unknown>;
  /** Store the before/after INFO and CONFIG snapshots as tables (server CPU is always kept). */
  snapshots: boolean;
  status(rows: number, reason: string | null): MemorySweepResult["status"];
  /** Takes the samples over a connected client; throws to stop with a reason. */
  loop(client: Redis, sample: Sample): Promise<void>;
}

/** What a memory run measured, before it is stored. */
interface Measured extends Measurement {
  memory: MemoryRow[];
  reason: string | null;
  dockerError: string | null;
  /** Why INFO's `process_id` was not believed (its RSS then not read), or null. */
  pidNote: string | null;
}

/**
 * A memory run on the collector skeleton: snapshot before, connect, the kind's loop of samples,
 * snapshot after; {@link collectRun} stores it (memory rows, the runs row).
 */
async function memoryRun(o: MemoryRunOptions, kind: MemoryRunKind): Promise<MemorySweepResult> {
  const { measured: m, ...run } = await collectRun(o, {
    target: o.target,
    command: kind.command,
    measure: (writer) => measureMemory(o, kind, writer.runId),
    store: (m) => {
      const status = kind.status(m.memory.length, m.reason);
      return {
        status,
        reason: m.reason ?? (m.dockerError ? `container memory: ${m.dockerError}` : null),
        tests: m.memory.length,
        interrupted: o.signal?.aborted ?? false,
        columns: {
          tool: kind.tool,
          tool_version: null,
          output_format: "none",
          warning_count: (m.dockerError ? 1 : 0) + (m.pidNote ? 1 : 0),
        },
        tables: { memory: m.memory },
        snapshots: kind.snapshots,
        manifest: { ...kind.manifest, docker_error: m.dockerError, process_rss_note: m.pidNote },
      };
    },
  });
  return {
    runId: run.runId,
    status: run.status,
    steps: m.memory.length,
    reason: m.reason,
    dockerError: m.dockerError,
    runReason: run.reason,
    rssNote: m.pidNote,
    memory: m.memory,
    results: run.results,
  };
}

/**
 * INFO's `process_id` when that process holds the server's socket (where its sockets cannot be
 * read, another user's server: when its title names the port), else null with a note in `m`
 * (issue 30: a server naming PID 1 or a neighbour had that process's RSS stored).
 */
function serverPid(pid: number, t: ServerTarget, m: Measured): number | null {
  const where = t.socket !== undefined ? { path: t.socket } : { port: t.port };
  const path = `/proc/${pid}/cmdline`;
  const holds = holdsListeningPort(pid, where) ??
    titleNames(readSystemFiles([path])[path], where);
  if (holds) return pid;
  m.pidNote = `the server says its process_id is ${pid}, but that process does not listen on ` +
    `${t.socket ?? `port ${t.port}`}: its RSS is not read (process_rss_bytes is null)`;
  return null;
}

/** The host's pid of a container's process (`docker inspect`), or null when docker cannot say. */
async function containerPid(runner: ProcessRunner, name: string): Promise<number | null> {
  try {
    const r = await runner.run({
      argv: ["docker", "inspect", "--format", "{{.State.Pid}}", name],
      timeoutMs: 15_000,
      capture: true,
    });
    const pid = Number(new TextDecoder().decode(r.stdout ?? new Uint8Array()).trim());
    return r.code === 0 && Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null; // no docker, no engine: INFO's pid is checked as any other
  }
}

/** Snapshots the server, runs the kind's loop of samples over a client, snapshots again. */
async function measureMemory(
  o: MemoryRunOptions,
  kind: MemoryRunKind,
  runId: string,
): Promise<Measured> {
  const runner = o.runner ?? new DenoProcessRunner();
  const m: Measured = { memory: [], reason: null, dockerError: null, pidNote: null };
  const containerMemory = async (): Promise<DockerStatsRow | undefined> => {
    if (!o.container || m.dockerError !== null) return undefined;
    try {
      const rows = await dockerStats(runner, o.container);
      return rows.find((x) => x.name === o.container) ?? rows[0];
    } catch (e) {
      if (!(e instanceof DockerUnavailableError)) throw e;
      m.dockerError = e.message;
    }
  };
  try {
    const snapshot = m.before = await snapshotServer(o.target);
    // the pid a local server gives is its own only when that process holds its socket; in a
    // container it is the container's (1): the host's pid of it is docker's to say
    const said = !isLocal(o.target)
      ? null
      : (o.container ? await containerPid(runner, o.container) : null) ??
        infoNumber(snapshot.info, "process_id");
    const pid = said === null ? null : serverPid(said, o.target, m);
    const client = await connect(o.target, 10_000);
    const t0 = Date.now();
    const sample: Sample = async (step, fields = {}) => {
      const info = parseInfo(await client.info("memory"));
      const container = await containerMemory();
      const row = memoryRow(runId, { step, server: snapshot.identity.server }, {
        keys: Number(await client.dbsize()),
        ...fields,
        ...memoryViews(info),
        process_rss_bytes: pid !== null ? await processRssBytes(pid, runner) : null,
        container_memory_bytes: container?.memUsageBytes ?? null,
        container_name: container?.name ?? null,
        elapsed_s: (Date.now() - t0) / 1000,
      });
      m.memory.push(row);
      return row;
    };
    try {
      await kind.loop(client, sample);
    } finally {
      client.disconnect();
    }
  } catch (e) {
    m.reason = (e as Error).message;
  }
  // the server's CPU over the run comes from the two snapshots (none before: none after, and a
  // server that answered nothing is not waited for twice)
  if (m.before) m.after = await snapshotAfter(o.target);
  return m;
}
