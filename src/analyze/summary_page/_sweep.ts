/**
 * The summary page's section of fixed-rate steps, for a dataset that holds them beside other
 * runs (a throughput plan and a fixed-rate plan): `kvlab sweep`'s tables and the sweep figure,
 * both from `sweepTable` (the throughput sections draw the other runs only). Private to
 * `summary_page/`.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { PLOTS } from "../plots.ts";
import { SWEEP_LEGEND, sweepMatrices, sweepTable } from "../sweep/sweep.ts";
import { formatTable } from "../format.ts";
import { md, type Resolved, type Section } from "./_section.ts";

/**
 * The steps' section: per workload and connection count the table `kvlab sweep` prints (rows =
 * requested rate, a column per arm), then the sweep figure; nothing without steps.
 *
 * @param results The page's results, steps among them.
 * @param hdr The dataset's `hdr_histograms` (repetitions merged as `kvlab sweep` merges them).
 * @param o The page's options.
 * @returns The section.
 */
export function sweepSection(
  results: pl.DataFrame,
  hdr: pl.DataFrame | undefined,
  o: Resolved,
): Section {
  const table = sweepTable({ results, hdr }, { by: o.by });
  if (table.height === 0) return { lines: [], figures: [] };
  return {
    lines: [
      "## Fixed-rate steps",
      "",
      "The dataset's fixed-rate steps (a requested rate, the rate achieved and the latency at " +
      "it), as `kvlab sweep` prints them; the sections above compare the other runs.",
      "",
      ...sweepMatrices(table, { by: o.by }).flatMap((m) => [
        `**${md(m.title)}**`,
        "",
        formatTable(m.frame, "md"),
      ]),
      SWEEP_LEGEND,
      "",
    ],
    figures: [{
      name: "sweep",
      caption: "Latency against offered load (fixed-rate steps, p50 and p99)",
      spec: PLOTS.sweep.build(table, { by: o.by }),
    }],
  };
}
