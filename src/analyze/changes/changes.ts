/**
 * Change points over run histories: which night, which version, which commit moved a series.
 * A series is one test × the parameters that identify a cell (the grouping `compare` uses, see
 * `grouping.ts`) × the arm column when there is one; its runs are put in order by a run column
 * (`started_at`, `source_path`, `server_version`, `tag:<key>`, …) and the change points of a
 * metric are found with E-divisive (see `_edivisive.ts`: Matteson & James 2014, with Hunter's /
 * Apache Otava's windowed weak/strong scheme and deterministic t test).
 *
 * Input: a results frame from `loadResults` (results ⋈ runs).
 *
 * @module
 */

import pl from "nodejs-polars";
import { changePoints, type EDivisiveOptions } from "./_edivisive.ts";
import { changePctOf, median } from "../_stats.ts";
import { armValues } from "../arms.ts";
import { comparisonKeys } from "../grouping.ts";
import { finiteRows } from "../summary.ts";
import { metricDirection, resultsFrame } from "../units.ts";
import { compareOrder, defaultOrder, orderText, orderValue, runDifferences } from "./order.ts";

export { compareOrder, defaultOrder };

/** Options of {@link changes} and {@link changeSeries}. */
export interface ChangesOptions extends EDivisiveOptions {
  /**
   * The run column that orders each series: any run column (`started_at`, `source_path`,
   * `server_version`, `label`, …) or `tag:<key>` for a tag. Strings are compared in natural
   * order (digit runs as numbers: `7.2.10` after `7.2.9`, `build-10` after `build-9`), times as
   * times; ties keep the order of `started_at`, then `source_path` and `source_line_start`, then
   * `run_id`.
   * @default {defaultOrder(df): started_at, or source_path when no run has a start time}
   */
  orderBy?: string;
  /**
   * The results metric.
   * @default {"ops_per_sec"}
   */
  metric?: string;
  /** Only this test (`SET`, `GET`, …). */
  test?: string;
  /**
   * The arm column: each of its values is a series of its own. By default `label` when the
   * runs' labels split the data, else none.
   */
  by?: string;
}

/** The columns that say which run a point is and where it came from. */
const RUN_FACTS = ["run_id", "started_at", "source_path", "source_line_start"];

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

type Rec = Record<string, unknown>;

/** One series: its keys and its runs in order. */
interface Series {
  keys: Rec;
  rows: Rec[];
  values: number[];
}

/** The series of a frame, each in order, and the columns that identify them. */
interface Prepared {
  keys: string[];
  series: Series[];
  /** Rows left out because their order value is null. */
  unordered: number;
}

/** The arm column: the one asked for, else `label` when the labels split the data. */
function armColumn(df: pl.DataFrame, by: string | undefined): string | undefined {
  if (by !== undefined) {
    if (!df.columns.includes(by)) throw new TypeError(`invalid column: ${by} (not in the data)`);
    return by;
  }
  return df.columns.includes("label") && df.getColumn("label").nullCount() === 0 &&
      armValues(df, "label").length >= 2
    ? "label"
    : undefined;
}

/** Checks the options, groups the rows into series and puts each in order. */
function prepare(df: pl.DataFrame, options: ChangesOptions): Prepared {
  const metric = options.metric ?? "ops_per_sec";
  const orderBy = options.orderBy ?? defaultOrder(df);
  metricDirection(metric);
  for (const c of ["test", metric]) {
    if (!df.columns.includes(c)) throw new TypeError(`invalid column: ${c} (not in the data)`);
  }
  if (orderBy.startsWith("tag:")) {
    if (orderBy.length === 4) throw new TypeError(`invalid order: ${orderBy} (tag:<key>)`);
    if (!df.columns.includes("tags")) throw new TypeError("invalid order: the data has no tags");
  } else if (!df.columns.includes(orderBy)) {
    throw new TypeError(`invalid order: ${orderBy} (not a column of the runs)`);
  }
  let rows = finiteRows(df, metric);
  if (options.test !== undefined) {
    const test = options.test;
    rows = rows.filter(pl.col("test").eq(pl.lit(test)));
    if (rows.height === 0) {
      throw new TypeError(
        `invalid test: ${test} (tests with ${metric}: ${
          armValues(finiteRows(df, metric), "test").join(", ") || "none"
        })`,
      );
    }
  }
  const by = armColumn(rows, options.by);
  const keys = [...comparisonKeys(rows, by ?? "label").keys, ...(by ? [by] : [])];
  const wanted = new Set([
    ...keys,
    metric,
    ...RUN_FACTS,
    "tags",
    ...(orderBy.startsWith("tag:") ? [] : [orderBy]),
    ...ENVIRONMENT_COLUMNS,
    ...comparisonKeys(rows, by ?? "label").confounded,
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

/**
 * The change points of every series (see the module doc).
 *
 * @param df A results frame (results ⋈ runs).
 * @param options Order, metric, test, arm column and the detector's thresholds.
 * @returns One row per change point, series by series in order: the series keys (`test`, the
 * parameters that vary, the arm column), `index` (0-based position in the ordered series of
 * the first run after the change), `order_by`, `order_before` / `order_after` and `run_before`
 * / `run_after` (the runs just before and after), `n_before` / `n_after` (runs of the segments
 * either side, up to the neighbouring change points), `mean_before_<metric>`,
 * `mean_after_<metric>`, `median_before_<metric>`, `median_after_<metric>`, `change_pct`
 * (of the means; null when the mean before is 0, see `ratioOf`), `verdict` (better / worse by the metric's unit), `p_value`, and
 * `also_differs`: run facts that differ between the runs just before and after (host, tool
 * or server version, confounded parameters, `tag:<key>`), or null.
 * @throws {TypeError} For an unknown column, order, test or metric direction, or when no run
 * has the order value.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { changes } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const n = 60;
 * const df = pl.DataFrame({
 *   run_id: Array.from({ length: n }, (_, i) => `r${i}`),
 *   test: Array(n).fill("SET"),
 *   source_path: Array.from({ length: n }, (_, i) => `nightly/night-${i}/out.csv`),
 *   server_version: Array.from({ length: n }, (_, i) => (i < 40 ? "7.2.4" : "7.2.5")),
 *   ops_per_sec: Array.from({ length: n }, (_, i) => (i < 40 ? 100 : 90) + ((i * 7) % 5) - 2),
 * });
 * const c = changes(df, { orderBy: "source_path" }).toRecords();
 * assert.equal(c.length, 1);
 * assert.equal(c[0].index, 40);
 * assert.equal(c[0].order_after, "nightly/night-40/out.csv");
 * assert.equal(c[0].verdict, "worse");
 * assert.equal(c[0].also_differs, "server_version 7.2.4 vs 7.2.5");
 * ```
 */
export function changes(df: pl.DataFrame, options: ChangesOptions = {}): pl.DataFrame {
  const metric = options.metric ?? "ops_per_sec";
  const orderBy = options.orderBy ?? defaultOrder(df);
  const direction = metricDirection(metric);
  const { keys, series } = prepare(df, options);
  const skip = new Set([...keys, metric, ...RUN_FACTS, orderBy]);

  const out: Rec[] = [];
  for (const s of series) {
    for (const cp of changePoints(s.values, options)) {
      const before = s.rows[cp.index - 1];
      const after = s.rows[cp.index];
      // null from a mean of 0 (no percentage of nothing): the means say what happened
      const change = changePctOf(cp.meanAfter, cp.meanBefore);
      out.push({
        ...s.keys,
        index: cp.index,
        order_by: orderBy,
        order_before: orderText(before.__order),
        order_after: orderText(after.__order),
        run_before: before.run_id,
        run_after: after.run_id,
        n_before: cp.index - cp.start,
        n_after: cp.end - cp.index,
        [`mean_before_${metric}`]: cp.meanBefore,
        [`mean_after_${metric}`]: cp.meanAfter,
        [`median_before_${metric}`]: median(s.values.slice(cp.start, cp.index)),
        [`median_after_${metric}`]: median(s.values.slice(cp.index, cp.end)),
        change_pct: change,
        verdict: (cp.meanAfter > cp.meanBefore) === (direction === "higher") ? "better" : "worse",
        p_value: cp.pValue,
        also_differs: runDifferences(before, after, skip),
      });
    }
  }
  if (out.length === 0) return emptyChanges(keys, metric);
  return resultsFrame(out);
}

/** The frame of no change point, with every column. */
function emptyChanges(keys: string[], metric: string): pl.DataFrame {
  const cols = [
    ...keys,
    "index",
    "order_by",
    "order_before",
    "order_after",
    "run_before",
    "run_after",
    "n_before",
    "n_after",
    `mean_before_${metric}`,
    `mean_after_${metric}`,
    `median_before_${metric}`,
    `median_after_${metric}`,
    "change_pct",
    "verdict",
    "p_value",
    "also_differs",
  ];
  return resultsFrame([Object.fromEntries(cols.map((c) => [c, null]))]).head(0);
}

/**
 * Every run of every series in order, with its segment: what the changes chart draws, grouped
 * as {@link changes} groups.
 *
 * @param df A results frame.
 * @param options As for {@link changes}.
 * @returns One row per run: the series keys, `series` (the keys as one label, e.g.
 * `SET · clients 50`), `position` (0-based place in the ordered series), `order_value` (text),
 * `run_id`, the metric, `segment` (0-based number of the segment between change points),
 * `segment_mean_<metric>`, and `change` (true on the first run after a change point).
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { changeSeries } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const n = 40;
 * const df = pl.DataFrame({
 *   run_id: Array.from({ length: n }, (_, i) => `r${i}`),
 *   test: Array(n).fill("GET"),
 *   source_path: Array.from({ length: n }, (_, i) => `n/${i}.csv`),
 *   ops_per_sec: Array.from({ length: n }, (_, i) => (i < 20 ? 100 : 110) + (i % 3) - 1),
 * });
 * const s = changeSeries(df, { orderBy: "source_path" });
 * assert.equal(s.height, n);
 * assert.deepEqual(s.getColumn("segment").unique().sort().toArray(), [0, 1]);
 * assert.equal(s.filter(pl.col("change")).getColumn("position").get(0), 20);
 * ```
 */
export function changeSeries(df: pl.DataFrame, options: ChangesOptions = {}): pl.DataFrame {
  const metric = options.metric ?? "ops_per_sec";
  const { keys, series } = prepare(df, options);
  const out: Rec[] = [];
  for (const s of series) {
    const cps = changePoints(s.values, options).map((c) => c.index);
    const bounds = [0, ...cps, s.values.length];
    const label = keys.map((k, i) =>
      i === 0 || k === options.by ? String(s.keys[k]) : `${k} ${s.keys[k]}`
    ).join(" · ");
    for (let seg = 0; seg + 1 < bounds.length; seg++) {
      const vals = s.values.slice(bounds[seg], bounds[seg + 1]);
      const mean = vals.reduce((a, b) => a + b, 0) / vals.length;
      for (let i = bounds[seg]; i < bounds[seg + 1]; i++) {
        out.push({
          ...s.keys,
          series: label,
          position: i,
          order_value: orderText(s.rows[i].__order),
          run_id: s.rows[i].run_id,
          [metric]: s.values[i],
          segment: seg,
          [`segment_mean_${metric}`]: mean,
          change: seg > 0 && i === bounds[seg],
        });
      }
    }
  }
  return resultsFrame(out);
}

/**
 * Whether a results frame has a history worth looking for change points in: some series
 * (test × the parameters that vary × the label when labels split the data) with at least
 * `minRuns` runs. A comparison of arms with a few repetitions each has none.
 *
 * @param df A results frame.
 * @param minRuns Fewest runs of one series.
 * @returns Whether it does.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { hasHistory } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: Array(30).fill("SET"), ops_per_sec: Array(30).fill(1) });
 * assert.equal(hasHistory(df), true);
 * assert.equal(hasHistory(df.head(10)), false);
 * ```
 */
export function hasHistory(df: pl.DataFrame, minRuns = 20): boolean {
  if (!df.columns.includes("test") || df.height < minRuns) return false;
  const by = armColumn(df, undefined);
  const keys = [...comparisonKeys(df, by ?? "label").keys, ...(by ? [by] : [])];
  const counts = df.groupBy(keys).len().getColumn("len").toArray() as number[];
  return counts.some((n) => n >= minRuns);
}

/**
 * The columns of a {@link changes} frame people read: without the medians, run ids, the order
 * column's name and an all-empty `also_differs`; order values without the folder they all
 * share; `p_value` as text with two significant digits (`3.4e-21`).
 *
 * @param c A frame from {@link changes}.
 * @returns The narrower frame.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { changesForPeople } from "./changes.ts";
 * import assert from "node:assert/strict";
 * const c = pl.DataFrame({
 *   test: ["SET"], index: [40], order_by: ["source_path"],
 *   order_before: ["ci/nightly/2026-02-09/a.csv"], order_after: ["ci/nightly/2026-02-10/a.csv"],
 *   run_before: ["r1"], p_value: [3.4567e-21], also_differs: [null],
 * });
 * const p = changesForPeople(c).toRecords()[0];
 * assert.deepEqual(p, {
 *   test: "SET", index: 40, order_before: "2026-02-09/a.csv", order_after: "2026-02-10/a.csv",
 *   p_value: "3.5e-21",
 * });
 * ```
 */
export function changesForPeople(c: pl.DataFrame): pl.DataFrame {
  const keep = c.columns.filter((col) =>
    col !== "order_by" && !/^median_|^run_/.test(col) &&
    !(col === "also_differs" && c.getColumn(col).nullCount() === c.height)
  );
  const shared = c.height === 0 ? "" : sharedFolder([
    ...c.getColumn("order_before").toArray(),
    ...c.getColumn("order_after").toArray(),
  ].map(String));
  const out = c.select(...keep);
  const strip = (col: string) =>
    pl.col(col).str.slice(shared.length, Number.MAX_SAFE_INTEGER).alias(col);
  const p = out.getColumn("p_value").toArray() as (number | null)[];
  return (shared === "" ? out : out.withColumns(strip("order_before"), strip("order_after")))
    .withColumns(pl.Series("p_value", p.map((v) => v === null ? null : v.toPrecision(2)), pl.Utf8));
}

/** The folder (ending in `/`) every value starts with, or "". */
function sharedFolder(values: string[]): string {
  if (values.length === 0) return "";
  let p = values[0].slice(0, values[0].lastIndexOf("/") + 1);
  for (const v of values) {
    while (p !== "" && !v.startsWith(p)) p = p.slice(0, p.slice(0, -1).lastIndexOf("/") + 1);
  }
  return p;
}
