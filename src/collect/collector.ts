/**
 * The one live-run skeleton every collector uses (redis-benchmark, memtier_benchmark, kvlab's
 * open-loop and pub/sub engines, the memory sweep and sampler), and the contracts they share:
 * what a collector is told ({@link CollectOptions}), what it returns ({@link CollectedRun}), a
 * and how a command is shown ({@link argvToCommand}).
 *
 * {@link collectRun} does, once for all of them: host facts and the clock, the run's writer,
 * the measurement (the collector's own), a disk-full error naming the run's folder, the `runs`
 * row (labels, plan cell, target, times, server columns and server CPU from the before/after
 * snapshots, and how quiet the machine was around the measurement: the noise guard, see
 * `noise.ts`), the `server_info`/`server_config` snapshot tables, process facts in the manifest,
 * and the commit. A collector only says how to measure and what the measurement means.
 *
 * @module
 */

import { diskFullAt, writingAt } from "../system/disk.ts";
import { readSystemFiles } from "../system/proc.ts";
import { type RunFields, runRow, serverColumns, snapshotRows } from "./_rows.ts";
import { infoNumber } from "./formats/info/info.ts";
import { toolClusterFacts, type ToolNodeCalls, toolNodeCheck } from "./cluster/nodes.ts";
import {
  noiseRunColumns,
  type NoiseSnapshot,
  parseCpusAllowed,
  readNoiseSnapshot,
  shareCpus,
} from "./noise.ts";
import { parseCpuList } from "../system/cpu_list.ts";
import { type HostFacts, hostFacts } from "./host.ts";
import type { ProcessResult, ProcessRunner, RunProcessOptions } from "./process.ts";
import { type ServerSnapshot, ServerUnreachableError, snapshotServer } from "./server.ts";
import { Dataset, type DatasetRef } from "../store/dataset.ts";
import { newRunId, type RawFile, type RunTables, type RunWriter } from "../store/writer.ts";
import { isLocal, type ServerTarget, transportOf } from "./target.ts";
import { redactSent, redactText, rememberSentSecret } from "../text/redact.ts";
import { stopCause } from "./step_outcome.ts";

export { type StepFaults, stepFaults, stepStatus, stopCause } from "./step_outcome.ts";
import type { ResultsRow } from "../schema.ts";
import { type RunWatch, withWatched } from "./watch.ts";

export * from "./watch.ts";

/** Where a collected run comes from: what a plan or the CLI tells every live collector. */
export interface CollectedRunLabels {
  /** Stored as `label` (plans store the server's name here). */
  label?: string;
  /** User tags. */
  tags?: Record<string, string>;
  /** The plan cell this run is, when a plan made it. */
  plan?: { name: string; cell: string; repetition: number };
  /**
   * What is watched beside the run: the server's container (`docker/watch.ts`), sampled while
   * the run measures, its facts stored with the run, and a container that died failing it.
   */
  watch?: RunWatch;
}

/** What every live collector is told besides its own parameters. */
export interface CollectOptions extends CollectedRunLabels {
  /** The dataset (or its directory). */
  data: DatasetRef;
  /** Host facts, when already known. */
  host?: HostFacts;
  /** @default {() => new Date()} */
  now?: () => Date;
}

/** What a collector that runs an external tool (redis-benchmark, memtier) is told. */
export interface ToolRunOptions extends CollectOptions {
  /** Starts the tool's process (tests may hand in their own). */
  runner: ProcessRunner;
  /**
   * Limit for the tool's run.
   * @default {600000}
   */
  timeoutMs?: number;
  /** Aborting stops the tool; the run is kept as incomplete. */
  signal?: AbortSignal;
  /**
   * What ran unrecorded just before (`warm-up`, `preload`): a stop signal that came during it
   * is named with it in the run's reason.
   */
  after?: string;
  /** Why the run must not start (its key space was not written): stored failed with it. */
  notRun?: string;
}

/** What {@link runToolBetweenSnapshots} saw: the snapshots and the tool's end, or why not run. */
export type ToolMeasurement =
  | { before?: ServerSnapshot; reason: string | null; after?: undefined; result?: undefined }
  | {
    before: ServerSnapshot;
    after: ServerSnapshot | undefined;
    result: ProcessResult;
    /** A cluster's masters' calls before and after (null for a plain server). */
    nodeCalls?: ToolNodeCalls | null;
  };

/**
 * The measurement of a tool collector: snapshots the server, runs the tool (with the options'
 * runner, timeout and signal), snapshots again. A server that is down, or a signal aborted
 * before the tool starts, runs nothing: `{ before?, reason }` says why.
 *
 * @param target The server.
 * @param options The runner, timeout and signal.
 * @param process What to run and where its output goes (argv, output paths, callbacks), asked
 * for once the server answered (raw paths are made only for a run that starts).
 * @returns The snapshots and the tool's result, or the reason nothing ran.
 */
export async function runToolBetweenSnapshots(
  target: ServerTarget,
  options: ToolRunOptions,
  process: () => Omit<RunProcessOptions, "timeoutMs" | "signal">,
): Promise<ToolMeasurement> {
  const before = await snapshotBefore(target);
  if ("reason" in before) return before;
  if (options.notRun) return { before, reason: options.notRun };
  const cluster = await toolClusterFacts(target, before.info);
  if ("reason" in cluster) return { before, reason: cluster.reason };
  if (options.signal?.aborted) {
    const during = options.after ? ` (during its ${options.after})` : "";
    return {
      before,
      reason: `interrupted (${stopCause(options.signal)}) before the run started${during}`,
    };
  }
  const result = await options.runner.run({
    ...process(),

    timeoutMs: options.timeoutMs ?? 600_000,
    signal: options.signal,
  });
  const after = await snapshotAfter(target);
  return { before, after, result, nodeCalls: await cluster.after() };
}

/** @deprecated Use {@link CollectOptions}: the same options, one name for every collector. */

export type CollectedStepOptions = CollectOptions;

/** What one collected run came to. */
export interface CollectedRun {
  runId: string;
  status: "complete" | "incomplete" | "failed";
  tests: number;
  /** Why the run failed or is incomplete, in words. */
  reason: string | null;
  /** The stored (redacted) command. */
  command: string;
  interrupted: boolean;
  /**
   * The `results` rows the run stored, exactly as committed (none for a run without results),
   * so a caller says what the run reached from memory instead of reading the dataset back.
   */
  results: readonly ResultsRow[];
}

/** What a measurement saw of the server: INFO/CONFIG snapshots before and after. */
export interface Measurement {
  before?: ServerSnapshot;
  after?: ServerSnapshot;
  /** A cluster's masters' calls before and after an external tool's run. */
  nodeCalls?: ToolNodeCalls | null;
}

/** The `runs` columns a collector fills itself (the skeleton fills the rest). */
export type CollectorColumns =
  & Pick<RunFields, "tool" | "tool_version" | "output_format">
  & Partial<Pick<RunFields, "warning_count" | "tool_exit_code">>;

/** What a measurement means: how the run is stored. */
export interface StoredRun {
  status: CollectedRun["status"];
  reason: string | null;
  /** Tests (result rows) the run holds, as the caller counts them. */
  tests: number;
  interrupted: boolean;
  columns: CollectorColumns;
  /**
   * The collector's tables; `server_info` and `server_config` are added by the skeleton. Its
   * `results` are all the run's results (never written as parts): the run returns them.
   */
  tables: RunTables;
  raw?: RawFile[];
  /** The collector's manifest fields; `host` and `server_config_error` are added. */
  manifest?: Record<string, unknown>;
  /** What disturbed the run besides the noise guard's findings (agents' start skew). */
  disturbance?: string | null;
  /**
   * Store the before/after INFO and CONFIG snapshots as tables (server CPU is always kept).
   * @default {true}
   */
  snapshots?: boolean;
}

/** One collector: the server, the stored command, how to measure and what it means. */
export interface Collector<M extends Measurement> {
  target: ServerTarget;
  /** The stored (redacted) command. */
  command: string;
  /** Takes the measurement; raw files go through the writer. Throws only for bad options. */
  measure(writer: RunWriter): Promise<M>;
  /** How the measurement is stored. */
  store(measured: M, runId: string): StoredRun;
}

/** A stored run and the collector's measurement. */
export type Collected<M> = CollectedRun & { measured: M };

/**
 * Runs one collector and stores its run: the skeleton shared by every live collector.
 *
 * @param options Where and how the run is stored.
 * @param collector What to measure and how it is stored.
 * @returns The stored run and the measurement.
 * @throws {DiskFullError} When the dataset's disk is full (naming the run's folder); any error
 * the collector's `measure` throws (the run is then not stored).
 */
export async function collectRun<M extends Measurement>(
  options: CollectOptions,
  collector: Collector<M>,
): Promise<Collected<M>> {
  const now = options.now ?? (() => new Date());
  rememberSentSecret(collector.target.password);
  const host = options.host ?? hostFacts();
  const startedAt = now();
  const dataset = Dataset.of(options.data);
  const runId = newRunId(startedAt);
  const folder = dataset.runFolder(runId);
  const writer = writingAt(folder, () => dataset.runWriter(runId));
  const watching = await options.watch?.start();
  const quietBefore = noiseSnapshot();
  let measured: M;
  try {
    measured = await collector.measure(writer);
  } catch (e) {
    await watching?.stop(writer.runId, true);
    writer.abort();
    throw diskFullAt(e, folder);
  }
  const quietAfter = noiseSnapshot();
  const stored = collector.store(measured, writer.runId);
  const cut = stored.status !== "complete" && !stored.interrupted;
  const watched = await watching?.stop(writer.runId, cut);
  // what the server sent back (an echoed password, a reason quoting its reply) is redacted
  // against the password kvlab sent it, wherever the run keeps text (issue 30)
  const s = redactStored(
    watched ? withWatched(stored, watched) : stored,
    collector.target.password,
  );
  const { before, after } = measured;
  const server = serverColumns(before, after);
  const local = isLocal(collector.target);
  const serverCpuS = (server.server_cpu_user_s ?? NaN) + (server.server_cpu_sys_s ?? NaN);
  const noise = noiseRunColumns(quietBefore, quietAfter, {
    serverCpuS: local && Number.isFinite(serverCpuS) ? serverCpuS : null,
    shareCpus: local ? sharesCpusWithServer(before, options.tags?.client_cpus) : null,
  });
  const snaps = snapshotRows(writer.runId, [["before", before], ["after", after]]);
  const finishedAt = now();
  const tables: RunTables = s.snapshots === false
    ? s.tables
    : { ...s.tables, server_info: snaps.info, server_config: snaps.config };
  writingAt(folder, () =>
    writer.commit({
      run: redactStrings(
        runRow({
          run_id: writer.runId,
          target: collector.target.display,
          transport: transportOf(collector.target),
          label: options.label ?? null,
          tags: options.tags,
          started_at: startedAt,
          ingested_at: finishedAt, // a collected run is stored when it finishes
          finished_at: finishedAt,
          plan_name: options.plan?.name ?? null,
          plan_cell: options.plan?.cell ?? null,
          repetition: options.plan?.repetition ?? null,
          command: collector.command,
          status: s.status,
          error: s.reason,
          ...s.columns,
          ...server,
          ...noise,
          ...watched?.columns,
          noise_disturbance: [noise.noise_disturbance, s.disturbance].filter((x) => x).join("; ") ||
            null,
        }, host),
        collector.target.password,
      ),
      tables,
      raw: s.raw ?? [],
      manifest: {
        ...s.manifest,
        ...clusterManifest(measured, s),
        host,
        server_config_error: before?.configError ?? null,
      },
    }));
  return {
    runId: writer.runId,
    status: s.status,
    tests: s.tests,
    reason: s.reason,
    command: collector.command,
    interrupted: s.interrupted,
    results: s.tables.results ?? [],
    measured,
  };
}

/**
 * A tool run's per-node facts against a cluster: `cluster_nodes` (each master's SET/GET calls
 * over the run, their sum, the tool's total) and a warning when they disagree by more than 1 %.
 */
function clusterManifest(measured: Measurement, s: StoredRun): Record<string, unknown> {
  const calls = measured.nodeCalls;
  if (!calls) return {};
  const check = toolNodeCheck(calls, s.tables.results ?? []);
  const warnings = (s.manifest?.warnings as string[] | undefined) ?? [];
  return {
    cluster_nodes: check,
    ...(check.warning ? { warnings: [...warnings, check.warning] } : {}),
  };
}

/**
 * A stored run's texts redacted against the password sent to its server ({@link redactSent}):
 * its reason, its manifest, and the engines' raw JSON (error samples quote the server).
 */
function redactStored(s: StoredRun, password: string | undefined): StoredRun {
  const dec = new TextDecoder("utf-8", { fatal: true });
  const raw = s.raw?.map((f) => {
    let text: string;
    try {
      text = dec.decode(f.bytes);
    } catch {
      return f; // not text
    }
    const red = redactSent(text, password);
    return red === text ? f : { ...f, bytes: new TextEncoder().encode(red) };
  });
  return {
    ...s,
    reason: s.reason === null ? null : redactText(redactSent(s.reason, password)),
    manifest: s.manifest && redactStrings(s.manifest, password),
    ...(raw ? { raw } : {}),
  };
}

/** Every string in a plain value (objects, arrays) passed through {@link redactSent}. */
function redactStrings<T>(v: T, password: string | undefined): T {
  if (typeof v === "string") return redactSent(v, password) as T;
  if (Array.isArray(v)) return v.map((x) => redactStrings(x, password)) as T;
  if (v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, redactStrings(x, password)]),
    ) as T;
  }
  return v;
}

/** A noise snapshot of this machine (this process and its reaped tools), or null off Linux. */
function noiseSnapshot(): NoiseSnapshot | null {
  try {
    return readNoiseSnapshot([Deno.pid]);
  } catch {
    return null;
  }
}

/**
 * Whether the client and a local server (its INFO `process_id`) may share a CPU. The client is
 * this process, or the CPU list a plan pinned its tools to (`client_cpus`, `taskset -c`).
 */
function sharesCpusWithServer(
  before: ServerSnapshot | undefined,
  clientCpus: string | undefined,
): boolean | null {
  const pid = infoNumber(before?.info, "process_id");
  // a server in a container gives its own namespace's pid (1): another process on the host
  if (pid === null || pid <= 1) return null;
  const mine = `/proc/${Deno.pid}/status`, theirs = `/proc/${pid}/status`;
  const files = readSystemFiles([mine, theirs]);
  if (clientCpus === undefined) return shareCpus(files[mine], files[theirs]);
  const server = files[theirs] ? parseCpusAllowed(files[theirs]) : null;
  if (!server) return null;
  return parseCpuList(clientCpus).some((c) => server.includes(c));
}

/**
 * The server's snapshot before a run, or why there is none (a server that is down).
 *
 * @param target The server.
 * @returns The snapshot, or `{ reason }` for a server that cannot be reached.
 */
export async function snapshotBefore(
  target: ServerTarget,
): Promise<ServerSnapshot | { reason: string }> {
  try {
    return await snapshotServer(target);
  } catch (e) {
    if (!(e instanceof ServerUnreachableError)) throw e;
    return { reason: e.message };
  }
}

/**
 * The server's snapshot after a run, or undefined when it went away (the before snapshot stays).
 *
 * @param target The server.
 * @returns The snapshot, or undefined.
 */
export async function snapshotAfter(target: ServerTarget): Promise<ServerSnapshot | undefined> {
  try {
    return await snapshotServer(target);
  } catch {
    return undefined;
  }
}

/**
 * How a tool's process ended, as the manifest keeps it.
 *
 * @param r The process result.
 * @returns Exit code, signal, timeout, interrupt, duration and pid.
 */
export function processFacts(r: ProcessResult): Record<string, unknown> {
  return {
    exit_code: r.code,
    signal: r.signal,
    timed_out: r.timedOut,
    interrupted: r.interrupted,
    duration_ms: Math.round(r.durationMs),
    pid: r.pid,
  };
}

/**
 * Shell-quotes an argv for display and storage (after redaction).
 *
 * @param argv The program and its arguments.
 * @returns One line a shell reads back as the same argv.
 *
 * @example
 * ```ts
 * import { argvToCommand } from "./collector.ts";
 * import assert from "node:assert/strict";
 * assert.equal(argvToCommand(["redis-cli", "-p", "6380", "it's"]), `redis-cli -p 6380 'it'\\''s'`);
 * ```
 */
export function argvToCommand(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./*-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(
    " ",
  );
}
