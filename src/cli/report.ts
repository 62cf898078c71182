/**
 * `kvlab report`: rebuild the studies and execute every notebook headless.
 *
 * @module
 */

import type { Command, OptionValues } from "commander";
import { NotebookError, runReport } from "../report/report.ts";
import { exitWith, type Output, readOptions } from "./_exit.ts";
import { limited } from "../collect/limits.ts";

/** Which notebooks `kvlab report` executes. */
export interface ReportCommandOptions {
  /** Only these notebooks (names without .ipynb); all when absent. */
  only?: string[];
  /** Notebooks executed at once. @default {1} */
  jobs?: number;
}

/**
 * Reads `kvlab report`'s options.
 *
 * @param raw Commander's option values.
 * @returns The typed options.
 *
 * @example
 * ```ts
 * import { reportOptions } from "./report.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(reportOptions({ only: "a,b" }), { only: ["a", "b"], jobs: undefined });
 * assert.deepEqual(reportOptions({ jobs: "2" }), { only: undefined, jobs: 2 });
 * assert.throws(() => reportOptions({ jobs: "0" }), /invalid --jobs: 0/);
 * ```
 */
export function reportOptions(raw: OptionValues): ReportCommandOptions {
  return {
    only: raw.only ? String(raw.only).split(",") : undefined,
    jobs: raw.jobs === undefined
      ? undefined
      : limited("--jobs", raw.jobs, { min: 1, max: 64, integer: true, unit: "notebooks" }),
  };
}

/**
 * Executes the notebooks, printing one line per notebook and a total.
 *
 * @param o Which notebooks.
 * @param out Where to print.
 * @throws {CommanderError} Exit code 1 when a notebook cell raised (its message printed).
 */
export async function reportCommand(o: ReportCommandOptions, out: Output): Promise<void> {
  const t0 = performance.now();
  try {
    const runs = await runReport({
      only: o.only,
      jobs: o.jobs,
      onNotebook: (r) =>
        out.print(
          `${r.notebook}: ${r.errors.length ? `${r.errors.length} cell error(s)` : "ok"} in ${
            r.seconds.toFixed(1)
          } s → ${r.html ?? r.executed}\n`,
        ),
    });
    out.print(
      `${runs.length} notebooks in ${
        ((performance.now() - t0) / 1000).toFixed(1)
      } s; figures in out/figures/\n`,
    );
  } catch (e) {
    if (e instanceof NotebookError || e instanceof Deno.errors.NotFound) {
      out.printErr(e.message + "\n");
      exitWith(1, "report");
    }
    throw e;
  }
}

/**
 * Declares `kvlab report`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link reportCommand} does the work.
 */
export function declareReport(program: Command, out: Output): void {
  program.command("report")
    .description(
      "Rebuild the study datasets, execute every notebook headless with Jupyter and the Deno " +
        "kernel, and write executed notebooks, HTML and figures to out/. KVLAB_DATA=DIR points " +
        "the notebooks at your own dataset (KVLAB_BY, KVLAB_BASELINE, KVLAB_CANDIDATE and " +
        "KVLAB_LABELS name its arms; see README.md).",
    )
    .option("--only <names>", "comma-separated notebook names (without .ipynb)")
    .option(
      "--jobs <n>",
      "notebooks executed at once (default 1; more is faster, but live parts then share the CPUs)",
    )
    .action((opts) => reportCommand(readOptions(() => reportOptions(opts)), out));
}
