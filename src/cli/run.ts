/**
 * `kvlab run`: run a study plan against live servers, with progress and a one-line summary.
 *
 * @module
 */

import type { OptionValues } from "commander";
import { parsePlan, type StudyPlan } from "../collect/plan.ts";
import { runPlan, type StudyResult } from "../collect/study.ts";
import { exitForStudy, type Output, withStopSignals } from "./_exit.ts";
import { studyProgress } from "./progress.ts";

/** What `kvlab run` runs. */
export interface RunCommandOptions {
  /** The plan file (YAML or JSON). */
  plan: string;
  /** Dataset directory (created if missing). */
  data: string;
  /** Print every command, run nothing. @default {false} */
  dryRun: boolean;
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
 * assert.deepEqual(runOptions("p.yaml", { data: "ds" }), { plan: "p.yaml", data: "ds", dryRun: false });
 * ```
 */
export function runOptions(plan: string, raw: OptionValues): RunCommandOptions {
  return { plan, data: String(raw.data), dryRun: Boolean(raw.dryRun) };
}

/**
 * Runs a plan with progress output (bars on a terminal, plain lines in a pipe) and SIGINT /
 * SIGTERM handling, then prints a one-line summary.
 *
 * @param plan The parsed plan.
 * @param data Dataset directory.
 * @param dryRun Print every command, run nothing.
 * @param print Receives stdout text.
 * @returns The study's counts.
 */
export async function runStudy(
  plan: StudyPlan,
  data: string,
  dryRun: boolean,
  print: (s: string) => void,
): Promise<StudyResult> {
  const result = await withStopSignals((signal) =>
    runPlan(plan, {
      data,
      dryRun,
      signal,
      onEvent: studyProgress(print, Deno.stdout.isTerminal()),
    })
  );
  print(
    dryRun
      ? `${result.cells} cells (dry run: nothing was run)\n`
      : `${result.cells} cells: ${result.complete} complete, ${result.skipped} skipped (already complete), ` +
        `${result.incomplete} incomplete, ${result.failed} failed` +
        (result.interrupted ? ", interrupted" : "") + "\n",
  );
  return result;
}

/**
 * Reads the plan and runs it.
 *
 * @param o The plan, the dataset, dry run or not.
 * @param out Where to print.
 * @throws {CommanderError} Exit code 130 when interrupted, 1 when a cell failed or is incomplete.
 */
export async function runCommand(o: RunCommandOptions, out: Output): Promise<void> {
  const plan = parsePlan(Deno.readTextFileSync(o.plan), o.plan);
  exitForStudy(await runStudy(plan, o.data, o.dryRun, out.print), "run");
}
