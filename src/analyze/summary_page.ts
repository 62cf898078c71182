/**
 * A study's summary page: the Markdown a user pastes into a blog post (environment, config
 * differences between arms, runs per cell with a plain warning when there are few, medians with
 * intervals and verdicts from `compare`, the change along the arms from `delta`, memory) and
 * the charts it shows, built through the plot registry with the groups `compare` prints. Pure:
 * frames in, Markdown and chart specs out; `kvlab summary` loads, renders and writes.
 *
 * @module
 */

import { VERDICT_DEFAULTS } from "./compare/verdict.ts";
import pl from "nodejs-polars";
import { compare } from "./compare/compare.ts";
import { cellCounts, type EnvironmentSummary, fewRunsWarning } from "./environment.ts";
import { comparisonKeys } from "./grouping.ts";
import { duplicateRuns } from "./memory.ts";

import { formatForPeople } from "./present.ts";
import { whatChangedSection } from "./changes/summary.ts";
import { metricName } from "./units.ts";
import { markdownText } from "../text/safe.ts";
import {
  compareSection,
  deltaSections,
  latencySection,
  md,
  memorySection,
  type Resolved,
  scalingSection,
  type Section,
  type SummaryFigure,
  type SummaryPageOptions,
} from "./_summary_sections.ts";

export type { SummaryFigure, SummaryPageOptions };

/** The data a summary page is built from (see {@link summaryPage}). */
export interface SummaryData {
  /** Results joined with their runs (`loadResults`). */
  results: pl.DataFrame;
  /** The dataset's environment per arm (`environmentSummary`). */
  environment: EnvironmentSummary;
  /** The `runs` table: how many runs, of which tools, and when. */
  runs?: pl.DataFrame;
  /** `latency_distribution` with the arm column (`latencyDistributionBy`); none: no figure. */
  latency?: pl.DataFrame;
  /** Rows of the `memory` table with the arm column; none: no memory section. */
  memory?: pl.DataFrame;
}

/** A summary page: the Markdown, its figures, and the comparisons its tables show. */
export interface SummaryPage {
  /** The page, ending with a newline. */
  markdown: string;
  /** The figures the page references, in page order. */
  figures: SummaryFigure[];
  /** Per metric, the frame from `compare` whose rows the page's table shows. */
  comparisons: Record<string, pl.DataFrame>;
}

/** The metrics compared, when the results hold values for the baseline and another arm. */
export const SUMMARY_METRICS = ["ops_per_sec", "p50_latency_ms", "p99_latency_ms"] as const;

/**
 * Builds a study's summary page.
 *
 * @param data Results, environment and, when the dataset holds them, latency and memory rows.
 * @param options Title, arms and baseline (resolve them with `resolveArms`).
 * @returns The Markdown, the figures it references and the comparisons it shows.
 * @throws {TypeError} When fewer than two arms are given or the baseline is not one of them.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { summaryPage } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const results = pl.DataFrame({
 *   test: ["SET", "SET", "SET", "SET"], label: ["a", "a", "b", "b"],
 *   ops_per_sec: [100, 102, 120, 121],
 * });
 * const environment = {
 *   by: "label", arms: ["a", "b"], table: pl.DataFrame({ arm: ["a", "b"], runs: [2, 2] }),
 *   config: pl.DataFrame({ key: [] }), configOnlyIn: {}, configMissing: ["a", "b"],
 * };
 * const page = summaryPage({ results, environment }, {
 *   title: "demo", by: "label", arms: ["a", "b"], baseline: "a",
 * });
 * assert.match(page.markdown, /^# demo\n/);
 * assert.match(page.markdown, /\| SET \| b \| 2 \| 2 \| 101\.00 \| 120\.50 \| 1\.19 \|/);
 * assert.match(page.markdown, /fewer than 4 runs per arm/);
 * assert.deepEqual(page.figures.map((f) => f.name), ["throughput", "ratio"]);
 * assert.match(page.markdown, /!\[.*\]\(figures\/ratio\.png\)/);
 * ```
 */
export function summaryPage(data: SummaryData, options: SummaryPageOptions): SummaryPage {
  if (options.arms.length < 2) {
    throw new TypeError(`fewer than two arms: ${options.by} has ${options.arms.join(", ")}`);
  }
  if (!options.arms.includes(options.baseline)) {
    throw new TypeError(`invalid baseline: ${options.baseline} (arms: ${options.arms.join(", ")})`);
  }
  const o: Resolved = {
    ...options,
    figures: options.figures ?? "figures",
    minRuns: VERDICT_DEFAULTS.minRuns,
  };
  if (options.minRuns !== undefined) o.minRuns = options.minRuns;
  const results = data.results.filter(pl.col(o.by).cast(pl.Utf8).isIn([...o.arms]));
  const comparisons: Record<string, pl.DataFrame> = {};
  const sections: Section[] = [
    { lines: intro(data, o), figures: [] },
    { lines: environmentLines(data.environment, o.arms), figures: [] },
  ];
  if (results.height > 0) {
    sections.push({ lines: countLines(results, o), figures: [] });
    for (const metric of SUMMARY_METRICS) {
      if (!hasArms(results, metric, o)) continue;
      comparisons[metric] = compare(results, { by: o.by, baseline: o.baseline, metric });
      if (comparisons[metric].height === 0) {
        // e.g. memtier --run-count arms (best / worst / average) beside single runs
        const keys = comparisonKeys(results, o.by).keys.join(", ");
        const name = metricName(metric);
        sections.push({
          lines: [
            `## ${name[0].toUpperCase()}${name.slice(1)}: nothing to compare`,
            "",
            `No group (${keys}) has ${name} for ${o.baseline} and another arm.`,
            "",
          ],
          figures: [],
        });
        continue;
      }
      sections.push(compareSection(comparisons[metric], { results, metric, options: o }));
    }
    if (data.latency && data.latency.height > 0) sections.push(latencySection(data.latency, o));
    sections.push(...deltaSections(results, o), scalingSection(results, o));
    const history = whatChangedSection(results); // a dataset with a history: its change points
    if (history) sections.push(history);
  }
  if (data.memory && data.memory.height > 0) sections.push(memorySection(data.memory, o));
  if (results.height === 0 && !(data.memory && data.memory.height > 0)) {
    sections.push({
      lines: ["The dataset holds no results and no memory samples.", ""],
      figures: [],
    });
  }
  const figures = sections.flatMap((s) => s.figures);
  const body = sections.flatMap((s) => [
    ...s.lines,
    ...s.figures.flatMap((f) => figureLines(f, o.figures)),
  ]);
  return {
    markdown: body.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n",
    figures,
    comparisons,
  };
}

/** The lines that show a figure: the PNG inline, the SVG linked. */
function figureLines(f: SummaryFigure, dir: string): string[] {
  const caption = markdownText(f.caption);
  return [
    `![${caption}](${dir}/${f.name}.png)`,
    "",
    `*${caption}* ([SVG](${dir}/${f.name}.svg))`,
    "",
  ];
}

/** Whether the metric has values for the baseline and at least one other arm. */
function hasArms(results: pl.DataFrame, metric: string, o: Resolved): boolean {
  if (!results.columns.includes(metric)) return false;
  const arms = new Set(
    (results.filter(pl.col(metric).isNotNull().and(pl.col(metric).isNan().not()))
      .getColumn(o.by).toArray() as unknown[]).map(String),
  );
  return arms.has(o.baseline) && arms.size >= 2;
}

/** The title and one paragraph: what the dataset holds and how the arms are named. */
function intro(data: SummaryData, o: Resolved): string[] {
  const arms = o.arms.map((a) => a === o.baseline ? `${md(a)} (baseline)` : md(a)).join(", ");
  const lines = [`# ${md(o.title)}`, ""];
  const runs = data.runs;
  if (runs && runs.height > 0) {
    const tools = [...new Set(runs.getColumn("tool").toArray() as string[])].map(md).join(", ");
    // when the runs ran (collected runs know it; ingested outputs rarely do)
    const days = (runs.getColumn("started_at").toArray() as unknown[])
      .filter((t): t is Date => t instanceof Date).map((t) => t.toISOString().slice(0, 10)).sort();
    const when = days.length === 0
      ? ""
      : days[0] === days.at(-1)
      ? ` on ${days[0]}`
      : ` from ${days[0]} to ${days.at(-1)}`;
    lines.push(`${runs.height} runs of ${tools}${when}. Arms by \`${md(o.by)}\`: ${arms}.`, "");
    const copies = duplicateRuns(runs, { by: o.by });
    if (copies.height > 0) {
      const pairs = [...new Set(copies.getColumn(o.by).toArray() as string[])].map(md).join("; ");
      lines.push(
        `> **Note:** ${copies.height} runs have byte-for-byte the same raw output as a run of ` +
          `another arm (${pairs}): one of each is a copy, not a second measurement.`,
        "",
      );
    }
  } else {
    lines.push(`Arms by \`${md(o.by)}\`: ${arms}.`, "");
  }
  return lines;
}

/** The environment table and the config differences between arms. */
function environmentLines(env: EnvironmentSummary, arms: readonly string[]): string[] {
  // the page's arm order (as measured), arms outside it after
  const rank = (a: string) => arms.includes(a) ? arms.indexOf(a) : arms.length;
  const table = env.table.withColumns(
    pl.Series("__rank", (env.table.getColumn("arm").toArray() as string[]).map(rank)),
  ).sort("__rank", false, true).drop("__rank");
  const lines = ["## Environment", "", formatForPeople(table, "md", { headers: false })];
  if (env.config.height > 0) {
    lines.push(
      "Server config that differs between arms (CONFIG GET before each run; per-instance keys " +
        "such as port and dir left out):",
      "",
      formatForPeople(env.config, "md", { headers: false }),
    );
  } else if (env.configMissing.length < env.arms.length - 1) {
    lines.push("The servers' configs (CONFIG GET before each run) do not differ between arms.", "");
  }
  for (const [arm, keys] of Object.entries(env.configOnlyIn)) {
    const shown = keys.slice(0, 12).map((k) => `\`${md(k)}\``).join(", ");
    const more = keys.length > 12 ? ` and ${keys.length - 12} more` : "";
    lines.push(`Config keys only ${md(arm)} has: ${shown}${more}.`, "");
  }
  if (env.configMissing.length > 0) {
    lines.push(
      `No server config recorded for ${
        [...env.configMissing].sort((a, b) => rank(a) - rank(b)).map(md).join(", ")
      } (ingested outputs or ` +
        "managed services do not have it).",
      "",
    );
  }
  return lines;
}

/** Runs per arm and cell, with the plain warning when a cell has fewer than `minRuns`. */
function countLines(results: pl.DataFrame, o: Resolved): string[] {
  const all = cellCounts(results, o.by);
  // the arms' columns in the page's arm order
  const arms = o.arms.map((a) => `${a} n`).filter((c) => all.columns.includes(c));
  const counts = all.select(...all.columns.filter((c) => !c.endsWith(" n")), ...arms);
  const warning = fewRunsWarning(counts, o.minRuns);
  return [
    "## Runs per cell",
    "",
    formatForPeople(counts, "md", { headers: false }),
    ...(warning ? [`> **${md(warning).replace(/^warning: /, "Warning:** ")}`, ""] : []),
  ];
}
