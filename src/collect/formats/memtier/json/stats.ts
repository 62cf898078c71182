/**
 * The per-type statistics of memtier_benchmark's JSON, and the numbers kvlab derives where
 * memtier prints placeholders (`Totals` latency, the aggregated block's `Totals`), and which
 * run the `BEST`/`WORST` blocks are.
 *
 * @module
 */

import {
  decodeMemtierHistogram,
  type MemtierHistogram,
  memtierPercentileMs,
  mergeMemtierHistograms,
} from "../hdr.ts";
import { commonPercentiles, type MemtierCommonPercentiles } from "../types.ts";
import type { MemtierAggregate, MemtierPercentile } from "../types.ts";

/** `Runtime` of a block. */
export interface MemtierRuntime {
  /** Milliseconds since the epoch. */
  startTimeMs: number | null;
  /** Milliseconds since the epoch. */
  finishTimeMs: number | null;
  /** `Total duration`, ms. */
  durationMs: number | null;
  /** `Interrupted` (SIGINT). */
  interrupted: boolean;
}

/** One second of a `Time-Serie`. Latency fields are `null` for a second with no requests. */
export interface MemtierSecond {
  /** 0-based second of the run (the last one is usually partial). */
  second: number;
  count: number | null;
  bytesRx: number | null;
  bytesTx: number | null;
  avgLatencyMs: number | null;
  /** Sum of the second's latencies, ms (integer in the file). */
  accumulatedLatencyMs: number | null;
  minLatencyMs: number | null;
  maxLatencyMs: number | null;
  /** `p50.00`, `p99.00`, … of the second. */
  percentiles: MemtierPercentile[];
  /** Line of the second's key. */
  sourceLine: number;
}

/**
 * A `Time-Serie` handed over second by second as it was read (see `MemtierJsonReader`): what
 * is left of it to check the block's rate against (`seriesCheck`).
 */
export interface MemtierSeriesSummary {
  /** Seconds read. */
  seconds: number;
  /** Sum of their `Count` (a missing count as 0). */
  countSum: number;
  /** Seconds with no `Count`. */
  nullCounts: number;
  /** The last second's `Count`. */
  last: number | null;
  /** The highest second read (−1 before any). */
  maxSecond: number;
  /** The first second read, and its `Count`. */
  first: { second: number; count: number | null } | null;
}

/** One command type of a block (`Sets`, `Gets`, `Waits`, `Incrs`, …, `Totals`). */
export interface MemtierTypeStats extends MemtierCommonPercentiles {
  /** Normalized test: `SET`, `GET`, `WAIT`, `INCR`, …, `TOTALS`. */
  test: string;
  /** The JSON key: `Sets`, `Totals`, … */
  label: string;
  /** Requests. */
  count: number | null;
  opsPerSec: number | null;
  hitsPerSec: number | null;
  missesPerSec: number | null;
  /** Cluster mode only. */
  movedPerSec: number | null;
  /** Cluster mode only. */
  askPerSec: number | null;
  connectionErrorsPerSec: number | null;
  connectionErrors: number | null;
  /** Mean latency, ms (derived for `TOTALS`: see `derived`). */
  avgLatencyMs: number | null;
  /** Sum of all latencies, ms (memtier truncates it to an integer). */
  accumulatedLatencyMs: number | null;
  minLatencyMs: number | null;
  maxLatencyMs: number | null;
  /** `KB/sec` (RX + TX). */
  kbPerSec: number | null;
  kbPerSecRx: number | null;
  kbPerSecTx: number | null;
  /** `Percentile Latencies`, in file order; empty for a type with no requests. */
  percentiles: MemtierPercentile[];
  /** The compressed HdrHistogram (`HISTFAAA…`, µs), kept so runs merge exactly. */
  histogram: string | null;
  /** `Time-Serie`, one entry per second (empty when the seconds were handed over as read). */
  timeSeries: MemtierSecond[];
  /** The series handed over as it was read, counted (then `timeSeries` is empty). */
  series?: MemtierSeriesSummary;
  /** Fields kvlab computed instead of reading (e.g. `avgLatencyMs`). */
  derived: string[];
  /** Line of the type's key. */
  sourceLine: number;
}

/**
 * Fills a `Totals` block's mean latency, which memtier's JSON prints truncated to whole
 * milliseconds (0.000 below 1 ms, 1.000 for the 1.395 ms its stdout table prints): the mean of
 * its histogram (what memtier's stdout table prints as `Avg. Latency`), or, without a histogram,
 * `Accumulated Latency / Count` (memtier truncates that sum to whole ms, which is 1 % off on a
 * one-second run). A printed value that is not that mean's whole milliseconds is kept as
 * printed. Names the field in `derived`.
 *
 * @param totals The `TOTALS` stats, changed in place.
 *
 * @example
 * ```ts
 * import { deriveTotalsLatency, type MemtierTypeStats } from "./stats.ts";
 * import assert from "node:assert/strict";
 * const t = { count: 4, avgLatencyMs: 0, accumulatedLatencyMs: 2, histogram: null, derived: [] as string[] };
 * deriveTotalsLatency(t as unknown as MemtierTypeStats);
 * assert.equal(t.avgLatencyMs, 0.5);
 * assert.deepEqual(t.derived, ["avgLatencyMs"]);
 * ```
 */
export function deriveTotalsLatency(totals: MemtierTypeStats): void {
  const printed = totals.avgLatencyMs;
  if (printed === null || !Number.isInteger(printed) || !totals.count) return;
  const mean = totals.histogram
    ? histogramMeanMs(decodeMemtierHistogram(totals.histogram))
    : totals.accumulatedLatencyMs !== null
    ? totals.accumulatedLatencyMs / totals.count
    : null;
  // the printed value is the mean's whole milliseconds (the histogram's mean may differ from
  // memtier's exact sum in the last digits)
  if (mean === null || printed > mean + 0.01 || mean >= printed + 1.01) return;
  totals.avgLatencyMs = mean;
  totals.derived.push("avgLatencyMs");
}

/** memtier's `hdr_mean` in ms (median equivalent values, like HdrHistogram_c). */
function histogramMeanMs(h: MemtierHistogram): number | null {
  return h.totalCount > 0 ? h.mean / 1000 : null;
}

/**
 * Rebuilds the `Totals` of an `AGGREGATED AVERAGE RESULTS` block from its per-type blocks:
 * memtier prints its latencies and RX/TX rates as 0 and its histogram empty. Accumulated
 * latency, RX/TX are summed; min/max taken over the types; the histogram is the sum of the
 * types' histograms, and the mean and percentiles are read from it as memtier reads them
 * (without histograms the mean is the summed accumulated latency over the summed count).
 *
 * @param types Every type of the block.
 * @param totals The `TOTALS` entry of `types`, changed in place.
 * @param warnings Receives one line saying what was derived.
 *
 * @example
 * ```ts
 * import { deriveAverageTotals, type MemtierTypeStats } from "./stats.ts";
 * import assert from "node:assert/strict";
 * const set = { test: "SET", count: 2, accumulatedLatencyMs: 3, minLatencyMs: 1, maxLatencyMs: 2,
 *   kbPerSecRx: 1, kbPerSecTx: 2, histogram: null, percentiles: [] };
 * const totals = { test: "TOTALS", count: 2, accumulatedLatencyMs: 0, avgLatencyMs: 0,
 *   minLatencyMs: 0, maxLatencyMs: 0, kbPerSecRx: 0, kbPerSecTx: 0, histogram: null,
 *   percentiles: [], derived: [] as string[] };
 * const warnings: string[] = [];
 * deriveAverageTotals([set, totals] as unknown as MemtierTypeStats[], totals as unknown as MemtierTypeStats, warnings);
 * assert.equal(totals.avgLatencyMs, 1.5);
 * assert.equal(warnings.length, 1);
 * ```
 */
export function deriveAverageTotals(
  types: readonly MemtierTypeStats[],
  totals: MemtierTypeStats,
  warnings: string[],
): void {
  const parts = types.filter((t) => t !== totals && t.count);
  if (parts.length === 0) return;
  const sum = (f: (t: MemtierTypeStats) => number | null) =>
    parts.reduce((a, t) => a + (f(t) ?? 0), 0);
  const count = sum((t) => t.count);
  totals.accumulatedLatencyMs = sum((t) => t.accumulatedLatencyMs);
  totals.avgLatencyMs = count ? totals.accumulatedLatencyMs / count : null; // until merged
  totals.minLatencyMs = Math.min(...parts.map((t) => t.minLatencyMs ?? Infinity));
  totals.maxLatencyMs = Math.max(...parts.map((t) => t.maxLatencyMs ?? -Infinity));
  totals.kbPerSecRx = round2(sum((t) => t.kbPerSecRx));
  totals.kbPerSecTx = round2(sum((t) => t.kbPerSecTx));
  const fields = ["accumulatedLatencyMs", "avgLatencyMs", "minLatencyMs", "maxLatencyMs"];
  fields.push("kbPerSecRx", "kbPerSecTx");
  const histograms = parts.map((t) => t.histogram);
  if (histograms.every((h): h is string => h !== null)) {
    const merged = mergeMemtierHistograms(histograms);
    totals.histogram = merged.compressed;
    totals.avgLatencyMs = histogramMeanMs(merged.histogram);
    const wanted = parts[0].percentiles.map((p) => p.percentile);
    totals.percentiles = wanted.map((percentile) => ({
      percentile,
      latencyMs: memtierPercentileMs(merged.histogram, percentile) ?? 0,
    }));
    Object.assign(totals, commonPercentiles(totals.percentiles));
    fields.push("percentiles", "histogram");
  }
  totals.derived.push(...fields);
  warnings.push(
    `TOTALS of "AGGREGATED AVERAGE RESULTS": memtier prints its latencies as 0 and an empty ` +
      `histogram; ${fields.join(", ")} derived from the ${
        parts.map((t) => t.test).join(", ")
      } blocks (histograms added)`,
  );
}

/** The parts of a block {@link resolveBestWorst} needs. */
export interface BlockRunFacts {
  aggregate: MemtierAggregate;
  runIndex: number | null;
  runtime: MemtierRuntime | null;
}

/**
 * Names the run of the `BEST` and `WORST` blocks, which memtier does not print: the
 * `RUN #n RESULTS` block (`--print-all-runs`) with the same start and finish time.
 *
 * @param blocks Blocks of one file, changed in place.
 *
 * @example
 * ```ts
 * import { resolveBestWorst } from "./stats.ts";
 * import assert from "node:assert/strict";
 * const rt = (s: number) => ({ startTimeMs: s, finishTimeMs: s + 1, durationMs: 1, interrupted: false });
 * const blocks = [
 *   { aggregate: null, runIndex: 1, runtime: rt(10) },
 *   { aggregate: null, runIndex: 2, runtime: rt(20) },
 *   { aggregate: "best" as const, runIndex: null, runtime: rt(20) },
 * ];
 * resolveBestWorst(blocks);
 * assert.equal(blocks[2].runIndex, 2);
 * ```
 */
export function resolveBestWorst(blocks: BlockRunFacts[]): void {
  const runs = blocks.filter((b) => b.aggregate === null && b.runIndex !== null && b.runtime);
  for (const b of blocks) {
    if ((b.aggregate !== "best" && b.aggregate !== "worst") || !b.runtime) continue;
    const same = runs.filter((r) =>
      r.runtime!.startTimeMs === b.runtime!.startTimeMs &&
      r.runtime!.finishTimeMs === b.runtime!.finishTimeMs
    );
    if (same.length === 1) b.runIndex = same[0].runIndex;
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
