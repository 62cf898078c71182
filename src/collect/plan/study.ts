/**
 * Running a study plan: every cell in interleaved order, each stored as one run; cells already
 * complete in the dataset are skipped, incomplete or failed ones are done again. A server that
 * is down fails its cells and the plan goes on; Ctrl-C / SIGTERM / SIGHUP stops the running
 * tool, keeps its partial output as an incomplete run, and ends the plan.
 *
 * Two runners of one plan into one dataset share the work without running a cell twice: each
 * cell is locked while it runs, and a runner that finds a cell locked waits for it, then skips
 * it when its run is complete (see `store/locks.ts`). Tools left running by a kvlab that died are
 * stopped before the first cell (their pid files are in `DIR/locks/children`). A full disk
 * stops the plan with one {@link DiskFullError} naming the path. Servers the plan starts in
 * containers run for the plan's duration (`servers.ts`): removed afterwards, also after an error
 * or Ctrl-C, with the Docker engine kvlab started for them.
 *
 * @module
 */

import type { RunsFollower } from "../../store/runs_follower.ts";
import { diskFullAt, DiskFullError } from "../../system/disk.ts";
import { Dataset, type DatasetRef } from "../../store/dataset.ts";
import {
  type CellLocks,
  type HeldLock,
  type LockOwner,
  type Orphan,
  reapOrphans,
} from "../../store/locks.ts";
import { hostFacts } from "../host.ts";
import { type PlanCell, planCells, planKind, type StudyPlan } from "./plan.ts";
import type { CellEvent } from "./kind.ts";
import type { CpuPinningOptions } from "./cpus.ts";
import { checkPinning, pinPlanProcesses, restoreLeftPins, restorePins } from "./pin.ts";
import { DenoProcessRunner, pinnedRunner, type ProcessRunner } from "../process.ts";
import type { CollectedRun } from "../collector.ts";
import type { DockerEngine } from "../docker/engine.ts";
import { type PlanServers, startLines, startPlanServers, startsServers } from "./servers.ts";

export { cellParams } from "./kinds/redis_benchmark.ts";
export type { LockOwner, Orphan } from "../../store/locks.ts";
export { LOCK_LEASE_MS } from "../../store/locks.ts";

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
    /** Unstored commands run before it (warm-up, preload), secrets redacted. */
    before?: { what: string; command: string }[];
  }
  | InCell<CellEvent>
  | { kind: "end"; cell: PlanCell; index: number; total: number; run: CollectedRun }
  /** Another kvlab holds the cell: this one waits for it (reported once per holder). */
  | { kind: "wait"; cell: PlanCell; index: number; total: number; holder: LockOwner };

/** A cell's own events (`warmup`, `progress`, `fill`), each with its cell. */
type InCell<E> = E extends unknown ? E & { cell: PlanCell } : never;

/** Options of {@link runPlan}. */
export interface RunPlanOptions {
  /** The dataset (or its directory). */
  data: DatasetRef;
  /** @default {new DenoProcessRunner()} */
  runner?: ProcessRunner;
  /** Aborting stops the running tool and the plan. */
  signal?: AbortSignal;
  /** Only list the cells and their commands. */
  dryRun?: boolean;
  onEvent?: (e: StudyEvent) => void;
  /** Told of each tool left running by a kvlab that died, found (and stopped) before any cell. */
  onOrphan?: (o: Orphan) => void;
  /**
   * Told of what went wrong putting pinned processes back on their CPUs after the plan, of the
   * ones a kvlab that is gone left pinned, put back before it, and of containers or an engine
   * kvlab started that could not be removed or stopped.
   */
  onWarning?: (message: string) => void;
  /**
   * Told what was started for the plan's servers before any cell (the Docker engine, images,
   * containers), one line each.
   */
  onServers?: (line: string) => void;
  /** @default {setTimeout-based} */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** @default {() => new Date()} */
  now?: () => Date;
  /** Where the check of a plan's `cpus:` looks (taskset, online CPUs). @default {this machine} */
  pinning?: CpuPinningOptions;
  /**
   * The Docker engine of the plan's containers. Without it, kvlab uses `DOCKER_HOST` or the
   * default socket, else starts a private dockerd for a plan with `start:` servers (and stops it
   * after the plan).
   */
  docker?: DockerEngine;
  /**
   * Only the cells this keeps are the plan's for this call (`kvlab run --until-decided` runs the
   * open cells of a round). @default {every cell}
   */
  only?: (cell: PlanCell) => boolean;
  /**
   * Asked after each complete run of a cell: true runs the cell again at once (`kvlab run
   * --redo-disturbed N` for a run the noise guard found disturbed; the later complete attempt
   * supersedes it, which stays stored). It must say false in the end. @default {never}
   */
  again?: (cell: PlanCell, run: CollectedRun) => boolean;
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
  return new StoredCells(Dataset.of(dataDir), planName).cells;
}

/**
 * The stored runs of a plan's cells: read once, then, on {@link StoredCells.refresh}, only the
 * runs other runners stored meanwhile (this runner's own are noted from memory).
 */
class StoredCells {
  readonly cells = new Map<string, { runId: string; status: string }>();
  readonly #runs: RunsFollower;

  constructor(dataset: Dataset, readonly planName: string) {
    this.#runs = dataset.followRuns(["run_id", "plan_name", "plan_cell", "status"]);
    this.refresh();
  }

  /** Reads the runs stored since the last look (another runner may have added some). */
  refresh(): this {
    for (const m of this.#runs.read()) {
      if (m.plan_name !== this.planName || !m.plan_cell) continue;
      this.#note(String(m.plan_cell), String(m.run_id), String(m.status));
    }
    return this;
  }

  /** Notes a run this runner stored (never read back). */
  wrote(cell: string, run: CollectedRun): void {
    if (run.runId === "") return; // a step not run stores nothing
    this.#runs.wrote(run.runId);
    this.#note(cell, run.runId, run.status);
  }

  /** A complete run of a cell wins; otherwise the latest one (run ids sort by time). */
  #note(cell: string, runId: string, status: string): void {
    const prev = this.cells.get(cell);
    if (
      !prev ||
      (prev.status !== "complete" && (status === "complete" || runId >= prev.runId))
    ) {
      this.cells.set(cell, { runId, status });
    }
  }

  /** The complete run of a cell, if there is one. */
  complete(cell: string): string | undefined {
    const c = this.cells.get(cell);
    return c?.status === "complete" ? c.runId : undefined;
  }
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

/** How often a runner waiting for another runner's cell looks again: 500 ms. */
const LOCK_POLL_MS = 500;

/**
 * Runs (or resumes) a plan, of any kind: cells in interleaved order, complete ones skipped,
 * a pause between cells, progress as events, and a stop on abort. What a cell runs is its
 * kind's business (see `PLAN_KINDS`). Each cell is locked while it runs; a cell another runner
 * holds is waited for (a `wait` event), then skipped if that runner completed it.
 *
 * @param plan A checked plan.
 * @param options See {@link RunPlanOptions}.
 * @returns How many cells were complete, skipped, incomplete or failed, and whether the plan
 * was interrupted.
 * @throws {ToolNotFoundError} When the plan's tool is not installed (nothing is run).
 * @throws {DiskFullError} When the dataset's disk is full (the plan stops; the tool too).
 * @throws {PlanError} At the plan's `cpus.client` when this machine cannot pin to it (no
 * `taskset`, a CPU offline or not allowed to kvlab), before any cell runs.
 * @throws {DockerUnavailableError} When the plan starts servers in containers (`start:`) and no
 * Docker engine answers nor can be started here (nothing is left running).
 */
export async function runPlan(plan: StudyPlan, options: RunPlanOptions): Promise<StudyResult> {
  checkPinning(plan, options.pinning);
  const dataset = Dataset.of(options.data);
  const own = options.runner ?? new DenoProcessRunner({ pidDir: dataset.childrenDir() });
  if (options.dryRun) {
    for (const line of startLines(plan)) options.onServers?.(line);
    return await runCellsOf({ plan, options, own });
  }
  const stored = new StoredCells(dataset, plan.name);
  // no engine nor container for a plan whose every cell is complete already
  if (!startsServers(plan) || planCells(plan).every((c) => stored.complete(c.id) !== undefined)) {
    return await runCellsOf({ plan, options, own, stored });
  }
  let servers: PlanServers;
  try {
    servers = await startPlanServers(plan, {
      runner: own,
      signal: options.signal,
      engine: options.docker,
      onMessage: options.onServers,
    });
  } catch (e) {
    // Ctrl-C while the engine or a container started: nothing ran, nothing is left
    if (!options.signal?.aborted) throw e;
    const cells = planCells(plan).length;
    return { cells, complete: 0, skipped: 0, incomplete: 0, failed: 0, interrupted: true };
  }
  try {
    return await runCellsOf({ plan: servers.plan, options, own: servers.runner, stored });
  } finally {
    for (const problem of await servers.stop()) options.onWarning?.(problem);
  }
}

/** What {@link runCellsOf} runs. */
interface CellsOf {
  /** The plan, its servers running. */
  plan: StudyPlan;
  options: RunPlanOptions;
  /** Starts the plan's tools (and pins). */
  own: ProcessRunner;
  /** The cells stored already; absent for a dry run. */
  stored?: StoredCells;
}

/**
 * Runs the cells of a plan whose servers run (see {@link runPlan}).
 */
// long: the plan's state (cells, locks, pins, counts) is shared by its cells' loop below
async function runCellsOf({ plan, options, own, stored }: CellsOf): Promise<StudyResult> {
  const dataset = Dataset.of(options.data);
  const sleep = options.sleep ?? defaultSleep;
  const kind = planKind(plan);
  // the client tools under `taskset -c LIST`, as the start line and --dry-run show them
  const tools = kind.pinnable?.(plan) ? plan.cpus?.client?.list : undefined;
  const runner = tools ? pinnedRunner(own, tools) : own;
  const pin = (command: string) => (tools ? `taskset -c ${tools} ${command}` : command);
  const describe = (cell: PlanCell) => {
    const d = kind.describe(plan, cell);
    const before = d.before?.map((b) => ({ ...b, command: pin(b.command) }));
    return { ...d, command: pin(d.command), ...(before ? { before } : {}) };
  };
  const cells = options.only ? planCells(plan).filter(options.only) : planCells(plan);
  const result = noneYet(cells.length);
  const { signal, now, onEvent } = options;
  const data = dataset.dir;
  if (!options.dryRun) await afterTheGone(dataset, own, options);
  const locks = dataset.cellLocks({ now });
  const host = hostFacts();
  const runCell = options.dryRun
    ? undefined
    : await kind.open(plan, { data, runner, signal, now, host });
  // kvlab itself when its engine is the client, and local servers (put back in the end)
  const pins = runCell ? await pinPlanProcesses(plan, !tools, own) : [];
  try {
    await runCells();
  } finally {
    for (const problem of await restorePins(own, pins)) options.onWarning?.(problem);
  }
  // each cell is a batch of its own: merge small batches when there are many
  if (!options.dryRun) dataset.autoCompact();
  return result;

  // the cells in order (a closure over the plan's state: long by nature)
  async function runCells(): Promise<void> {
    let loaded = false; // a cell ran (here or in another runner) since the plan started
    for (const [i, cell] of cells.entries()) {
      const at = { cell, index: i + 1, total: cells.length };
      if (signal?.aborted) {
        result.interrupted = true;
        break;
      }
      const done = stored?.complete(cell.id);
      if (done !== undefined) {
        result.skipped++;
        onEvent?.({ kind: "skip", ...at, runId: done });
        continue;
      }
      if (!runCell || !stored) {
        onEvent?.({ kind: "start", ...at, ...describe(cell) });
        continue;
      }
      const lock = await takeCell(locks, at, options);
      if (lock === undefined) {
        result.interrupted = true;
        break;
      }
      try {
        // another runner may have completed the cell since the plan started
        const doneMeanwhile = stored.refresh().complete(cell.id);
        if (doneMeanwhile !== undefined) {
          result.skipped++;
          onEvent?.({ kind: "skip", ...at, runId: doneMeanwhile });
          loaded = true;
          continue;
        }
        onEvent?.({ kind: "start", ...at, ...describe(cell) });
        if (loaded && plan.pauseS > 0) await sleep(plan.pauseS * 1000, signal);
        loaded = true;
        const once = () =>
          runCell(cell, (e) => onEvent?.({ ...e, cell })).catch((e) => {
            throw planDiskFull(e, data);
          });
        const run = await runAgain(
          once,
          (r) => !signal?.aborted && !!options.again?.(cell, r),
          (r) => {
            stored.wrote(cell.id, r);
            onEvent?.({ kind: "end", ...at, run: r });
          },
        );
        stored.wrote(cell.id, run);
        result[run.status]++;
        onEvent?.({ kind: "end", ...at, run });
        if (run.interrupted) {
          result.interrupted = true;
          break;
        }
      } finally {
        locks.release(lock);
      }
    }
  }
}

/** The counts of a plan of `cells` cells before any ran. */
function noneYet(cells: number): StudyResult {
  return { cells, complete: 0, skipped: 0, incomplete: 0, failed: 0, interrupted: false };
}

/**
 * Runs a cell, then again while `again` says so of a complete run (issue 36: a disturbed run
 * redone; each run before the last is handed to `redone`, stored, superseded by the next).
 */
async function runAgain(
  once: () => Promise<CollectedRun>,
  again: (run: CollectedRun) => boolean,
  redone: (run: CollectedRun) => void,
): Promise<CollectedRun> {
  let run = await once();
  while (run.status === "complete" && again(run)) {
    redone(run);
    run = await once();
  }
  return run;
}

/**
 * What a kvlab that is gone left behind, put right before a plan's cells: its tools still
 * running (stopped), the servers it left pinned (`kill -9` mid-plan: put back on their CPUs,
 * issue 30) and its runs half-written under `tmp/` (removed).
 */
async function afterTheGone(
  dataset: Dataset,
  runner: ProcessRunner,
  options: RunPlanOptions,
): Promise<void> {
  for (const orphan of await reapOrphans(dataset.childrenDir())) options.onOrphan?.(orphan);
  for (const line of await restoreLeftPins(runner)) options.onWarning?.(line);
  dataset.sweepTmp();
}

/**
 * Takes a cell's lock, waiting (and saying so, once per holder) while another runner holds it.
 * @returns The lock, or undefined when the plan was stopped while waiting.
 */
async function takeCell(
  locks: CellLocks,
  at: { cell: PlanCell; index: number; total: number },
  options: RunPlanOptions,
): Promise<HeldLock | undefined> {
  let told = "";
  for (;;) {
    const got = (() => {
      try {
        return locks.tryAcquire(at.cell.id);
      } catch (e) {
        throw planDiskFull(e, Dataset.of(options.data).dir);
      }
    })();
    if (!("held" in got)) return got;
    if (options.signal?.aborted) return undefined;
    const who = JSON.stringify(got.held);
    if (who !== told) options.onEvent?.({ kind: "wait", ...at, holder: got.held });
    told = who;
    await defaultSleep(LOCK_POLL_MS, options.signal);
  }
}

/** A full disk during a plan, with what to do next. */
function planDiskFull(e: unknown, data: string): unknown {
  const hint = "then run the plan again (complete cells are skipped)";
  if (e instanceof DiskFullError) return new DiskFullError(e.path, hint);
  return diskFullAt(e, data, hint);
}
