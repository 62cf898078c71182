/**
 * The sections of the summary page that judge each arm against the baseline: per metric, the
 * verdict counts and the comparison table (`compare`), with the throughput and ratio figures;
 * the fixed-rate steps rate by rate (`compareSteps`: p99 and p50 ratios with intervals and
 * verdicts, as `kvlab compare` prints them); the details of unstable cells; and per candidate
 * arm, the change from the baseline (`delta`) with its figure. Runs of fixed-rate steps are
 * compared only rate by rate. Private to `summary_page/`.
 *
 * @module
 */

import pl from "nodejs-polars";
import { compare, delta, verdictSummary } from "../compare/compare.ts";
import { adviceSummary } from "../compare/advice.ts";
import { compareSteps, splitFixedRate } from "../sweep/compare.ts";
import {
  STEP_COMPARE_METHOD,
  stepsForPeople,
  stepVerdictSummary,
} from "../sweep/compare_people.ts";
import { comparisonKeys } from "../grouping.ts";
import { PLOTS } from "../plots.ts";
import { formatForPeople } from "../present.ts";
import { metricName } from "../units.ts";
import {
  dropEmpty,
  fileSafe,
  md,
  type Resolved,
  type Section,
  type SummaryFigure,
} from "./_section.ts";

/** The metrics compared, when the results hold values for the baseline and another arm. */
export const SUMMARY_METRICS = ["ops_per_sec", "p50_latency_ms", "p99_latency_ms"] as const;

/** The key of the fixed-rate steps' comparison among a page's comparisons. */
export const FIXED_RATE_KEY = "fixed_rate_steps";

/**
 * Per metric of {@link SUMMARY_METRICS} that has values for the baseline and another arm, its
 * section and the comparison its table shows (runs of fixed-rate steps left out), then the
 * fixed-rate steps' section and comparison ({@link FIXED_RATE_KEY}) when there are any.
 *
 * @param all The results (joined with runs), fixed-rate steps included.
 * @param o The page's options.
 * @param hdr The `hdr_histograms` table: steps merged as `kvlab sweep` merges them (without it,
 * by the median of the repetitions' own percentiles).
 */
export function comparisonSections(
  all: pl.DataFrame,
  o: Resolved,
  hdr?: pl.DataFrame,
): { sections: Section[]; comparisons: Record<string, pl.DataFrame> } {
  const sections: Section[] = [];
  const comparisons: Record<string, pl.DataFrame> = {};
  const { steps, others: results } = splitFixedRate(all);
  for (const metric of SUMMARY_METRICS) {
    if (!hasArms(results, metric, o)) continue;
    comparisons[metric] = compare(results, { by: o.by, baseline: o.baseline, metric });
    sections.push(
      comparisons[metric].height === 0
        ? nothingToCompare(results, metric, o)
        : compareSection(comparisons[metric], { results, metric, options: o }),
    );
  }
  if (steps.height > 0) {
    const c = compareSteps({ results: steps, hdr }, { by: o.by, baseline: o.baseline });
    if (c.height > 0) {
      comparisons[FIXED_RATE_KEY] = c;
      sections.push(fixedRateSection(c, o));
    }
  }
  const details = unstableDetailsSection(comparisons, o.by);
  if (details) sections.push(details);
  return { sections, comparisons };
}

/** The fixed-rate steps, rate by rate: the method, the line on the whole, the table. */
function fixedRateSection(c: pl.DataFrame, o: Resolved): Section {
  return {
    lines: [
      `## Fixed-rate latency: each arm against ${md(o.baseline)}, rate by rate`,
      "",
      STEP_COMPARE_METHOD,
      "",
      stepVerdictSummary(c),
      "",
      formatForPeople(dropEmpty(stepsForPeople(c, o.by)), "md"),
    ],
    figures: [],
  };
}

/**
 * The details of the unstable cells, once: per cell and arm, every reason the noise guard gave
 * (the tables say it in short), with the metrics whose table flags it.
 */
function unstableDetailsSection(
  comparisons: Record<string, pl.DataFrame>,
  by: string,
): Section | null {
  const cells = new Map<string, string[]>();
  for (const [metric, c] of Object.entries(comparisons)) {
    if (!c.columns.includes("unstable_details")) continue;
    const keys = c.columns.slice(0, c.columns.indexOf(by) + 1);
    for (const r of c.filter(pl.col("unstable_details").isNotNull()).toRecords()) {
      const cell = keys.map((k) => k === "test" || k === by ? String(r[k]) : `${k} ${r[k]}`)
        .join(" · ");
      const line = `${cell}: ${r.unstable_details}`;
      cells.set(line, [...(cells.get(line) ?? []), metricName(metric)]);
    }
  }
  if (cells.size === 0) return null;
  return {
    lines: [
      "## Details: unstable cells",
      "",
      "The disturbed runs the `unstable` column of the tables above counts, per cell and arm: " +
      "each reason the noise guard gave (the tables say it in short).",
      "",
      ...[...cells].map(([line, metrics]) => `- ${md(line)} (${metrics.join(", ")})`),
      "",
    ],
    figures: [],
  };
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

/** A metric no group has for the baseline and another arm (say, memtier --run-count arms). */
function nothingToCompare(results: pl.DataFrame, metric: string, o: Resolved): Section {
  // e.g. memtier --run-count arms (best / worst / average) beside single runs
  const keys = comparisonKeys(results, o.by).keys.join(", ");
  const name = metricName(metric);
  return {
    lines: [
      `## ${name[0].toUpperCase()}${name.slice(1)}: nothing to compare`,
      "",
      `No group (${keys}) has ${name} for ${md(o.baseline)} and another arm.`,
      "",
    ],
    figures: [],
  };
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
    ...[adviceSummary(c)].flatMap((a) => a ? [a, ""] : []),
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
 * For each candidate arm, the change from the baseline (`delta`), when latencies are known (runs
 * of fixed-rate steps left out: they are compared rate by rate).
 */
export function deltaSections(all: pl.DataFrame, o: Resolved): Section[] {
  const results = splitFixedRate(all).others;
  const latencies = ["avg", "p50", "p95", "p99"].map((p) => `${p}_latency_ms`)
    .filter((c) =>
      results.columns.includes(c) && results.getColumn(c).nullCount() < results.height
    );
  if (latencies.length === 0 || !results.columns.includes(o.by)) return [];
  // arms that ran only fixed-rate steps are compared rate by rate, not here
  const present = new Set(results.getColumn(o.by).cast(pl.Utf8).toArray());
  if (!present.has(o.baseline)) return [];
  return o.arms.filter((a) => a !== o.baseline && present.has(a)).flatMap((arm) => {
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
