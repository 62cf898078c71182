/**
 * Live collection with redis-benchmark / valkey-benchmark: builds the argv once from its flags
 * ({@link BenchmarkArgs}), snapshots the server (INFO, CONFIG, DBSIZE) before and after, runs
 * the tool through an injectable {@link ProcessRunner} with its raw output written to the run
 * folder as it arrives, reports progress from the tool's own `rps=…` lines, parses with the pure
 * parser (given the same flags, not a re-read argv), and commits one run.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";
import { testRows } from "../formats/redis_benchmark/rows.ts";
import {
  argvToCommand,
  collectRun,
  processFacts,
  runToolBetweenSnapshots,
  stopCause,
} from "../collector.ts";
import type { CollectedRun, Measurement, StoredRun, ToolRunOptions } from "../collector.ts";
import { type BenchmarkArgs, benchmarkArgv } from "../formats/redis_benchmark/flags.ts";
import type { ProcessResult } from "../process.ts";
import { redactArgv, REDACTED, redactRawText } from "../../text/redact.ts";
import type { ProgressEvent } from "../formats/format.ts";
import {
  ProgressReader,
  RedisBenchmarkParser,
  type RedisBenchmarkRun,
} from "../formats/redis_benchmark/parse.ts";
import type { RunWriter } from "../../store/writer.ts";
import { type ServerTarget, transportOf } from "../target.ts";

/** The flags of a run other than the connection, which comes from the target. */
export type BenchmarkFlags = Partial<
  Omit<BenchmarkArgs, "host" | "port" | "socket" | "user" | "password" | "db">
>;

/**
 * One redis-benchmark / valkey-benchmark run to make: the program, the server, and its flags
 * (named as in {@link BenchmarkArgs}). `transport: "rdma"` asks for `--rdma`; otherwise the
 * target's transport applies (TLS, unix socket or TCP).
 */
export interface BenchmarkCall extends BenchmarkFlags {
  /**
   * The tool: `redis-benchmark`, `valkey-benchmark`, or a path to one.
   * @default {"redis-benchmark"}
   */
  tool?: string;
  target: ServerTarget;
}

/** @deprecated Use {@link BenchmarkCall}: the same run, its flags named as in {@link BenchmarkArgs}. */
export type RedisBenchmarkParams = BenchmarkCall;

/**
 * The flags of a run: the connection from the target (host and port or socket, user, password,
 * db, TLS), then the call's own flags. `threads: 0` means no `--threads`.
 *
 * @param call The run.
 * @returns Its flags, with no `undefined` fields.
 *
 * @example
 * ```ts
 * import { benchmarkArgs, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const args = benchmarkArgs({ target: parseServerUrl("rediss://h:7000/2"), clients: 8, threads: 0 });
 * assert.deepEqual(args, {
 *   host: "h", port: 7000, db: 2, quiet: false, csv: false, loop: false, unknown: [], clients: 8,
 *   transport: "tls",
 * });
 * ```
 */
export function benchmarkArgs(call: BenchmarkCall): BenchmarkArgs {
  const { tool: _tool, target: t, ...flags } = call;
  const args: BenchmarkArgs = {
    ...(t.socket !== undefined ? { socket: t.socket } : { host: t.host, port: t.port }),
    user: t.user,
    password: t.password,
    db: t.db || undefined,
    quiet: false,
    csv: false,
    loop: false,
    unknown: [],
    ...flags,
    threads: flags.threads || undefined,
    transport: flags.transport ?? transportOf(t),
  };
  for (const k of Object.keys(args) as (keyof BenchmarkArgs)[]) {
    if (args[k] === undefined) delete args[k];
  }
  return args;
}

/**
 * The argv of a redis-benchmark run: {@link benchmarkArgv} of its {@link benchmarkArgs}. The
 * password, if any, is in the argv (the tool needs it) but never in what is stored: see
 * {@link redactArgv}.
 *
 * @param call The run.
 * @returns The program and its arguments.
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
export function redisBenchmarkArgv(call: BenchmarkCall): string[] {
  return benchmarkArgv(call.tool ?? "redis-benchmark", benchmarkArgs(call));
}

/** Options of {@link runRedisBenchmark}. */
export interface RedisBenchmarkRunOptions extends ToolRunOptions {
  /** The run: program, server and flags. */
  params: BenchmarkCall;
  onProgress?: (e: ProgressEvent) => void;
  /** The tool's version, when already known (else `--version` is asked). */
  toolVersion?: string | null;
}

/** What running the tool gave, before it is stored. */
interface Measured extends Measurement {
  result?: ProcessResult;
  parsed?: RedisBenchmarkRun;
  reason: string | null;
}

/**
 * Runs redis-benchmark once and stores the run (complete, incomplete or failed) in the dataset.
 * Does not throw for a server that is down, a tool that fails or an interrupt: those become a
 * stored run with a reason. Throws only for a tool that is not installed
 * ({@link ToolNotFoundError}) or a dataset that cannot be written.
 *
 * @param options See {@link RedisBenchmarkRunOptions}.
 * @returns The stored run's id, status and reason.
 */
export async function runRedisBenchmark(options: RedisBenchmarkRunOptions): Promise<CollectedRun> {
  const args = benchmarkArgs(options.params);
  const argv = benchmarkArgv(options.params.tool ?? "redis-benchmark", args);
  const { measured: _, ...run } = await collectRun(options, {
    target: options.params.target,
    // as started: `taskset -c LIST …` when the plan pins the client
    command: argvToCommand(redactArgv(options.runner.shown?.(argv) ?? argv)),
    measure: (writer) => measure(options, writer, { args, argv }),
    store: (m, runId) => stored(options, m, { runId, argv }),
  });
  return run;
}

/** How a measured redis-benchmark run is stored. */
function stored(
  o: RedisBenchmarkRunOptions,
  m: Measured,
  { runId, argv }: { runId: string; argv: string[] },
): StoredRun {
  const { result, parsed } = m;
  const status: CollectedRun["status"] = !parsed || parsed.testCount === 0
    ? "failed"
    : parsed.complete && result?.code === 0 && !result.interrupted && !result.timedOut
    ? "complete"
    : "incomplete";
  const rows = testRows(runId, parsed?.tests ?? [], 0);
  return {
    status,
    reason: status === "complete" ? null : m.reason,
    tests: parsed?.testCount ?? 0,
    interrupted: (result?.interrupted || o.signal?.aborted) ?? false,
    columns: {
      tool: toolName(o.params.tool),
      tool_version: o.toolVersion ?? null,
      output_format: parsed?.format ?? "none",
      warning_count: parsed?.warnings.length ?? 0,
      tool_exit_code: result?.code ?? null,
    },
    tables: { results: rows.results, latency_distribution: rows.distribution },
    manifest: {
      argv_redacted: redactArgv(argv),
      process: result ? processFacts(result) : null,
      warnings: parsed?.warnings ?? [],
      tool_errors: parsed?.errors ?? [],
    },
  };
}

/**
 * Snapshots the server, runs the tool with its output written to the run folder, snapshots
 * again and parses the output with the flags it was given.
 */
async function measure(
  o: RedisBenchmarkRunOptions,
  writer: RunWriter,
  { args, argv }: { args: BenchmarkArgs; argv: string[] },
): Promise<Measured> {
  let stdoutPath = "", stderrPath = "";
  const ran = await runToolBetweenSnapshots(o.params.target, o, () => {
    const reader = o.onProgress ? new ProgressReader(o.onProgress) : undefined;
    stdoutPath = writer.rawPath("stdout.txt");
    stderrPath = writer.rawPath("stderr.txt");
    return { argv, stdoutPath, stderrPath, onStdout: reader ? (c) => reader.push(c) : undefined };
  });
  if (!ran.result) return ran;
  const { before, after, result } = ran;

  // Secrets long enough to be told apart from ordinary output.
  scrubSecrets([stdoutPath, stderrPath], [args.password ?? ""].filter((s) => s.length >= 6));
  const stdout = Deno.readTextFileSync(stdoutPath);
  const stderr = Deno.readTextFileSync(stderrPath);
  let parsed: RedisBenchmarkRun | undefined;
  try {
    // the flags as the command line says them (the password is not one)
    const parser = new RedisBenchmarkParser({
      file: "stdout.txt",
      args: { ...args, password: undefined },
    });
    const lines = stdout.split("\n");
    lines.forEach((l, i) => parser.push(l.replace(/\r$/, ""), i + 1, i < lines.length - 1));
    parsed = parser.finish();
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
  }
  return {
    before,
    after,
    result,
    parsed,
    reason: describeEnd(result, parsed, { stderr, signal: o.signal }),
  };
}

function toolName(tool: string | undefined): string {
  const b = (tool ?? "redis-benchmark").split("/").pop()!;
  return b === "valkey-benchmark" || b === "redis-benchmark" ? b : b || "redis-benchmark";
}

function describeEnd(
  r: ProcessResult,
  parsed: RedisBenchmarkRun | undefined,
  { stderr, signal }: { stderr: string; signal?: AbortSignal },
): string | null {
  const errText = [...(parsed?.errors.map((e) => e.text) ?? []), ...stderr.split("\n")]
    .map((l) => l.trim())
    .filter((l) => l && !/^Warning: Using a password/.test(l))
    .slice(0, 3)
    .join("; ");
  if (r.interrupted) return `interrupted (${stopCause(signal)}); partial output kept`;
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
