/**
 * `kvlab compare`: each arm against a baseline per test, with an interval and a verdict (see
 * `src/analyze/compare/compare.ts`), and each arm's fixed-rate steps against the baseline's, rate
 * by rate (`src/analyze/sweep/compare.ts`); a dataset with both shows both. Without `--by`, the
 * arms are the runs' labels when they split the data, else the run column that differs; without
 * `--baseline`, the first arm. On stderr: the warning when cells hold fewer than 4 runs per arm
 * (as demo and summary print it) and one line on each table as a whole (how many cells differ,
 * after Benjamini–Hochberg too).
 *
 * @module
 */

import type { Dataset } from "../store/dataset.ts";
import type { Command, OptionValues } from "commander";
import pl from "nodejs-polars";
import { supersededRuns } from "../analyze/attempts.ts";
import { resolveArms } from "../analyze/arms.ts";
import { compare, REDONE, verdictSummary } from "../analyze/compare/compare.ts";
import { adviceSummary } from "../analyze/compare/advice.ts";
import { cellCounts, fewRunsWarning } from "../analyze/environment.ts";
import type { TableFormat } from "../analyze/format.ts";
import { loadResults, loadTable } from "../analyze/load.ts";
import { compareSteps, splitFixedRate } from "../analyze/sweep/compare.ts";
import {
  STEP_COMPARE_METHOD,
  stepsForPeople,
  stepVerdictSummary,
} from "../analyze/sweep/compare_people.ts";
import { type Output, readOptions } from "./_exit.ts";
import { attemptsNote, NothingToShowError } from "./_shows.ts";
import { datasetOption, optionalFormat, optionalString } from "./_options.ts";
import { peopleFormat, tableText } from "./_tables.ts";

/** What `kvlab compare` compares. */
export interface CompareCommandOptions {
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** The column whose values are the arms. @default {label when it splits the data, else the column that differs} */
  by?: string;
  /** The baseline arm. @default {the first arm} */
  baseline?: string;
  /** @default {"ops_per_sec"} */
  metric: string;
  /** @default {text on a terminal, md in a pipe} */
  format?: TableFormat;
  /** CSV and JSON: the fixed-rate steps' comparison (of a dataset with both kinds). */
  steps?: boolean;
  /** The smallest difference the advice of inconclusive cells tells (0.05 = 5 %). @default {0.05} */
  minEffect?: number;
}

/**
 * Reads `kvlab compare`'s options.
 *
 * @param raw Commander's option values (defaults filled in).
 * @returns The typed options.
 * @throws {TypeError} For an unknown format.
 *
 * @example
 * ```ts
 * import { compareOptions } from "./compare.ts";
 * import assert from "node:assert/strict";
 * const o = compareOptions({ data: "ds", by: "server", baseline: "redis", metric: "ops_per_sec", format: "md" });
 * assert.equal(o.format, "md");
 * assert.equal(compareOptions({ data: "ds", metric: "ops_per_sec" }).by, undefined);
 * ```
 */
export function compareOptions(raw: OptionValues): CompareCommandOptions {
  return {
    data: datasetOption(raw.data),
    by: optionalString(raw.by),
    baseline: optionalString(raw.baseline),
    metric: String(raw.metric ?? "ops_per_sec"),
    format: optionalFormat(raw.format),
    steps: raw.steps === true,
    ...(raw.minEffect === undefined ? {} : { minEffect: minEffectOption(raw.minEffect) }),
  };
}

/**
 * Reads `--min-effect PERCENT` (`5`, `5%`, `2.5`) as a fraction.
 *
 * @param raw The option's text.
 * @returns The fraction (0.05 for 5).
 * @throws {TypeError} For anything but a percentage above 0 and below 100.
 *
 * @example
 * ```ts
 * import { minEffectOption } from "./compare.ts";
 * import assert from "node:assert/strict";
 * assert.equal(minEffectOption("5"), 0.05);
 * assert.equal(minEffectOption("2.5%"), 0.025);
 * assert.throws(() => minEffectOption("0"), /--min-effect/);
 * ```
 */
export function minEffectOption(raw: unknown): number {
  const text = String(raw).trim().replace(/\s*%$/, "");
  const pct = Number(text);
  if (text === "" || !(pct > 0 && pct < 100)) {
    throw new TypeError(`invalid --min-effect: ${raw} (expected a percentage, e.g. 5)`);
  }
  return pct / 100;
}

/**
 * The columns of a comparison worth a table for people: without the per-arm spread, the
 * direction, the baseline name, the unadjusted p, the Hodges–Lehmann ratio and the details of
 * `unstable` (JSON and CSV keep them), and without an all-empty `also_differs`, `verdict_note`
 * or `unstable`.
 *
 * @param c A comparison from `compare()`.
 * @returns The narrower frame.
 */
export function compactCompare(c: pl.DataFrame): pl.DataFrame {
  const keep = c.columns.filter((col) =>
    !/^(baseline_min|baseline_max|candidate_min|candidate_max)_|^direction$|^baseline$|^p_value$|^shift_ratio$|^unstable_details$|^runs_needed/
      .test(col) &&
    !(["also_differs", "verdict_note", "unstable"].includes(col) &&
      c.getColumn(col).nullCount() === c.height)
  );
  return c.select(...keep);
}

/**
 * Prints the comparison: compact and rounded for people (Markdown, or aligned text on a
 * terminal), every column at full precision in CSV and JSON. Runs of fixed-rate steps are
 * compared rate by rate (`compareSteps`), the other runs per test (`compare`); a dataset with
 * both prints both for people, and in CSV and JSON the per-test table (`--steps`: the steps').
 * When the arms were chosen by default, says which on stderr.
 *
 * @param o What to compare.
 * @param out Where to print.
 * @throws {TypeError} For fewer than two arms (naming the arms found) or a baseline not in the
 * data.
 * @throws {NothingToShowError} When no test and no step has results for the baseline and
 * another arm.
 */
export function compareCommand(o: CompareCommandOptions, out: Output): void {
  const { runs, redone } = runsWithRedone(o.data, attemptsNote(out));
  const all = loadResults(o.data, { runs, everyAttempt: true });
  const marked = redone.length ? all.withColumns(pl.col("run_id").isIn(redone).alias(REDONE)) : all;
  const { steps: stepsAll, others } = splitFixedRate(marked);
  const steps = redone.length ? stepsAll.filter(pl.col(REDONE).not()) : stepsAll;
  const arms = resolveArms(all, { by: o.by, baseline: o.baseline });
  if (arms.defaulted || o.baseline === undefined) {
    out.printErr(
      `comparing by ${arms.by} (${arms.values.join(", ")}), baseline ${arms.baseline}\n`,
    );
  }
  const options = { by: arms.by, baseline: arms.baseline };
  const c = others.height > 0
    ? compare(others, { ...options, metric: o.metric, minEffect: o.minEffect })
    : null;
  const s = steps.height > 0
    ? compareSteps({ results: steps, hdr: loadTable(o.data, "hdr_histograms", { runs }) }, options)
    : null;
  if ((c?.height ?? 0) === 0 && (s?.height ?? 0) === 0) nothingToCompare(o, arms);
  const format = peopleFormat(o.format, out.isTerminal);
  const people = format === "md" || format === "text";
  const title = (t: string) => format === "md" ? `**${t}**\n\n` : `${t}\n\n`;
  const both = c !== null && c.height > 0 && s !== null && s.height > 0;
  if (c !== null && c.height > 0 && (people || !o.steps)) {
    out.print(
      (both && people ? title("Per test") : "") + tableText(c, format, compactCompare),
    );
    const counted = redone.length ? others.filter(pl.col(REDONE).not()) : others;
    const warning = fewRunsWarning(cellCounts(counted, arms.by));
    if (warning) out.printErr(`${warning}\n`);
    out.printErr(`${verdictSummary(c)}\n`);
    const advice = adviceSummary(c, { minEffect: o.minEffect });
    if (advice) out.printErr(`${advice}\n`);
  }
  if (s === null || s.height === 0) return;
  if (!people && both && !o.steps) {
    out.printErr("the fixed-rate steps: `kvlab compare --steps` prints their comparison\n");
    return;
  }
  out.print(
    (both && people ? `\n${title("Fixed-rate steps, rate by rate")}` : "") +
      tableText(s, format, (f) => stepsForPeople(f, arms.by)) +
      (people ? `\n${STEP_COMPARE_METHOD}\n` : ""),
  );
  out.printErr(`${stepVerdictSummary(s)}\n`);
}

/**
 * The runs a comparison counts (each plan cell's latest complete attempt), plus the earlier
 * attempts the noise guard found disturbed and that were redone (`--redo-disturbed`): marked,
 * counted per cell, never compared. The other superseded attempts are said on stderr, as before.
 */
function runsWithRedone(
  data: Dataset,
  onLeftOut: (ids: string[]) => void,
): { runs: pl.DataFrame; redone: string[] } {
  const every = loadTable(data, "runs", { everyAttempt: true });
  const superseded = supersededRuns(every);
  if (superseded.length) onLeftOut(superseded);
  const gone = new Set(superseded);
  const redone = every.columns.includes("noise_disturbance")
    ? (every.filter(pl.col("run_id").isIn(superseded).and(pl.col("noise_disturbance").isNotNull()))
      .getColumn("run_id").toArray() as string[])
    : [];
  const keep = new Set(redone);
  const ids = (every.getColumn("run_id").toArray() as string[]).filter((id) =>
    !gone.has(id) || keep.has(id)
  );
  return { runs: every.filter(pl.col("run_id").isIn(ids)), redone };
}

/** Refuses a comparison with no row: no test or step has the baseline and another arm. */
function nothingToCompare(
  o: CompareCommandOptions,
  arms: { by: string; baseline: string; values: string[] },
): never {
  throw new NothingToShowError(
    `kvlab compare has nothing to show: no test or fixed-rate step in ${o.data.dir} has ` +
      `${o.metric} for ${arms.baseline} and another arm of ${arms.by} (${
        arms.values.join(", ")
      }) ` +
      `under the same parameters; \`kvlab table results --data ${o.data.dir}\` lists what each ` +
      "arm ran, and `--by` picks another arm column",
  );
}

/**
 * Declares `kvlab compare`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link compareCommand} does the work.
 */
export function declareCompare(program: Command, out: Output): void {
  program.command("compare")
    .description(
      "Compare each arm with a baseline per test: medians over repetitions, ratio with a 95% " +
        "interval, and a verdict (better / worse at 5% by an exact rank-sum test with 4+ runs " +
        "per arm; no difference when the interval is within ±5%; else inconclusive), with " +
        "Benjamini–Hochberg q-values across the table. Fixed-rate steps (latency sweeps) are " +
        "compared rate by rate: achieved rate, p50 and p99 as kvlab sweep merges them, the p99 " +
        "and p50 ratios with intervals and verdicts over repetitions; steps not sustained are " +
        "shown, never compared. CSV and JSON carry every column at full precision.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--by <column>",
      "column whose values are the arms: label, server, server_version, … (default: label when " +
        "the runs' labels split the data, else the run column that differs)",
    )
    .option("--baseline <value>", "the baseline arm (default: the arm measured first)")
    .option(
      "--metric <column>",
      "metric: ops_per_sec, p50_latency_ms, p99_latency_ms, …",
      "ops_per_sec",
    )
    .option(
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .option(
      "--min-effect <percent>",
      "the smallest difference worth telling: inconclusive cells say how many runs per arm " +
        "would tell it (runs_needed) (default: 5)",
    )
    .option(
      "--steps",
      "CSV and JSON of a dataset with per-test results and fixed-rate steps: the steps' table",
    )
    .action((opts) => compareCommand(readOptions(() => compareOptions(opts)), out));
}
