/**
 * A change along one dimension such as transport or io-threads ({@link delta}), per test:
 * throughput factor and latency changes, each with the interval and verdict of `compare`.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { changePctOf, ratioOf } from "../_stats.ts";
import { resultsFrame } from "../units.ts";
import { comparisonCells, differs, type Rec, sortRows, verdictOf } from "./_cells.ts";
import { adviceColumns } from "./advice.ts";

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
  /**
   * Columns that split the change into groups of their own besides the default keys (`server`:
   * Redis's TLS cost and Valkey's apart, instead of pooled; `tool`, `keep_alive`, `label`, …).
   * Each must be in the frame and cannot be the dimension.
   */
  per?: string[];
  /** Confidence of the intervals (see {@link CompareOptions}). @default {0.95} */
  confidence?: number;
  /** Equivalence band of "no difference". @default {0.05} */
  band?: number;
  /** The fewest runs per side for a verdict. @default {4} */
  minRuns?: number;
}

const LATENCIES = ["avg", "p50", "p95", "p99"] as const;

/**
 * The change along one dimension, per test: throughput factor (`to / from` of the median
 * ops/sec) and the change of avg/p50/p95/p99 latency in % (negative = faster), each with the
 * interval and verdict of {@link compare} (`throughput_factor_ci_low`/`_high`,
 * `throughput_verdict`, `<p>_latency_change_ci_low_pct`/`_high_pct`, `<p>_latency_verdict`;
 * a latency verdict says whether the `to` side is better, i.e. faster), and for an
 * inconclusive throughput change `throughput_runs_needed` and `throughput_runs_needed_observed`
 * (see `compare`'s `runs_needed`).
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
 * // per server: Redis's TLS cost and Valkey's, each in a row of its own
 * const both = pl.DataFrame({
 *   test: ["SET", "SET", "SET", "SET"], server: ["redis", "redis", "valkey", "valkey"],
 *   transport: ["tcp", "tls", "tcp", "tls"], ops_per_sec: [100, 80, 120, 60],
 * });
 * const per = delta(both, { dimension: "transport", from: "tcp", to: "tls", per: ["server"] });
 * assert.deepEqual(per.getColumn("server").toArray(), ["redis", "valkey"]);
 * assert.deepEqual(per.getColumn("throughput_factor").toArray(), [0.8, 0.5]);
 * ```
 */
export function delta(df: pl.DataFrame, options: DeltaOptions): pl.DataFrame {
  const metrics = ["ops_per_sec", ...LATENCIES.map((l) => `${l}_latency_ms`)].filter((m) =>
    df.columns.includes(m)
  );
  const { keys, confounded, groups } = comparisonCells(df, {
    by: options.dimension,
    keys: options.keys,
    per: options.per,
    metric: "ops_per_sec",
    metrics,
    extra: df.columns.includes("tool") ? ["tool"] : [],
    check: (values) => {
      for (const v of [options.from, options.to]) {
        if (!values.includes(String(v))) {
          throw new TypeError(
            `invalid value: ${v} (values of ${options.dimension}: ${values.join(", ")})`,
          );
        }
      }
    },
  });
  const out: Rec[] = [];
  for (const g of groups) {
    const a = g.arms.get(String(options.from));
    const b = g.arms.get(String(options.to));
    if (!a || !b) continue;
    out.push({
      ...g.keys,
      ...change(a, b, { ...options, metrics }),
      also_differs: differs(a, b, confounded),
    });
  }
  return resultsFrame(sortRows(out, keys));
}

/** The throughput values of one side's summary row. */
const values = (r: Rec) => (r.values_ops_per_sec as number[] | undefined) ?? [];

/** The columns of one delta() row from the two sides' summary rows, from `from` on. */
function change(a: Rec, b: Rec, options: DeltaOptions & { metrics: string[] }): Rec {
  const metrics = options.metrics;
  const fo = a.median_ops_per_sec as number | null;
  const to = b.median_ops_per_sec as number | null;
  const row: Rec = {
    from: String(options.from),
    to: String(options.to),
    from_n: a.n,
    to_n: b.n,
    from_ops_per_sec: fo,
    to_ops_per_sec: to,
    throughput_factor: ratioOf(to, fo),
  };
  const tp = verdictOf(a, b, { ...options, metric: "ops_per_sec", direction: "higher" });
  row.throughput_factor_ci_low = tp.ciLow;
  row.throughput_factor_ci_high = tp.ciHigh;
  row.throughput_verdict = tp.verdict;
  // issue 36: the runs an inconclusive throughput change would need
  const advice = adviceColumns(tp.verdict, [values(a), values(b)], { minEffect: options.band });
  row.throughput_runs_needed = advice.runs_needed;
  row.throughput_runs_needed_observed = advice.runs_needed_observed;
  for (const l of LATENCIES) {
    const m = `${l}_latency_ms`;
    if (!metrics.includes(m)) continue;
    const x = a[`median_${m}`] as number | null;
    const y = b[`median_${m}`] as number | null;
    row[`from_${m}`] = x;
    row[`to_${m}`] = y;
    row[`${l}_latency_change_pct`] = changePctOf(y, x);
    const v = verdictOf(a, b, { ...options, metric: m, direction: "lower" });

    row[`${l}_latency_change_ci_low_pct`] = v.ciLow === null ? null : (v.ciLow - 1) * 100;
    row[`${l}_latency_change_ci_high_pct`] = v.ciHigh === null ? null : (v.ciHigh - 1) * 100;
    row[`${l}_latency_verdict`] = v.verdict;
  }
  return row;
}
