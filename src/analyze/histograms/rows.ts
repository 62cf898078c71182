/**
 * Exact percentiles of fixed-rate steps from the `hdr_histograms` table: the histograms of the
 * repetitions of a step added together (never percentiles averaged). Used by the sweep tables
 * and the latency spectrum.
 *
 * @module
 */

import * as hdr from "hdr-histogram-js";
import pl from "nodejs-polars";
import { hdrValueAtPercentile } from "../../hdr.ts";

/** The histograms of one results row: compressed texts (values in µs). */
export type RowHistograms = Map<string, string[]>;

/** The key of a results row. */
export const rowKey = (runId: string, testIndex: number): string => `${runId}\u0000${testIndex}`;

/**
 * The histograms of each results row, on the row's own latency basis: the whole-test histogram
 * (kvlab's, or memtier's JSON) when there is one, else the sum of the interval-log histograms.
 * Aggregates of several runs (memtier's best/worst/average) are left out.
 *
 * @param hdrRows `hdr_histograms` rows.
 * @param basis The latency basis of each results row, by {@link rowKey}.
 * @returns The compressed histograms to add, by {@link rowKey}.
 */
export function rowHistograms(hdrRows: pl.DataFrame, basis: Map<string, string>): RowHistograms {
  const out: RowHistograms = new Map();
  if (hdrRows.height === 0) return out;
  const recs = hdrRows.filter(pl.col("aggregate").isNull().and(pl.col("test_index").isNotNull()))
    .select("run_id", "test_index", "source", "latency_basis", "compressed").toRecords() as {
      run_id: string;
      test_index: number;
      source: string;
      latency_basis: string | null;
      compressed: string;
    }[];
  const whole = new Map<string, string[]>();
  const intervals = new Map<string, string[]>();
  for (const r of recs) {
    const k = rowKey(r.run_id, r.test_index);
    if (!basis.has(k) || (r.latency_basis ?? "send") !== basis.get(k)) continue;
    const into = r.source === "hgrm" ? intervals : whole;
    into.set(k, [...(into.get(k) ?? []), r.compressed]);
  }
  for (const k of new Set([...whole.keys(), ...intervals.keys()])) {
    out.set(k, whole.get(k) ?? intervals.get(k)!);
  }
  return out;
}

/**
 * p50 and p99 of the sum of histograms, in ms.
 *
 * @param compressed Compressed histograms (values in µs).
 * @param source Where they come from, for the error of a bad one (see {@link sumOf}).
 * @returns The percentiles, or null when the sum is empty.
 */
export function mergedPercentiles(
  compressed: readonly string[],
  source?: string,
): { p50: number; p99: number; count: number } | null {
  const sum = sumOf(compressed, source);
  if (sum.totalCount === 0) return null;
  // as memtier prints them (HdrHistogram_c's rounding), so one run reads as the tool printed it
  return {
    p50: hdrValueAtPercentile(sum, 50)! / 1000,
    p99: hdrValueAtPercentile(sum, 99)! / 1000,
    count: sum.totalCount,
  };
}

/**
 * The sum of compressed histograms, in buckets no finer than the coarsest of them (memtier
 * records with 2 significant digits from 10 µs, kvlab with 3 from 1 µs): re-bucketing memtier's
 * counts more finely would move its percentiles (0.271 ms printed would read 0.264).
 *
 * @param compressed Compressed histograms (`HISTFAAA…`), values in µs.
 * @param source Where they come from, named when one is not a histogram (`hdr_histograms of
 * run R, test 0`). @default {"the dataset's hdr_histograms table"}
 * @returns Their sum (empty for none), growing to any range.
 * @throws {TypeError} `not a compressed HdrHistogram in <source>: HISTFAAA… (<why>)`.
 *
 * @example
 * ```ts
 * import { sumOf } from "./rows.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => sumOf(["HISTFAAAbogus"], "hdr_histograms of run r1, test 0"),
 *   /^TypeError: not a compressed HdrHistogram in hdr_histograms of run r1, test 0: HISTFAAAbogus \(/);
 * ```
 */
export function sumOf(
  compressed: readonly string[],
  source = "the dataset's hdr_histograms table",
): hdr.Histogram {
  const parts = compressed.map((c) => {
    try {
      return hdr.decodeFromCompressedBase64(c, 32, false) as hdr.JsHistogram;
    } catch (e) {
      // the text is the dataset's: shown escaped and cut
      const shown = JSON.stringify(String(c).slice(0, 40)).slice(1, -1);
      throw new TypeError(
        `not a compressed HdrHistogram in ${source}: ${shown}${String(c).length > 40 ? "…" : ""} ` +
          `(${e instanceof Error ? e.message : String(e)})`,
      );
    }
  });
  const lowest = Math.max(1, ...parts.map((h) => h.lowestDiscernibleValue));
  const sum = hdr.build({
    lowestDiscernibleValue: lowest,
    highestTrackableValue: Math.max(2 * lowest, ...parts.map((h) => h.highestTrackableValue)),
    numberOfSignificantValueDigits: Math.min(
      3,
      ...parts.map((h) => h.numberOfSignificantValueDigits),
    ) as 1 | 2 | 3,
    autoResize: true,
  });
  for (const h of parts) sum.add(h);
  return sum;
}
