/**
 * `kvlab plot`: draw one chart of a dataset (a kind from the analyze plot registry) and save
 * it as .svg, .png, .html or .vl.json. Without `--by`, the arms are the runs' labels when they
 * split the data, else the run column that differs; `ratio` and `delta` need two arms (or two
 * values of the dimension) and say what the data holds when it has fewer.
 *
 * @module
 */

import type { DatasetRef } from "../store/dataset.ts";
import type { Dataset } from "../store/dataset.ts";
import type { Command, OptionValues } from "commander";
import pl from "nodejs-polars";
import { defaultArmColumn, deltaSides, resolveArms } from "../analyze/arms.ts";
import { defaultOrder } from "../analyze/changes/changes.ts";
import { leftOutText, missingOrder } from "../analyze/changes/order.ts";
import { finiteRows } from "../analyze/summary.ts";
import { chartFormat, saveChart } from "../analyze/export.ts";
import { loadResults, loadTable, onlyComplete } from "../analyze/load.ts";
import { latencySteps } from "../analyze/latency.ts";
import {
  latencyDistributionBy,
  latencyFrames,
  type PlotKind,
  plotKind,
  plotKindList,
  type PlotOptions,
  PLOTS,
} from "../analyze/plots.ts";
import { sweepFrames, sweepTable } from "../analyze/sweep/sweep.ts";
import { type Output, readOptions } from "./_exit.ts";
import { changesThresholds, datasetOption, optionalString, sustainedOption } from "./_options.ts";
import { attemptsNote, notForSweeps, nothingToDraw, onlyForSweeps } from "./_shows.ts";

/** What `kvlab plot` draws and where it saves it. */
export interface PlotCommandOptions {
  /** The kind of chart. */
  kind: PlotKind;
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** The output file; its extension picks the format. */
  output: string;
  /** The kind's options. */
  plot: PlotOptions;
}

/**
 * Reads `kvlab plot`'s argument and commander's options: the kind first, then the output
 * file's format, so both fail before any data is read.
 *
 * @param kind The kind's name.
 * @param raw Commander's option values (defaults filled in).
 * @returns The typed options.
 * @throws {TypeError} For an unknown kind or output extension.
 *
 * @example
 * ```ts
 * import { plotOptions } from "./plot.ts";
 * import assert from "node:assert/strict";
 * const o = plotOptions("ratio", { data: "ds", output: "r.svg", by: "server", baseline: "redis" });
 * assert.equal(o.kind, "ratio");
 * assert.equal(o.plot.baseline, "redis");
 * assert.throws(() => plotOptions("pie", { data: "ds", output: "r.svg" }), /invalid chart kind: pie/);
 * assert.throws(() => plotOptions("ratio", { data: "ds", output: "r.txt" }), /invalid chart format/);
 * ```
 */
export function plotOptions(kind: string, raw: OptionValues): PlotCommandOptions {
  const resolved = plotKind(kind);
  const output = String(raw.output);
  chartFormat(output);
  return {
    kind: resolved,
    data: datasetOption(raw.data),
    output,
    plot: {
      by: optionalString(raw.by),
      metric: optionalString(raw.metric),
      x: optionalString(raw.x),
      baseline: optionalString(raw.baseline),
      candidate: optionalString(raw.candidate),
      dimension: optionalString(raw.dimension),
      from: optionalString(raw.from),
      to: optionalString(raw.to),
      title: optionalString(raw.title),
      orderBy: optionalString(raw.orderBy),
      test: optionalString(raw.test),
      sustained: raw.sustained === undefined ? undefined : sustainedOption(raw.sustained),
      ...(resolved === "changes" ? changesThresholds(raw) : {}),
    },
  };
}

/** A dataset and its finished results (read once by the command). */
export interface PlotSource {
  /** The dataset, or its directory (named in messages). */
  data: DatasetRef;
  /** Its results joined with their runs, finished tests only (`loadResults`). */
  results: pl.DataFrame;
}

/**
 * The kind's options with the arms filled in from the data: `by` defaults to the column that
 * splits it (`server` when none does), `ratio`'s baseline to the first arm, and a `delta`
 * without `--dimension/--from/--to` over two arms goes from the baseline to the other.
 *
 * @param source The dataset and its results.
 * @param kind The kind.
 * @param plot The options given.
 * @returns The options to build the chart with.
 * @throws {TypeError} For `ratio` with fewer than two arms or `delta` with fewer than two
 * values, naming what the data holds.
 * @throws {NothingToShowError} For fixed-rate steps only (`sweep` shows them), or `sweep` on
 * data without them.
 */
export function plotArms(source: PlotSource, kind: PlotKind, plot: PlotOptions): PlotOptions {
  const { data, results } = source;
  if (kind === "sweep") {
    onlyForSweeps("kvlab plot sweep", data, sweepTable({ results }, { by: "run_id" }).height);
  } else if (kind !== "latency") notForSweeps(`kvlab plot ${kind}`, data, results);
  switch (kind) {
    case "ratio": {
      const arms = resolveArms(results, { by: plot.by, baseline: plot.baseline });
      return { ...plot, by: arms.by, baseline: arms.baseline };
    }
    case "delta":
      if (plot.dimension === undefined && plot.from === undefined && plot.to === undefined) {
        // the arms, as summary finds them: with two, the delta goes from the baseline to the other
        const arms = resolveArms(results, { by: plot.by, baseline: plot.baseline });
        if (arms.values.length === 2) {
          const to = arms.values.find((v) => v !== arms.baseline)!;
          return { ...plot, dimension: arms.by, from: arms.baseline, to };
        }
      }
      if (plot.dimension && plot.from !== undefined && plot.to !== undefined) {
        deltaSides(results, { dimension: plot.dimension, from: plot.from, to: plot.to });
      }
      return plot;
    case "changes": // a history's series are split by --by only when asked (or by label)
      return plot;
    default:
      return { ...plot, by: plot.by ?? defaultArmColumn(results) ?? "server" };
  }
}

/**
 * Builds the chart, saves it and prints `wrote <file>`. Each table is read once: a latency
 * figure reads every result (finished or not), its distribution and histograms, and takes the
 * finished results for the arms from the same frame; a sweep reads the results and histograms
 * `kvlab sweep` reads, and draws `sweepTable`'s rows (the same numbers and verdicts).
 *
 * @param o The kind, the dataset, the output file and the kind's options.
 * @param out Where to print.
 */
export async function plotCommand(o: PlotCommandOptions, out: Output): Promise<void> {
  const kind = PLOTS[o.kind];
  const onLeftOut = attemptsNote(out);
  const latency = kind.needs === "latency"
    ? latencyFrames(o.data, loadTable(o.data, "runs", { onLeftOut }))
    : undefined;
  const sweep = kind.needs === "sweep" ? sweepFrames(o.data, onLeftOut) : undefined;
  const results = latency
    ? onlyComplete(latency.results)
    : sweep
    ? sweep.results
    : loadResults(o.data, { onLeftOut });
  const plot = plotArms({ data: o.data, results }, o.kind, o.plot);
  const frame = latency
    ? latencyDistributionBy(latency, plot.by ?? "server")
    : sweep
    ? sweepTable(sweep, { by: plot.by, sustained: plot.sustained })
    : results;
  if (
    frame.height === 0 ||
    (o.kind === "latency" && latencySteps(frame, { by: [plot.by ?? "server"] }).height === 0)
  ) {
    const what = kind.needs === "latency"
      ? "latency distribution (redis-benchmark's latency blocks, memtier's or kvlab's histograms)"
      : "complete results";
    nothingToDraw(`kvlab plot ${o.kind}`, o.data, { what, results });
  }
  if (o.kind === "changes") {
    const orderBy = plot.orderBy ?? defaultOrder(results);
    const rows = finiteRows(results, plot.metric ?? "ops_per_sec");
    const missing = missingOrder(
      plot.test === undefined ? rows : rows.filter(pl.col("test").eq(pl.lit(plot.test))),
      orderBy,
    );
    if (missing.results > 0) out.printErr(`left out ${leftOutText(missing, orderBy)}\n`);
  }
  // the folder of -o is made only when its parent exists (a typo is an error, not a new tree)
  await saveChart(kind.build(frame, plot), o.output, { folders: "parent" });
  out.print(`wrote ${o.output}\n`);
}

/**
 * Declares `kvlab plot`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link plotCommand} does the work.
 */
export function declarePlot(program: Command, out: Output): void {
  program.command("plot")
    .description("Draw a chart of a dataset and save it (.svg, .png, .html or .vl.json).")
    .argument("<kind>", plotKindList())
    .requiredOption("--data <dir>", "dataset directory")
    .requiredOption("-o, --output <file>", "output file; the extension picks the format")
    .option(
      "--by <column>",
      "arms (default: label when the runs' labels split the data, else the run column that differs)",
    )
    .option(
      "--baseline <value>",
      "the baseline arm (default: the arm measured first); ratio, delta, scaling crossovers",
    )
    .option("--candidate <value>", "arm that may overtake the baseline (scaling)")
    .option("--metric <column>", "metric", "ops_per_sec")
    .option("--x <column>", "x of a scaling curve", "clients")
    .option(
      "--dimension <column>",
      "delta: the column that changes (default: the arm column, when it has two arms)",
    )
    .option("--from <value>", "delta: value before (default: the baseline arm)")
    .option("--to <value>", "delta: value after (default: the other arm)")
    .option("--order-by <column>", "changes: run column that orders the history")
    .option("--test <name>", "changes: only this test")
    .option(
      "--sustained <min:max>",
      "sweep: sustained bounds on achieved / requested, as kvlab sweep's (default 0.97:1.03)",
    )
    .option("--max-pvalue <p>", "changes: as kvlab changes --max-pvalue", "0.001")
    .option("--min-change <r>", "changes: as kvlab changes --min-change", "0")
    .option("--window <n>", "changes: as kvlab changes --window", "50")
    .option("--title <text>", "chart title")
    .action((kind: string, opts) => plotCommand(readOptions(() => plotOptions(kind, opts)), out));
}
