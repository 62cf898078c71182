/**
 * Plan kind `memtier`: memtier_benchmark runs over a parameter matrix (threads, connections per
 * thread, pipeline, data size) crossed into cells, with the plan's ratio, key pattern and range,
 * `test_time_s` or `requests`, rate limit and run count; optionally the key space is preloaded
 * (every key of the range written once, by memtier itself) before measuring. Each cell is one
 * stored run with memtier's JSON and HDR files.
 *
 * @module
 */

import { type Limit, limitProblem, LIMITS, MAX_CONNECTIONS } from "../../limits.ts";
import type { MemtierCall, MemtierRun } from "../../memtier/run.ts";
import type { Tool } from "../../tools/tool.ts";
import { toolFor } from "../tools.ts";
import { withServerParams } from "./_server_params.ts";
import { parseRatio } from "../../tools/workload.ts";
import {
  cellRecord,
  interleavedCells,
  type PlanKind,
  type PlanReader,
  toolEvent,
} from "../kind.ts";
import type { CellRunner, KindContext, PlanBase, PlanCellBase, PlanCommon } from "../kind.ts";

/** When to write the key space before measuring. */
export type MemtierPreload = "none" | "once" | "each";

/** The parameter matrix of a memtier plan; each list is crossed with the others. */
export interface MemtierMatrix {
  threads: number[];
  /** Connections per thread (`-c`). */
  clients: number[];
  pipeline: number[];
  dataSizeBytes: number[];
}

/** A checked plan of kind `memtier`. */
export interface MemtierPlan extends PlanBase {
  kind: "memtier";
  /** `memtier_benchmark` (found on PATH or in kvlab's tools cache) or a path. */
  tool: string;
  /** `--ratio` SET:GET. */
  ratio: string;
  /** `--key-pattern` SET:GET. */
  keyPattern: string;
  keyMinimum: number;
  keyMaximum: number;
  /** `--test-time`; null with `requests`. */
  testTimeS: number | null;
  /** `-n` per connection; null with `testTimeS`. */
  requests: number | null;
  /** `--rate-limiting` per connection; null: as fast as possible. */
  rateLimit: number | null;
  /** `-x`: runs inside one memtier invocation (with `--print-all-runs`). */
  runCount: number;
  /** `--print-percentiles`. */
  percentiles: number[];
  /** Write every key of the range once before measuring: never, once per server, each cell. */
  preload: MemtierPreload;
  matrix: MemtierMatrix;
}

/** One memtier run to make: a server, a point of the matrix and a repetition. */
export interface MemtierCell extends PlanCellBase {
  /** Stable id: `<plan>/<server>/t<threads>-c<clients>-P<pipeline>-d<size>/rep<k>`. */
  id: string;
  threads: number;
  clients: number;
  pipeline: number;
  dataSizeBytes: number;
}

type MatrixPoint = Omit<MemtierCell, keyof PlanCellBase>;

/** The plan's `memtier:` section, where every field of this kind lives. */
const S = "memtier";

/** The fields of the `memtier:` section. */
const SECTION_FIELDS = [
  "tool",
  "ratio",
  "key_pattern",
  "key_minimum",
  "key_maximum",
  "test_time_s",
  "requests",
  "rate_limit",
  "run_count",
  "percentiles",
  "preload",
  "matrix",
];

/** memtier's defaults, used for matrix lists and fields not given. */
const DEFAULTS = { threads: 4, clients: 50, pipeline: 1, dataSizeBytes: 32 };

/**
 * The measured run of a cell: the plan's workload, the cell's server and parameters.
 *
 * @param plan The plan.
 * @param cell One of its cells.
 * @returns The run, ready for the memtier tool (`memtierArgv`, `runMemtier`).
 *
 * @example
 * ```ts
 * import { memtierArgv, memtierCall, parsePlan, planCells } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan(
 *   "name: m\nkind: memtier\nservers: [{name: a, url: 'redis://h:1'}]\n" +
 *     "memtier: {test_time_s: 5, matrix: {threads: [2], clients: [10]}}\n",
 *   "m.yaml",
 * );
 * assert.ok(plan.kind === "memtier");
 * assert.equal(
 *   memtierArgv(memtierCall(plan, planCells(plan)[0])).join(" "),
 *   "memtier_benchmark -s h -p 1 --protocol=redis -t 2 -c 10 --ratio=1:10 -d 32 --key-pattern=R:R " +
 *     "--key-maximum=10000000 --pipeline=1 --test-time=5 " +
 *     "--print-percentiles=50,99,99.9",
 * );
 * ```
 */
export function memtierCall(plan: MemtierPlan, cell: MemtierCell): MemtierCall {
  return {
    tool: plan.tool,
    target: cell.server.target,
    threads: cell.threads,
    clients: cell.clients,
    ratio: plan.ratio,
    dataSizeBytes: cell.dataSizeBytes,
    keyPattern: plan.keyPattern,
    keyMinimum: plan.keyMinimum,
    keyMaximum: plan.keyMaximum,
    pipeline: cell.pipeline,
    testTimeS: plan.testTimeS ?? undefined,
    requests: plan.requests ?? undefined,
    rateLimit: plan.rateLimit ?? undefined,
    runCount: plan.runCount > 1 ? plan.runCount : undefined,
    printAllRuns: plan.runCount > 1 || undefined,
    printPercentiles: plan.percentiles,
  };
}

/**
 * The preload run of a cell: every key of the plan's range written once (`--ratio=1:0
 * --key-pattern=P:P -n allkeys`, connections sharing the range), with the cell's value size,
 * pipelined 16 deep.
 *
 * @param plan The plan.
 * @param cell The cell about to be measured.
 * @returns The run.
 */
export function memtierPreloadCall(plan: MemtierPlan, cell: MemtierCell): MemtierCall {
  return {
    tool: plan.tool,
    target: cell.server.target,
    threads: cell.threads,
    clients: cell.clients,
    ratio: "1:0",
    dataSizeBytes: cell.dataSizeBytes,
    keyPattern: "P:P",
    keyMinimum: plan.keyMinimum,
    keyMaximum: plan.keyMaximum,
    pipeline: 16,
    requests: "allkeys",
    hideHistogram: true,
  };
}

/** The `memtier` plan kind. */
export const memtierKind: PlanKind<MemtierPlan, MemtierCell> = {
  fields: ["memtier"],
  parse: parseMemtierPlan,
  tags: ["threads", "clients", "pipeline", "data_size_bytes"],
  count: countMemtierCells,
  pinnable: () => true,
  cells: memtierCells,
  describe: describeMemtierCell,
  open: openMemtier,
};

/** Reads the kind's fields of a plan (errors carry file:line). */
function parseMemtierPlan(read: PlanReader, common: PlanCommon): MemtierPlan {
  // the section is optional: without it, every field is memtier's default
  if (read.value([S]) !== undefined) {
    read.section([S], SECTION_FIELDS, "expected { ratio, key_maximum, test_time_s, matrix, … }");
  }

  const has = (k: string) => read.value([S, k]) !== undefined;
  if (has("test_time_s") && has("requests")) {
    read.fail([S, "requests"], "give test_time_s or requests, not both");
  }
  const preload = read.string([S, "preload"], "none");
  if (!["none", "once", "each"].includes(preload)) {
    read.fail([S, "preload"], "expected none, once or each");
  }
  if (preload !== "none" && !has("key_maximum")) {
    read.fail([S, "preload"], "a preload needs key_maximum (memtier's default: 10,000,000 keys)");
  }
  const keyMinimum = read.integer([S, "key_minimum"], 0, 0);
  const keyMaximum = read.integer([S, "key_maximum"], 10_000_000, 0);
  if (keyMaximum < keyMinimum) {
    read.fail([S, "key_maximum"], "expected key_maximum ≥ key_minimum");
  }
  const plan: MemtierPlan = {
    ...common,
    kind: "memtier",
    tool: read.string([S, "tool"], "memtier_benchmark"),
    ratio: readRatio(read),
    keyPattern: readPair(read, "key_pattern", { dflt: "R:R", re: /^[RSGP]:[RSGP]$/ }),
    keyMinimum,
    keyMaximum,
    testTimeS: has("test_time_s") ? read.integer([S, "test_time_s"]) : null,
    requests: has("test_time_s") ? null : read.integer([S, "requests"], 10000),
    rateLimit: has("rate_limit") ? read.integer([S, "rate_limit"]) : null,
    runCount: read.integer([S, "run_count"], 1),
    percentiles: has("percentiles")
      ? read.list([S, "percentiles"], "expected a list of percentiles (50, 99, 99.9)")
        .map((_, i) => readPercentile(read, i))
      : [50, 99, 99.9],
    preload: preload as MemtierPreload,
    matrix: readMatrix(read),
  };
  checkMemtierLimits(read, plan);
  return plan;
}

/** The number of cells, computed without building them. */
function countMemtierCells(plan: MemtierPlan): number {
  const m = plan.matrix;
  const points = m.threads.length * m.clients.length * m.pipeline.length *
    m.dataSizeBytes.length;
  return plan.repetitions * points * plan.servers.length;
}

/** The plan's cells, interleaved across servers and repetitions. */
function memtierCells(plan: MemtierPlan): MemtierCell[] {
  const m = plan.matrix;
  const points: MatrixPoint[] = [];
  for (const threads of m.threads) {
    for (const clients of m.clients) {
      for (const pipeline of m.pipeline) {
        for (const dataSizeBytes of m.dataSizeBytes) {
          points.push({ threads, clients, pipeline, dataSizeBytes });
        }
      }
    }
  }
  const key = (p: MatrixPoint) => `t${p.threads}-c${p.clients}-P${p.pipeline}-d${p.dataSizeBytes}`;
  // a server's own params: its cells run (and are named by) those values
  return withServerParams(plan, interleavedCells(plan, points, key), key);
}

/** The tool a plan runs: memtier_benchmark, whatever its `tool:` path. */
function memtierToolOf(plan: MemtierPlan): Tool<MemtierCall, MemtierRun> {
  return toolFor(plan.tool, "memtier_benchmark");
}

/** The command a cell runs, as `--dry-run` and progress show it (secrets redacted). */
function describeMemtierCell(plan: MemtierPlan, cell: MemtierCell) {
  const tool = memtierToolOf(plan);
  const preload = plan.preload === "each" || plan.preload === "once"
    ? [{
      what: plan.preload === "once"
        ? "preload, once per server, not stored"
        : "preload, not stored",
      command: tool.command(memtierPreloadCall(plan, cell), false),
    }]
    : [];
  return {
    ...(preload.length ? { before: preload } : {}),
    command: tool.command(memtierCall(plan, cell)),
    // a timed run's total is unknown beforehand: its progress events carry their percent
    requests: (plan.requests ?? 0) * cell.threads * cell.clients * plan.runCount,
  };
}

/** Prepares the plan's runs once; returns the function that runs one cell. */
async function openMemtier(plan: MemtierPlan, ctx: KindContext): Promise<CellRunner<MemtierCell>> {
  const tool = memtierToolOf(plan);
  // found and its version asked once; ToolNotFoundError before any cell when it is missing
  const prepared = await tool.prepare(plan.tool, ctx.runner);
  const preloaded = new Set<string>();
  const runs = { ...plan, tool: prepared.command };
  const timeoutMs = plan.timeoutS * 1000;
  return async (cell, emit) => {
    let after: string | undefined;
    if (plan.preload === "each" || (plan.preload === "once" && !preloaded.has(cell.label))) {
      emit({ kind: "warmup", what: "preload" });
      after = "preload";
      await tool.unrecorded!(memtierPreloadCall(runs, cell), {
        runner: ctx.runner,
        timeoutMs,
        signal: ctx.signal,
      });
      preloaded.add(cell.label);
    }
    return tool.run(memtierCall(runs, cell), {
      data: ctx.data,
      runner: ctx.runner,
      label: cell.label,
      ...cellRecord(plan, cell, {
        threads: String(cell.threads),
        clients: String(cell.clients),
        pipeline: String(cell.pipeline),
        data_size_bytes: String(cell.dataSizeBytes),
      }),
      timeoutMs,
      signal: ctx.signal,
      after,
      onProgress: (e) => emit(toolEvent(e)),
      toolVersion: prepared.version,
      host: ctx.host,
      now: ctx.now,
    });
  };
}

/** A `N:M` field (`ratio`, `key_pattern`). */
function readPair(
  read: PlanReader,
  k: string,
  { dflt, re }: { dflt: string; re: RegExp },
): string {
  const v = read.value([S, k]);
  if (v === undefined) return dflt;
  if (typeof v !== "string" || !re.test(v)) {
    read.fail([S, k], k === "ratio" ? "expected SET:GET, e.g. 1:10" : "expected e.g. R:R or P:P");
  }
  return v as string;
}

function readPercentile(read: PlanReader, i: number): number {
  const v = read.value([S, "percentiles", i]);
  if (typeof v !== "number" || !(v > 0 && v <= 100)) {
    read.fail([S, "percentiles", i], "expected a percentile in (0, 100]");
  }
  return v as number;
}

/** The `matrix:` section: each parameter a list (or one value), memtier's defaults if absent. */
function readMatrix(read: PlanReader): MemtierMatrix {
  const m = read.value([S, "matrix"]) ?? {};
  if (typeof m !== "object" || Array.isArray(m)) {
    read.fail([S, "matrix"], "expected a mapping of lists");
  }
  const known = ["threads", "clients", "pipeline", "data_size_bytes"];
  for (const k of Object.keys(m)) {
    if (!known.includes(k)) {
      read.fail([S, "matrix", k], `unknown parameter (known: ${known.join(", ")})`);
    }
  }
  const list = (k: string, dflt: number, limit?: Limit): number[] => {
    const v = read.value([S, "matrix", k]);
    if (v === undefined) return [dflt];
    if (Array.isArray(v) && v.length === 0) {
      read.fail([S, "matrix", k], "expected at least one value");
    }
    const paths = Array.isArray(v) ? v.map((_, i) => [S, "matrix", k, i]) : [[S, "matrix", k]];
    return paths.map((path) => {
      const n = read.integer(path);
      // before any load (`../../limits.ts`); threads × clients is checked in checkMemtierLimits
      const why = limit && limitProblem(n, limit);
      if (why) read.fail(path, why);
      return n;
    });
  };
  return {
    threads: list("threads", DEFAULTS.threads),
    clients: list("clients", DEFAULTS.clients),
    pipeline: list("pipeline", DEFAULTS.pipeline, LIMITS.pipeline),
    dataSizeBytes: list("data_size_bytes", DEFAULTS.dataSizeBytes, LIMITS.valueBytes),
  };
}

/** `ratio`: SET:GET as memtier takes it, not both zero (the same rule as the load generator). */
function readRatio(read: PlanReader): string {
  const ratio = readPair(read, "ratio", { dflt: "1:10", re: /^\d+:\d+$/ });

  try {
    parseRatio(ratio);
  } catch (e) {
    read.fail([S, "ratio"], (e as Error).message);
  }
  return ratio;
}

/**
 * The limits of `../../limits.ts`, checked once when the plan is read: connections (threads ×
 * clients), the requested rate (rate_limit × connections, memtier's per-connection rate
 * overflowed above 10⁹ in total) and the test time.
 */
function checkMemtierLimits(read: PlanReader, plan: MemtierPlan): void {
  const most = Math.max(...plan.matrix.threads) * Math.max(...plan.matrix.clients);
  if (most > MAX_CONNECTIONS) {
    read.fail([S, "matrix", "clients"], `threads × clients = ${most}: at most ${MAX_CONNECTIONS}`);
  }
  if (plan.rateLimit !== null) {
    const why = limitProblem(plan.rateLimit * most, LIMITS.toolRate);
    if (why) read.fail([S, "rate_limit"], `${plan.rateLimit * most} requests per second: ${why}`);
  }
  if (plan.testTimeS !== null) {
    const why = limitProblem(plan.testTimeS, LIMITS.duration);
    if (why) read.fail([S, "test_time_s"], why);
  }
}
