/**
 * Latency histograms of the open-loop generator: HdrHistogram (`hdr-histogram-js`, its plain
 * JavaScript build; no WebAssembly to initialize, so it works the same in Workers) holding
 * integer nanoseconds, merged by adding counts, and moved between Workers in the standard
 * compressed encoding (lossless).
 *
 * @module
 */

import { hdrValueAtPercentile } from "../../hdr.ts";

import * as hdr from "hdr-histogram-js";

/** An HdrHistogram (the `hdr-histogram-js` interface). */
export type Histogram = hdr.Histogram;

/** Largest latency recorded, in nanoseconds (one hour); larger values are clamped to it. */
export const HIGHEST_LATENCY_NS = 3_600_000_000_000;

/** Percentiles of a latency histogram, in milliseconds. */
export interface LatencySummary {
  /** Number of values recorded. */
  count: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

/**
 * An empty histogram for nanosecond latencies from 1 ns to one hour.
 *
 * @param significantDigits Value precision: 3 keeps 0.1 % (the default), 2 keeps 1 % in an
 *   eighth of the memory (used for the per-second histograms).
 * @returns The histogram.
 *
 * @example
 * ```ts
 * import { latencyHistogram } from "./histogram.ts";
 * import assert from "node:assert/strict";
 * const h = latencyHistogram();
 * h.recordValue(250_000); // 0.25 ms
 * assert.equal(h.totalCount, 1);
 * ```
 */
export function latencyHistogram(significantDigits: 2 | 3 = 3): Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_LATENCY_NS,
    numberOfSignificantValueDigits: significantDigits,
    autoResize: false,
  });
}

/**
 * Records a latency given in (fractional) milliseconds, as whole nanoseconds, clamped to
 * [0, {@link HIGHEST_LATENCY_NS}].
 *
 * @param h The histogram.
 * @param ms Latency in milliseconds.
 *
 * @example
 * ```ts
 * import { latencyHistogram, recordMs } from "./histogram.ts";
 * import assert from "node:assert/strict";
 * const h = latencyHistogram();
 * recordMs(h, -0.001); // clock noise: counted as 0
 * recordMs(h, 1.5);
 * assert.equal(h.totalCount, 2);
 * assert.equal(h.maxValue, 1_500_000);
 * ```
 */
export function recordMs(h: Histogram, ms: number): void {
  const ns = Math.round(ms * 1e6);
  h.recordValue(ns <= 0 ? 0 : ns >= HIGHEST_LATENCY_NS ? HIGHEST_LATENCY_NS : ns);
}

/**
 * Merges histograms exactly by adding their counts (never by averaging percentiles).
 *
 * @param parts Histograms to merge (left unchanged).
 * @returns A new histogram holding every value of every part.
 *
 * @example
 * ```ts
 * import { latencyHistogram, mergeHistograms } from "./histogram.ts";
 * import assert from "node:assert/strict";
 * const a = latencyHistogram(), b = latencyHistogram();
 * for (let i = 1; i <= 90; i++) a.recordValue(1000);
 * for (let i = 1; i <= 10; i++) b.recordValue(1_000_000);
 * const m = mergeHistograms([a, b]);
 * assert.equal(m.totalCount, 100);
 * assert.equal(m.getValueAtPercentile(50), 1000);
 * assert.ok(m.getValueAtPercentile(99) >= 1_000_000 * 0.999);
 * ```
 */
export function mergeHistograms(parts: readonly Histogram[]): Histogram {
  const out = latencyHistogram(3);
  for (const p of parts) out.add(p);
  return out;
}

/**
 * Encodes a histogram as compressed base64 (HdrHistogram's V2 format), to pass it between
 * Workers or store it; {@link decodeHistogram} reverses it exactly.
 *
 * @param h The histogram.
 * @returns The encoded text (`HISTF…`).
 *
 * @example
 * ```ts
 * import { decodeHistogram, encodeHistogram, latencyHistogram } from "./histogram.ts";
 * import assert from "node:assert/strict";
 * const h = latencyHistogram();
 * h.recordValue(123_456);
 * const back = decodeHistogram(encodeHistogram(h));
 * assert.equal(back.totalCount, 1);
 * assert.equal(back.getValueAtPercentile(100), h.getValueAtPercentile(100));
 * ```
 */
export function encodeHistogram(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

/**
 * Decodes a histogram written by {@link encodeHistogram}.
 *
 * @param text Compressed base64.
 * @returns The histogram.
 */
export function decodeHistogram(text: string): Histogram {
  return hdr.decodeFromCompressedBase64(text, 32);
}

/**
 * Summarizes a nanosecond histogram in milliseconds.
 *
 * @param h The histogram.
 * @returns Count, mean, p50, p90, p99, p99.9 and max (all 0 when empty).
 *
 * @example
 * ```ts
 * import { latencyHistogram, latencySummary } from "./histogram.ts";
 * import assert from "node:assert/strict";
 * const h = latencyHistogram();
 * for (let i = 1; i <= 100; i++) h.recordValue(i * 10_000); // 0.01 … 1 ms
 * const s = latencySummary(h);
 * assert.equal(s.count, 100);
 * assert.ok(Math.abs(s.p50Ms - 0.5) < 0.001);
 * assert.ok(Math.abs(s.p99Ms - 0.99) < 0.001);
 * ```
 */
export function latencySummary(h: Histogram): LatencySummary {
  const ms = (ns: number) => ns / 1e6;
  if (h.totalCount === 0) {
    return { count: 0, meanMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0 };
  }
  return {
    count: h.totalCount,
    meanMs: ms(h.mean),
    // HdrHistogram_c's rounding, as analyze reads the stored histograms (src/hdr.ts)
    p50Ms: ms(hdrValueAtPercentile(h, 50)!),
    p90Ms: ms(hdrValueAtPercentile(h, 90)!),
    p99Ms: ms(hdrValueAtPercentile(h, 99)!),
    p999Ms: ms(hdrValueAtPercentile(h, 99.9)!),
    maxMs: ms(h.maxValue),
  };
}

/** The iteration part of `hdr-histogram-js`'s JavaScript histogram (not in its interface type). */
interface Iterable {
  recordedValuesIterator: {
    reset(): void;
    hasNext(): boolean;
    next(): { valueIteratedTo: number; countAtValueIteratedTo: number };
  };
}

/**
 * The same histogram with values in microseconds (as the `hdr_histograms` table stores them and
 * memtier writes them): each recorded nanosecond bucket, by its highest equivalent value,
 * divided by 1,000 and rounded, with its count. Counts are kept exactly; values keep the
 * 3-significant-digit precision of the source down to 1 µs.
 *
 * @param h A nanosecond histogram ({@link latencyHistogram}).
 * @returns A new histogram in µs (1 µs to one hour).
 *
 * @example
 * ```ts
 * import { histogramInMicroseconds, latencyHistogram } from "./histogram.ts";
 * import assert from "node:assert/strict";
 * const h = latencyHistogram();
 * for (let i = 0; i < 99; i++) h.recordValue(250_000); // 0.25 ms
 * h.recordValue(40_000_000); // 40 ms
 * const us = histogramInMicroseconds(h);
 * assert.equal(us.totalCount, 100);
 * assert.equal(us.getValueAtPercentile(50), 250);
 * assert.ok(Math.abs(us.maxValue - 40_000) <= 40);
 * ```
 */
export function histogramInMicroseconds(h: Histogram): Histogram {
  const out = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_LATENCY_NS / 1000,
    numberOfSignificantValueDigits: 3,
    autoResize: false,
  });
  const it = (h as unknown as Iterable).recordedValuesIterator;
  it.reset();
  while (it.hasNext()) {
    const v = it.next();
    // a bucket's top value may lie just above the highest trackable value
    const us = Math.min(HIGHEST_LATENCY_NS / 1000, Math.round(v.valueIteratedTo / 1000));
    out.recordValueWithCount(us, v.countAtValueIteratedTo);
  }
  return out;
}
