/**
 * `kvlab run`: run a study plan against live servers, with progress, a count line and a
 * per-cell summary table (status, tests, median ops/s).
 *
 * @module
 */

import type { DatasetRef } from "../store/dataset.ts";
import { datasetOption } from "./_options.ts";
import type { Command, OptionValues } from "commander";
import pl from "nodejs-polars";
import { scanTable } from "../analyze/load.ts";
import type { ResultsRow } from "../schema.ts";
import { formatForPeople } from "../analyze/present.ts";
import { resultsFrame } from "../analyze/units.ts";
import { parsePlan, type StudyPlan } from "../collect/plan/plan.ts";
import type { Dataset } from "../store/dataset.ts";
import { type Orphan, runPlan, type StudyEvent, type StudyResult } from "../collect/plan/study.ts";
import {
  exitForStudy,
  type Output,
  readOptions,
  stopSignalOf,
  UsageError,
  withStopSignals,
} from "./_exit.ts";
import { studyProgress } from "./progress.ts";
import { stepLines } from "./_step_line.ts";
import {
  decisionsFrame,
  runUntilDecided,
  type UntilDecided,
  untilDecidedLine,
  type UntilDecidedResult,
} from "./_until_decided.ts";
import { redoDisturbed, roundOptions, untilSettings } from "./_rounds.ts";

/** Plan kinds whose cells are fixed-rate steps. */
const FIXED_RATE_KINDS = new Set(["latency-sweep", "pubsub"]);

/** What `kvlab run` runs. */
export interface RunCommandOptions {
  /** The plan file (YAML or JSON). */
  plan: string;
  /** The dataset of `--data`, opened once (created when the first run is written). */
  data: Dataset;
  /** Print every command, run nothing. @default {false} */
  dryRun: boolean;
  /**
   * `--until-decided` and its `--budget`, `--max-runs`, `--min-effect` (issue 36): rounds until
   * each cell is decided; they override the plan's `until_decided:`. @default {off}
   */
  untilDecided?: Partial<UntilDecided> & { on: boolean };
  /** `--redo-disturbed N`: run a cell again, up to N times, when the noise guard finds its run
   * disturbed (the disturbed run stays stored, left out of verdicts). @default {0} */
  redoDisturbed?: number;
}

/**
 * Reads `kvlab run`'s argument and commander's options.
 *
 * @param plan The plan file.
 * @param raw Commander's option values.
 * @returns The typed options.
 *
 * @example
 * ```ts
 * import { runOptions } from "./run.ts";
 * import assert from "node:assert/strict";
 * const o = runOptions("p.yaml", { data: "ds" });
 * assert.deepEqual({ ...o, data: o.data.dir }, { plan: "p.yaml", data: "ds", dryRun: false });
 * ```
 */
export function runOptions(plan: string, raw: OptionValues): RunCommandOptions {
  const o: RunCommandOptions = { plan, data: datasetOption(raw.data), dryRun: Boolean(raw.dryRun) };
  Object.assign(o, roundOptions(raw)); // issue 36
  return o;
}

/** How one cell of a plan ended. */
export interface CellOutcome {
  /** The cell's id. */
  cell: string;
  /** `skipped` when a complete run of the cell was stored before. */
  status: "complete" | "incomplete" | "failed" | "skipped";
  /** The cell's run (the earlier one when skipped). */
  runId: string;
  /** Why the run failed or is incomplete. */
  reason: string | null;
  /**
   * The `results` rows the cell's run stored, as its collector returned them; absent for a
   * cell skipped because an earlier run of it is complete (those rows are in the dataset).
   */
  results?: readonly ResultsRow[];
}

/**
 * The outcome of a cell from a study event, for the `end` and `skip` events.
 *
 * @param e A study event.
 * @returns The outcome, or undefined for other events.
 *
 * @example
 * ```ts
 * import { cellOutcome } from "./run.ts";
 * import assert from "node:assert/strict";
 * const cell = { id: "p/redis/c1/rep1" } as never;
 * assert.deepEqual(cellOutcome({ kind: "skip", cell, index: 1, total: 2, runId: "r1" }), {
 *   cell: "p/redis/c1/rep1", status: "skipped", runId: "r1", reason: null,
 * });
 * assert.equal(cellOutcome({ kind: "warmup", cell }), undefined);
 * ```
 */
export function cellOutcome(e: StudyEvent): CellOutcome | undefined {
  if (e.kind === "skip") {
    return { cell: e.cell.id, status: "skipped", runId: e.runId, reason: null };
  }
  if (e.kind === "end") {
    // a sweep step not run after its server's first NS stores nothing: it is not a complete run
    const notRun = e.run.runId === "" && (e.run.reason ?? "").startsWith("skipped:");
    return {
      cell: e.cell.id,
      status: notRun ? "skipped" : e.run.status,
      runId: e.run.runId,
      reason: e.run.reason,
      results: e.run.results,
    };
  }
  return undefined;
}

/**
 * The per-cell summary of a study: one row per cell and test (each test's own ops/s and p99:
 * SET and GET, or a fixed-rate step's SET, GET and TOTALS, are never pooled into one figure),
 * one row with no test for a cell with no complete test, and the reason when a cell has one.
 * The rows are those the cells' runs returned; only cells skipped as complete before (a resumed
 * plan) have theirs read from the dataset, in one scan narrowed to those runs (none when no cell
 * was skipped).
 *
 * @param outcomes The cells' outcomes, in plan order.
 * @param data The dataset, or its directory, for the cells skipped as complete before.
 * @returns Columns `cell`, `status`, `test`, `ops_per_sec`, `p99_latency_ms`, and `reason`
 * when a cell has one.
 *
 * @example
 * ```ts
 * import { cellSummary } from "./run.ts";
 * import assert from "node:assert/strict";
 * const row = (test: string, ops: number, complete = true) => ({ run_id: "r1", test_index: 0,
 *   test, test_title: test, ops_per_sec: ops, p99_latency_ms: 0.5, complete, source_line: 0 });
 * const df = cellSummary([
 *   { cell: "p/a/c1/rep1", status: "complete", runId: "r1", reason: null,
 *     results: [row("SET", 100), row("GET", 300), row("LPUSH", 1, false)] },
 *   { cell: "p/a/c5/rep1", status: "failed", runId: "r2", reason: "down", results: [] },
 * ], Deno.makeTempDirSync());
 * assert.deepEqual(df.toRecords(), [
 *   { cell: "p/a/c1/rep1", status: "complete", test: "SET", ops_per_sec: 100, p99_latency_ms: 0.5,
 *     reason: null },
 *   { cell: "p/a/c1/rep1", status: "complete", test: "GET", ops_per_sec: 300, p99_latency_ms: 0.5,
 *     reason: null },
 *   { cell: "p/a/c5/rep1", status: "failed", test: null, ops_per_sec: null, p99_latency_ms: null,
 *     reason: "down" },
 * ]);
 * ```
 */
export function cellSummary(outcomes: readonly CellOutcome[], data: DatasetRef): pl.DataFrame {
  type Test = { test: string | null; ops_per_sec: number | null; p99_latency_ms: number | null };
  const byRun = new Map<string, Test[]>();
  const add = (runId: string, t: Test) => byRun.set(runId, [...byRun.get(runId) ?? [], t]);
  for (const o of outcomes) {
    for (const r of o.results ?? []) {
      if (r.complete) {
        add(o.runId, {
          test: r.test,
          ops_per_sec: r.ops_per_sec ?? null,
          p99_latency_ms: r.p99_latency_ms ?? null,
        });
      }
    }
  }
  const before = outcomes.filter((o) => o.results === undefined && o.runId !== "").map((o) =>
    o.runId
  );
  if (before.length > 0) {
    const stored = scanTable(data, "results")
      .filter(pl.col("run_id").isIn(before).and(pl.col("complete")))
      .sort("test_index")
      .select(
        pl.col("run_id"),
        pl.col("test"),
        pl.col("ops_per_sec").cast(pl.Float64),
        pl.col("p99_latency_ms").cast(pl.Float64),
      ).collectSync();
    for (const r of stored.toRecords() as (Test & { run_id: string })[]) {
      add(r.run_id, { test: r.test, ops_per_sec: r.ops_per_sec, p99_latency_ms: r.p99_latency_ms });
    }
  }
  const withReason = outcomes.some((o) => o.reason !== null);
  const none: Test[] = [{
    test: null as unknown as string,
    ops_per_sec: null,
    p99_latency_ms: null,
  }];
  return resultsFrame(outcomes.flatMap((o) =>
    (byRun.get(o.runId) ?? none).map((t) => ({
      cell: o.cell,
      status: o.status,
      ...t,
      ...(withReason ? { reason: o.reason } : {}),
    }))
  ));
}

/**
 * The line said when kvlab waits for a cell another kvlab runs; undefined for other events.
 *
 * @param e A study event.
 * @returns The line (with its newline), or undefined.
 *
 * @example
 * ```ts
 * import { lockLine } from "./run.ts";
 * import assert from "node:assert/strict";
 * const cell = { id: "p/a/c1/rep1" } as never;
 * const holder = { cell: "p/a/c1/rep1", pid: 42, pid_start: null, hostname: "h", started_at: "t" };
 * assert.equal(
 *   lockLine({ kind: "wait", cell, index: 1, total: 2, holder }),
 *   "[1/2] p/a/c1/rep1: run by another kvlab (pid 42 on h since t); waiting for it\n",
 * );
 * ```
 */
export function lockLine(e: StudyEvent): string | undefined {
  if (e.kind !== "wait") return undefined;
  const h = e.holder;
  return `[${e.index}/${e.total}] ${e.cell.id}: run by another kvlab ` +
    `(pid ${h.pid} on ${h.hostname} since ${h.started_at}); waiting for it\n`;
}

/**
 * The line said of a tool left running by a kvlab that died.
 *
 * @param o The tool, and what was done.
 * @returns The line, with its newline.
 *
 * @example
 * ```ts
 * import { orphanLine } from "./run.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   orphanLine({ pid: 7, program: "redis-benchmark", kvlabPid: 5, action: "stopped" }),
 *   "stopped redis-benchmark (pid 7), left running by kvlab pid 5 which is gone\n",
 * );
 * ```
 */
export function orphanLine(o: Orphan): string {
  return o.action === "stopped"
    ? `stopped ${o.program} (pid ${o.pid}), left running by kvlab pid ${o.kvlabPid} which is gone\n`
    : `${o.program} (pid ${o.pid}), started by kvlab pid ${o.kvlabPid} which is gone, may ` +
      `still run: ps could not check it\n`;
}

/**
 * Runs a plan with progress output (bars on a terminal, plain lines in a pipe) and SIGINT /
 * SIGTERM / SIGHUP handling, then prints a count line and, unless it was a dry run, the
 * per-cell summary (Markdown in a pipe, aligned text on a terminal). After a hang-up, output
 * that can no longer be written (the terminal is gone) is dropped, so the partial run is still
 * stored.
 *
 * @param plan The parsed plan.
 * @param where The dataset (or its directory), and `dryRun`: print every command, run nothing.
 * @param out Where to print; `isTerminal` picks bars and the table layout.
 * @returns The study's counts, and the signal that stopped it, if one did.
 */
export async function runStudy(
  plan: StudyPlan,
  where: { data: DatasetRef; dryRun: boolean; untilDecided?: UntilDecided; redoDisturbed?: number },
  out: Output,
): Promise<StudyResult & { stopSignal?: string; decided?: UntilDecidedResult }> {
  const { data, dryRun } = where;
  const until = dryRun ? undefined : where.untilDecided;
  let decided: UntilDecidedResult | undefined;
  let stop: AbortSignal | undefined;
  const print = (s: string) => {
    try {
      out.print(s);
    } catch (e) {
      if (!stop || stopSignalOf(stop) !== "SIGHUP") throw e;
    }
  };
  const progress = studyProgress(print, out.isTerminal ?? false);
  const outcomes: CellOutcome[] = [];
  const counts = await withStopSignals(async (signal) => {
    stop = signal;
    const run = until
      ? async (_: StudyPlan, options: Parameters<typeof runPlan>[1]) =>
        decided = await runUntilDecided(plan, {
          ...options,
          onRound: (n, open) => print(`round ${n}: ${open} open cell${open === 1 ? "" : "s"}\n`),
        }, until)
      : runPlan;
    return await run(plan, {
      data,
      dryRun,
      signal,
      again: redoDisturbed(data, where.redoDisturbed ?? 0, print),
      onOrphan: (o) => print(orphanLine(o)),
      onServers: (line) => print(`${line}\n`),
      onWarning: (message) => out.printErr(`warning: ${message}\n`),
      onEvent: (e) => {
        const line = lockLine(e);
        if (line) print(line);
        progress(e);
        // a fixed-rate step says what it reached, not only "1 test"
        // (from the rows the step's runner returned: nothing is read back)
        if (e.kind === "end" && e.run.runId && FIXED_RATE_KINDS.has(plan.kind)) {
          const rule = plan.kind === "latency-sweep" ? plan.sustained : undefined;
          print(stepLines(e.run.results, { rule, indent: "  " }));
        }
        const o = cellOutcome(e);
        if (o) outcomes.push(o);
      },
    });
  });
  const stopSignal = stop && stopSignalOf(stop);
  const result = stopSignal ? { ...counts, stopSignal } : counts;
  if (dryRun) {
    print(`${result.cells} cells (dry run: nothing was run)\n`);
    return result;
  }
  const notRun = outcomes.filter((o) => o.status === "skipped" && o.runId === "").length;
  // cells an interruption kept from starting: the plan run again does them
  const unreached = result.cells - result.complete - result.skipped - result.incomplete -
    result.failed;
  const cut = unreached > 0
    ? `: ${unreached} cell${unreached === 1 ? "" : "s"} not reached (run the plan again for them)`
    : "";
  print(
    `${result.cells} cells: ${result.complete - notRun} complete, ${result.skipped} skipped ` +
      `(already complete), ${notRun ? `${notRun} not run (after a first NS), ` : ""}` +
      `${result.incomplete} incomplete, ${result.failed} failed` +
      (result.interrupted ? `, interrupted${cut}` : "") + "\n",
  );
  if (decided && until) {
    // the decisions, not every round's cells
    print(untilDecidedLine(decided, until));
    if (decided.decisions.length) {
      print(
        "\n" + formatForPeople(decisionsFrame(decided.decisions), out.isTerminal ? "text" : "md"),
      );
    }
    return { ...result, decided };
  }
  if (outcomes.length) {
    print("\n" + formatForPeople(cellSummary(outcomes, data), out.isTerminal ? "text" : "md"));
  }
  return result;
}

/**
 * Reads the plan and runs it.
 *
 * @param o The plan, the dataset, dry run or not.
 * @param out Where to print.
 * @throws {CommanderError} Exit code 130 when interrupted (129 by SIGHUP), 1 when a cell
 * failed or is incomplete.
 * @throws {DiskFullError} When the dataset's disk is full.
 */
export async function runCommand(o: RunCommandOptions, out: Output): Promise<void> {
  const plan = parsePlan(Deno.readTextFileSync(o.plan), o.plan);
  const untilDecided = untilSettings(plan, o.untilDecided);
  if (o.untilDecided && !untilDecided) {
    throw new UsageError("--budget, --max-runs and --min-effect go with --until-decided");
  }
  const where = { data: o.data, dryRun: o.dryRun, untilDecided, redoDisturbed: o.redoDisturbed };
  exitForStudy(await runStudy(plan, where, out), "run");
}

/** Declares `kvlab run` for `COMMANDS` (`src/cli.ts`); {@link runCommand} does the work. */
export function declareRun(program: Command, out: Output): void {
  program.command("run")
    .description(
      "Run a study plan (YAML or JSON) against live servers, storing one run per cell. Its " +
        "kind: redis-benchmark (the default; examples/plan.yaml), memtier " +
        "(examples/memtier-plan.yaml), latency-sweep (examples/latency-sweep.yaml), pubsub " +
        "(examples/pubsub.yaml), memory (examples/memory-plan.yaml) or failover " +
        "(examples/failover.yaml). Re-running skips " +
        "complete cells and redoes incomplete or failed ones.",
    )
    .argument("<plan>", "plan file")
    .requiredOption("--data <dir>", "dataset directory (created if missing)")
    .option("--dry-run", "print every command, run nothing")
    .option(
      "--until-decided",
      "run in rounds (the plan's repetitions, then one more per round) until each cell is " +
        "decided by a sequential rule valid under repeated looks (better, worse, or no " +
        "difference within ±min-effect); decided cells stop (also the plan's until_decided:)",
    )
    .option(
      "--redo-disturbed <n>",
      "run a cell again (up to n times) when the noise guard finds its run disturbed (steal, " +
        "other processes' CPU, a load jump); the disturbed run stays stored, left out of verdicts",
    )
    .option("--budget <time>", "with --until-decided: start no round after this (90s, 2m, 1h)")
    .option("--max-runs <n>", "with --until-decided: the most runs per arm of a cell (default: 30)")
    .option(
      "--min-effect <percent>",
      "with --until-decided: no difference within ± this (default: 5)",
    )
    .action((plan: string, opts) => runCommand(readOptions(() => runOptions(plan, opts)), out));
}
