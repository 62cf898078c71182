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
import type { VegaLiteSpec } from "./chart.ts";
import { memoryChart } from "./charts/memory.ts";
import { compare, delta, verdictSummary } from "./compare/compare.ts";
import { cellCounts, type EnvironmentSummary, fewRunsWarning } from "./environment.ts";
import { comparisonKeys } from "./grouping.ts";
import { duplicateRuns, memoryDifference, memoryTable } from "./memory.ts";
import { PLOTS } from "./plots.ts";
import { formatForPeople } from "./present.ts";
import { whatChangedSection } from "./changes/summary.ts";
import { metricName } from "./units.ts";
import { markdownText } from "../text/safe.ts";

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

/** Options of {@link summaryPage}. */
export interface SummaryPageOptions {
  /** The page's title, e.g. the dataset's folder name. */
  title: string;
  /** The column whose values are the arms. */
  by: string;
  /** The arms, baseline included, in the order they were measured. */
  arms: readonly string[];
  /** The baseline arm. */
  baseline: string;
  /** The folder the figures go in, relative to the page. @default {"figures"} */
  figures?: string;
  /** The fewest runs per arm and cell a verdict needs (below: a warning). @default {4} */
  minRuns?: number;
}

/** One figure of a summary page: saved as `<figures>/<name>.svg` and `.png`. */
export interface SummaryFigure {
  /** The file name without extension (letters, digits, `.`, `_`, `-`). */
  name: string;
  /** The caption (the image's alt text). */
  caption: string;
  /** The chart. */
  spec: VegaLiteSpec;
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

type Section = { lines: string[]; figures: SummaryFigure[] };
type Resolved = SummaryPageOptions & { figures: string; minRuns: number };

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
      sections.push(compareSection(results, comparisons[metric], metric, o));
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

/** A dataset's text (arm, key, tool, title) as page prose shows it: inert (see `markdownText`). */
const md = (s: unknown): string => markdownText(String(s));

/** A file name for an arm: characters outside `[A-Za-z0-9._-]` become `_`. */
function fileSafe(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, "_");
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

/** A frame without the columns whose every value is null. */
function dropEmpty(df: pl.DataFrame): pl.DataFrame {
  return df.select(...df.columns.filter((c) => df.getColumn(c).nullCount() < df.height));
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

/**
 * The columns of a comparison the page shows: keys, arm, n, medians, ratio and its interval,
 * verdict, and what else differs between the arms.
 */
function comparisonColumns(c: pl.DataFrame, metric: string, by: string): pl.DataFrame {
  const keys = c.columns.slice(0, c.columns.indexOf(by));
  const cols = [
    ...keys,
    by,
    "baseline_n",
    "candidate_n",
    `baseline_median_${metric}`,
    `candidate_median_${metric}`,
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "verdict",
    "q_value",
    "unstable",
    "also_differs",
  ];
  // no interval columns when no cell has one, no also_differs when nothing else differs
  return dropEmpty(c.select(...cols));
}

/** How many groups each candidate arm is better, worse, no different or inconclusive in. */
function verdictCounts(c: pl.DataFrame, by: string): string[] {
  const rows = c.select(pl.col(by).cast(pl.Utf8).alias("arm"), "verdict").toRecords() as {
    arm: string;
    verdict: string;
  }[];
  const arms = [...new Set(rows.map((r) => r.arm))];
  return arms.map((arm) => {
    const mine = rows.filter((r) => r.arm === arm);
    const n = (v: string) => mine.filter((r) => r.verdict === v).length;
    return `- ${md(arm)}: better in ${n("better")}, worse in ${n("worse")}, no difference in ` +
      `${n("no difference")}, inconclusive in ${n("inconclusive")} of ${mine.length} groups.`;
  });
}

/** One metric's comparison: the verdict counts, the table, and its figures (throughput only). */
function compareSection(
  results: pl.DataFrame,
  c: pl.DataFrame,
  metric: string,
  o: Resolved,
): Section {
  const name = metricName(metric);
  const lines = [
    `## ${name[0].toUpperCase()}${name.slice(1)}: each arm against ${md(o.baseline)}`,
    "",
    `Medians over the runs of each cell; ratio = candidate median / ${md(o.baseline)} median; ` +
    "the interval is Moses' 95 % interval of the Hodges–Lehmann ratio (none with 3 or fewer runs " +
    "on a side). Better or worse: an exact rank-sum test at 5 % with at least 4 runs per arm " +
    "and a difference above the tool's latency resolution; no difference: the interval within " +
    "±5 %; else inconclusive. q: Benjamini–Hochberg across this table. Unstable: an arm's " +
    "runs vary by more than 10 % (CV), drift monotonically, or were disturbed (noise guard).",
    "",
    `${verdictSummary(c)}`,
    "",
    ...verdictCounts(c, o.by),
    "",
    formatForPeople(comparisonColumns(c, metric, o.by), "md"),
  ];
  const figures: SummaryFigure[] = [];
  if (metric === "ops_per_sec") {
    const options = { by: o.by, metric, baseline: o.baseline };
    figures.push(
      {
        name: "throughput",
        caption: "Throughput per arm (median of runs, whiskers min–max)",
        spec: PLOTS.throughput.build(results, options),
      },
      {
        name: "ratio",
        caption: `Throughput against ${o.baseline} (ratio with its 95 % interval)`,
        spec: PLOTS.ratio.build(results, options),
      },
    );
  }
  return { lines, figures };
}

/**
 * Whether a chart has data to draw: some inline `data.values` is non-empty (or it has none, so
 * this cannot tell). Vega fails on some empty charts instead of drawing empty axes.
 */
function drawsSomething(spec: unknown): boolean {
  const found: unknown[][] = [];
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (typeof x !== "object" || x === null) return;
    const values = (x as { data?: { values?: unknown } }).data?.values;
    if (Array.isArray(values)) found.push(values);
    Object.values(x).forEach(walk);
  };
  walk(spec);
  return found.length === 0 || found.some((v) => v.length > 0);
}

/** The latency spectrum figure from the latency distributions, when it has steps to draw. */
function latencySection(latency: pl.DataFrame, o: Resolved): Section {
  const spec = PLOTS.latency.build(latency, { by: o.by });
  if (!drawsSomething(spec)) return { lines: [], figures: [] };
  return {
    lines: ["## Latency distribution", ""],
    figures: [{ name: "latency", caption: "Latency by percentile, per arm", spec }],
  };
}

/** For each candidate arm, the change from the baseline (`delta`), when latencies are known. */
function deltaSections(results: pl.DataFrame, o: Resolved): Section[] {
  const latencies = ["avg", "p50", "p95", "p99"].map((p) => `${p}_latency_ms`)
    .filter((c) =>
      results.columns.includes(c) && results.getColumn(c).nullCount() < results.height
    );
  if (latencies.length === 0) return [];
  return o.arms.filter((a) => a !== o.baseline).flatMap((arm) => {
    const sides = { dimension: o.by, from: o.baseline, to: arm };
    const d = delta(results, sides);
    if (d.height === 0 || !d.columns.includes("from_n")) return []; // no group both sides ran
    const keys = d.columns.slice(0, d.columns.indexOf("from"));
    const shown = dropEmpty(d.select(
      ...keys,
      "from_n",
      "to_n",
      "throughput_factor",
      "throughput_verdict",
      ...d.columns.filter((c) =>
        c.endsWith("_latency_change_pct") || /^p\d+_latency_verdict$/.test(c)
      ),
      "also_differs",
    ));
    return [{
      lines: [
        `## From ${md(o.baseline)} to ${md(arm)}`,
        "",
        "Throughput factor (medians, to / from) and the change of median latencies in % " +
        "(negative: faster), each with the verdict of the comparison above (inconclusive with " +
        "fewer than 4 runs per side or a change within the tool's latency resolution).",
        "",
        formatForPeople(shown, "md"),
      ],
      figures: [{
        name: `delta-${fileSafe(arm)}`,
        caption: `From ${o.baseline} to ${arm}: throughput factor and latency change`,
        spec: PLOTS.delta.build(results, sides),
      }],
    }];
  });
}

/** Throughput against clients, when the client count varies within arms. */
function scalingSection(results: pl.DataFrame, o: Resolved): Section {
  if (!comparisonKeys(results, o.by).keys.includes("clients")) return { lines: [], figures: [] };
  const candidate = o.arms.length === 2 ? o.arms.find((a) => a !== o.baseline) : undefined;
  return {
    lines: ["## Scaling with clients", ""],
    figures: [{
      name: "scaling",
      caption: "Throughput against clients (median of runs)",
      spec: PLOTS.scaling.build(results, {
        by: o.by,
        x: "clients",
        baseline: o.baseline,
        candidate,
      }),
    }],
  };
}

/** Memory per size and arm (MiB), each candidate's difference in %, and the memory figure. */
function memorySection(memory: pl.DataFrame, o: Resolved): Section {
  const lines = [
    "## Memory",
    "",
    formatForPeople(dropEmpty(memoryTable(memory, { by: o.by })), "md"),
  ];
  const table = memoryTable(memory, { by: o.by });
  const armsWithMemory = new Set((memory.getColumn(o.by).toArray() as unknown[]).map(String));
  for (const arm of o.arms) {
    if (arm === o.baseline || !armsWithMemory.has(arm) || !armsWithMemory.has(o.baseline)) continue;
    lines.push(
      `${md(arm)} against ${md(o.baseline)}, difference in % (negative: ${md(arm)} uses less):`,
      "",
      formatForPeople(dropEmpty(memoryDifference(table, o.baseline, arm)), "md"),
    );
  }
  const candidate = o.arms.find((a) => a !== o.baseline && armsWithMemory.has(a));
  return {
    lines,
    figures: [{
      name: "memory",
      caption: "Memory against keys, per arm",
      spec: memoryChart(memory, { by: o.by, baseline: o.baseline, candidate }),
    }],
  };
}
