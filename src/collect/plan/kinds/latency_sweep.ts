/**
 * Plan kind `latency-sweep` (seed 000's study): hold the request rate fixed, raise it step by
 * step, and record p50 and p99 at each step, per server. The load comes from any tool of the
 * registry that runs fixed-rate steps (`../tools.ts`), named by `engine:`: memtier_benchmark
 * (`engine: memtier`, `--rate-limiting`, closed loop) or kvlab's open-loop generator
 * (`engine: kvlab`, latency from the intended send time). Each step is judged by the sustained
 * rule of `fixed_rate.ts` (the plan's bounds, default 97 %–103 %), from the rates its runner
 * returned; after a server's first step below them (NS), its later steps are not run and
 * nothing is stored for them (unless `continue_after_ns`).
 *
 * @module
 */

import { limitProblem, LIMITS, MAX_CONNECTIONS } from "../../limits.ts";
import { parseRatio } from "../../tools/workload.ts";
import type { FixedRateRun, FixedRateStep } from "../../tools/tool.ts";
import { type FixedRateTool, fixedRateTools } from "../tools.ts";
import { cellRecord, interleavedCells, type PlanKind, type PlanReader } from "../kind.ts";
import type { CellRunner, KindContext, PlanBase, PlanCellBase, PlanCommon } from "../kind.ts";
import { skippedStep, storedSteps } from "./_sweep_steps.ts";
import { type AgentsStep, runAgentsStep } from "../../agent/coordinator.ts";
import {
  checkSustainedRule,
  DEFAULT_SUSTAINED_RULE,
  SkipAfterNs,
  type SustainedRule,
} from "../../../fixed_rate.ts";

/** Which load generator drives the steps: a fixed-rate tool's `engine` word (`kvlab`, `memtier`). */
export type SweepEngine = string;

export type { SustainedRule } from "../../../fixed_rate.ts";

/** A checked plan of kind `latency-sweep`. */
export interface LatencySweepPlan extends PlanBase {
  kind: "latency-sweep";
  engine: SweepEngine;
  /** The engine's program (memtier_benchmark or a path, for engine memtier). */
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
 * The fixed-rate step of a cell: the plan's workload at the cell's rate, as any engine is given
 * it.
 *
 * @param plan The plan.
 * @param cell One of its cells.
 * @returns The step.
 *
 * @example
 * ```ts
 * import { memtierArgv, memtierStepCall, parsePlan, planCells, sweepStep } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan(
 *   "name: s\nkind: latency-sweep\nservers: [{name: a, url: 'redis://h:1'}]\n" +
 *     "sweep: {engine: memtier, threads: 4, clients: 12, rates: [9984, 49968], step_s: 5}\n",
 *   "s.yaml",
 * );
 * assert.ok(plan.kind === "latency-sweep");
 * assert.equal(
 *   memtierArgv(memtierStepCall(sweepStep(plan, planCells(plan)[0]), "memtier_benchmark")).join(" "),
 *   "memtier_benchmark -s h -p 1 --protocol=redis -t 4 -c 12 --ratio=0:1 -d 256 --key-pattern=R:R " +
 *     "--key-minimum=1 --key-maximum=100000 --pipeline=1 --test-time=5 --rate-limiting=208 " +
 *     "--print-percentiles=50,99,99.9",
 * );
 * ```
 */
export function sweepStep(plan: LatencySweepPlan, cell: LatencySweepCell): FixedRateStep {
  return {
    target: cell.server.target,
    requestedOpsPerSec: cell.requestedOpsPerSec,
    threads: plan.threads,
    clients: plan.clients,
    durationS: plan.stepS,
    warmupS: plan.warmupS,
    ratio: plan.ratio,
    dataSizeBytes: plan.dataSizeBytes,
    keys: plan.keys,
    pipeline: plan.pipeline,
    arrivals: plan.arrivals,
  };
}

/** The engine a plan names (checked when it was read). */
function engineOf(plan: LatencySweepPlan): FixedRateTool {
  return fixedRateTools().find((t) => t.fixedRate.engine === plan.engine)!;
}

/** The program an engine runs: the plan's `tool:`, or none for an engine inside kvlab. */
function programOf(plan: LatencySweepPlan, tool: FixedRateTool): string {
  return tool.fixedRate.program === null ? tool.name : plan.tool;
}

/** The `latency-sweep` plan kind. */
export const latencySweepKind: PlanKind<LatencySweepPlan, LatencySweepCell> = {
  // (`agents:`, several client hosts, is read with the common fields: `../agents.ts`)
  fields: [S, "agents"],
  parse: parseLatencySweepPlan,
  tags: ["engine", "connections", "requested_ops_per_sec", "sweep_rates"],
  count: (plan) => plan.repetitions * plan.rates.length * plan.servers.length,
  // an engine inside kvlab (kvlab's own generator) is no process to pin
  pinnable: (plan) => engineOf(plan).external,
  cells: latencySweepCells,
  describe: describeLatencySweepCell,
  open: openLatencySweep,
};

/** Reads the kind's fields of a plan (errors carry file:line). */
function parseLatencySweepPlan(read: PlanReader, common: PlanCommon): LatencySweepPlan {
  read.section([S], SECTION_FIELDS, "expected { engine, threads, clients, rates, step_s, … }");

  const engine = read.string([S, "engine"], "kvlab");
  const engines = fixedRateTools();
  const words = engines.map((t) => t.fixedRate.engine).sort();
  const tool = engines.find((t) => t.fixedRate.engine === engine) ??
    read.fail([S, "engine"], `expected ${words.slice(0, -1).join(", ")} or ${words.at(-1)}`);
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
  if (!tool.fixedRate.poisson && read.value([S, "arrivals"]) !== undefined) {
    const poisson = engines.filter((t) => t.fixedRate.poisson).map((t) => t.fixedRate.engine);
    read.fail(
      [S, "arrivals"],
      `only for engine: ${poisson.join(", ")} (${engine} fires all connections together)`,
    );
  }
  const stepS = tool.fixedRate.wholeNumbers
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
    tool: read.string([S, "tool"], tool.fixedRate.program ?? tool.name),
    threads,
    clients,
    rates: readRates(read, tool, threads * clients),
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
  const tool = engineOf(plan);
  const command = tool.command(tool.fixedRate.call(sweepStep(plan, cell), programOf(plan, tool)));
  return { command, requests: Math.round(cell.requestedOpsPerSec * plan.stepS) };
}

/** Prepares the plan's runs once; returns the function that runs one cell. */
async function openLatencySweep(
  plan: LatencySweepPlan,
  ctx: KindContext,
): Promise<CellRunner<LatencySweepCell>> {
  const tool = engineOf(plan);
  // found and its version asked once; ToolNotFoundError before any cell when it is missing
  const prepared = await tool.prepare(programOf(plan, tool), ctx.runner);
  const program = prepared.command;
  const timeoutMs = plan.timeoutS * 1000;
  // each server's first NS: this session's steps, and the stored ones of a resumed sweep
  const sweeps = new SkipAfterNs(plan.sustained);
  for (const s of storedSteps(ctx.data, plan.name)) sweeps.note(s.label, s);
  const preloaded = new Set<string>();
  return async (cell, emit) => {
    const skip = plan.continueAfterNs
      ? null
      : sweeps.skipReason(cell.label, cell.requestedOpsPerSec, { label: cell.label });
    if (skip !== null) return skippedStep(skip);
    const step = sweepStep(plan, cell);
    const unrecorded = { runner: ctx.runner, timeoutMs, signal: ctx.signal };
    // what ran unrecorded before the step (a stop signal during it is named so), and why the
    // step must not run (a key space not written: it would measure another one)
    let after: string | undefined;
    let notRun: string | undefined;
    if (!preloaded.has(cell.label) && plan.preload) {
      emit({ kind: "warmup", what: "preload" });
      after = "preload";
      const problem = await tool.fixedRate.preload(step, { ...unrecorded, program });
      if (problem === null) preloaded.add(cell.label);
      else if (!ctx.signal?.aborted) notRun = `preload failed (${problem}); step not run`;
    }
    const warmup = notRun ? null : tool.fixedRate.warmup(step, program);
    if (warmup !== null && tool.unrecorded && !ctx.signal?.aborted) {
      emit({ kind: "warmup" });
      after = "warm-up";
      await tool.unrecorded(warmup, unrecorded);
    }
    const labels = {
      data: ctx.data,
      runner: ctx.runner,
      label: cell.label,
      ...cellRecord(plan, cell, {
        engine: plan.engine,
        connections: String(plan.threads * plan.clients),
        requested_ops_per_sec: String(cell.requestedOpsPerSec),
        // every rate of the sweep, so the analysis shows steps not run after an NS as `-`
        sweep_rates: plan.rates.join(","),
      }),
      timeoutMs,
      signal: ctx.signal,
      after,
      notRun,
      toolVersion: prepared.version,
      host: ctx.host,
      now: ctx.now,
    };
    // several client hosts (`agents:`): the step runs on them and is stored as one merged run
    const run: FixedRateRun = plan.agents && !notRun
      ? await runAgentsStep({ ...agentsStep(plan, cell, step), signal: ctx.signal }, labels)
      : await tool.run(tool.fixedRate.call(step, program), labels);
    // the runner's own rates (no read-back); the requested rate is the cell's, as typed
    // (a step some agents did not measure says nothing of the server: not judged)
    if (run.status !== "failed" && !(plan.agents && run.status === "incomplete")) {
      sweeps.note(cell.label, {
        requestedOpsPerSec: cell.requestedOpsPerSec,
        achievedOpsPerSec: run.achievedOpsPerSec,
      });
    }
    return run;
  };
}

/** `rates` (totals) or `rates_per_connection`, one of them, ascending. */
function readRates(read: PlanReader, tool: FixedRateTool, connections: number): number[] {
  const total = read.value([S, "rates"]) !== undefined;
  const perConn = read.value([S, "rates_per_connection"]) !== undefined;
  if (total === perConn) read.fail([S, "rates"], "give rates (totals) or rates_per_connection");
  const k = total ? "rates" : "rates_per_connection";
  const list = read.list([S, k], "expected a list of requests per second, ascending");
  const rates = list.map((_, i) => {
    const path = [S, k, i];
    const v = tool.fixedRate.wholeNumbers || !total
      ? read.integer(path)
      : read.number(path, 0, { max: 1e9, positive: true });
    if (!total) return v * connections;
    // the total the engine can be asked for (memtier's --rate-limiting is a whole number per
    // connection: the requested total is that rate × connections)
    return tool.fixedRate.rate(v, connections);
  });
  // checked once, before any load (`../../limits.ts`): memtier's per-connection rate overflowed
  // above the tool's limit, kvlab's engine cannot send above its own
  const limit = tool.fixedRate.limit;
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

/**
 * The step of a cell as a coordinator posts it to agents.
 *
 * @param plan A latency-sweep plan with `agents:`.
 * @param cell One of its cells.
 * @param step The cell's step.
 * @returns What `runAgentsStep` runs.
 * @throws {TypeError} For a plan without `agents:`.
 *
 * @example
 * ```ts
 * import { parsePlan, planCells, sweepStep } from "@kvlab/kvlab/collect";
 * import { agentsStep } from "./latency_sweep.ts";
 * import assert from "node:assert/strict";
 * const plan = parsePlan("name: s\nkind: latency-sweep\nservers: [{name: a, url: 'redis://h:1'}]\n" +
 *   "sweep: {clients: 6, rates: [3000], step_s: 2}\nagents: {control: 'redis://c:2', count: 3}\n",
 *   "s.yaml");
 * assert.ok(plan.kind === "latency-sweep");
 * const cell = planCells(plan)[0];
 * const s = agentsStep(plan, cell, sweepStep(plan, cell));
 * assert.deepEqual(s.plan.sweep.rates, [3000]);
 * assert.equal(s.plan.server.url, "redis://h:1");
 * assert.equal(s.agents.count, 3);
 * ```
 */
export function agentsStep(
  plan: LatencySweepPlan,
  cell: LatencySweepCell,
  step: FixedRateStep,
): AgentsStep {
  if (!plan.agents) throw new TypeError(`plan ${plan.name} has no agents:`);
  return {
    agents: plan.agents,
    step,
    cell: cell.id,
    timeoutS: plan.timeoutS,
    plan: {
      kind: plan.kind,
      server: {
        name: cell.server.name,
        url: cell.server.target.display,
        // (the variable's name: each agent reads the password on its own host)
        ...(plan.agents.passwordEnvs?.[cell.server.name] !== undefined
          ? { password_env: plan.agents.passwordEnvs[cell.server.name] }
          : {}),
      },
      sweep: {
        engine: plan.engine,
        threads: plan.threads,
        clients: plan.clients,
        rates: [cell.requestedOpsPerSec],
        step_s: plan.stepS,
        warmup_s: plan.warmupS,
        ratio: plan.ratio,
        keys: plan.keys,
        data_size_bytes: plan.dataSizeBytes,
        pipeline: plan.pipeline,
        // (memtier fires its connections together: no arrivals)
        ...(engineOf(plan).fixedRate.poisson ? { arrivals: plan.arrivals } : {}),
      },
    },
  };
}
