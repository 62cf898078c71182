/**
 * What every plan kind provides, and what they share: the common fields of a plan and a cell,
 * the interleaved cell order, and the context a cell runs in (a plan's fields are read with the
 * `PlanReader` of `reader.ts`, re-exported here). `plan.ts` holds the registry (`kind:` →
 * module); `study.ts` runs any kind's cells with resume, pauses, progress and Ctrl-C handled once.
 *
 * @module
 */

import type { PlanReader, PlanWhere } from "./reader.ts";
import type { PlanAgents } from "./agents.ts";
export * from "./reader.ts";
import type { HostFacts } from "../host.ts";
import type { ProcessRunner } from "../process.ts";
import type { CollectedRun, RunWatch } from "../collector.ts";
import type { ServerStart } from "./start.ts";
import type { ProgressEvent } from "../formats/format.ts";
import type { ToolProgress } from "../tools/tool.ts";
import type { ServerTarget } from "../target.ts";
import { serverWatch } from "../cluster/node_stats.ts";
import type { PlanUntilDecided } from "./until.ts";

/** A server of a plan. */
export interface PlanServer {
  /** Name of the arm (`redis`, `redis-io4`, `valkey`): stored as the runs' `label`. */
  name: string;
  /**
   * `redis://[user:password@]host[:port][/db]`, `rediss://…` or `unix:///path`. A server kvlab
   * starts has `redis://127.0.0.1:0` until it runs (`--dry-run` shows port 0).
   */
  url: string;
  target: ServerTarget;
  /**
   * Docker container of the server: its `docker stats` are sampled over every run (and its
   * memory at each step of a memory sweep). Kvlab names the containers it starts.
   */
  container?: string;
  /** How kvlab starts the server, when the plan says `start:` instead of `url:`. */
  start?: ServerStart;
  /** The watch of its container over each run, once `runPlan` knows its engine. */
  watch?: RunWatch;
  /**
   * The server's own tool parameters (`params: { pipeline: 16 }`, by the names of the kind's
   * tags), replacing the matrix's values in its cells: arms that differ by a parameter.
   */
  params?: Record<string, number>;
}

/** The fields every plan has, whatever its kind. */
export interface PlanBase {
  name: string;
  /** Which module reads, expands and runs the plan (`redis-benchmark`, `memory`, …). */
  kind: string;
  servers: PlanServer[];
  repetitions: number;
  /** Pause between cells, seconds. */
  pauseS: number;
  /** Limit per run, seconds. */
  timeoutS: number;
  tags: Record<string, string>;
  /**
   * `cpus: { client: LIST, server: LIST }`: the client (the tools kvlab starts, run under
   * `taskset -c LIST`, or kvlab itself when its own engine is the client) and the plan's local
   * servers on these CPUs (`./pin.ts`).
   */
  cpus?: { client?: PlanCpuSet; server?: PlanCpuSet };
  /** `agents:` (issue 35): each step runs on several client hosts (`./agents.ts`). */
  agents?: PlanAgents;
  /** `until_decided:`: run in rounds until each cell is decided (`kvlab run --until-decided`). */
  untilDecided?: PlanUntilDecided;
}

/** One CPU list of a plan's `cpus:`. */
export interface PlanCpuSet {
  /** As `taskset -c` takes it (`0`, `2-3`). */
  list: string;
  cpus: number[];
  /** The field's place in the plan, for the error when this machine cannot pin to it. */
  at: PlanWhere;
}

/** The common fields of a plan, as read before its kind's own section. */
export type PlanCommon = Omit<PlanBase, "kind">;

/** The fields every cell has: one run to make. Kinds add their own parameters. */
export interface PlanCellBase {
  /** Stable id, `<plan>/<server>/<parameters>/rep<k>`: resuming matches stored runs by it. */
  id: string;
  server: PlanServer;
  /** Stored as the run's `label` (the server's name). */
  label: string;
  repetition: number;
}

/**
 * The most cells a plan may have (repetitions × parameter points × servers). Plans are counted
 * arithmetically before any cell is built, so a plan over the limit fails at once with a
 * {@link PlanError}, whatever its size; split a larger study into several plans.
 */
export const MAX_PLAN_CELLS = 100_000;

/** What a running cell reports, besides its start and end (which `runPlan` reports). */
export type CellEvent =
  /** An unrecorded warm-up run (or, `what: "preload"`, a preload of the key space) starts. */
  | { kind: "warmup"; what?: "warm-up" | "preload" }
  /** The tool's own live output (`rps=…`). */
  | { kind: "progress"; event: ProgressEvent }
  /** A memory fill reached `keys` of `target`. */
  | { kind: "fill"; keys: number; target: number };

/**
 * The cell event of a tool's progress: a fill as it is, anything else as the tool's progress.
 *
 * @param e What the tool reported.
 * @returns The event a cell emits.
 *
 * @example
 * ```ts
 * import { toolEvent } from "./kind.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(toolEvent({ kind: "fill", keys: 1, target: 2 }), { kind: "fill", keys: 1, target: 2 });
 * const p = { kind: "done" as const, test: "SET", opsPerSec: 1 };
 * assert.deepEqual(toolEvent(p), { kind: "progress", event: p });
 * ```
 */
export function toolEvent(e: ToolProgress): CellEvent {
  return e.kind === "fill" ? e : { kind: "progress", event: e };
}

/** What the cells of a plan run with. */
export interface KindContext {
  /** Dataset directory. */
  data: string;
  runner: ProcessRunner;
  /** Aborting stops the running cell; it returns with `interrupted` when it was cut. */
  signal?: AbortSignal;
  now?: () => Date;
  host: HostFacts;
}

/**
 * Runs one cell and stores its run. Does not throw for a server that is down or a tool that
 * fails: those become a stored run with a reason.
 */
export type CellRunner<C> = (cell: C, emit: (e: CellEvent) => void) => Promise<CollectedRun>;

/**
 * A plan kind: one module that reads its section of a plan, expands its cells and runs a cell.
 * Register it in `PLAN_KINDS` (`src/collect/plan/plan.ts`).
 */
export interface PlanKind<P extends PlanBase, C extends PlanCellBase> {
  /** The top-level fields of this kind's plans, besides the common ones. */
  readonly fields: readonly string[];
  /**
   * Reads this kind's fields.
   *
   * @param read The plan's reader (its errors carry file:line).
   * @param common The common fields, already checked.
   */
  parse(read: PlanReader, common: PlanCommon): P;
  /** The cells in run order (see {@link interleavedCells}). */
  cells(plan: P): C[];
  /**
   * How many cells {@link PlanKind.cells} returns, computed without building them, so that
   * `parsePlan` can refuse a plan over {@link MAX_PLAN_CELLS} before expansion. A kind without
   * it is counted as repetitions × servers (and `interleavedCells` checks the rest).
   */
  count?(plan: P): number;
  /**
   * The tags every cell of this kind sets from its parameters (`clients`, …): a plan's own
   * `tags:` may not use them, nor `plan` and `server_name`.
   */
  readonly tags?: readonly string[];
  /**
   * Whether the cells run a client tool as a process, which `cpus: { client }` can pin
   * (redis-benchmark, memtier_benchmark); a kind without it runs its load inside kvlab.
   */
  pinnable?(plan: P): boolean;
  /**
   * What a cell runs, for the start event and `--dry-run`: the command (secrets redacted), how
   * many requests a run makes (100 % of a progress bar), and the unstored commands run before it
   * (`before`: a warm-up, a preload), when there are any.
   */
  describe(
    plan: P,
    cell: C,
  ): { command: string; requests: number; before?: { what: string; command: string }[] };
  /**
   * Prepares a real run of the plan, once before its first cell (e.g. checks that the tool is
   * installed, throwing `ToolNotFoundError` otherwise), and returns what runs one cell.
   */
  open(plan: P, ctx: KindContext): Promise<CellRunner<C>>;
}

/**
 * Cells in run order: repetition, then parameters, then server, so servers alternate
 * (A B A B …) and no side gets all the early or late slots.
 *
 * @param plan The plan.
 * @param points The parameter sets, in order.
 * @param key The id part of a parameter set.
 * @returns One cell per repetition × parameter set × server.
 * @throws {RangeError} When there would be more than {@link MAX_PLAN_CELLS} cells (checked
 * before any is built).
 *
 * @example
 * ```ts
 * import { interleavedCells, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const server = (name: string) => ({ name, url: "redis://h", target: parseServerUrl("redis://h") });
 * const plan = { name: "p", servers: [server("a"), server("b")], repetitions: 2 };
 * const cells = interleavedCells(plan, [{ c: 1 }, { c: 8 }], (p) => `c${p.c}`);
 * assert.deepEqual(cells.map((x) => x.id).slice(0, 3), ["p/a/c1/rep1", "p/b/c1/rep1", "p/a/c8/rep1"]);
 * assert.equal(cells.length, 8);
 * assert.equal(cells[1].label, "b");
 * ```
 */
export function interleavedCells<T extends object>(
  plan: Pick<PlanBase, "name" | "servers" | "repetitions">,
  points: readonly T[],
  key: (point: T) => string,
): (PlanCellBase & T)[] {
  const n = plan.repetitions * points.length * plan.servers.length;
  if (n > MAX_PLAN_CELLS) {
    throw new RangeError(
      `plan ${plan.name}: ${n} cells (${plan.repetitions} repetitions × ${points.length} ` +
        `parameter sets × ${plan.servers.length} servers); at most ${MAX_PLAN_CELLS} are allowed`,
    );
  }
  const cells: (PlanCellBase & T)[] = [];
  for (let repetition = 1; repetition <= plan.repetitions; repetition++) {
    for (const point of points) {
      for (const server of plan.servers) {
        cells.push({
          id: `${plan.name}/${server.name}/${key(point)}/rep${repetition}`,
          server,
          label: server.name,
          ...point,
          repetition,
        });
      }
    }
  }
  return cells;
}

/**
 * The tags and plan reference every run of a cell stores.
 *
 * @param plan The plan.
 * @param cell The cell.
 * @param params The cell's parameters, as tags.
 * @returns `tags` (the plan's, `plan`, `server_name`, then `params`), `plan`, and the watch of
 * the server's container when it has one.
 */
export function cellRecord(
  plan: PlanBase,
  cell: PlanCellBase,
  params: Record<string, string> = {},
): {
  tags: Record<string, string>;
  plan: { name: string; cell: string; repetition: number };
  watch?: RunWatch;
} {
  return {
    tags: { ...plan.tags, plan: plan.name, server_name: cell.server.name, ...params },
    plan: { name: plan.name, cell: cell.id, repetition: cell.repetition },
    ...serverWatch(cell.server),
  };
}
