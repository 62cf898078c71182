/**
 * The series of a history: a results frame checked, grouped into series (a test × the parameters
 * that identify a cell × the arm column) and each put in order. What `changes.ts` looks for
 * change points and outliers in. Private to `changes/`.
 *
 * @module
 */

import pl from "nodejs-polars";
import { armValues } from "../arms.ts";
import { comparisonKeys } from "../grouping.ts";
import { finiteRows } from "../summary.ts";
import { metricDirection } from "../units.ts";
import { compareOrder, orderText, orderValue, sharedFolder } from "./order.ts";

/** A plain record (a row). */
export type Rec = Record<string, unknown>;

/** The columns that say which run a point is and where it came from. */
export const RUN_FACTS = ["run_id", "started_at", "source_path", "source_line_start"];

/** Run columns whose difference between the runs either side of a change is reported. */
export const ENVIRONMENT_COLUMNS = [
  "host",
  "host_cpu_model",
  "host_cpu_count",
  "host_memory_bytes",
  "host_kernel",
  "host_os",
  "tool",
  "tool_version",
  "server",
  "server_version",
  "target",
  "transport",
  "server_io_threads",
  "server_maxmemory_bytes",
] as const;

/** One series: its keys and its runs in order (each row's order value under `__order`). */
export interface Series {
  keys: Rec;
  rows: Rec[];
  values: number[];
}

/** The series of a frame, each in order, and the columns that identify them. */
export interface Prepared {
  keys: string[];
  series: Series[];
  /** Rows left out because their order value is null. */
  unordered: number;
}

/** What {@link prepare} reads of the options. */
export interface SeriesOptions {
  orderBy: string;
  metric: string;
  test?: string;
  by?: string;
}

/** The arm column: the one asked for, else `label` when the labels split the data. */
export function armColumn(df: pl.DataFrame, by: string | undefined): string | undefined {
  if (by !== undefined) {
    if (!df.columns.includes(by)) throw new TypeError(`invalid column: ${by} (not in the data)`);
    return by;
  }
  return df.columns.includes("label") && df.getColumn("label").nullCount() === 0 &&
      armValues(df, "label").length >= 2
    ? "label"
    : undefined;
}

/** Checks the order column (a run column or `tag:<key>`). */
function checkOrder(df: pl.DataFrame, orderBy: string): void {
  if (orderBy.startsWith("tag:")) {
    if (orderBy.length === 4) throw new TypeError(`invalid order: ${orderBy} (tag:<key>)`);
    if (!df.columns.includes("tags")) throw new TypeError("invalid order: the data has no tags");
  } else if (!df.columns.includes(orderBy)) {
    throw new TypeError(`invalid order: ${orderBy} (not a column of the runs)`);
  }
}

/** The finite rows of the metric, of the test asked for (an unknown test is an error). */
function selectedRows(df: pl.DataFrame, metric: string, test: string | undefined): pl.DataFrame {
  const rows = finiteRows(df, metric);
  if (test === undefined) return rows;
  const mine = rows.filter(pl.col("test").eq(pl.lit(test)));
  if (mine.height === 0) {
    throw new TypeError(
      `invalid test: ${test} (tests with ${metric}: ${
        armValues(rows, "test").join(", ") || "none"
      })`,
    );
  }
  return mine;
}

/** Checks the options, groups the rows into series and puts each in order. */
export function prepare(df: pl.DataFrame, options: SeriesOptions): Prepared {
  const { metric, orderBy } = options;
  metricDirection(metric);
  for (const c of ["test", metric]) {
    if (!df.columns.includes(c)) throw new TypeError(`invalid column: ${c} (not in the data)`);
  }
  checkOrder(df, orderBy);
  const rows = selectedRows(df, metric, options.test);
  const by = armColumn(rows, options.by);
  const grouping = comparisonKeys(rows, by ?? "label");
  const keys = [...grouping.keys, ...(by ? [by] : [])];
  const wanted = new Set([
    ...keys,
    metric,
    ...RUN_FACTS,
    "tags",
    ...(orderBy.startsWith("tag:") ? [] : [orderBy]),
    ...ENVIRONMENT_COLUMNS,
    ...grouping.confounded,
  ]);
  const records = rows.select(...[...wanted].filter((c) => rows.columns.includes(c)))
    .toRecords() as Rec[];
  const groups = new Map<string, Series>();
  let unordered = 0;
  for (const r of records) {
    const o = orderValue(r, orderBy);
    if (o === null || o === undefined) {
      unordered++;
      continue;
    }
    const k = JSON.stringify(keys.map((c) => r[c] ?? null));
    let g = groups.get(k);
    if (!g) {
      g = { keys: Object.fromEntries(keys.map((c) => [c, r[c] ?? null])), rows: [], values: [] };
      groups.set(k, g);
    }
    g.rows.push({ ...r, __order: o });
  }
  if (records.length > 0 && unordered === records.length) {
    throw new TypeError(
      `invalid order: no run has ${orderBy}` +
        (orderBy === "started_at"
          ? " (outputs ingested from files have no start time: order by source_path)"
          : ""),
    );
  }
  const series = [...groups.values()];
  for (const s of series) {
    s.rows.sort((a, b) =>
      compareOrder(a.__order, b.__order) ||
      compareOrder(a.started_at ?? "", b.started_at ?? "") ||
      compareOrder(a.source_path ?? "", b.source_path ?? "") ||
      compareOrder(a.source_line_start ?? 0, b.source_line_start ?? 0) ||
      compareOrder(a.run_id, b.run_id)
    );
    s.values = s.rows.map((r) => Number(r[metric]));
  }
  series.sort((a, b) => {
    for (const c of keys) {
      const d = compareOrder(a.keys[c] ?? "", b.keys[c] ?? "");
      if (d) return d;
    }
    return 0;
  });
  return { keys, series, unordered };
}

/** The order values of every series, each once, in order, with the labels a chart shows. */
export interface OrderAxis {
  /** The rank of an order value's text among all of them (0 first). */
  rank: Map<string, number>;
  /** The label of an order value's text: without the folder and file name all paths share. */
  label: Map<string, string>;
}

/**
 * The order values of the series in one order across series, and their labels: a folder every
 * value shares (`ci/nightly/`) and a file name every value ends with (`/redis-benchmark.csv`)
 * left out, so nightly folders read as their dates.
 */
export function orderAxis(series: readonly Series[]): OrderAxis {
  const values = new Map<string, unknown>();
  for (const s of series) for (const r of s.rows) values.set(orderText(r.__order), r.__order);
  const sorted = [...values].sort((a, b) => compareOrder(a[1], b[1])).map(([t]) => t);
  const folder = sharedFolder(sorted);
  const rest = sorted.map((t) => t.slice(folder.length));
  const file = sharedFile(rest);
  const labels = rest.map((t) => t.slice(0, t.length - file.length));
  // the labels must still tell the values apart
  const distinct = new Set(labels).size === labels.length;
  return {
    rank: new Map(sorted.map((t, i) => [t, i])),
    label: new Map(sorted.map((t, i) => [t, distinct ? labels[i] : t])),
  };
}

/** The `/file` every value ends with (after a folder of its own), or "". */
function sharedFile(values: string[]): string {
  if (values.length === 0) return "";
  const first = values[0];
  const slash = first.lastIndexOf("/");
  if (slash <= 0) return "";
  const tail = first.slice(slash);
  return values.every((v) => v.endsWith(tail) && v.length > tail.length) ? tail : "";
}
