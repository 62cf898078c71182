/**
 * The contract of what kvlab runs to measure: an external tool (redis-benchmark /
 * valkey-benchmark, memtier_benchmark) or one of kvlab's own engines (the open-loop generator,
 * the pub/sub engine). A {@link Tool} says how it is found and made ready (its version asked
 * once), how a call becomes its argv and the command stored with the run, which formats read its
 * output, and runs a call as one stored run. A tool that can hold a fixed rate says how a
 * latency sweep's step becomes one of its calls ({@link FixedRate}). Plan kinds ask the registry
 * (`plan/tools.ts`) for the tool a plan names and talk to it through this contract.
 *
 * A call's connection is its `target` (host and port or socket, TLS, user, password, db): every
 * tool says it in its own flags, so an option every tool must honour (cluster mode, TLS files)
 * joins the target and each tool's `argv` writes it.
 *
 * @module
 */

import { toolVersion } from "../host.ts";
import type { HostFacts } from "../host.ts";
import type { CollectedRun, CollectedRunLabels } from "../collector.ts";
import type { ProcessRunner } from "../process.ts";
import type { ServerTarget } from "../target.ts";
import type { DatasetRef } from "../../store/dataset.ts";
import type { ProgressEvent } from "../formats/format.ts";
import type { Limit } from "../limits.ts";
import { toolCommand } from "./find.ts";
import { KVLAB_VERSION } from "../../version.ts";

/** A tool found and made ready, once before a plan's first cell. */
export interface PreparedTool {
  /** What to run: a path as given, the name when it is on PATH, else its path in the cache. */
  command: string;
  /** Its version, as `runs.tool_version` keeps it (null when it cannot say). */
  version: string | null;
}

/**
 * A tool's live progress as a plan shows it: its own progress lines (`percent` when it says how
 * far it is), or how far a fill got (a memory sweep).
 */
export type ToolProgress =
  | ProgressEvent & { percent?: number }
  | { kind: "fill"; keys: number; target: number };

/** What every stored run of a tool is told. */
export interface ToolRunContext extends CollectedRunLabels {
  /** The dataset. */
  data: DatasetRef;
  /** Starts processes (tests may hand in their own). */
  runner: ProcessRunner;
  /** Limit of the run, ms. */
  timeoutMs: number;
  /** Aborting stops the run; what ran is kept as incomplete. */
  signal?: AbortSignal;
  /** The tool's version, from {@link Tool.prepare}. */
  toolVersion: string | null;
  host?: HostFacts;
  now?: () => Date;
  /** The tool's own live progress. */
  onProgress?: (e: ToolProgress) => void;
  /**
   * What ran unrecorded just before (`warm-up`, `preload`): a stop signal that came during it
   * is named with it in the run's reason.
   */
  after?: string;
  /** Why the run must not start (its key space was not written): stored failed with it. */
  notRun?: string;
}

/** What an unrecorded run (a warm-up, a preload) is told. */
export interface UnrecordedContext {
  runner: ProcessRunner;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A tool: what kvlab runs to measure. */
export interface Tool<
  Call extends { target: ServerTarget },
  Run extends CollectedRun = CollectedRun,
> {
  /** Its name in the registry (`redis-benchmark`, `memtier_benchmark`, `kvlab-loadgen`, …). */
  readonly name: string;
  /** The program words it answers to (a plan's `tool:` may name any, or a path to one). */
  readonly programs: readonly string[];
  /**
   * Whether it runs as a process kvlab starts (a plan's `cpus: { client }` pins it with
   * `taskset`), rather than inside kvlab.
   */
  readonly external: boolean;
  /** The registry names of the formats that read its output (none for an engine inside kvlab). */
  readonly formats: readonly string[];
  /**
   * Makes it ready, once before a plan's first cell: found (PATH, then the tools cache),
   * checked, its version asked.
   *
   * @param program The program a plan names (a name, or a path).
   * @param runner Starts its processes.
   * @throws {ToolNotFoundError} When it is not installed.
   */
  prepare(program: string, runner: ProcessRunner): Promise<PreparedTool>;
  /** The argv of a call, the one place its flags become words (its secrets in it: the tool needs them). */
  argv(call: Call): string[];
  /**
   * How a call is shown (`--dry-run`, progress) and stored, secrets redacted.
   *
   * @param call The call.
   * @param recorded Whether it is a stored run (its output files then named as kvlab names
   * them), or an unrecorded one (a warm-up, a preload).
   */
  command(call: Call, recorded?: boolean): string;
  /**
   * Runs a call and stores it as one run. Does not throw for a server that is down, a tool that
   * fails or an interrupt: those become a stored run with a reason.
   */
  run(call: Call, ctx: ToolRunContext): Promise<Run>;
  /**
   * Runs a call whose output is not stored (an external tool's warm-up or preload): its failures
   * are left for the measured run to report. An engine inside kvlab warms up within its step.
   */
  unrecorded?(call: Call, ctx: UnrecordedContext): Promise<void>;
  /** How it runs a latency sweep's fixed-rate steps, when it can. */
  readonly fixedRate?: FixedRate<Call>;
}

/** One step of a latency sweep, as any engine is given it. */
export interface FixedRateStep {
  target: ServerTarget;
  /** The total rate asked for, requests per second. */
  requestedOpsPerSec: number;
  /** Threads (memtier `-t`; kvlab's Workers). */
  threads: number;
  /** Connections per thread. */
  clients: number;
  /** Measured seconds. */
  durationS: number;
  /** Seconds of load before them, not measured. */
  warmupS: number;
  /** SET:GET. */
  ratio: string;
  dataSizeBytes: number;
  /** Keys of the key space (`key:1` … or memtier's `memtier-1` …). */
  keys: number;
  pipeline: number;
  /** Spread phases or Poisson arrivals (an engine that cannot choose has `uniform` only). */
  arrivals: "uniform" | "poisson";
}

/** A step run by a fixed-rate engine, with the rate it achieved. */
export type FixedRateRun = CollectedRun & { achievedOpsPerSec: number | null };

/** What a tool that can hold a fixed rate says of its steps. */
export interface FixedRate<Call> {
  /** The word a latency-sweep plan's `engine:` names it by (`kvlab`, `memtier`). */
  readonly engine: string;
  /**
   * What a plan's `tool:` names for it: its default program (null for an engine inside kvlab,
   * which runs no program).
   */
  readonly program: string | null;
  /**
   * The call of a step.
   *
   * @param step The step.
   * @param program The program to run (from {@link Tool.prepare}).
   */
  call(step: FixedRateStep, program: string): Call;
  /**
   * The unrecorded call that warms a server up before a step, or null when the tool warms up
   * inside the step (or the step asks for none).
   */
  warmup(step: FixedRateStep, program: string): Call | null;
  /**
   * Writes every key of the step's key space once, before a server's first step, within the
   * context's limit; a stop signal ends it at once.
   *
   * @returns Why the key space is not written (then the step is not run: it would measure
   * another key space), or null (an external tool's preload, whose failures its step reports).
   */
  preload(
    step: FixedRateStep,
    ctx: UnrecordedContext & { program: string },
  ): Promise<string | null>;
  /**
   * The total rate it can be asked for, nearest to `total` (memtier's `--rate-limiting` is a
   * whole number per connection).
   */
  rate(total: number, connections: number): number;
  /** The most it can be asked for, in total (`limits.ts`). */
  readonly limit: Limit;
  /**
   * Whether its steps' durations and total rates are whole numbers (memtier's `--test-time` is
   * whole seconds, its `--rate-limiting` a whole rate per connection).
   */
  readonly wholeNumbers: boolean;
  /** Whether it can send as Poisson arrivals (else uniform only). */
  readonly poisson: boolean;
}

/**
 * The preparation of an engine that runs inside kvlab: nothing to find, kvlab's own version.
 *
 * @param name Its name, as its runs store it.
 * @returns The engine, ready.
 *
 * @example
 * ```ts
 * import { prepareEngine } from "./tool.ts";
 * import assert from "node:assert/strict";
 * const p = await prepareEngine("kvlab");
 * assert.equal(p.command, "kvlab");
 * assert.match(p.version ?? "", /^\d+\.\d+\.\d+/);
 * ```
 */
export function prepareEngine(name: string): Promise<PreparedTool> {
  return Promise.resolve({ command: name, version: KVLAB_VERSION });
}

/**
 * The usual preparation of an external tool: found on PATH, then in the tools cache (a path is
 * used as given), asked `--version` (which fails with `ToolNotFoundError` when it is missing),
 * its version read from that.
 *
 * @param program A name or a path.
 * @param o `runner`, which starts the process; `locate`, what to run for a name (default: the
 * name when it is on PATH, else its path in the tools cache, see {@link toolCommand}).
 * @returns The command to run and its version.
 * @throws {ToolNotFoundError} When it is not installed.
 */
export async function prepareExternal(
  program: string,
  { runner, locate = toolCommand }: {
    runner: ProcessRunner;
    locate?: (name: string) => string;
  },
): Promise<PreparedTool> {
  const command = program.includes("/") ? program : locate(program);
  // fails with ToolNotFoundError before any cell when the tool is missing
  await runner.run({ argv: [command, "--version"], timeoutMs: 10_000, capture: true });
  return { command, version: await toolVersion(runner, command) };
}

/**
 * The usual unrecorded run of an external tool: its argv run to the end (or the limit, or the
 * signal), its failures ignored (the measured run reports them).
 *
 * @param argv The program and its arguments.
 * @param ctx The runner, limit and signal.
 */
export async function runUnrecorded(argv: string[], ctx: UnrecordedContext): Promise<void> {
  await ctx.runner.run({ argv, timeoutMs: ctx.timeoutMs, signal: ctx.signal })
    .catch(() => {/* the measured run reports problems */});
}
