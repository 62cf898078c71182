/**
 * Comparisons with the uncertainty that repetitions give: one arm against a baseline
 * ({@link compare}) and a change along one dimension such as transport or io-threads
 * ({@link delta}). Input: a results frame from `loadResults` (results ⋈ runs).
 *
 * **Confidence interval.** The ratio is `median(candidate) / median(baseline)` over the
 * repetitions; its 95 % interval is a percentile bootstrap (4,000 resamples of each side,
 * independently, seeded, so the same data gives the same interval). With fewer than 2
 * repetitions on a side there is no interval and the verdict is "no difference": a single run
 * cannot tell a few percent apart.
 *
 * @module
 */

import pl from "nodejs-polars";
import { bootstrapRatioCi, median } from "./_stats.ts";

/** Whether a larger value of a metric is better. */
export type Direction = "higher" | "lower";

/**
 * The direction of a metric from its unit: per-second rates are better higher, latencies and
 * durations lower.
 *
 * @throws {TypeError} For a metric whose direction its name does not tell.
 *
 * @example
 * ```ts
 * import { metricDirection } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(metricDirection("ops_per_sec"), "higher");
 * assert.equal(metricDirection("p99_latency_ms"), "lower");
 * assert.throws(() => metricDirection("clients"), /invalid metric/);
 * ```
 */
export function metricDirection(metric: string): Direction {
  if (/_per_sec$/.test(metric)) return "higher";
  if (/latency|_ms$|_s$|_bytes$/.test(metric)) return "lower";
  throw new TypeError(`invalid metric: ${metric} (cannot tell whether higher or lower is better)`);
}

/** Run parameters that split comparisons when they vary in the data. */
export const PARAMETER_COLUMNS = [
  "clients",
  "threads",
  "pipeline",
  "data_size_bytes",
  "keyspace",
  "transport",
] as const;

/** Options of {@link compare}. */
export interface CompareOptions {
  /** Column whose values are the arms (`server`, `label`, `server_version`, `transport`, …). */
  by: string;
  /** The baseline arm. */
  baseline: string;
  /**
   * Metric column.
   * @default {"ops_per_sec"}
   */
  metric?: string;
  /** Grouping columns; by default `test` plus the {@link PARAMETER_COLUMNS} that vary. */
  keys?: string[];
  /** @default {0.95} */
  confidence?: number;
  /** @default {4000} */
  resamples?: number;
  /** @default {1} */
  seed?: number;
}

type Rec = Record<string, unknown>;

/**
 * Grouping keys: `test` plus each parameter that varies *within* an arm (so like is compared
 * with like). A parameter that differs only *between* arms is confounded with them: it cannot
 * split groups, and is reported in the `also_differs` column instead.
 */
function groupKeys(
  df: pl.DataFrame,
  by: string,
  keys: string[] | undefined,
): { keys: string[]; confounded: string[] } {
  if (keys) return { keys, confounded: [] };
  const out = ["test"];
  const confounded: string[] = [];
  const recs = df.toRecords() as Rec[];
  for (const c of PARAMETER_COLUMNS) {
    if (c === by || !df.columns.includes(c)) continue;
    if (df.getColumn(c).nUnique() <= 1) continue;
    const perArm = new Map<string, Set<string>>();
    for (const r of recs) {
      const arm = String(r[by]);
      const set = perArm.get(arm) ?? new Set<string>();
      set.add(String(r[c]));
      perArm.set(arm, set);
    }
    if ([...perArm.values()].some((v) => v.size > 1)) out.push(c);
    else confounded.push(c);
  }
  return { keys: out, confounded };
}

function differs(group: Rec[], by: string, a: string, b: string, cols: string[]): string | null {
  const out: string[] = [];
  for (const c of cols) {
    const va = new Set(group.filter((r) => String(r[by]) === a).map((r) => String(r[c])));
    const vb = new Set(group.filter((r) => String(r[by]) === b).map((r) => String(r[c])));
    if ([...va].join() !== [...vb].join()) {
      out.push(`${c} ${[...va].join("/")} vs ${[...vb].join("/")}`);
    }
  }
  return out.length ? out.join("; ") : null;
}

function need(df: pl.DataFrame, cols: string[]): void {
  for (const c of cols) {
    if (!df.columns.includes(c)) throw new TypeError(`invalid column: ${c} (not in the frame)`);
  }
}

/** Groups records by key columns, keeping first-appearance order (test order as printed). */
function groupBy(records: Rec[], keys: string[]): Map<string, Rec[]> {
  const groups = new Map<string, Rec[]>();
  for (const r of records) {
    const k = JSON.stringify(keys.map((c) => r[c] ?? null));
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }
  return groups;
}

/**
 * Compares every arm of `by` with the baseline, per test (and per parameter that varies).
 *
 * @returns One row per group and candidate arm: the group keys, `<by>` (the candidate),
 * `baseline_n`, `candidate_n`, `baseline_median_<metric>`, `candidate_median_<metric>`,
 * `baseline_min_…`, `baseline_max_…`, `candidate_min_…`, `candidate_max_…`, `ratio`,
 * `ratio_ci_low`, `ratio_ci_high`, `verdict` (better / worse / no difference), `direction`,
 * and `also_differs`: run parameters that differ between the two arms besides `by` (they are
 * confounded with it; e.g. `keyspace 1000000 vs 1000000000`), or null.
 * @throws {TypeError} For a missing column, an unknown metric direction, or a baseline that is
 * not in the data.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { compare } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   test: ["SET", "SET", "SET", "SET"],
 *   server: ["redis", "redis", "valkey", "valkey"],
 *   ops_per_sec: [100, 102, 120, 121],
 * });
 * const c = compare(df, { by: "server", baseline: "redis" });
 * assert.equal(c.getColumn("ratio").get(0), 120.5 / 101);
 * assert.equal(c.getColumn("verdict").get(0), "better");
 * ```
 */
export function compare(df: pl.DataFrame, options: CompareOptions): pl.DataFrame {
  const metric = options.metric ?? "ops_per_sec";
  const direction = metricDirection(metric);
  need(df, [options.by, metric, "test"]);
  const { keys, confounded } = groupKeys(df, options.by, options.keys);
  need(df, keys);
  const records =
    (df.select(...new Set([...keys, ...confounded, options.by, metric])).toRecords() as Rec[])
      .filter((r) => typeof r[metric] === "number" && Number.isFinite(r[metric]));
  const arms = [...new Set(records.map((r) => String(r[options.by])))];
  if (!arms.includes(options.baseline)) {
    throw new TypeError(
      `invalid baseline: ${options.baseline} (values of ${options.by}: ${
        arms.join(", ") || "none"
      })`,
    );
  }
  const rows: Rec[] = [];
  for (const group of groupBy(records, keys).values()) {
    const base = group.filter((r) => String(r[options.by]) === options.baseline).map((r) =>
      r[metric] as number
    );
    if (base.length === 0) continue;
    for (const arm of arms) {
      if (arm === options.baseline) continue;
      const cand = group.filter((r) => String(r[options.by]) === arm).map((r) =>
        r[metric] as number
      );
      if (cand.length === 0) continue;
      const ratio = median(cand) / median(base);
      const ci = bootstrapRatioCi(
        base,
        cand,
        options.confidence ?? 0.95,
        options.resamples ?? 4000,
        options.seed ?? 1,
      );
      const excludesOne = ci !== null && (ci[0] > 1 || ci[1] < 1);
      const up = ratio > 1;
      const verdict = !excludesOne
        ? "no difference"
        : (up === (direction === "higher"))
        ? "better"
        : "worse";
      const row: Rec = {};
      for (const k of keys) row[k] = group[0][k];
      Object.assign(row, {
        [options.by]: arm,
        baseline: options.baseline,
        baseline_n: base.length,
        candidate_n: cand.length,
        [`baseline_median_${metric}`]: median(base),
        [`candidate_median_${metric}`]: median(cand),
        [`baseline_min_${metric}`]: Math.min(...base),
        [`baseline_max_${metric}`]: Math.max(...base),
        [`candidate_min_${metric}`]: Math.min(...cand),
        [`candidate_max_${metric}`]: Math.max(...cand),
        ratio,
        ratio_ci_low: ci?.[0] ?? null,
        ratio_ci_high: ci?.[1] ?? null,
        verdict,
        direction: `${direction} is better`,
        also_differs: differs(group, options.by, options.baseline, arm, confounded),
      });
      rows.push(row);
    }
  }
  return rowsFrame(sortRows(rows, keys));
}

/** Options of {@link delta}. */
export interface DeltaOptions {
  /** Column that changes (`transport`, `server_io_threads`, `server_version`, `data_size_bytes`, …). */
  dimension: string;
  /** Its value before the change. */
  from: string | number;
  /** Its value after. */
  to: string | number;
  /** Grouping columns; by default `test` plus the parameters that vary. */
  keys?: string[];
}

const LATENCIES = ["avg", "p50", "p95", "p99"] as const;

/**
 * The change along one dimension, per test: throughput factor (`to / from` of the median
 * ops/sec) and the change of avg/p50/p95/p99 latency in % (negative = faster).
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { delta } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   test: ["GET", "GET"], transport: ["tcp", "rdma"], ops_per_sec: [183163.59, 424826.91],
 *   avg_latency_ms: [0.155, 0.068], p50_latency_ms: [0.151, 0.071],
 *   p95_latency_ms: [0.231, 0.095], p99_latency_ms: [0.287, 0.103],
 * });
 * const d = delta(df, { dimension: "transport", from: "tcp", to: "rdma" });
 * assert.equal(d.getColumn("throughput_factor").get(0).toFixed(2), "2.32");
 * assert.equal(d.getColumn("p50_latency_change_pct").get(0).toFixed(1), "-53.0");
 * ```
 */
export function delta(df: pl.DataFrame, options: DeltaOptions): pl.DataFrame {
  need(df, [options.dimension, "ops_per_sec", "test"]);
  const { keys, confounded } = groupKeys(df, options.dimension, options.keys);
  need(df, keys);
  const metrics = ["ops_per_sec", ...LATENCIES.map((l) => `${l}_latency_ms`)].filter((m) =>
    df.columns.includes(m)
  );
  const records = df.select(...new Set([...keys, ...confounded, options.dimension, ...metrics]))
    .toRecords() as Rec[];
  const values = new Set(records.map((r) => String(r[options.dimension])));
  for (const v of [options.from, options.to]) {
    if (!values.has(String(v))) {
      throw new TypeError(
        `invalid value: ${v} (values of ${options.dimension}: ${[...values].join(", ")})`,
      );
    }
  }
  const rows: Rec[] = [];
  for (const group of groupBy(records, keys).values()) {
    const side = (v: string | number) =>
      group.filter((r) => String(r[options.dimension]) === String(v));
    const a = side(options.from);
    const b = side(options.to);
    if (a.length === 0 || b.length === 0) continue;
    const med = (rs: Rec[], m: string) => {
      const xs = rs.map((r) => r[m]).filter((x): x is number =>
        typeof x === "number" && Number.isFinite(x)
      );
      return xs.length ? median(xs) : null;
    };
    const row: Rec = {};
    for (const k of keys) row[k] = group[0][k];
    row.from = String(options.from);
    row.to = String(options.to);
    row.from_n = a.length;
    row.to_n = b.length;
    const fo = med(a, "ops_per_sec");
    const to = med(b, "ops_per_sec");
    row.from_ops_per_sec = fo;
    row.to_ops_per_sec = to;
    row.throughput_factor = fo && to !== null ? to / fo : null;
    for (const l of LATENCIES) {
      const m = `${l}_latency_ms`;
      if (!metrics.includes(m)) continue;
      const x = med(a, m);
      const y = med(b, m);
      row[`from_${m}`] = x;
      row[`to_${m}`] = y;
      row[`${l}_latency_change_pct`] = x && y !== null ? ((y - x) / x) * 100 : null;
    }
    row.also_differs = differs(
      group,
      options.dimension,
      String(options.from),
      String(options.to),
      confounded,
    );
    rows.push(row);
  }
  return rowsFrame(sortRows(rows, keys));
}

/** Sorts rows by first appearance of their test, then by the other keys (numbers as numbers). */
function sortRows(rows: Rec[], keys: string[]): Rec[] {
  const order = new Map<unknown, number>();
  for (const r of rows) if (!order.has(r.test)) order.set(r.test, order.size);
  const cmp = (a: unknown, b: unknown) =>
    typeof a === "number" && typeof b === "number"
      ? a - b
      : String(a ?? "").localeCompare(String(b ?? ""));
  return rows.map((r, i) => ({ r, i })).sort((p, q) => {
    const t = order.get(p.r.test)! - order.get(q.r.test)!;
    if (t) return t;
    for (const k of keys) {
      if (k === "test") continue;
      const c = cmp(p.r[k], q.r[k]);
      if (c) return c;
    }
    return p.i - q.i;
  }).map((x) => x.r);
}

/** A frame from plain records, keeping column order and numeric types. */
export function rowsFrame(rows: Rec[]): pl.DataFrame {
  if (rows.length === 0) return pl.DataFrame({});
  const cols = Object.keys(rows[0]);
  return pl.DataFrame(cols.map((c) => {
    const vals = rows.map((r) => r[c] ?? null);
    const nonNull = vals.filter((v) => v !== null);
    if (nonNull.length > 0 && nonNull.every((v) => typeof v === "number")) {
      return pl.Series(
        c,
        vals,
        nonNull.every((v) => Number.isInteger(v)) &&
          !/median|ratio|ci_|factor|pct|_ms|per_sec/.test(c)
          ? pl.Int64
          : pl.Float64,
      );
    }
    if (nonNull.length > 0 && nonNull.every((v) => typeof v === "boolean")) {
      return pl.Series(c, vals, pl.Bool);
    }
    return pl.Series(c, vals.map((v) => (v === null ? null : String(v))), pl.String);
  }));
}
