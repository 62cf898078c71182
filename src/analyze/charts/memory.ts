/**
 * Memory against key count, one panel per memory view, and the difference between two arms.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { memoryDifference, memoryTable } from "../memory.ts";
import {
  base,
  changeDomain,
  logScale,
  pctLabel,
  type Rec,
  referenceRule,
  valueLabels,
} from "./_common.ts";
import { colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

const VIEW_TITLES: Record<string, string> = {
  container_memory_bytes: "container (docker stats)",
  used_memory_bytes: "malloc (INFO used_memory)",
  used_memory_rss_bytes: "RSS (INFO used_memory_rss)",
  process_rss_bytes: "process RSS (/proc)",
};

/** The views of {@link memoryDifference}, named as the panels above are. */
const DIFFERENCE_VIEWS: Record<string, string> = {
  container_difference_pct: "container",
  malloc_difference_pct: "malloc",
  rss_difference_pct: "RSS",
};

/** Options of {@link memoryChart}. */
export interface MemoryChartOptions extends ChartOptions {
  /** The column whose values are the arms. @default {"server"} */
  by?: string;
  /** The arm the difference is taken from. @default {the first of two arms in the data} */
  baseline?: string;
  /** The arm compared with it. @default {the other of two arms} */
  candidate?: string;
}

/**
 * Memory against key count (from the `memory` table): one panel per memory view, one line per
 * arm on log axes (so 100k and 100M keys share a figure); below them, for two arms, the
 * candidate's difference from the baseline in % per size and view (from `memoryDifference`),
 * labelled, where a 15–25 % difference is plain to see.
 *
 * @param memory Rows of the `memory` table with the `by` column.
 * @param options Arms, title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { memoryChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const m = pl.DataFrame({ server: ["redis", "dragonfly"], keys: [1e6, 1e6], used_memory_bytes: [100e6, 80e6] });
 * const spec = memoryChart(m, { baseline: "redis", candidate: "dragonfly" });
 * const diff = (spec.vconcat as { data?: { values: { difference_pct: number }[] } }[])[1];
 * assert.equal(diff.data!.values[0].difference_pct, -20);
 * ```
 */
export function memoryChart(memory: pl.DataFrame, options: MemoryChartOptions = {}): VegaLiteSpec {
  const by = options.by ?? "server";
  const recs = memory.toRecords() as Rec[];
  const values: Rec[] = [];
  for (const r of recs) {
    for (const view of Object.keys(VIEW_TITLES)) {
      const v = r[view];
      if (typeof v === "number" && typeof r.keys === "number") {
        values.push({ [by]: r[by], keys: r.keys, view: VIEW_TITLES[view], mib: v / 1024 / 1024 });
      }
    }
  }
  const views = Object.values(VIEW_TITLES).filter((t) => values.some((v) => v.view === t));
  const arms = [...new Set(values.map((v) => String(v[by])))];
  // a stable order whatever order the runs were read in
  values.sort((a, b) =>
    String(a[by]).localeCompare(String(b[by])) || String(a.view).localeCompare(String(b.view)) ||
    (a.keys as number) - (b.keys as number) || (a.mib as number) - (b.mib as number)
  );
  const absolute = absolutePanels(values, views, by);
  const baseline = options.baseline ?? (arms.length === 2 ? arms[0] : undefined);
  const candidate = options.candidate ?? arms.find((a) => a !== baseline);
  const head = base(
    options.title ?? "memory against keys",
    options.subtitle ??
      (baseline && candidate
        ? `top: log–log, each point one measurement; bottom: ${candidate}'s difference from ${baseline} in %`
        : "log–log; each point one measurement"),
  );
  if (!baseline || !candidate) return { ...head, ...absolute };
  const diff = differencePanel(memory, { by, baseline, candidate });
  if (!diff) return { ...head, ...absolute };
  return { ...head, vconcat: [absolute, diff], resolve: { scale: { color: "independent" } } };
}

/** One log–log panel per view, one line per arm. */
function absolutePanels(values: Rec[], views: string[], by: string): VegaLiteSpec {
  const cols = Math.min(3, views.length);
  return {
    data: { values },
    facet: { field: "view", type: "nominal", title: null, sort: views },
    columns: cols,
    spec: {
      // the row of panels about as wide as the difference panel below (no half-empty canvas)
      width: Math.floor((WIDTH - 20 * (cols - 1)) / cols),
      height: 200,
      mark: { type: "line", point: true },
      encoding: {
        x: decadeAxis(values.map((v) => v.keys), "keys", {
          title: "keys (DBSIZE, log scale)",
          format: "~s",
        }),
        y: decadeAxis(values.map((v) => v.mib), "mib", {
          title: "memory (MiB, log scale)",
          format: ",",
        }),
        color: colorEncoding(by, values.map((v) => v[by])),
        order: { field: "keys", type: "quantitative" },
        tooltip: [{ field: by }, { field: "view" }, { field: "keys", format: "," }, {
          field: "mib",
          format: ",.2f",
          title: "MiB",
        }],
      },
    },
  };
}

/** Bars of the candidate's difference from the baseline in % per size and view; null if none. */
function differencePanel(
  memory: pl.DataFrame,
  { by, baseline, candidate }: { by: string; baseline: string; candidate: string },
): VegaLiteSpec | null {
  const diff = memoryDifference(memoryTable(memory, { by }), baseline, candidate);
  const values: Rec[] = [];
  for (const r of diff.toRecords() as Rec[]) {
    for (const [col, view] of Object.entries(DIFFERENCE_VIEWS)) {
      const v = r[col];
      if (typeof v !== "number" || !Number.isFinite(v)) continue;
      values.push({
        size: r.size,
        size_label: sizeLabel(r.size as number),
        view,
        difference_pct: v,
        value_label: pctLabel(v),
        value_label_at: v,
      });
    }
  }
  if (values.length === 0) return null;
  const views = Object.values(DIFFERENCE_VIEWS).filter((t) => values.some((v) => v.view === t));
  const sizes = [...new Set(values.map((v) => v.size as number))].sort((a, b) => a - b);
  const x = {
    field: "size_label",
    type: "ordinal",
    title: "keys (size of the dataset)",
    sort: sizes.map(sizeLabel),
    axis: { labelAngle: 0 },
  };
  const xOffset = { field: "view", sort: views };
  return {
    // one plot width whatever the number of sizes; the labels turn upright to fit the bars
    width: WIDTH,
    height: 220,
    data: { values },
    layer: [
      {
        mark: { type: "bar" },
        encoding: {
          x,
          xOffset,
          y: {
            field: "difference_pct",
            type: "quantitative",
            title: `${candidate} vs ${baseline} (% memory)`,
            scale: { domain: changeDomain(values.map((v) => v.difference_pct)) },
          },
          color: {
            field: "view",
            type: "nominal",
            title: "memory view",
            sort: views,
            scale: { range: ["#9ecae1", "#4292c6", "#08519c"] },
          },
          tooltip: [{ field: "size", format: "," }, { field: "view" }, {
            field: "difference_pct",
            format: ".2f",
          }],
        },
      },
      referenceRule(0),
      ...valueLabels("difference_pct", {
        reference: 0,
        encoding: { x, xOffset },
        fontSize: 10,
        upright: sizes.length * views.length > 12,
      }),
    ],
  };
}

/**
 * A log axis a little wider than the data (a sixth of a decade each side), ticks at the decades
 * inside it only: the 2, 3, 5 steps between them crowd a 200 px panel, and a decade at the
 * very edge is pushed into its neighbour (`10M100M`); labels kept 4 px apart, the rest dropped.
 */
function decadeAxis(
  xs: unknown[],
  field: string,
  { title, format }: { title: string; format: string },
): VegaLiteSpec {
  const pos = xs.filter((x): x is number => typeof x === "number" && x > 0);
  if (pos.length === 0) return logScale(field, title);
  const lo = Math.log10(Math.min(...pos)) - 1 / 6;
  const hi = Math.log10(Math.max(...pos)) + 1 / 6;
  const decades: number[] = [];
  for (let d = Math.ceil(lo); d <= Math.floor(hi); d++) decades.push(10 ** d);
  return {
    ...logScale(field, title),
    scale: { type: "log", domain: [10 ** lo, 10 ** hi], nice: false },
    axis: {
      format,
      values: decades,
      labelFlush: false,
      labelOverlap: "greedy",
      labelSeparation: 4,
    },
  };
}

/** A key count as posts write it: 100k, 1M, 100M. */
function sizeLabel(n: number): string {
  for (const [d, s] of [[1e9, "G"], [1e6, "M"], [1e3, "k"]] as const) {
    if (n >= d) return `${+(n / d).toPrecision(3)}${s}`;
  }
  return String(n);
}
