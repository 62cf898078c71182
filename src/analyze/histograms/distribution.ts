/**
 * Latency distributions from the `hdr_histograms` table: each results row's histogram (on its
 * own latency basis) as cumulative counts at the histogram's bucket upper bounds, in the form of
 * `latency_distribution` rows, so a spectrum of memtier_benchmark or kvlab-engine runs is
 * merged and drawn by the same rule as redis-benchmark's printed buckets. Private to the
 * analyze folder (`plots.ts`).
 *
 * @module
 */

import type * as hdr from "hdr-histogram-js";
import pl from "nodejs-polars";
import { rowHistograms, rowKey, sumOf } from "./rows.ts";
import { terminalText } from "../../text/safe.ts";

/**
 * The cumulative counts of a histogram at each non-empty bucket's upper bound.
 *
 * @param histogram A histogram, values in µs.
 * @returns `[latency_ms, cumulative count]` pairs in latency order.
 */
export function cumulativeBuckets(histogram: hdr.Histogram): [number, number][] {
  const h = histogram as hdr.JsHistogram;
  const out: [number, number][] = [];
  let seen = 0;
  for (let i = 0; i < h.countsArrayLength; i++) {
    const n = h.getCountAtIndex(i);
    if (n === 0) continue;
    seen += n;
    out.push([h.highestEquivalentValue(h.valueFromIndex(i)) / 1000, seen]);
  }
  return out;
}

/**
 * `latency_distribution`-shaped rows (`distribution = "hdr"`) for the results rows that have
 * histograms but no counted distribution of their own.
 *
 * @param results Results rows (`run_id`, `test_index`, `test`, and `latency_basis` when known).
 * @param hdrRows `hdr_histograms` rows.
 * @param counted The {@link rowKey}s that already have counted `latency_distribution` rows.
 * @returns `run_id`, `test_index`, `test`, `distribution`, `percentile`, `latency_ms`,
 * `count`, `source_line` (the histogram rows carry no line: 0); empty when none.
 */
export function hdrDistribution(
  results: pl.DataFrame,
  hdrRows: pl.DataFrame,
  counted: ReadonlySet<string>,
): Record<string, unknown>[] {
  if (hdrRows.height === 0 || results.height === 0) return [];
  const hasBasis = results.columns.includes("latency_basis");
  const recs = results.select(
    "run_id",
    "test_index",
    "test",
    ...(hasBasis ? ["latency_basis"] : []),
  ).toRecords() as Record<string, unknown>[];
  const basis = new Map<string, string>();
  const tests = new Map<string, string>();
  for (const r of recs) {
    const k = rowKey(String(r.run_id), Number(r.test_index));
    if (counted.has(k)) continue;
    basis.set(k, typeof r.latency_basis === "string" ? r.latency_basis : "send");
    tests.set(k, String(r.test));
  }
  // memtier's `average` aggregate histogram is the sum of its runs (--run-count); best and
  // worst are one run each and are left out
  const whole = hdrRows.filter(
    pl.col("aggregate").isNull().or(pl.col("aggregate").eq(pl.lit("average"))),
  ).withColumns(pl.lit(null).cast(pl.Utf8).alias("aggregate"));
  const out: Record<string, unknown>[] = [];
  for (const [k, parts] of rowHistograms(whole, basis)) {
    const [runId, testIndex] = k.split("\u0000");
    const buckets = cumulativeBuckets(
      sumOf(parts, `hdr_histograms of run ${terminalText(runId)}, test ${testIndex}`),
    );
    const total = buckets.at(-1)?.[1] ?? 0;
    for (const [ms, count] of buckets) {
      out.push({
        run_id: runId,
        test_index: Number(testIndex),
        test: tests.get(k),
        distribution: "hdr",
        percentile: (count / total) * 100,
        latency_ms: ms,
        count,
        source_line: 0,
      });
    }
  }
  return out;
}

/**
 * A frame of {@link hdrDistribution}'s rows with `latency_distribution`'s column types.
 *
 * @param rows The rows.
 * @returns The frame (null when there are none).
 */
export function hdrDistributionFrame(rows: Record<string, unknown>[]): pl.DataFrame | null {
  if (rows.length === 0) return null;
  return pl.DataFrame(rows).select(
    pl.col("run_id").cast(pl.Utf8),
    pl.col("test_index").cast(pl.Int64),
    pl.col("test").cast(pl.Utf8),
    pl.col("distribution").cast(pl.Utf8),
    pl.col("percentile").cast(pl.Float64),
    pl.col("latency_ms").cast(pl.Float64),
    pl.col("count").cast(pl.Int64),
    pl.col("source_line").cast(pl.Int64),
  );
}
