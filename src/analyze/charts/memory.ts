/**
 * Memory against key count, one panel per memory view.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { base, type Rec } from "./_common.ts";
import { colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

const VIEW_TITLES: Record<string, string> = {
  container_memory_bytes: "container (docker stats)",
  used_memory_bytes: "malloc (INFO used_memory)",
  used_memory_rss_bytes: "RSS (INFO used_memory_rss)",
  process_rss_bytes: "process RSS (/proc)",
};

/**
 * Memory against key count (from the `memory` table): one panel per memory view, one line per
 * arm, log axes so 100k and 100M keys share a figure.
 */
export function memoryChart(
  memory: pl.DataFrame,
  options: ChartOptions & { by?: string } = {},
): VegaLiteSpec {
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
  const arms = values.map((v) => String(v[by]));
  return {
    ...base(
      options.title ?? "memory against keys",
      options.subtitle ?? "log–log; each point one measurement",
    ),
    data: { values },
    facet: { field: "view", type: "nominal", title: null, sort: views },
    columns: Math.min(3, views.length),
    spec: {
      width: views.length > 1 ? 200 : WIDTH,
      height: 220,
      mark: { type: "line", point: true },
      encoding: {
        x: {
          field: "keys",
          type: "quantitative",
          title: "keys (DBSIZE)",
          scale: { type: "log" },
          axis: { format: "~s" },
        },
        y: { field: "mib", type: "quantitative", title: "memory (MiB)", scale: { type: "log" } },
        color: colorEncoding(by, arms),
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
