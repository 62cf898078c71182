/**
 * Running a study plan: every cell in interleaved order, each stored as one run; cells already
 * complete in the dataset are skipped, incomplete or failed ones are done again. A server that
 * is down fails its cells and the plan goes on; Ctrl-C / SIGTERM stops the running tool, keeps
 * its partial output as an incomplete run, and ends the plan.
 *
 * @module
 */

import { hostFacts } from "./host.ts";
import { runMemorySweep } from "./memory_sweep.ts";
import { toolVersion } from "./host.ts";
import { type PlanCell, planCells, type StudyPlan } from "./plan.ts";
import { DenoProcessRunner, type ProcessRunner } from "./process.ts";
import { redactArgv } from "./redact.ts";
import type { ProgressEvent } from "./redis_benchmark.ts";
import {
  argvToCommand,
  type CollectedRun,
  redisBenchmarkArgv,
  type RedisBenchmarkParams,
  runRedisBenchmark,
} from "./redis_benchmark_run.ts";

/** What happens while a plan runs, for progress output. */
export type StudyEvent =
  | { kind: "skip"; cell: PlanCell; index: number; total: number; runId: string }
  | {
    kind: "start";
    cell: PlanCell;
    index: number;
    total: number;
    command: string;
    requests: number;
  }
  | { kind: "warmup"; cell: PlanCell }
  | { kind: "progress"; cell: PlanCell; event: ProgressEvent }
  | { kind: "fill"; cell: PlanCell; keys: number; target: number }
  | { kind: "end"; cell: PlanCell; index: number; total: number; run: CollectedRun };

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

/** The params of a cell. */
export function cellParams(
  plan: StudyPlan,
  cell: PlanCell,
  requests = plan.requests,
): RedisBenchmarkParams {
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
  };
}

/**
 * The plan cells already in a dataset, with the status of their latest run. Reads
 * `runs/<id>/run.json` (no index file).
 */
export function storedCells(
  dataDir: string,
  planName: string,
): Map<string, { runId: string; status: string }> {
  const out = new Map<string, { runId: string; status: string }>();
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(`${dataDir}/runs`)];
  } catch {
    return out;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    try {
      const m = JSON.parse(Deno.readTextFileSync(`${dataDir}/runs/${e.name}/run.json`));
      if (m.plan_name !== planName || !m.plan_cell) continue;
      const prev = out.get(m.plan_cell);
      // a complete run of the cell wins; otherwise the latest one
      if (!prev || prev.status !== "complete") {
        out.set(m.plan_cell, { runId: m.run_id, status: m.status });
      }
    } catch { /* not a run folder */ }
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
 * Runs (or resumes) a plan.
 *
 * @throws {ToolNotFoundError} When the plan's tool is not installed (nothing is run).
 */
export async function runPlan(plan: StudyPlan, options: RunPlanOptions): Promise<StudyResult> {
  const runner = options.runner ?? new DenoProcessRunner();
  const sleep = options.sleep ?? defaultSleep;
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
  let version: string | null = null;
  const host = hostFacts();
  if (!options.dryRun && plan.kind !== "memory") {
    // Fails with ToolNotFoundError before any cell when the tool is missing.
    await runner.run({ argv: [plan.tool, "--version"], timeoutMs: 10_000, capture: true });
    version = await toolVersion(runner, plan.tool);
  }
  let ran = 0;
  for (const [i, cell] of cells.entries()) {
    if (options.signal?.aborted) {
      result.interrupted = true;
      break;
    }
    const prev = stored.get(cell.id);
    if (prev?.status === "complete") {
      result.skipped++;
      options.onEvent?.({
        kind: "skip",
        cell,
        index: i + 1,
        total: cells.length,
        runId: prev.runId,
      });
      continue;
    }
    const params = cellParams(plan, cell);
    const command = plan.kind === "memory"
      ? `memory sweep of ${cell.server.url}: ${plan.memory!.keyCounts.join(", ")} keys, ` +
        `${plan.memory!.valueSizeBytes}-byte values` +
        (plan.memory!.flush ? " (FLUSHDB first)" : "")
      : argvToCommand(redactArgv(redisBenchmarkArgv(params)));
    options.onEvent?.({
      kind: "start",
      cell,
      index: i + 1,
      total: cells.length,
      command,
      requests: plan.requests,
    });
    if (options.dryRun) continue;
    if (ran > 0 && plan.pauseS > 0) await sleep(plan.pauseS * 1000, options.signal);
    ran++;
    if (plan.kind === "memory") {
      const m = plan.memory!;
      const sweep = await runMemorySweep({
        data: options.data,
        target: cell.server.target,
        label: cell.server.name,
        keyCounts: m.keyCounts,
        valueSizeBytes: m.valueSizeBytes,
        flush: m.flush,
        container: cell.server.container,
        runner,
        maxDurationS: plan.timeoutS,
        tags: { ...plan.tags, plan: plan.name, server_name: cell.server.name },
        plan: { name: plan.name, cell: cell.id, repetition: cell.repetition },
        signal: options.signal,
        onProgress: (p) =>
          options.onEvent?.({ kind: "fill", cell, keys: p.keys, target: p.target }),
        now: options.now,
      });
      result[sweep.status]++;
      options.onEvent?.({
        kind: "end",
        cell,
        index: i + 1,
        total: cells.length,
        run: {
          runId: sweep.runId,
          status: sweep.status,
          tests: sweep.steps,
          reason: sweep.reason ?? sweep.dockerError,
          command,
          interrupted: options.signal?.aborted ?? false,
        },
      });
      if (options.signal?.aborted) {
        result.interrupted = true;
        break;
      }
      continue;
    }
    if (plan.warmupRequests > 0) {
      options.onEvent?.({ kind: "warmup", cell });
      await runner.run({
        argv: redisBenchmarkArgv(cellParams(plan, cell, plan.warmupRequests)),
        timeoutMs: plan.timeoutS * 1000,
        signal: options.signal,
      }).catch(() => {/* the measured run reports problems */});
    }
    const run = await runRedisBenchmark({
      data: options.data,
      runner,
      params,
      label: cell.server.name,
      tags: {
        ...plan.tags,
        plan: plan.name,
        server_name: cell.server.name,
        clients: String(cell.clients),
        data_size_bytes: String(cell.dataSizeBytes),
        pipeline: String(cell.pipeline),
        threads: String(cell.threads),
        keyspace: String(cell.keyspace ?? ""),
      },
      plan: { name: plan.name, cell: cell.id, repetition: cell.repetition },
      timeoutMs: plan.timeoutS * 1000,
      signal: options.signal,
      onProgress: (event) => options.onEvent?.({ kind: "progress", cell, event }),
      toolVersion: version,
      host,
      now: options.now,
    });
    result[run.status]++;
    options.onEvent?.({ kind: "end", cell, index: i + 1, total: cells.length, run });
    if (run.interrupted) {
      result.interrupted = true;
      break;
    }
  }
  return result;
}
