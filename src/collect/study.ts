/**
 * Running a study plan: every cell in interleaved order, each stored as one run; cells already
 * complete in the dataset are skipped, incomplete or failed ones are done again. A server that
 * is down fails its cells and the plan goes on; Ctrl-C / SIGTERM stops the running tool, keeps
 * its partial output as an incomplete run, and ends the plan.
 *
 * @module
 */

import { runFacts } from "../dataset.ts";

import { hostFacts } from "./host.ts";
import { type PlanCell, planCells, planKind, type StudyPlan } from "./plan.ts";
import type { CellEvent } from "./plan_kinds/kind.ts";
import { DenoProcessRunner, type ProcessRunner } from "./process.ts";
import type { CollectedRun } from "./redis_benchmark_run.ts";

export { cellParams } from "./plan_kinds/redis_benchmark.ts";

/** What happens while a plan runs, for progress output. */
export type StudyEvent =
  | { kind: "skip"; cell: PlanCell; index: number; total: number; runId: string }
  | {
    kind: "start";
    cell: PlanCell;
    index: number;
    total: number;
    /** What the cell runs (secrets redacted). */
    command: string;
    /** How many requests a run makes (for memory sweeps, the SETs of the largest fill). */
    requests: number;
  }
  | InCell<CellEvent>
  | { kind: "end"; cell: PlanCell; index: number; total: number; run: CollectedRun };

/** A cell's own events (`warmup`, `progress`, `fill`), each with its cell. */
type InCell<E> = E extends unknown ? E & { cell: PlanCell } : never;

/** Options of {@link runPlan}. */
export interface RunPlanOptions {
  /** Dataset directory. */
  data: string;
  /** @default {new DenoProcessRunner()} */
  runner?: ProcessRunner;
  /** Aborting stops the running tool and the plan. */
  signal?: AbortSignal;
  /** Only list the cells and their commands. */
  dryRun?: boolean;
  onEvent?: (e: StudyEvent) => void;
  /** @default {setTimeout-based} */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** @default {() => new Date()} */
  now?: () => Date;
}

/** How a plan went. */
export interface StudyResult {
  cells: number;
  complete: number;
  skipped: number;
  incomplete: number;
  failed: number;
  interrupted: boolean;
}

/**
 * The plan cells already in a dataset, with the status of their latest run. Reads
 * the `runs` table of the dataset (no index file).
 */
export function storedCells(
  dataDir: string,
  planName: string,
): Map<string, { runId: string; status: string }> {
  const out = new Map<string, { runId: string; status: string }>();
  for (const m of runFacts(dataDir, ["run_id", "plan_name", "plan_cell", "status"])) {
    if (m.plan_name !== planName || !m.plan_cell) continue;
    const cell = String(m.plan_cell);
    const prev = out.get(cell);
    // a complete run of the cell wins; otherwise the latest one
    if (!prev || prev.status !== "complete") {
      out.set(cell, { runId: String(m.run_id), status: String(m.status) });
    }
  }
  return out;
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

/**
 * Runs (or resumes) a plan, of any kind: cells in interleaved order, complete ones skipped,
 * a pause between cells, progress as events, and a stop on abort. What a cell runs is its
 * kind's business (see `PLAN_KINDS`).
 *
 * @param plan A checked plan.
 * @param options See {@link RunPlanOptions}.
 * @returns How many cells were complete, skipped, incomplete or failed, and whether the plan
 * was interrupted.
 * @throws {ToolNotFoundError} When the plan's tool is not installed (nothing is run).
 */
export async function runPlan(plan: StudyPlan, options: RunPlanOptions): Promise<StudyResult> {
  const runner = options.runner ?? new DenoProcessRunner();
  const sleep = options.sleep ?? defaultSleep;
  const kind = planKind(plan);
  const cells = planCells(plan);
  const result: StudyResult = {
    cells: cells.length,
    complete: 0,
    skipped: 0,
    incomplete: 0,
    failed: 0,
    interrupted: false,
  };
  const stored = options.dryRun ? new Map() : storedCells(options.data, plan.name);
  const host = hostFacts();
  const { data, signal, now } = options;
  const runCell = options.dryRun
    ? undefined
    : await kind.open(plan, { data, runner, signal, now, host });
  let ran = 0;
  for (const [i, cell] of cells.entries()) {
    const at = { cell, index: i + 1, total: cells.length };
    if (signal?.aborted) {
      result.interrupted = true;
      break;
    }
    const prev = stored.get(cell.id);
    if (prev?.status === "complete") {
      result.skipped++;
      options.onEvent?.({ kind: "skip", ...at, runId: prev.runId });
      continue;
    }
    options.onEvent?.({ kind: "start", ...at, ...kind.describe(plan, cell) });
    if (!runCell) continue;
    if (ran > 0 && plan.pauseS > 0) await sleep(plan.pauseS * 1000, signal);
    ran++;
    const run = await runCell(cell, (e) => options.onEvent?.({ ...e, cell }));
    result[run.status]++;
    options.onEvent?.({ kind: "end", ...at, run });
    if (run.interrupted) {
      result.interrupted = true;
      break;
    }
  }
  return result;
}
