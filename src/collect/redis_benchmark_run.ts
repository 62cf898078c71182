/**
 * Live collection with redis-benchmark / valkey-benchmark: builds the argv, snapshots the
 * server (INFO, CONFIG, DBSIZE) before and after, runs the tool through an injectable
 * {@link ProcessRunner} with its raw output written to the run folder as it arrives, reports
 * progress from the tool's own `rps=…` lines, parses with the pure parser, and commits one run.
 *
 * @module
 */

import { ParseError } from "../errors.ts";
import { infoNumber, runRow, snapshotRows, testRows } from "./_rows.ts";
import { parseBenchmarkArgs } from "./command.ts";
import { type HostFacts, hostFacts } from "./host.ts";
import type { ProcessResult, ProcessRunner } from "./process.ts";
import { redactArgv, REDACTED, redactRawText } from "./redact.ts";
import {
  type ProgressEvent,
  ProgressReader,
  RedisBenchmarkParser,
  type RedisBenchmarkRun,
} from "./redis_benchmark.ts";
import { type ServerSnapshot, ServerUnreachableError, snapshotServer } from "./server.ts";
import { newRunId, RunWriter } from "./store.ts";
import { type ServerTarget, transportOf } from "./target.ts";

/** Parameters of one redis-benchmark / valkey-benchmark invocation. */
export interface RedisBenchmarkParams {
  /**
   * The tool: `redis-benchmark`, `valkey-benchmark`, or a path to one.
   * @default {"redis-benchmark"}
   */
  tool?: string;
  target: ServerTarget;
  /** `-t` tests (lower case, as the tool takes them). */
  tests?: string[];
  /** `-c` */
  clients?: number;
  /** `-n` */
  requests?: number;
  /** `-d` */
  dataSizeBytes?: number;
  /** `-P` */
  pipeline?: number;
  /** `--threads` (0 or absent: none) */
  threads?: number;
  /** `-r` */
  keyspace?: number;
  /** `--rdma` (builds that have it). */
  rdma?: boolean;
  /** More arguments, passed as they are (after the ones above). */
  extraArgs?: string[];
}

/**
 * The argv of a redis-benchmark run. The password, if any, is in the argv (the tool needs it)
 * but never in what is stored: see {@link redactArgv}.
 *
 * @example
 * ```ts
 * import { parseServerUrl, redactArgv, redisBenchmarkArgv } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const argv = redisBenchmarkArgv({
 *   target: parseServerUrl("redis://:pw@127.0.0.1:6380"), tests: ["set", "get"], clients: 50,
 *   requests: 1000, dataSizeBytes: 3, pipeline: 1, threads: 2, keyspace: 100,
 * });
 * assert.deepEqual(redactArgv(argv), [
 *   "redis-benchmark", "-h", "127.0.0.1", "-p", "6380", "-a", "***", "-c", "50", "-n", "1000",
 *   "-d", "3", "-P", "1", "--threads", "2", "-r", "100", "-t", "set,get",
 * ]);
 * ```
 */
export function redisBenchmarkArgv(p: RedisBenchmarkParams): string[] {
  const t = p.target;
  const argv = [p.tool ?? "redis-benchmark"];
  if (t.socket) argv.push("-s", t.socket);
  else argv.push("-h", t.host, "-p", String(t.port));
  if (t.user) argv.push("--user", t.user);
  if (t.password) argv.push("-a", t.password);
  if (t.db) argv.push("--dbnum", String(t.db));
  if (t.tls) argv.push("--tls");
  if (p.clients !== undefined) argv.push("-c", String(p.clients));
  if (p.requests !== undefined) argv.push("-n", String(p.requests));
  if (p.dataSizeBytes !== undefined) argv.push("-d", String(p.dataSizeBytes));
  if (p.pipeline !== undefined) argv.push("-P", String(p.pipeline));
  if (p.threads) argv.push("--threads", String(p.threads));
  if (p.keyspace !== undefined) argv.push("-r", String(p.keyspace));
  if (p.tests?.length) argv.push("-t", p.tests.join(","));
  if (p.rdma) argv.push("--rdma");
  if (p.extraArgs) argv.push(...p.extraArgs);
  return argv;
}

/** Shell-quotes an argv for display and storage (after redaction). */
export function argvToCommand(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./*-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(
    " ",
  );
}

/** Options of {@link runRedisBenchmark}. */
export interface CollectOptions {
  /** Dataset directory. */
  data: string;
  runner: ProcessRunner;
  params: RedisBenchmarkParams;
  /** Stored as `label` (plans store the server's name here). */
  label?: string;
  tags?: Record<string, string>;
  plan?: { name: string; cell: string; repetition: number };
  /**
   * Limit for the tool's run.
   * @default {600000}
   */
  timeoutMs?: number;
  /** Aborting stops the tool; the run is kept as incomplete. */
  signal?: AbortSignal;
  onProgress?: (e: ProgressEvent) => void;
  /** The tool's version, when already known (else `--version` is asked). */
  toolVersion?: string | null;
  /** Host facts, when already known. */
  host?: HostFacts;
  /** @default {() => new Date()} */
  now?: () => Date;
}

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
}

/**
 * Runs redis-benchmark once and stores the run (complete, incomplete or failed) in the dataset.
 * Does not throw for a server that is down, a tool that fails or an interrupt: those become a
 * stored run with a reason. Throws only for a tool that is not installed
 * ({@link ToolNotFoundError}) or a dataset that cannot be written.
 */
export async function runRedisBenchmark(options: CollectOptions): Promise<CollectedRun> {
  const now = options.now ?? (() => new Date());
  const p = options.params;
  const argv = redisBenchmarkArgv(p);
  // Secrets long enough to be told apart from ordinary output.
  const secrets = [p.target.password].filter((s): s is string => !!s && s.length >= 6);
  const command = argvToCommand(redactArgv(argv));
  const host = options.host ?? hostFacts();
  const writer = new RunWriter(options.data, newRunId(now()));
  const startedAt = now();
  let before: ServerSnapshot | undefined;
  let after: ServerSnapshot | undefined;
  let result: ProcessResult | undefined;
  let reason: string | null = null;
  let parsed: RedisBenchmarkRun | undefined;
  try {
    try {
      before = await snapshotServer(p.target);
    } catch (e) {
      if (!(e instanceof ServerUnreachableError)) throw e;
      reason = e.message;
    }
    if (before && !options.signal?.aborted) {
      const reader = options.onProgress ? new ProgressReader(options.onProgress) : undefined;
      result = await options.runner.run({
        argv,
        timeoutMs: options.timeoutMs ?? 600_000,
        stdoutPath: writer.rawPath("stdout.txt"),
        stderrPath: writer.rawPath("stderr.txt"),
        onStdout: reader ? (c) => reader.push(c) : undefined,
        signal: options.signal,
      });
      try {
        after = await snapshotServer(p.target);
      } catch { /* the server went away during the run: the before snapshot stays */ }
      const args = parseBenchmarkArgs(argv.slice(1));
      const stdoutPath = writer.rawPath("stdout.txt");
      const stderrPath = writer.rawPath("stderr.txt");
      scrubSecrets([stdoutPath, stderrPath], secrets);
      const stdout = Deno.readTextFileSync(stdoutPath);
      const stderr = Deno.readTextFileSync(stderrPath);
      try {
        const parser = new RedisBenchmarkParser({ file: "stdout.txt", args });
        const lines = stdout.split("\n");
        lines.forEach((l, i) => parser.push(l.replace(/\r$/, ""), i + 1, i < lines.length - 1));
        parsed = parser.finish();
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
      }
      reason = describeEnd(result, parsed, stderr);
    }
  } catch (e) {
    writer.abort();
    throw e;
  }
  const status: CollectedRun["status"] = !parsed || parsed.testCount === 0
    ? "failed"
    : parsed.complete && result?.code === 0 && !result.interrupted && !result.timedOut
    ? "complete"
    : "incomplete";
  const rows = testRows(writer.runId, parsed?.tests ?? [], 0);
  const config = (s: ServerSnapshot | undefined) =>
    s?.config.find(([k]) => k === "io-threads")?.[1] ??
      s?.info.find((f) => f.key === "io_threads_active" || f.key === "io_threads")?.value;
  const maxmemory = infoNumber(before?.info, "maxmemory") ??
    Number(before?.config.find(([k]) => k === "maxmemory")?.[1] ?? NaN);
  const run = runRow({
    run_id: writer.runId,
    tool: toolName(p.tool),
    tool_version: options.toolVersion ?? null,
    command,
    server: before?.identity.server ?? "unknown",
    server_version: before?.identity.version ?? null,
    target: p.target.display,
    transport: transportOf(p.target, p.rdma),
    label: options.label ?? null,
    tags: options.tags,
    started_at: startedAt,
    ingested_at: now(),
    status,
    output_format: parsed?.format ?? "none",
    error: status === "complete" ? null : reason,
    warning_count: parsed?.warnings.length ?? 0,
    source_path: null,
    source_sha256: null,
    source_line_start: null,
    source_line_end: null,
    finished_at: now(),
    tool_exit_code: result?.code ?? null,
    plan_name: options.plan?.name ?? null,
    plan_cell: options.plan?.cell ?? null,
    repetition: options.plan?.repetition ?? null,
    server_io_threads: config(before) !== undefined ? Number(config(before)) : null,
    server_maxmemory_bytes: Number.isFinite(maxmemory) ? maxmemory : null,
    server_config_status: before?.configStatus ?? null,
  }, host);
  const snaps = snapshotRows(writer.runId, [["before", before], ["after", after]]);
  writer.commit({
    run,
    tables: {
      results: rows.results,
      latency_distribution: rows.distribution,
      server_info: snaps.info,
      server_config: snaps.config,
    },
    raw: [],
    manifest: {
      argv_redacted: redactArgv(argv),
      process: result
        ? {
          exit_code: result.code,
          signal: result.signal,
          timed_out: result.timedOut,
          interrupted: result.interrupted,
          duration_ms: Math.round(result.durationMs),
          pid: result.pid,
        }
        : null,
      host,
      server_config_error: before?.configError ?? null,
      warnings: parsed?.warnings ?? [],
      tool_errors: parsed?.errors ?? [],
    },
  });
  return {
    runId: writer.runId,
    status,
    tests: parsed?.testCount ?? 0,
    reason: status === "complete" ? null : reason,
    command,
    interrupted: result?.interrupted ?? false,
  };
}

function toolName(tool: string | undefined): string {
  const b = (tool ?? "redis-benchmark").split("/").pop()!;
  return b === "valkey-benchmark" || b === "redis-benchmark" ? b : b || "redis-benchmark";
}

function describeEnd(
  r: ProcessResult,
  parsed: RedisBenchmarkRun | undefined,
  stderr: string,
): string | null {
  const errText = [...(parsed?.errors.map((e) => e.text) ?? []), ...stderr.split("\n")]
    .map((l) => l.trim())
    .filter((l) => l && !/^Warning: Using a password/.test(l))
    .slice(0, 3)
    .join("; ");
  if (r.interrupted) return "interrupted (Ctrl-C / SIGTERM); partial output kept";
  if (r.timedOut) return `timed out; partial output kept${errText ? `: ${errText}` : ""}`;
  if (r.code !== 0) return `exited with ${r.code ?? r.signal}${errText ? `: ${errText}` : ""}`;
  if (!parsed || parsed.testCount === 0) {
    return `no result in the output${errText ? `: ${errText}` : ""}`;
  }
  if (!parsed.complete) return "output incomplete";
  return null;
}

/** Replaces any secret that a tool echoed into its raw output (belt and braces). */
function scrubSecrets(paths: string[], secrets: string[]): void {
  for (const path of paths) {
    const text = Deno.readTextFileSync(path);
    let out = redactRawText(text);
    for (const s of secrets) out = out.split(s).join(REDACTED);
    if (out !== text) Deno.writeTextFileSync(path, out);
  }
}
