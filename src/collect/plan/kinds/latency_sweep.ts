/**
 * Plan kind `latency-sweep` (seed 000's study): hold the request rate fixed, raise it step by
 * step, and record p50 and p99 at each step, per server. The load comes from memtier_benchmark
 * (`engine: memtier`, `--rate-limiting`, closed loop) or from kvlab's open-loop generator
 * (`engine: kvlab`, latency from the intended send time). Each step is judged by the sustained
 * rule of `fixed_rate.ts` (the plan's bounds, default 97 %–103 %), from the rates its runner
 * returned; after a server's first step below them (NS), its later steps are not run and
 * nothing is stored for them (unless `continue_after_ns`).
 *
 * @module
 */

import { limitProblem, LIMITS, MAX_CONNECTIONS } from "../../limits.ts";
import { toolVersion } from "../../host.ts";
import { memtierArgv, type MemtierCall, type MemtierRun, runMemtier } from "../../memtier/run.ts";
import { preloadKeys } from "../../loadgen/preload.ts";
import { parseRatio } from "../../loadgen/schedule.ts";
import { type OpenLoopCall, openLoopCommand, runOpenLoopStep } from "../../loadgen/step.ts";
import { redactArgv } from "../../../text/redact.ts";
import { argvToCommand } from "../../collector.ts";
import { findTool } from "../../tools.ts";
import { cellRecord, interleavedCells, type PlanKind, type PlanReader } from "../kind.ts";
import type {
  CellEvent,
  CellRunner,
  KindContext,
  PlanBase,
  PlanCellBase,
  PlanCommon,
} from "../kind.ts";
import { skippedStep, storedSteps } from "./_sweep_steps.ts";
import {
  checkSustainedRule,
  DEFAULT_SUSTAINED_RULE,
  SkipAfterNs,
  type SustainedRule,
} from "../../../fixed_rate.ts";

/** Which load generator drives the steps. */
export type SweepEngine = "kvlab" | "memtier";

export type { SustainedRule } from "../../../fixed_rate.ts";

/** A checked plan of kind `latency-sweep`. */
export interface LatencySweepPlan extends PlanBase {
  kind: "latency-sweep";
  engine: SweepEngine;
  /** memtier_benchmark (engine memtier). */
  tool: string;
  /** memtier `-t`; kvlab: Worker threads. */
  threads: number;
  /** Connections per thread (memtier `-c`). */
  clients: number;
  /** Requested total rates, ascending (per connection × connections when given so). */
  rates: number[];
  /** Measured seconds per step. */
  stepS: number;
  /** Seconds of load at the step's rate before it, left out of every figure. */
  warmupS: number;
  /** SET:GET (`0:1`: GET only). */
  ratio: string;
  /** Key space: keys 0 … keys − 1. */
  keys: number;
  /** Write every key once per server before its first step. */
  preload: boolean;
  dataSizeBytes: number;
  pipeline: number;
  /** kvlab engine: spread phases (`uniform`) or Poisson arrivals. */
  arrivals: "uniform" | "poisson";
  sustained: SustainedRule;
  /** Keep running a server's steps after its first NS. */
  continueAfterNs: boolean;
}

/** One step to run: a server, a requested rate and a repetition. */
export interface LatencySweepCell extends PlanCellBase {
  /** Stable id: `<plan>/<server>/r<rate>/rep<k>`. */
  id: string;
  /** Requested total rate, requests per second. */
  requestedOpsPerSec: number;
}

const S = "sweep";
const SECTION_FIELDS = [
  "engine",
  "tool",
  "threads",
  "clients",
  "rates",
  "rates_per_connection",
  "step_s",
  "warmup_s",
  "ratio",
  "keys",
  "preload",
  "data_size_bytes",
  "pipeline",
  "arrivals",
  "sustained",
  "continue_after_ns",
];

/**
 * The memtier run of a step: the plan's workload at the cell's rate (per connection, rounded to
 * a whole number as `--rate-limiting` takes it).
 *
 * @param plan The plan.
 * @param cell One of its cells.
 * @param testTimeS Seconds to run (default: the step's).
 * @returns The run, for {@link runMemtier}.
 *
 * @example
 * ```ts
 * import { memtierArgv, parsePlan, planCells, sweepMemtierCall } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan(
 *   "name: s\nkind: latency-sweep\nservers: [{name: a, url: 'redis://h:1'}]\n" +
 *     "sweep: {engine: memtier, threads: 4, clients: 12, rates: [9984, 49968], step_s: 5}\n",
 *   "s.yaml",
 * );
 * assert.ok(plan.kind === "latency-sweep");
 * assert.equal(
 *   memtierArgv(sweepMemtierCall(plan, planCells(plan)[0])).join(" "),
 *   "memtier_benchmark -s h -p 1 --protocol=redis -t 4 -c 12 --ratio=0:1 -d 256 --key-pattern=R:R " +
 *     "--key-minimum=1 --key-maximum=100000 --pipeline=1 --test-time=5 --rate-limiting=208 " +
 *     "--print-percentiles=50,99,99.9",
 * );
 * ```
 */
export function sweepMemtierCall(
  plan: LatencySweepPlan,
  cell: LatencySweepCell,
  testTimeS = plan.stepS,
): MemtierCall {
  return {
    tool: plan.tool,
    target: cell.server.target,
    threads: plan.threads,
    clients: plan.clients,
    ratio: plan.ratio,
    dataSizeBytes: plan.dataSizeBytes,
    keyPattern: "R:R",
    keyMinimum: 1, // memtier refuses 0
    keyMaximum: plan.keys,
    pipeline: plan.pipeline,
    testTimeS,
    rateLimit: Math.round(cell.requestedOpsPerSec / (plan.threads * plan.clients)),
    printPercentiles: [50, 99, 99.9],
  };
}

/** The open-loop run of a step. */
function openLoopCall(plan: LatencySweepPlan, cell: LatencySweepCell): OpenLoopCall {
  return {
    target: cell.server.target,
    requestedOpsPerSec: cell.requestedOpsPerSec,
    connections: plan.threads * plan.clients,
    durationS: plan.stepS,
    warmupS: plan.warmupS,
    ratio: plan.ratio,
    valueSize: plan.dataSizeBytes,
    keys: plan.keys,
    pipeline: plan.pipeline,
    arrival: plan.arrivals,
    threads: plan.threads,
  };
}

/** The `latency-sweep` plan kind. */
export const latencySweepKind: PlanKind<LatencySweepPlan, LatencySweepCell> = {
  fields: [S],
  parse: parseLatencySweepPlan,
  tags: ["engine", "connections", "requested_ops_per_sec", "sweep_rates"],
  count: (plan) => plan.repetitions * plan.rates.length * plan.servers.length,
  // engine kvlab is kvlab's own generator, inside kvlab
  pinnable: (plan) => plan.engine === "memtier",
  cells: latencySweepCells,
  describe: describeLatencySweepCell,
  open: openLatencySweep,
};

/** Reads the kind's fields of a plan (errors carry file:line). */
function parseLatencySweepPlan(read: PlanReader, common: PlanCommon): LatencySweepPlan {
  read.section([S], SECTION_FIELDS, "expected { engine, threads, clients, rates, step_s, … }");

  const engine = read.string([S, "engine"], "kvlab");
  if (engine !== "kvlab" && engine !== "memtier") {
    read.fail([S, "engine"], "expected kvlab or memtier");
  }
  const threads = read.integer([S, "threads"], 1);
  const clients = read.integer([S, "clients"], 10);
  const ratio = read.string([S, "ratio"], "0:1");
  try {
    parseRatio(ratio);
  } catch {
    read.fail([S, "ratio"], "expected SET:GET, e.g. 0:1 (GET only) or 1:10");
  }
  const arrivals = read.string([S, "arrivals"], "uniform");
  if (arrivals !== "uniform" && arrivals !== "poisson") {
    read.fail([S, "arrivals"], "expected uniform or poisson");
  }
  if (engine === "memtier" && read.value([S, "arrivals"]) !== undefined) {
    read.fail([S, "arrivals"], "only for engine: kvlab (memtier fires all connections together)");
  }
  const stepS = engine === "memtier"
    ? read.integer([S, "step_s"], 20)
    : read.number([S, "step_s"], 20, { max: 3600, positive: true });
  // sizes, keys and pipeline depth within the limits of `../../limits.ts`, checked now
  for (
    const [k, dflt, limit] of [
      ["data_size_bytes", 256, LIMITS.valueBytes],
      ["keys", 100_000, LIMITS.keys],
      ["pipeline", 1, LIMITS.pipeline],
    ] as const
  ) {
    const why = limitProblem(read.integer([S, k], dflt), limit);
    if (why) read.fail([S, k], why);
  }
  return {
    ...common,
    kind: "latency-sweep",
    engine,
    tool: read.string([S, "tool"], "memtier_benchmark"),
    threads,
    clients,
    rates: readRates(read, engine, threads * clients),
    stepS,
    warmupS: read.number([S, "warmup_s"], 0, { max: 600 }),
    ratio,
    keys: read.integer([S, "keys"], 100_000),
    preload: read.boolean([S, "preload"], true),
    dataSizeBytes: read.integer([S, "data_size_bytes"], 256),
    pipeline: read.integer([S, "pipeline"], 1),
    arrivals,
    sustained: readRule(read),
    continueAfterNs: read.boolean([S, "continue_after_ns"], false),
  } as LatencySweepPlan;
}

/** The plan's cells, interleaved across servers and repetitions. */
function latencySweepCells(plan: LatencySweepPlan): LatencySweepCell[] {
  const points = plan.rates.map((requestedOpsPerSec) => ({ requestedOpsPerSec }));
  return interleavedCells(plan, points, (p) => `r${p.requestedOpsPerSec}`);
}

/** The command a cell runs, as `--dry-run` and progress show it (secrets redacted). */
function describeLatencySweepCell(plan: LatencySweepPlan, cell: LatencySweepCell) {
  const command = plan.engine === "kvlab"
    ? openLoopCommand(openLoopCall(plan, cell))
    : argvToCommand(redactArgv(memtierArgv(sweepMemtierCall(plan, cell), {
      json: "memtier.json",
      hdrPrefix: "hdr",
    })));
  return { command, requests: Math.round(cell.requestedOpsPerSec * plan.stepS) };
}

/** Prepares the plan's runs once; returns the function that runs one cell. */
async function openLatencySweep(
  plan: LatencySweepPlan,
  ctx: KindContext,
): Promise<CellRunner<LatencySweepCell>> {
  const tool = plan.engine === "memtier" ? await checkMemtier(plan, ctx) : null;
  const version = tool ? await toolVersion(ctx.runner, tool) : null;
  const runs = { ...plan, tool: tool ?? plan.tool };
  // each server's first NS: this session's steps, and the stored ones of a resumed sweep
  const sweeps = new SkipAfterNs(plan.sustained);
  for (const s of storedSteps(ctx.data, plan.name)) sweeps.note(s.label, s);
  const preloaded = new Set<string>();
  return async (cell, emit) => {
    const skip = plan.continueAfterNs
      ? null
      : sweeps.skipReason(cell.label, cell.requestedOpsPerSec, { label: cell.label });
    if (skip !== null) return skippedStep(skip);
    if (!preloaded.has(cell.label) && plan.preload) {
      emit({ kind: "warmup", what: "preload" });
      await preload(runs, cell, ctx);
      preloaded.add(cell.label);
    }
    const record = cellRecord(plan, cell, {
      engine: plan.engine,
      connections: String(plan.threads * plan.clients),
      requested_ops_per_sec: String(cell.requestedOpsPerSec),
      // every rate of the sweep, so the analysis shows steps not run after an NS as `-`
      sweep_rates: plan.rates.join(","),
    });
    const run = plan.engine === "kvlab"
      ? await runOpenLoopStep(openLoopCall(plan, cell), {
        data: ctx.data,
        label: cell.label,
        ...record,
        host: ctx.host,
        now: ctx.now,
        signal: ctx.signal,
      })
      : await memtierStep(runs, cell, { ctx, version, record, emit });
    // the runner's own rates (no read-back); the requested rate is the cell's, as typed
    if (run.status !== "failed") {
      sweeps.note(cell.label, {
        requestedOpsPerSec: cell.requestedOpsPerSec,
        achievedOpsPerSec: run.achievedOpsPerSec,
      });
    }
    return run;
  };
}

/** Checks memtier once (throwing ToolNotFoundError) and returns its path. */
async function checkMemtier(plan: LatencySweepPlan, ctx: KindContext): Promise<string> {
  const tool = plan.tool.includes("/") ? plan.tool : findTool(plan.tool) ?? plan.tool;
  await ctx.runner.run({ argv: [tool, "--version"], timeoutMs: 10_000, capture: true });
  return tool;
}

/** Writes every key of the plan's key space once (memtier's keys or kvlab's). */
async function preload(plan: LatencySweepPlan, cell: LatencySweepCell, ctx: KindContext) {
  const t = cell.server.target;
  if (plan.engine === "kvlab") {
    await preloadKeys({
      hostname: t.host,
      port: t.port,
      password: t.password,
      keys: plan.keys,
      valueSize: plan.dataSizeBytes,
    }).catch(() => {/* the step reports problems */});
    return;
  }
  const call: MemtierCall = {
    ...sweepMemtierCall(plan, cell),
    ratio: "1:0",
    keyPattern: "P:P",
    pipeline: 16,
    testTimeS: undefined,
    rateLimit: undefined,
    requests: "allkeys",
    printPercentiles: undefined,
    hideHistogram: true,
  };
  const timeoutMs = plan.timeoutS * 1000;
  await ctx.runner.run({ argv: memtierArgv(call), timeoutMs, signal: ctx.signal })
    .catch(() => {/* the step reports problems */});
}

/** A memtier step: an unrecorded warm-up run at the step's rate, then the measured run. */
async function memtierStep(
  plan: LatencySweepPlan,
  cell: LatencySweepCell,
  { ctx, version, record, emit }: {
    ctx: KindContext;
    /** memtier's version, asked once. */
    version: string | null;
    /** The cell's plan columns and tags. */
    record: ReturnType<typeof cellRecord>;
    emit: (e: CellEvent) => void;
  },
): Promise<MemtierRun> {
  const timeoutMs = plan.timeoutS * 1000;
  if (plan.warmupS > 0) {
    emit({ kind: "warmup" });
    const warm = sweepMemtierCall(plan, cell, Math.max(1, Math.ceil(plan.warmupS)));
    await ctx.runner.run({ argv: memtierArgv({ ...warm, hideHistogram: true }), timeoutMs })
      .catch(() => {/* the measured run reports problems */});
  }
  return runMemtier(sweepMemtierCall(plan, cell), {
    data: ctx.data,
    runner: ctx.runner,
    label: cell.label,
    ...record,
    timeoutMs,
    signal: ctx.signal,
    toolVersion: version,
    host: ctx.host,
    now: ctx.now,
  });
}

/** `rates` (totals) or `rates_per_connection`, one of them, ascending. */
function readRates(read: PlanReader, engine: string, connections: number): number[] {
  const total = read.value([S, "rates"]) !== undefined;
  const perConn = read.value([S, "rates_per_connection"]) !== undefined;
  if (total === perConn) read.fail([S, "rates"], "give rates (totals) or rates_per_connection");
  const k = total ? "rates" : "rates_per_connection";
  const list = read.list([S, k], "expected a list of requests per second, ascending");
  const rates = list.map((_, i) => {
    const path = [S, k, i];
    const v = engine === "memtier" || !total
      ? read.integer(path)
      : read.number(path, 0, { max: 1e9, positive: true });
    // memtier's --rate-limiting is a whole number per connection: the requested total is that
    // rate × connections
    if (!total) return v * connections;
    return engine === "memtier" ? Math.max(1, Math.round(v / connections)) * connections : v;
  });
  // checked once, before any load (`../../limits.ts`): memtier's per-connection rate overflowed
  // above the tool's limit, kvlab's engine cannot send above its own
  const limit = engine === "memtier" ? LIMITS.toolRate : LIMITS.kvlabRate;
  rates.forEach((r, i) => {
    const why = limitProblem(r, limit);
    if (why) read.fail([S, k, i], `${r} requests per second in total: ${why}`);
  });
  if (connections > MAX_CONNECTIONS) {
    read.fail([S, "clients"], `threads × clients = ${connections}: at most ${MAX_CONNECTIONS}`);
  }
  rates.forEach((r, i) => {
    if (i > 0 && r <= rates[i - 1]) {
      read.fail([S, k, i], `expected ascending rates (per connection: ${connections} connections)`);
    }
  });
  return rates;
}

function readRule(read: PlanReader): SustainedRule {
  const d = DEFAULT_SUSTAINED_RULE;
  if (read.value([S, "sustained"]) === undefined) return { ...d };
  read.mapping([S, "sustained"], `expected { min: ${d.min}, max: ${d.max} }`);
  const min = read.number([S, "sustained", "min"], d.min, { max: 1, positive: true });
  const max = read.number([S, "sustained", "max"], d.max, { max: 100 });
  if (max < 1) read.fail([S, "sustained", "max"], "expected max ≥ 1");
  return checkSustainedRule({ min, max });
}
