/**
 * The opening of the summary page, what stands before any verdict: the title and one paragraph
 * (what the dataset holds, how the arms are named, runs that are byte-for-byte copies), the
 * environment per arm with the config that differs, and the runs per cell with the plain warning
 * when there are few. Private to `summary_page/`.
 *
 * @module
 */

import pl from "nodejs-polars";
import { cellCounts, type EnvironmentSummary, fewRunsWarning } from "../environment.ts";
import { duplicateRuns } from "../memory.ts";
import { formatForPeople } from "../present.ts";
import { md, type Resolved } from "./_section.ts";

/** The title and one paragraph: what the dataset holds and how the arms are named. */
export function intro(runs: pl.DataFrame | undefined, o: Resolved): string[] {
  const arms = o.arms.map((a) => a === o.baseline ? `${md(a)} (baseline)` : md(a)).join(", ");
  const lines = [`# ${md(o.title)}`, ""];
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
export function environmentLines(env: EnvironmentSummary, arms: readonly string[]): string[] {
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
export function countLines(results: pl.DataFrame, o: Resolved): string[] {
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
