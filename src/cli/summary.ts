/**
 * `kvlab summary`: a study's summary page (`summary.md`) and its figures (SVG and PNG, under
 * `figures/`) for any dataset, the page a user pastes into a blog post. Without `--by`, the arms
 * are the runs' labels when they split the data, else the run column that differs; without
 * `--baseline`, the arm measured first; without `-o`, the page goes in `<dataset>/summary/`.
 *
 * @module
 */

import type { Command, OptionValues } from "commander";
import type pl from "nodejs-polars";
import { Dataset, type DatasetRef } from "../store/dataset.ts";
import { resolveArms } from "../analyze/arms.ts";
import { environmentSummary } from "../analyze/environment.ts";
import { saveChart } from "../analyze/export.ts";
import { loadResults, loadTable, onlyComplete } from "../analyze/load.ts";
import { latencyDistributionBy } from "../analyze/plots.ts";
import type { VegaLiteSpec } from "../analyze/chart.ts";
import { historyPage } from "../analyze/changes/summary.ts";
import { summaryPage, withPageTitle } from "../analyze/summary_page/page.ts";
import { type Output, readOptions } from "./_exit.ts";
import { attemptsNote } from "./_shows.ts";
import { optionalString } from "./_options.ts";

/** What `kvlab summary` summarizes and where it writes. */
export interface SummaryCommandOptions {
  /** Dataset directory. */
  data: string;
  /** The column whose values are the arms. @default {label when it splits the data, else the column that differs} */
  by?: string;
  /** The baseline arm. @default {the arm measured first} */
  baseline?: string;
  /** The folder the page and its figures go in. @default {"<data>/summary"} */
  output: string;
  /** The page's title. @default {the dataset folder's name} */
  title?: string;
}

/**
 * Reads `kvlab summary`'s argument and options.
 *
 * @param data The dataset directory.
 * @param raw Commander's option values.
 * @returns The typed options.
 * @throws {TypeError} For an empty dataset path or output folder.
 *
 * @example
 * ```ts
 * import { summaryOptions } from "./summary.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(summaryOptions("runs/ds/", {}), {
 *   data: "runs/ds", by: undefined, baseline: undefined, output: "runs/ds/summary", title: "ds",
 * });
 * assert.equal(summaryOptions("ds", { output: "out/", title: "T" }).output, "out");
 * assert.throws(() => summaryOptions("", {}), /invalid dataset: ""/);
 * ```
 */
export function summaryOptions(data: string, raw: OptionValues): SummaryCommandOptions {
  const trim = (s: string) => s.length > 1 ? s.replace(/\/+$/, "") : s;
  if (data.trim() === "") throw new TypeError(`invalid dataset: ""`);
  const dir = trim(data);
  const output = raw.output === undefined ? `${dir}/summary` : trim(String(raw.output));
  if (output.trim() === "") throw new TypeError(`invalid --output: ""`);
  return {
    data: dir,
    by: optionalString(raw.by),
    baseline: optionalString(raw.baseline),
    output,
    title: optionalString(raw.title) ?? dir.split("/").pop(),
  };
}

/** The memory rows of a dataset with the arm column of their runs. */
function memoryBy(memory: pl.DataFrame, runs: pl.DataFrame, by: string): pl.DataFrame {
  if (memory.height === 0 || memory.columns.includes(by)) return memory;
  return memory.join(runs.select("run_id", by), { on: "run_id" });
}

/** The tables a summary starts from, read once: what `kvlab demo` compares, too. */
export interface SummaryTables {
  /** The dataset. */
  dataset: Dataset;
  /** The `runs` table. */
  runs: pl.DataFrame;
  /** Every result joined with its runs, finished or not (the latency figure's). */
  all: pl.DataFrame;
  /** The finished results (`onlyComplete(all)`): the tables and charts compare these. */
  results: pl.DataFrame;
}

/**
 * Reads the runs and results of a dataset once, for {@link summaryCommand} and whoever prints
 * from them before it.
 *
 * @param data The dataset, or its directory.
 * @param onLeftOut Told the runs left out as superseded attempts of plan cells.
 * @returns The frames.
 * @throws {DatasetError} When the directory is not a dataset, or a file of it is damaged.
 *
 * @example
 * ```ts
 * import { summaryTables } from "./summary.ts";
 * import assert from "node:assert/strict";
 * const t = summaryTables(Deno.makeTempDirSync());
 * assert.deepEqual([t.runs.height, t.all.height, t.results.height], [0, 0, 0]);
 * assert.ok(t.all.columns.includes("complete") && t.all.columns.includes("label"));
 * ```
 */
export function summaryTables(
  data: DatasetRef,
  onLeftOut?: (runIds: string[]) => void,
): SummaryTables {
  const dataset = Dataset.of(data);
  const runs = loadTable(dataset, "runs", { onLeftOut });
  const all = loadResults(dataset, { completeOnly: false, runs });
  return { dataset, runs, all, results: onlyComplete(all) };
}

/** What {@link summaryCommand} wrote. */
export interface SummaryWritten {
  /** The page. */
  page: string;
  /** The figure files (SVG and PNG of each). */
  figures: string[];
}

/**
 * Writes the summary page and its figures, and says where. Each table is read once.
 *
 * @param o The dataset, the arms and the output folder.
 * @param out Where to print.
 * @param tables The runs and results, when the caller read them already.
 * @returns The files written.
 * @throws {TypeError} For fewer than two arms (naming the arms found) or a baseline not in
 * the data.
 */
export async function summaryCommand(
  o: SummaryCommandOptions,
  out: Output,
  tables: SummaryTables = summaryTables(o.data, attemptsNote(out)),
): Promise<SummaryWritten> {
  const { dataset, runs, all, results } = tables;
  let arms;
  try {
    arms = resolveArms(results.height > 0 ? results : runs, { by: o.by, baseline: o.baseline });
  } catch (e) {
    // one history with no arms (a nightly CI's dataset): the page of its change points
    const title = o.title ?? o.data;
    const history = o.by === undefined ? historyPage(results, title) : null;
    if (history === null) throw e;
    const figures = history.figures.map((f) => ({ ...f, spec: withPageTitle(f.spec, title) }));
    return await writePage({ ...history, figures }, o, out);
  }
  out.printErr(
    `summarizing by ${arms.by} (${arms.values.join(", ")}), baseline ${arms.baseline}\n`,
  );
  const table = (name: string) => loadTable(dataset, name, { runs });
  const hdr = table("hdr_histograms");
  const page = summaryPage({
    results,
    runs,
    environment: environmentSummary({ runs, serverConfig: table("server_config") }, arms.by),
    latency: latencyDistributionBy(
      { results: all, distribution: table("latency_distribution"), hdr },
      arms.by,
    ),
    memory: memoryBy(table("memory"), runs, arms.by),
    hdr,
  }, { title: o.title ?? o.data, by: arms.by, arms: arms.values, baseline: arms.baseline });
  return await writePage(page, o, out);
}

/** Writes a page and its figures (SVG and PNG), and says where. */
async function writePage(
  page: { markdown: string; figures: { name: string; spec: VegaLiteSpec }[] },
  o: SummaryCommandOptions,
  out: Output,
): Promise<SummaryWritten> {
  const figures: string[] = [];
  for (const f of page.figures) {
    for (const ext of ["svg", "png"]) {
      const path = `${o.output}/figures/${f.name}.${ext}`;
      await saveChart(f.spec, path);
      figures.push(path);
    }
  }
  const path = `${o.output}/summary.md`;
  await Deno.mkdir(o.output, { recursive: true });
  await Deno.writeTextFile(path, page.markdown);
  out.print(
    `wrote ${path} and ${page.figures.length} figures (SVG and PNG) in ${o.output}/figures\n`,
  );
  return { page: path, figures };
}

/**
 * Declares `kvlab summary`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link summaryCommand} does the work.
 */
export function declareSummary(program: Command, out: Output): void {
  program.command("summary")
    .description(
      "Write a study's summary page (summary.md: environment, config differences, runs per " +
        "cell, medians with intervals and verdicts, changes, memory) and its figures (SVG and " +
        "PNG, in figures/): the page to paste into a blog post.",
    )
    .argument("<dir>", "dataset directory")
    .option(
      "--by <column>",
      "arms (default: label when the runs' labels split the data, else the run column that differs)",
    )
    .option("--baseline <value>", "the baseline arm (default: the arm measured first)")
    .option("-o, --output <dir>", "folder for summary.md and figures/ (default: <dir>/summary)")
    .option("--title <text>", "the page's title (default: the dataset folder's name)")
    .action(async (dir: string, opts) => {
      await summaryCommand(readOptions(() => summaryOptions(dir, opts)), out);
    });
}
