/**
 * Percentiles of HdrHistograms computed as HdrHistogram_c's `hdr_value_at_percentile` does (the
 * target count rounded to nearest, then the highest value equivalent to the bucket reached), so
 * a percentile kvlab reads from a histogram equals the one memtier_benchmark printed from it.
 * hdr-histogram-js rounds the target count up and can give a lower bucket. Shared by collect (the
 * memtier parsers) and analyze (sweeps merging histograms).
 *
 * @module
 */

import type * as hdr from "hdr-histogram-js";

/**
 * The value at a percentile, in the histogram's unit, or null for an empty histogram.
 *
 * @param histogram A histogram (hdr-histogram-js, its JavaScript build).
 * @param percentile 0–100 (0 gives the lowest equivalent value of the first bucket).
 *
 * @example
 * ```ts
 * import * as hdr from "hdr-histogram-js";
 * import { hdrValueAtPercentile } from "./hdr.ts";
 * import assert from "node:assert/strict";
 * const h = hdr.build({ numberOfSignificantValueDigits: 3 });
 * for (const v of [100, 200, 300, 400]) h.recordValue(v);
 * assert.equal(hdrValueAtPercentile(h, 50), 200);
 * assert.equal(hdrValueAtPercentile(hdr.build(), 50), null);
 * ```
 */
export function hdrValueAtPercentile(histogram: hdr.Histogram, percentile: number): number | null {
  const h = histogram as hdr.JsHistogram;
  if (h.totalCount === 0) return null;
  const requested = Math.min(percentile, 100);
  const target = Math.max(1, Math.trunc((requested / 100) * h.totalCount + 0.5));
  let seen = 0;
  for (let i = 0; i < h.countsArrayLength; i++) {
    seen += h.getCountAtIndex(i);
    if (seen >= target) {
      const v = h.valueFromIndex(i);
      return percentile === 0 ? h.lowestEquivalentValue(v) : h.highestEquivalentValue(v);
    }
  }
  return null;
}
