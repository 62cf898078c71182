/**
 * The sections of the summary page (`summary_page.ts`): the comparison table and figure per
 * metric, the latency spectrum, delta, scaling and memory sections, each its lines and figures.
 * Private to `analyze/`.
 *
 * @module
 */

import pl from "nodejs-polars";
import type { VegaLiteSpec } from "./chart.ts";
import { memoryChart } from "./charts/memory.ts";
import { delta, verdictSummary } from "./compare/compare.ts";

import { comparisonKeys } from "./grouping.ts";
import { memoryDifference, memoryTable } from "./memory.ts";
import { PLOTS } from "./plots.ts";
import { formatForPeople } from "./present.ts";

import { metricName } from "./units.ts";
import { markdownText } from "../text/safe.ts";

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

export type Section = { lines: string[]; figures: SummaryFigure[] };

export type Resolved = SummaryPageOptions & { figures: string; minRuns: number };

/** A file name for an arm: characters outside `[A-Za-z0-9._-]` become `_`. */
export function fileSafe(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** A frame without the columns whose every value is null. */
export function dropEmpty(df: pl.DataFrame): pl.DataFrame {
  return df.select(...df.columns.filter((c) => df.getColumn(c).nullCount() < df.height));
}

/** A dataset's text (arm, key, tool, title) as page prose shows it: inert (see `markdownText`). */
export const md = (s: unknown): string => markdownText(String(s));

/**
 * The columns of a comparison the page shows: keys, arm, n, medians, ratio and its interval,
 * verdict, and what else differs between the arms.
 */
export function comparisonColumns(c: pl.DataFrame, metric: string, by: string): pl.DataFrame {
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
export function verdictCounts(c: pl.DataFrame, by: string): string[] {
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
export function compareSection(
  c: pl.DataFrame,
  { results, metric, options: o }: { results: pl.DataFrame; metric: string; options: Resolved },
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
export function drawsSomething(spec: unknown): boolean {
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
export function latencySection(latency: pl.DataFrame, o: Resolved): Section {
  const spec = PLOTS.latency.build(latency, { by: o.by });
  if (!drawsSomething(spec)) return { lines: [], figures: [] };
  return {
    lines: ["## Latency distribution", ""],
    figures: [{ name: "latency", caption: "Latency by percentile, per arm", spec }],
  };
}

/** For each candidate arm, the change from the baseline (`delta`), when latencies are known. */
export function deltaSections(results: pl.DataFrame, o: Resolved): Section[] {
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
export function scalingSection(results: pl.DataFrame, o: Resolved): Section {
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
export function memorySection(memory: pl.DataFrame, o: Resolved): Section {
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
