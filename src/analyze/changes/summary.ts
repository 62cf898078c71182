/**
 * The "What changed" section of a summary page, for a dataset with a history (a series with
 * many runs, e.g. one per night): the change points of throughput per series (`changes`) and the
 * single-run outliers (`outliers`), in tables and a chart of the series that changed, from one
 * analysis (`changeHistory`). Also the page of a history with no arms to
 * compare (one server, one label: a nightly CI's dataset). Pure: frames in, Markdown and chart
 * specs out.
 *
 * @module
 */

import type pl from "nodejs-polars";
import type { VegaLiteSpec } from "../chart.ts";
import { changeHistory, defaultOrder, hasHistory } from "./changes.ts";
import { changesForPeople, outliersForPeople } from "./people.ts";
import { changesChart, MAX_CHANGE_PANELS } from "../charts/changes.ts";
import { leftOutText, missingOrder } from "./order.ts";
import { finiteRows } from "../summary.ts";
import { formatForPeople } from "../present.ts";
import { markdownText } from "../../text/safe.ts";

/** A section of a summary page: its lines and figures (as `summaryPage` takes them). */
export interface ChangesSection {
  lines: string[];
  figures: { name: string; caption: string; spec: VegaLiteSpec }[];
}

/**
 * The "What changed" section: none when the results hold no history (see `hasHistory`).
 *
 * @param results Results joined with runs (`loadResults`).
 * @returns The section, or null.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { whatChangedSection } from "./summary.ts";
 * import assert from "node:assert/strict";
 * const n = 60;
 * const results = pl.DataFrame({
 *   run_id: Array.from({ length: n }, (_, i) => `r${i}`), test: Array(n).fill("SET"),
 *   source_path: Array.from({ length: n }, (_, i) => `nightly/${1000 + i}/out.csv`),
 *   ops_per_sec: Array.from({ length: n }, (_, i) => (i < 30 ? 100 : 110) + ((i * 7) % 5) - 2),
 * });
 * const s = whatChangedSection(results)!;
 * assert.equal(s.lines[0], "## What changed");
 * assert.ok(s.lines.some((l) => /\\| SET \\| 30 \\| 1029\/out.csv \\| 1030\/out.csv \\|/.test(l)));
 * assert.deepEqual(s.figures.map((f) => f.name), ["changes"]);
 * assert.equal(whatChangedSection(results.head(5)), null);
 * ```
 */
export function whatChangedSection(results: pl.DataFrame): ChangesSection | null {
  if (!hasHistory(results)) return null;
  const orderBy = defaultOrder(results);
  const h = changeHistory(results, { orderBy });
  const c = h.changes;
  const lines = [
    "## What changed",
    "",
    `Change points of throughput in each series (test × the parameters that vary), runs in ` +
    `order of \`${orderBy}\`: E-divisive with a t test, p ≤ 0.001 (as Apache Otava). ` +
    "`index` is the first run after the change; the means are those of the runs between " +
    "neighbouring change points; `also differs` lists what else changed between the runs " +
    "either side (host, versions, tags), so a change of machine is told from one of the " +
    "server. `kvlab changes --data <dir>` prints every column.",
    "",
  ];
  const missing = missingOrder(finiteRows(results, "ops_per_sec"), orderBy);
  if (missing.results > 0) lines.push(`Left out: ${leftOutText(missing, orderBy)}.`, "");
  const odd = outlierLines(h.outliers, h.runsTested);
  if (c.height === 0) {
    lines.push("No change point.", "", ...odd);
    return { lines, figures: [] };
  }
  lines.push(formatForPeople(changesForPeople(c), "md"), "", ...odd);
  const changed = new Set(changeSeriesNames(c)).size;
  if (changed > MAX_CHANGE_PANELS) {
    lines.push(
      `The chart draws the ${MAX_CHANGE_PANELS} of the ${changed} series that changed with the ` +
        "largest changes; the table lists them all.",
      "",
    );
  }
  if (c.getColumn("change_pct").nullCount() > 0) {
    lines.push("An empty change (%) is a change from a mean of 0: no percentage of nothing.", "");
  }
  const spec = changesChart(h.series, { orderBy, changedOnly: true });
  return {
    lines,
    figures: [{
      name: "changes",
      caption: "Each changed series in order, change points in red, single-run outliers in " +
        "orange rings, segment means as lines",
      spec,
    }],
  };
}

/** The outliers' lines: a sentence on what they are and their table; none without one. */
function outlierLines(outliers: pl.DataFrame, tested: number): string[] {
  if (outliers.height === 0) return [];
  return [
    "### Single-run outliers",
    "",
    "One run far from the other runs of its segment (a one-night dip), which is not a change " +
    "point: the level before and after it is the same. Student's t of the run against the other " +
    `runs of its segment; listed when its p times the ${tested.toLocaleString("en")} runs ` +
    "tested is at most 0.001 (Bonferroni).",
    "",
    formatForPeople(outliersForPeople(outliers), "md"),
    "",
  ];
}

/** Each change point's series, as its keys (the columns before `index`) in one string. */
function changeSeriesNames(c: pl.DataFrame): string[] {
  const keys = c.columns.slice(0, c.columns.indexOf("index"));
  return (c.select(...keys).toRecords() as Record<string, unknown>[]).map((r) =>
    JSON.stringify(keys.map((k) => r[k] ?? null))
  );
}

/**
 * The summary page of a history with no arms to compare: title, what the dataset holds and
 * the "What changed" section.
 *
 * @param results Results joined with runs.
 * @param title The page's title.
 * @returns The Markdown (ending with a newline) and its figures, or null without a history.
 */
export function historyPage(
  results: pl.DataFrame,
  title: string,
): { markdown: string; figures: ChangesSection["figures"] } | null {
  const section = whatChangedSection(results);
  if (section === null) return null;
  const runs = new Set(results.getColumn("run_id").toArray()).size;
  const tests = new Set(results.getColumn("test").toArray()).size;
  const lines = [
    `# ${markdownText(title)}`,
    "",
    `${runs} runs of ${tests} tests, one history (no arms to compare).`,
    "",
    ...section.lines,
    ...section.figures.flatMap((f) => [
      `![${f.caption}](figures/${f.name}.png)`,
      "",
      `*${f.caption}* ([SVG](figures/${f.name}.svg))`,
      "",
    ]),
  ];
  return {
    markdown: lines.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n",
    figures: section.figures,
  };
}
