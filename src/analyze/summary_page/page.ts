/**
 * A study's summary page: the Markdown a user pastes into a blog post and the charts it shows.
 * The page is a list of sections, each its lines and figures, in this order: the opening
 * (`_opening.ts`: title and what the dataset holds, environment and config differences between
 * arms, runs per cell with a plain warning when there are few); the judgements of each arm
 * against the baseline (`_comparisons.ts`: medians with intervals and verdicts from `compare`
 * per metric, the change along the arms from `delta`); the figures (`_figures.ts`: the latency
 * spectrum, scaling with clients); fixed-rate steps beside other runs (`_sweep.ts`: `kvlab
 * sweep`'s tables and figure; the sections before compare the other runs); what changed over a
 * history (`changes/summary.ts`); memory (`_memory.ts`). Charts are built through the plot registry with the groups `compare` prints.
 * Pure: frames in, Markdown and chart specs out; `kvlab summary` loads, renders and writes.
 *
 * @module
 */

import pl from "nodejs-polars";
import { VERDICT_DEFAULTS } from "../compare/verdict.ts";
import type { EnvironmentSummary } from "../environment.ts";
import { whatChangedSection } from "../changes/summary.ts";
import { markdownText } from "../../text/safe.ts";
import { THEME, type VegaLiteSpec } from "../charts/theme.ts";
import { textWidth } from "../_text_width.ts";
import type { Resolved, Section, SummaryFigure, SummaryPageOptions } from "./_section.ts";
import { countLines, environmentLines, intro } from "./_opening.ts";
import { comparisonSections, deltaSections } from "./_comparisons.ts";
import { latencySection, scalingSection } from "./_figures.ts";
import { memorySection } from "./_memory.ts";
import { sweepSection } from "./_sweep.ts";
import { splitFixedRate } from "../sweep/compare.ts";

export type { SummaryFigure, SummaryPageOptions };
export { SUMMARY_METRICS } from "./_comparisons.ts";

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
  /** `hdr_histograms`: fixed-rate steps' repetitions merged as `kvlab sweep` merges them. */
  hdr?: pl.DataFrame;
}

/** A summary page: the Markdown, its figures, and the comparisons its tables show. */
export interface SummaryPage {
  /** The page, ending with a newline. */
  markdown: string;
  /** The figures the page references, in page order. */
  figures: SummaryFigure[];
  /**
   * Per metric, the frame from `compare` whose rows the page's table shows; under
   * `fixed_rate_steps`, the frame from `compareSteps`.
   */
  comparisons: Record<string, pl.DataFrame>;
}

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
  const all = data.results.filter(pl.col(o.by).cast(pl.Utf8).isIn([...o.arms]));
  // fixed-rate steps beside other runs: compared rate by rate and shown as `kvlab sweep` shows
  // them, never drawn as throughput against clients; the other runs compared as ever
  const { steps, others: results } = splitFixedRate(all);
  let comparisons: Record<string, pl.DataFrame> = {};
  const sections: Section[] = [
    { lines: intro(data.runs, o), figures: [] },
    { lines: environmentLines(data.environment, o.arms), figures: [] },
  ];
  if (all.height > 0) {
    const compared = comparisonSections(all, o, data.hdr);
    comparisons = compared.comparisons;
    sections.push({ lines: countLines(all, o), figures: [] }, ...compared.sections);
    if (data.latency && data.latency.height > 0) sections.push(latencySection(data.latency, o));
    if (results.height > 0) {
      sections.push(...deltaSections(results, o), scalingSection(results, o));
    }
    if (steps.height > 0) sections.push(sweepSection(all, data.hdr, o));
    const history = whatChangedSection(results); // a dataset with a history: its change points
    if (history) sections.push(history);
  }
  if (data.memory && data.memory.height > 0) sections.push(memorySection(data.memory, o));
  if (all.height === 0 && !(data.memory && data.memory.height > 0)) {
    sections.push({
      lines: ["The dataset holds no results and no memory samples.", ""],
      figures: [],
    });
  }
  const figures = sections.flatMap((s) => s.figures)
    .map((f) => ({ ...f, spec: withPageTitle(f.spec, o.title) }));
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

/** The widest title line of a figure, px: its plot's width (a figure is about 800 px wide). */
const TITLE_PX = 640;

/**
 * A figure's title with the page's before it (`kvlab summary --title`): on one line when both
 * fit, else the page's title above the figure's; the subtitle kept. A figure saved alone (a
 * PNG pasted elsewhere) still says which study it is from. {@link summaryPage} titles its
 * figures so; a history's page (`historyPage`) is titled by `kvlab summary` with it.
 *
 * @param spec The figure.
 * @param page The page's title.
 * @returns The figure, titled.
 *
 * @example
 * ```ts
 * import { withPageTitle } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const spec = { title: { text: "throughput by test", subtitle: "bars: medians" } };
 * assert.deepEqual(withPageTitle(spec, "Valkey vs Redis").title, {
 *   text: "Valkey vs Redis: throughput by test",
 *   subtitle: "bars: medians",
 * });
 * ```
 */
export function withPageTitle(spec: VegaLiteSpec, page: string): VegaLiteSpec {
  const t = spec.title as string | { text?: unknown; subtitle?: unknown } | undefined;
  const own = typeof t === "string" ? t : t?.text;
  if (typeof own !== "string" || own === "" || page.trim() === "") return spec;
  const joined = `${page}: ${own}`;
  const font = THEME.title as { fontSize: number; fontWeight: string };
  const text = textWidth(font, joined) <= TITLE_PX ? joined : [page, own];
  return { ...spec, title: typeof t === "string" ? { text } : { ...t, text } };
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
