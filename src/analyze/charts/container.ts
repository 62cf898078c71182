/**
 * A server's container over a run: its memory and CPU (`container_stats`, one `docker stats`
 * sample a second) beside the run's throughput per second (`time_series`), on one time axis.
 *
 * @module
 */

import pl from "nodejs-polars";
import { base, type Rec } from "./_common.ts";
import { colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

/** Options of {@link containerChart}. */
export interface ContainerChartOptions extends ChartOptions {
  /**
   * The runs' throughput per second: `time_series` rows with `second` and `ops_per_sec` (or
   * `count`, requests in that second) and the `by` column, one row per series and second (pick
   * one test: memtier's `TOTALS`). Without it, no throughput panel.
   */
  throughput?: pl.DataFrame;
  /** The column that names a series (a run's label, its server). @default {"container_name"} */
  by?: string;
  /** A memory limit to draw as a rule, bytes (`runs.container_memory_limit_bytes`). */
  memoryLimitBytes?: number | null;
}

const MiB = 1024 * 1024;

/** What one panel draws: a field, its axis title, the series' colours, layers drawn over it. */
interface Panel {
  field: string;
  title: string;
  color: VegaLiteSpec;
  extra?: VegaLiteSpec[];
}

/** One panel of the figure: a line per series against seconds, sharing the x axis. */
function panel(values: Rec[], { field, title, color, extra = [] }: Panel): VegaLiteSpec {
  const line = {
    mark: { type: "line", point: { size: 16 } },
    encoding: {
      x: { field: "t", type: "quantitative", title: "seconds since the run started" },
      y: { field, type: "quantitative", title, scale: { zero: true } },
      color,
      tooltip: [
        { field: color.field as string },
        { field: "t", title: "s", format: ".1f" },
        { field, title, format: ",.2f" },
      ],
    },
  };
  return { width: WIDTH, height: 150, data: { values }, layer: [line, ...extra] };
}

/**
 * Memory (MiB) and CPU (% of one CPU) of a server's container over a run, one point a second,
 * under the run's throughput per second when it is given; the three panels share the time
 * axis (seconds since the run started: the container's samples from the watch's start, the
 * throughput from its test's first second, which starts a moment later). A memory limit, when
 * given, is named in the subtitle and drawn as a dashed rule when the memory used comes within
 * a quarter of it.
 *
 * @param stats Rows of `container_stats` (`elapsed_s`, `memory_bytes`, `cpu_pct`) with the
 * `by` column.
 * @param options The throughput, the series column, the limit, the title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { containerChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const stats = pl.DataFrame({ container_name: ["c", "c"], elapsed_s: [0.6, 1.6],
 *   memory_bytes: [3 * 2 ** 20, 5 * 2 ** 20], cpu_pct: [0, 87.5] });
 * const throughput = pl.DataFrame({ container_name: ["c", "c"], second: [0, 1], count: [41000, 90] });
 * const spec = containerChart(stats, { throughput, memoryLimitBytes: 16 * 2 ** 20 });
 * const panels = spec.vconcat as { data: { values: Record<string, number>[] } }[];
 * assert.equal(panels.length, 3);
 * // the last, partial second is left out
 * assert.deepEqual(panels[0].data.values, [{ container_name: "c", t: 0.5, ops_per_sec: 41000 }]);
 * assert.equal(panels[1].data.values[1].memory_mib, 5);
 * assert.equal(panels[2].data.values[1].cpu_pct, 87.5);
 * ```
 */
export function containerChart(
  stats: pl.DataFrame,
  options: ContainerChartOptions = {},
): VegaLiteSpec {
  const by = options.by ?? "container_name";
  const samples = stats.sort("elapsed_s").select(
    pl.col(by),
    pl.col("elapsed_s").alias("t"),
    pl.col("memory_bytes").div(MiB).alias("memory_mib"),
    pl.col("cpu_pct"),
  );
  const recs = samples.toRecords() as Rec[];
  const tp = options.throughput ? throughputPerSecond(options.throughput, by) : [];
  const color = colorEncoding(by, [...recs, ...tp].map((r) => r[by]));
  const limit = options.memoryLimitBytes;
  const most = Math.max(0, ...recs.map((r) => Number(r.memory_mib ?? 0)));
  // a limit far above what was used would flatten the line: then the subtitle alone names it
  const drawn = typeof limit === "number" && limit > 0 && most >= 0.25 * (limit / MiB);
  const rule = drawn
    ? [{
      data: { values: [{ limit_mib: limit / MiB }] },
      mark: { type: "rule", strokeDash: [6, 3], color: "#777" },
      encoding: { y: { field: "limit_mib", type: "quantitative" } },
    }]
    : [];
  const panels = [
    ...(tp.length ? [panel(tp, { field: "ops_per_sec", title: "throughput (ops/s)", color })] : []),
    panel(recs.filter((r) => r.memory_mib !== null), {
      field: "memory_mib",
      title: "memory (MiB)",
      color,
      extra: rule,
    }),
    panel(recs.filter((r) => r.cpu_pct !== null), {
      field: "cpu_pct",
      title: "CPU (% of one CPU)",
      color,
    }),
  ];
  return {
    ...base(
      options.title ?? "the server's container over the run",
      options.subtitle ??
        `docker stats once a second${tp.length ? ", beside the throughput of each second" : ""}` +
          (typeof limit === "number" && limit > 0
            ? `; memory limit ${Number((limit / MiB).toFixed(1))} MiB${drawn ? " (dashed)" : ""}`
            : ""),
    ),
    vconcat: panels,
    resolve: { scale: { x: "shared", color: "shared" } },
  };
}

/**
 * Requests per second from `time_series` rows, each at the middle of its second; a series' last
 * second is left out (it is usually partial: memtier's last holds the few requests after its
 * last full second).
 */
function throughputPerSecond(series: pl.DataFrame, by: string): Rec[] {
  const cols = ["ops_per_sec", "count"].filter((c) => series.columns.includes(c));
  if (cols.length === 0) return [];
  const rate = cols.length === 2 ? pl.col(cols[0]).fillNull(pl.col(cols[1])) : pl.col(cols[0]);
  return series.filter(pl.col("second").lt(pl.col("second").max().over(by))).sort("second")
    .select(
      pl.col(by),
      pl.col("second").add(0.5).alias("t"),
      rate.cast(pl.Float64).alias("ops_per_sec"),
    ).filter(pl.col("ops_per_sec").isNotNull()).toRecords() as Rec[];
}
