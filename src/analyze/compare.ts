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

import type pl from "nodejs-polars";
import { bootstrapRatioCi } from "./_stats.ts";
import { finiteRows, summarize } from "./summary.ts";
import { metricDirection, resultsFrame } from "./units.ts";
import { comparisonKeys } from "./grouping.ts";

export { type Direction, metricDirection } from "./units.ts";

export { PARAMETER_COLUMNS } from "./grouping.ts";

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
function groupKeys(
  df: pl.DataFrame,
  by: string,
  keys: string[] | undefined,
): { keys: string[]; confounded: string[] } {
  return keys ? { keys, confounded: [] } : comparisonKeys(df, by);
}

function need(df: pl.DataFrame, cols: string[]): void {
  for (const c of cols) {
    if (!df.columns.includes(c)) throw new TypeError(`invalid column: ${c} (not in the frame)`);
  }
}

/** The values of a column as strings, each once, in order of first appearance. */
function distinctStrings(df: pl.DataFrame, column: string): string[] {
  return [...new Set((df.getColumn(column).toArray() as unknown[]).map(String))];
}

/** A group of summary rows with the same keys: the keys, and each arm's summary row. */
interface ArmGroup {
  keys: Rec;
  arms: Map<string, Rec>;
}

/**
 * Summarises each arm of `by` per group of `keys` (see {@link summarize}) and collects the arms
 * of each group, groups in order of first appearance.
 */
function armGroups(
  df: pl.DataFrame,
  keys: string[],
  by: string,
  options: { metrics: string[]; values?: boolean; distinct: string[] },
): ArmGroup[] {
  const stats = summarize(df, { keys: [...keys, by], ...options }).toRecords() as Rec[];
  const groups = new Map<string, ArmGroup>();
  for (const r of stats) {
    const k = JSON.stringify(keys.map((c) => r[c] ?? null));
    let g = groups.get(k);
    if (!g) {
      g = { keys: Object.fromEntries(keys.map((c) => [c, r[c]])), arms: new Map() };
      groups.set(k, g);
    }
    g.arms.set(String(r[by]), r);
  }
  return [...groups.values()];
}

/** Run parameters that differ between two arms' summary rows (`distinct_<c>` lists), or null. */
function differs(a: Rec, b: Rec, cols: string[]): string | null {
  const out: string[] = [];
  for (const c of cols) {
    const va = [...new Set((a[`distinct_${c}`] as unknown[]).map(String))];
    const vb = [...new Set((b[`distinct_${c}`] as unknown[]).map(String))];
    if (va.join() !== vb.join()) out.push(`${c} ${va.join("/")} vs ${vb.join("/")}`);
  }
  return out.length ? out.join("; ") : null;
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
  metricDirection(metric); // throws for a metric whose name does not tell the direction
  need(df, [options.by, metric, "test"]);
  const { keys, confounded } = groupKeys(df, options.by, options.keys);
  need(df, keys);
  const rows = finiteRows(
    df.select(...new Set([...keys, ...confounded, options.by, metric])),
    metric,
  );
  const arms = distinctStrings(rows, options.by);
  if (!arms.includes(options.baseline)) {
    throw new TypeError(
      `invalid baseline: ${options.baseline} (values of ${options.by}: ${
        arms.join(", ") || "none"
      })`,
    );
  }
  const out: Rec[] = [];
  const groups = armGroups(rows, keys, options.by, {
    metrics: [metric],
    values: true,
    distinct: confounded,
  });
  for (const g of groups) {
    const base = g.arms.get(options.baseline);
    if (!base) continue;
    for (const arm of arms) {
      const cand = g.arms.get(arm);
      if (arm === options.baseline || !cand) continue;
      out.push({
        ...g.keys,
        [options.by]: arm,
        ...armComparison(base, cand, metric, options),
        also_differs: differs(base, cand, confounded),
      });
    }
  }
  return resultsFrame(sortRows(out, keys));
}

/** The columns of one compare() row from the two arms' summary rows, from `baseline` on. */
function armComparison(base: Rec, cand: Rec, metric: string, options: CompareOptions): Rec {
  const direction = metricDirection(metric);
  const baseMedian = base[`median_${metric}`] as number;
  const candMedian = cand[`median_${metric}`] as number;
  const ratio = candMedian / baseMedian;
  const ci = bootstrapRatioCi(
    base[`values_${metric}`] as number[],
    cand[`values_${metric}`] as number[],
    options.confidence ?? 0.95,
    options.resamples ?? 4000,
    options.seed ?? 1,
  );
  const excludesOne = ci !== null && (ci[0] > 1 || ci[1] < 1);
  const verdict = !excludesOne
    ? "no difference"
    : ((ratio > 1) === (direction === "higher"))
    ? "better"
    : "worse";
  return {
    baseline: options.baseline,
    baseline_n: base.n,
    candidate_n: cand.n,
    [`baseline_median_${metric}`]: baseMedian,
    [`candidate_median_${metric}`]: candMedian,
    [`baseline_min_${metric}`]: base[`min_${metric}`],
    [`baseline_max_${metric}`]: base[`max_${metric}`],
    [`candidate_min_${metric}`]: cand[`min_${metric}`],
    [`candidate_max_${metric}`]: cand[`max_${metric}`],
    ratio,
    ratio_ci_low: ci?.[0] ?? null,
    ratio_ci_high: ci?.[1] ?? null,
    verdict,
    direction: `${direction} is better`,
  };
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
  const rows = df.select(...new Set([...keys, ...confounded, options.dimension, ...metrics]));
  const values = distinctStrings(rows, options.dimension);
  for (const v of [options.from, options.to]) {
    if (!values.includes(String(v))) {
      throw new TypeError(
        `invalid value: ${v} (values of ${options.dimension}: ${values.join(", ")})`,
      );
    }
  }
  const out: Rec[] = [];
  for (const g of armGroups(rows, keys, options.dimension, { metrics, distinct: confounded })) {
    const a = g.arms.get(String(options.from));
    const b = g.arms.get(String(options.to));
    if (!a || !b) continue;
    out.push({
      ...g.keys,
      ...change(a, b, metrics, options),
      also_differs: differs(a, b, confounded),
    });
  }
  return resultsFrame(sortRows(out, keys));
}

/** The columns of one delta() row from the two sides' summary rows, from `from` on. */
function change(a: Rec, b: Rec, metrics: string[], options: DeltaOptions): Rec {
  const fo = a.median_ops_per_sec as number | null;
  const to = b.median_ops_per_sec as number | null;
  const row: Rec = {
    from: String(options.from),
    to: String(options.to),
    from_n: a.n,
    to_n: b.n,
    from_ops_per_sec: fo,
    to_ops_per_sec: to,
    throughput_factor: fo && to !== null ? to / fo : null,
  };
  for (const l of LATENCIES) {
    const m = `${l}_latency_ms`;
    if (!metrics.includes(m)) continue;
    const x = a[`median_${m}`] as number | null;
    const y = b[`median_${m}`] as number | null;
    row[`from_${m}`] = x;
    row[`to_${m}`] = y;
    row[`${l}_latency_change_pct`] = x && y !== null ? ((y - x) / x) * 100 : null;
  }
  return row;
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

/**
 * A frame from plain records, keeping column order and numeric types (Float64 for columns
 * whose names say they are fractional).
 *
 * @deprecated Use `resultsFrame` (analyze) or `rowsFrame` from `src/frame.ts`.
 */
export function rowsFrame(rows: Rec[]): pl.DataFrame {
  return resultsFrame(rows);
}
