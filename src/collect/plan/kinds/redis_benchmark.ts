/**
 * Plan kind `redis-benchmark` (the default): a tool (`redis-benchmark`, `valkey-benchmark` or a
 * path), its `-t` tests, `-n` requests and a parameter matrix (clients, data sizes, pipeline,
 * threads, keyspace) crossed into cells; each cell is one stored run, after an optional
 * unrecorded warm-up.
 *
 * @module
 */

import { type Limit, limitProblem, LIMITS } from "../../limits.ts";
import type { BenchmarkCall } from "../../redis_benchmark/run.ts";
import { BENCHMARK_TEST_NAMES } from "../../formats/redis_benchmark/params.ts";
import { connect, ServerUnreachableError } from "../../server.ts";
import type { ServerTarget } from "../../target.ts";
import type { Tool } from "../../tools/tool.ts";
import { toolFor } from "../tools.ts";
import { withServerParams } from "./_server_params.ts";
import {
  cellRecord,
  interleavedCells,
  MAX_PLAN_CELLS,
  type PlanKind,
  type PlanReader,
  toolEvent,
} from "../kind.ts";
import type { CellRunner, KindContext, PlanBase, PlanCellBase, PlanCommon } from "../kind.ts";

/** The parameter matrix; each list is crossed with the others. */
export interface PlanMatrix {
  clients: number[];
  dataSizeBytes: number[];
  pipeline: number[];
  /** 0 = no `--threads`. */
  threads: number[];
  /** null = no `-r`. */
  keyspace: (number | null)[];
}

/** A checked plan of kind `redis-benchmark`. */
export interface RedisBenchmarkPlan extends PlanBase {
  kind: "redis-benchmark";
  /** `redis-benchmark`, `valkey-benchmark` or a path. */
  tool: string;
  tests: string[];
  requests: number;
  matrix: PlanMatrix;
  /** Requests of an unrecorded warm-up run before each cell (0: none). */
  warmupRequests: number;
  /**
   * `keep_alive: false` runs `-k 0`: every request on a new connection (TCP and, over TLS, a
   * handshake each), the way to measure the cost of connecting. @default {true} (no `-k`)
   */
  keepAlive: boolean;
}

/** One redis-benchmark run to make: a server, a point of the matrix and a repetition. */
export interface RedisBenchmarkCell extends PlanCellBase {
  /** Stable id: `<plan>/<server>/c<clients>-d<size>-P<pipeline>-t<threads>-r<keyspace>/rep<k>`. */
  id: string;
  clients: number;
  dataSizeBytes: number;
  pipeline: number;
  threads: number;
  keyspace: number | null;
}

type MatrixPoint = Omit<RedisBenchmarkCell, keyof PlanCellBase>;

/**
 * The run of a cell: the plan's tool, tests and requests, the cell's server and parameters.
 *
 * @param plan The plan.
 * @param cell One of its cells.
 * @param requests `-n` (the warm-up run gives its own).
 * @returns The run, ready for the redis-benchmark tool (`redisBenchmarkArgv`, `runRedisBenchmark`).
 *
 * @example
 * ```ts
 * import { cellParams, parsePlan, planCells, redisBenchmarkArgv } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan("name: p\nservers: [{name: a, url: 'redis://h:1'}]\ntests: [set]\n", "p.yaml");
 * assert.ok(plan.kind === "redis-benchmark");
 * assert.equal(
 *   redisBenchmarkArgv(cellParams(plan, planCells(plan)[0])).join(" "),
 *   "redis-benchmark -h h -p 1 -c 50 -n 100000 -d 3 -P 1 -t set",
 * );
 * // keep_alive: false reconnects for every request (-k 0)
 * const k0 = parsePlan("name: p\nservers: [{name: a, url: 'redis://h:1'}]\ntests: [set]\nkeep_alive: false\n", "p.yaml");
 * assert.ok(k0.kind === "redis-benchmark");
 * assert.match(redisBenchmarkArgv(cellParams(k0, planCells(k0)[0])).join(" "), / -k 0 /);
 * ```
 */
export function cellParams(
  plan: RedisBenchmarkPlan,
  cell: RedisBenchmarkCell,
  requests: number = plan.requests,
): BenchmarkCall {
  return {
    tool: plan.tool,
    target: cell.server.target,
    tests: plan.tests,
    clients: cell.clients,
    requests,
    dataSizeBytes: cell.dataSizeBytes,
    pipeline: cell.pipeline,
    threads: cell.threads,
    keyspace: cell.keyspace ?? undefined,
    ...(plan.keepAlive ? {} : { keepAlive: false }),
  };
}

/** The `redis-benchmark` plan kind. */
export const redisBenchmarkKind: PlanKind<RedisBenchmarkPlan, RedisBenchmarkCell> = {
  fields: ["tool", "tests", "requests", "matrix", "warmup_requests", "keep_alive"],
  tags: ["clients", "data_size_bytes", "pipeline", "threads", "keyspace"],
  parse: parseRedisBenchmarkPlan,
  count: countRedisBenchmarkCells,
  pinnable: () => true,
  cells: redisBenchmarkCells,
  describe: describeRedisBenchmarkCell,
  open: openRedisBenchmark,
};

/** Reads the kind's fields of a plan (errors carry file:line). */
function parseRedisBenchmarkPlan(read: PlanReader, common: PlanCommon): RedisBenchmarkPlan {
  const tests = read.list(["tests"], "expected a list of tests (set, get, …)")
    .flatMap((_, i) => readTests(read, i));
  return {
    ...common,
    kind: "redis-benchmark",
    tests,
    matrix: readMatrix(read),
    tool: read.string(["tool"], "redis-benchmark"),
    requests: read.integer(["requests"], 100000),
    warmupRequests: read.integer(["warmup_requests"], 0, 0),
    keepAlive: read.boolean(["keep_alive"], true),
  };
}

/** The number of cells, computed without building them. */
function countRedisBenchmarkCells(plan: RedisBenchmarkPlan): number {
  const m = plan.matrix;
  const points = m.clients.length * m.dataSizeBytes.length * m.pipeline.length *
    m.threads.length * m.keyspace.length;
  return plan.repetitions * points * plan.servers.length;
}

/** The plan's cells, interleaved across servers and repetitions. */
function redisBenchmarkCells(plan: RedisBenchmarkPlan): RedisBenchmarkCell[] {
  const n = redisBenchmarkKind.count!(plan);
  if (n > MAX_PLAN_CELLS) {
    throw new RangeError(`plan ${plan.name}: ${n} cells; at most ${MAX_PLAN_CELLS} are allowed`);
  }
  const m = plan.matrix;
  const points: MatrixPoint[] = [];
  for (const clients of m.clients) {
    for (const dataSizeBytes of m.dataSizeBytes) {
      for (const pipeline of m.pipeline) {
        for (const threads of m.threads) {
          for (const keyspace of m.keyspace) {
            points.push({ clients, dataSizeBytes, pipeline, threads, keyspace });
          }
        }
      }
    }
  }
  const key = (p: MatrixPoint) =>
    `c${p.clients}-d${p.dataSizeBytes}-P${p.pipeline}-t${p.threads}-r${p.keyspace ?? 0}`;
  // a server's own params: its cells run (and are named by) those values
  return withServerParams(plan, interleavedCells(plan, points, key), key);
}

/** The tool a plan runs: redis-benchmark or valkey-benchmark, whatever its `tool:` path. */
function benchmarkToolOf(plan: RedisBenchmarkPlan): Tool<BenchmarkCall> {
  return toolFor(plan.tool, "redis-benchmark");
}

/** The command a cell runs, as `--dry-run` and progress show it (secrets redacted). */
function describeRedisBenchmarkCell(plan: RedisBenchmarkPlan, cell: RedisBenchmarkCell) {
  const tool = benchmarkToolOf(plan);
  const warmup = plan.warmupRequests > 0
    ? [{
      what: "warm-up, not stored",
      command: tool.command(cellParams(plan, cell, plan.warmupRequests), false),
    }]
    : [];
  return {
    command: tool.command(cellParams(plan, cell)),
    requests: plan.requests,
    ...(warmup.length ? { before: warmup } : {}),
  };
}

/** Prepares the plan's runs once; returns the function that runs one cell. */
async function openRedisBenchmark(
  given: RedisBenchmarkPlan,
  ctx: KindContext,
): Promise<CellRunner<RedisBenchmarkCell>> {
  const tool = benchmarkToolOf(given);
  // PATH first, then the tools cache (where .ci/install builds valkey-benchmark); fails with
  // ToolNotFoundError before any cell when the tool is missing
  const prepared = await tool.prepare(given.tool, ctx.runner);
  const plan = { ...given, tool: prepared.command };
  const timeoutMs = plan.timeoutS * 1000;
  return async (cell, emit) => {
    let after: string | undefined;
    // a warm-up against a server that is down would wait out the whole timeout_s: skip it,
    // and let the measured run fail at once with the connection error
    if (plan.warmupRequests > 0 && await answers(cell.server.target)) {
      emit({ kind: "warmup" });
      after = "warm-up";
      await tool.unrecorded!(cellParams(plan, cell, plan.warmupRequests), {
        runner: ctx.runner,
        timeoutMs,
        signal: ctx.signal,
      });
    }
    return tool.run(cellParams(plan, cell), {
      data: ctx.data,
      runner: ctx.runner,
      label: cell.label,
      ...cellRecord(plan, cell, {
        clients: String(cell.clients),
        data_size_bytes: String(cell.dataSizeBytes),
        pipeline: String(cell.pipeline),
        threads: String(cell.threads),
        keyspace: String(cell.keyspace ?? ""),
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

/**
 * One entry of `tests:` (`set`, or `set,get` as `-t` takes it), each name one that
 * redis-benchmark's `-t` runs: the tool skips an unknown name without a word, so a typo would
 * quietly measure nothing.
 */
function readTests(read: PlanReader, i: number): string[] {
  const names = read.string(["tests", i]).toLowerCase().split(",").map((t) => t.trim());
  for (const name of names) {
    if (isKnownTest(name)) continue;
    const near = nearTests(name);
    read.fail(
      ["tests", i],
      `unknown test ${JSON.stringify(name)}: redis-benchmark -t has no such test and would ` +
        `never run it` + (near.length > 0 ? ` (did you mean ${near.join(" or ")}?)` : ""),
    );
  }
  return names;
}

/** Whether `-t name` selects a test (per the tool's own list, in redis_benchmark_params.ts). */
function isKnownTest(name: string): boolean {
  return BENCHMARK_TEST_NAMES.includes(name);
}

/** Known test names one edit away from a misspelt one. */
function nearTests(name: string): string[] {
  const letters = "abcdefghijklmnopqrstuvwxyz_0123456789";
  const out = new Set<string>();
  for (let i = 0; i <= name.length; i++) {
    const [a, b] = [name.slice(0, i), name.slice(i)];
    if (b) out.add(a + b.slice(1)); // deletion
    if (b.length > 1) out.add(a + b[1] + b[0] + b.slice(2)); // transposition
    for (const c of letters) {
      out.add(a + c + b); // insertion
      if (b) out.add(a + c + b.slice(1)); // substitution
    }
  }
  return [...out].filter((t) => t !== name && isKnownTest(t)).sort();
}

/** The `matrix:` section: each parameter a list (or one value), defaults for those absent. */
function readMatrix(read: PlanReader): PlanMatrix {
  const m = read.value(["matrix"]) ?? {};
  if (typeof m !== "object" || Array.isArray(m)) {
    read.fail(["matrix"], "expected a mapping of lists");
  }
  const known = ["clients", "data_size_bytes", "pipeline", "threads", "keyspace"];
  for (const k of Object.keys(m)) {
    if (!known.includes(k)) {
      read.fail(["matrix", k], `unknown parameter (known: ${known.join(", ")})`);
    }
  }
  // sizes and counts within kvlab's limits (`../../limits.ts`), checked before any load: 100,000
  // clients ran out of files mid-plan, a 10^12-byte -d is no size redis-benchmark keeps
  const list = (
    k: string,
    dflt: (number | null)[],
    { min, nullable = false, limit }: { min: number; nullable?: boolean; limit?: Limit },
  ) => {
    const v = read.value(["matrix", k]);
    if (v === undefined) return dflt;
    if (Array.isArray(v) && v.length === 0) read.fail(["matrix", k], "expected at least one value");
    const paths = Array.isArray(v) ? v.map((_, i) => ["matrix", k, i]) : [["matrix", k]];
    return paths.map((path) => {
      if (nullable && read.value(path) === null) return null;
      const n = read.integer(path, undefined, min);
      const why = limit && limitProblem(n, limit);
      if (why) read.fail(path, why);
      return n;
    });
  };
  return {
    clients: list("clients", [50], { min: 1, limit: LIMITS.connections }) as number[],
    dataSizeBytes: list("data_size_bytes", [3], { min: 1, limit: LIMITS.valueBytes }) as number[],
    pipeline: list("pipeline", [1], { min: 1, limit: LIMITS.pipeline }) as number[],
    threads: list("threads", [0], { min: 0 }) as number[],
    keyspace: list("keyspace", [null], { min: 1, nullable: true }),
  };
}

/**
 * Whether a server accepts a connection (and its credentials) within 3 s.
 *
 * @param target The server.
 * @returns False when it cannot be reached.
 */
async function answers(target: ServerTarget): Promise<boolean> {
  try {
    const client = await connect(target, 3000);
    client.disconnect();
    return true;
  } catch (e) {
    if (e instanceof ServerUnreachableError) return false;
    throw e;
  }
}
