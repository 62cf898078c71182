/**
 * The `time_series` and `hdr_histograms` rows of a memtier run, and the block and type facts
 * {@link memtierRows} reads from the JSON or the stdout report. Private to `rows.ts`.
 *
 * @module
 */

import type { HdrHistogramsRow, TimeSeriesRow } from "../../../schema.ts";
import { decodeMemtierHistogram, type HdrFileName, type HdrIntervalLog } from "./hdr.ts";
import type { MemtierSecond, MemtierTypeStats } from "./json/parse.ts";
import type { MemtierStderr } from "./progress.ts";
import type { MemtierAggregate, MemtierDistributionRow } from "./types.ts";

/** A `--hdr-file-prefix` interval log with its file name. */
export interface MemtierHdrLog {
  /** The raw file's name (stored as `source_file`). */
  file: string;
  /** What the name says (`parseHdrFileName`). */
  name: HdrFileName;
  log: HdrIntervalLog;
}

/** One command type's numbers, from the JSON or from a stdout table row (which lacks some). */
export type TypeFacts =
  & Pick<
    MemtierTypeStats,
    | "test"
    | "label"
    | "count"
    | "opsPerSec"
    | "hitsPerSec"
    | "missesPerSec"
    | "avgLatencyMs"
    | "minLatencyMs"
    | "maxLatencyMs"
    | "p50LatencyMs"
    | "p99LatencyMs"
    | "p999LatencyMs"
    | "percentiles"
    | "kbPerSec"
    | "sourceLine"
  >
  & Partial<Pick<MemtierTypeStats, "histogram" | "derived" | "timeSeries" | "series">>;

/** One summary block's facts, from the JSON or the stdout report. */
export interface BlockFacts {
  title: string;
  aggregate: MemtierAggregate;
  runIndex: number | null;
  durationS: number | null;
  startTimeMs: number | null;
  finishTimeMs: number | null;
  complete: boolean;
  types: TypeFacts[];
  distributions: MemtierDistributionRow[];
}

/** One type of one block of a run, and the `test_index` of its results row. */
export interface TypeAt {
  runId: string;
  index: number;
  block: BlockFacts;
  type: TypeFacts;
}

/** The `time_series` row of one second of a type's `Time-Serie`. */
export function secondRow(
  { runId, index, block: b, type: t }: TypeAt,
  s: MemtierSecond,
): TimeSeriesRow {
  const at = (p: number) => s.percentiles.find((x) => x.percentile === p)?.latencyMs ?? null;
  return {
    run_id: runId,
    test_index: index,
    test: t.test,
    run_index: b.runIndex,
    source: "json",
    second: s.second,
    count: s.count,
    bytes_rx: s.bytesRx,
    bytes_tx: s.bytesTx,
    avg_latency_ms: s.avgLatencyMs,
    accumulated_latency_ms: s.accumulatedLatencyMs,
    min_latency_ms: s.minLatencyMs,
    max_latency_ms: s.maxLatencyMs,
    p50_latency_ms: at(50),
    p99_latency_ms: at(99),
    p999_latency_ms: at(99.9),
    percentiles_json: s.percentiles.length
      ? JSON.stringify(Object.fromEntries(s.percentiles.map((p) => [p.percentile, p.latencyMs])))
      : null,
    source_line: s.sourceLine,
  };
}

export type Join = (runIndex: number | null, test: string) => number | null;

/** The stderr progress lines as `time_series` rows of the run's `TOTALS`. */
export function progressRows(runId: string, stderr: MemtierStderr, join: Join): TimeSeriesRow[] {
  return stderr.progress.map((p) => ({
    run_id: runId,
    test_index: join(p.runIndex, "TOTALS"),
    test: "TOTALS",
    run_index: p.runIndex,
    source: "progress",
    second: p.elapsedS,
    ops_per_sec: p.opsPerSec,
    elapsed_s: p.elapsedS,
    avg_latency_ms: p.latencyMs,
    source_line: p.sourceLine,
  }));
}

/** Facts of a compressed histogram, read from its header. */
function histogramFacts(compressed: string) {
  const h = decodeMemtierHistogram(compressed);
  return {
    lowest_discernible_value_us: h.lowestDiscernibleValue,
    highest_trackable_value_us: h.highestTrackableValue,
    significant_digits: h.numberOfSignificantValueDigits,
    total_count: h.totalCount,
    max_value_us: h.totalCount > 0 ? h.maxValue : null,
    compressed,
  };
}

/** The `hdr_histograms` row of one type's histogram in memtier's JSON (`file`). */
export function jsonHistogramRow(
  { runId, index, block: b, type: t }: TypeAt,
  file: string,
): HdrHistogramsRow {
  const time = (ms: number | null) => (ms ? new Date(ms) : null);
  return {
    run_id: runId,
    test_index: index,
    test: t.test,
    run_index: b.runIndex,
    aggregate: b.aggregate,
    source: "json",
    source_file: file,
    start_time: time(b.startTimeMs),
    end_time: time(b.finishTimeMs),
    ...histogramFacts(t.histogram!),
    derived: t.derived?.includes("histogram") ?? false,
    source_line: t.sourceLine,
  };
}

/** The intervals of one `--hdr-file-prefix` interval log (`FULL_RUN` as `TOTALS`). */
export function hgrmRows(runId: string, h: MemtierHdrLog, join: Join): HdrHistogramsRow[] {
  const test = h.name.test === "FULL" ? "TOTALS" : h.name.test;
  return h.log.intervals.map((iv) => ({
    run_id: runId,
    test_index: join(h.name.runIndex, test),
    test,
    run_index: h.name.runIndex,
    aggregate: null,
    source: "hgrm",
    source_file: h.file,
    start_time: new Date(Math.round(iv.startTimestampS * 1000)),
    end_time: new Date(Math.round(iv.endTimestampS * 1000)),
    ...histogramFacts(iv.compressed),
    derived: false,
    source_line: iv.sourceLine,
  }));
}
