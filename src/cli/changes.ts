/**
 * `kvlab changes`: the change points of every series of a dataset's run history (see
 * `analyze/changes/changes.ts`): which night, version or commit moved a test, by how much, and
 * what else differed between the runs either side; and, in a section of their own, the
 * single-run outliers (one run far from the other runs of its segment).
 *
 * @module
 */

import type { Dataset } from "../store/dataset.ts";
import type { Command, OptionValues } from "commander";
import pl from "nodejs-polars";
import {
  changeHistory,
  changesForPeople,
  defaultOrder,
  outliersForPeople,
} from "../analyze/changes/changes.ts";
import { leftOutText, missingOrder } from "../analyze/changes/order.ts";
import { finiteRows } from "../analyze/summary.ts";
import type { TableFormat } from "../analyze/format.ts";
import { loadResults } from "../analyze/load.ts";
import { type Output, readOptions } from "./_exit.ts";
import { attemptsNote } from "./_shows.ts";
import { changesThresholds, datasetOption, optionalFormat, optionalString } from "./_options.ts";
import { peopleFormat, tableText } from "./_tables.ts";
import { terminalText } from "../text/safe.ts";

/** What `kvlab changes` looks at. */
export interface ChangesCommandOptions {
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** @default {started_at, or source_path when no run has a start time} */
  orderBy?: string;
  /** @default {"ops_per_sec"} */
  metric: string;
  /** @default {0.001} */
  maxPValue: number;
  /** Relative (0.05 = 5 %). @default {0} */
  minChange: number;
  /** @default {50} */
  window: number;
  /** Only this test. */
  test?: string;
  /** The arm column. @default {label when the labels split the data, else none} */
  by?: string;
  /** @default {text on a terminal, md in a pipe} */
  format?: TableFormat;
  /** Print the single-run outliers only (any format). @default {false} */
  outliers?: boolean;
}

/**
 * Reads `kvlab changes`'s options.
 *
 * @param raw Commander's option values (defaults filled in).
 * @returns The typed options.
 * @throws {TypeError} For a format, p, change or window out of range.
 *
 * @example
 * ```ts
 * import { changesOptions } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const o = changesOptions({
 *   data: "ds", orderBy: "source_path", metric: "ops_per_sec", maxPvalue: "0.001",
 *   minChange: "5%", window: "50", format: "json",
 * });
 * assert.equal(o.minChange, 0.05);
 * assert.equal(o.window, 50);
 * assert.throws(() => changesOptions({ data: "ds", maxPvalue: "2" }), /invalid --max-pvalue/);
 * ```
 */
export function changesOptions(raw: OptionValues): ChangesCommandOptions {
  return {
    data: datasetOption(raw.data),
    orderBy: optionalString(raw.orderBy),
    metric: String(raw.metric ?? "ops_per_sec"),
    ...changesThresholds(raw),
    test: optionalString(raw.test),
    by: optionalString(raw.by),
    format: optionalFormat(raw.format),
    outliers: raw.outliers === true,
  };
}

/**
 * Prints the change points and, in a section of their own, the single-run outliers: compact
 * for people (Markdown, or aligned text on a terminal), every column at full precision in CSV
 * and JSON (the change points, or the outliers with `--outliers`). Says on stderr how many runs
 * were left out for lack of an order value, and when there was no change point.
 *
 * @param o What to look at.
 * @param out Where to print.
 */
export function changesCommand(o: ChangesCommandOptions, out: Output): void {
  const results = loadResults(o.data, { onLeftOut: attemptsNote(out) });
  const orderBy = o.orderBy ?? defaultOrder(results);
  if (o.orderBy === undefined && orderBy !== "started_at") {
    out.printErr(`ordering by ${orderBy} (no run has a start time)\n`);
  }
  const h = changeHistory(results, {
    orderBy,
    metric: o.metric,
    maxPValue: o.maxPValue,
    minChange: o.minChange,
    window: o.window,
    test: o.test,
    by: o.by,
  });
  const considered = finiteRows(results, o.metric);
  const missing = missingOrder(
    o.test === undefined ? considered : considered.filter(pl.col("test").eq(pl.lit(o.test))),
    orderBy,
  );
  if (missing.results > 0) out.printErr(`left out ${leftOutText(missing, orderBy)}\n`);
  const format = peopleFormat(o.format, out.isTerminal);
  const level = `p × ${h.runsTested.toLocaleString("en")} runs tested ≤ ${o.maxPValue}`;
  if (o.outliers) {
    if (h.outliers.height === 0) out.printErr(`no single-run outlier (${level})\n`);
    out.print(tableText(h.outliers, format, outliersForPeople));
    return;
  }
  const c = h.changes;
  if (c.height === 0) out.printErr(`no change point (p ≤ ${o.maxPValue}, by ${orderBy})\n`);
  fromZeroNote(c, out);
  const people = format !== "csv" && format !== "json";
  if (!people || h.outliers.height === 0) {
    out.print(tableText(c, format, changesForPeople));
    if (h.outliers.height > 0) {
      out.printErr(
        `${outlierCount(h.outliers.height)} (not change points; ${level}): ` +
          "--outliers prints them\n",
      );
    }
    return;
  }
  const title = (t: string) => format === "md" ? `**${t}**\n\n` : `${t}\n\n`;
  out.print(
    title("Change points") + tableText(c, format, changesForPeople) + "\n" +
      title(
        `Single-run outliers: one run far from the other runs of its segment, not a change ` +
          `point (Student's t against them; ${level})`,
      ) + tableText(h.outliers, format, outliersForPeople),
  );
}

/** `3 single-run outliers`. */
function outlierCount(n: number): string {
  return `${n} single-run outlier${n === 1 ? "" : "s"}`;
}

/** Says on stderr which changes start from a mean of 0 (their change (%) is empty). */
function fromZeroNote(c: pl.DataFrame, out: Output): void {
  const fromZero = c.filter(pl.col("change_pct").isNull());
  if (fromZero.height === 0) return;
  const at = (fromZero.select("test", "index").toRecords() as { test: string; index: number }[])
    .map((r) => `${terminalText(r.test)} at ${r.index}`);
  out.printErr(
    `change (%) left empty where the mean before is 0 (no percentage of nothing): ` +
      `${at.slice(0, 5).join(", ")}${at.length > 5 ? ` and ${at.length - 5} more` : ""}\n`,
  );
}

/**
 * Declares `kvlab changes`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link changesCommand} does the work.
 */
export function declareChanges(program: Command, out: Output): void {
  program.command("changes")
    .description(
      "Find the change points of every series of a run history (E-divisive with a t test, as " +
        "Apache Otava): which night, version or commit moved a test, by how much, and what " +
        "else differed between the runs either side; and the single-run outliers (one run far " +
        "from the other runs of its segment, such as a one-night dip), listed apart.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--order-by <column>",
      "run column that orders each series: started_at, source_path, server_version, " +
        "tag:<key>, … (default: started_at, or source_path when no run has a start time)",
    )
    .option("--metric <column>", "metric: ops_per_sec, p50_latency_ms, …", "ops_per_sec")
    .option(
      "--max-pvalue <p>",
      "keep change points with a t test p at most this, and outliers whose p times the runs " +
        "tested is at most this",
      "0.001",
    )
    .option("--min-change <r>", "keep changes of at least this (0.05 or 5%)", "0")
    .option("--window <n>", "runs per window of the first pass", "50")
    .option("--test <name>", "only this test (SET, GET, …)")
    .option("--by <column>", "arm column: a series per value (default: label when it splits)")
    .option("--outliers", "print the single-run outliers only (in any format)")
    .option(
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .action((opts) => changesCommand(readOptions(() => changesOptions(opts)), out));
}
