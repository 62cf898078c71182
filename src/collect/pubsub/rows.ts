/**
 * The rows of one pub/sub step (a {@link PubSubResult}): one `results` row (test
 * `PUBSUB_ONE_TO_ONE`, `PUBSUB_FAN_OUT` or `PUBSUB_SHARDED`; `requested_ops_per_sec` = target
 * delivery rate, `ops_per_sec` = achieved; latencies from the intended publish time, so
 * `latency_basis` = `intended`), its per-second `time_series` rows, and its delivery-latency
 * histogram in `hdr_histograms` (values in µs). Pure.
 *
 * @module
 */

import { hdrValueAtPercentile } from "../../hdr.ts";

import type { HdrHistogramsRow, ResultsRow, TimeSeriesRow } from "../../schema.ts";
import { encodeHistogram, histogramInMicroseconds } from "../loadgen/histogram.ts";
import type { PubSubMode } from "./payload.ts";
import type { PubSubResult } from "./engine.ts";

/** The `results.test` of each mode. */
export const PUBSUB_TESTS: Readonly<Record<PubSubMode, string>> = {
  "one-to-one": "PUBSUB_ONE_TO_ONE",
  "fan-out": "PUBSUB_FAN_OUT",
  sharded: "PUBSUB_SHARDED",
};

/** The rows of one step. */
export interface PubSubRows {
  results: ResultsRow[];
  time_series: TimeSeriesRow[];
  hdr_histograms: HdrHistogramsRow[];
}

/**
 * The title of a step's test, e.g. `pub/sub one-to-one: 64 publishers, 100 subscribers, 100
 * channels, fan-out 1, 128 B`.
 *
 * @param r The step.
 * @returns The title.
 */
export function pubSubTitle(
  r: Pick<
    PubSubResult,
    "mode" | "publishers" | "subscribers" | "channels" | "fanOut" | "payloadBytes"
  >,
): string {
  return `pub/sub ${r.mode}: ${r.publishers} publishers, ${r.subscribers} subscribers, ` +
    `${r.channels} channels, fan-out ${r.fanOut}, ${r.payloadBytes} B`;
}

/**
 * The rows of one pub/sub step.
 *
 * @param runId The run.
 * @param r What the step measured.
 * @param window When the publishing window started and ended (for the histogram row).
 * @returns `results`, `time_series` and `hdr_histograms` rows.
 *
 * @example
 * ```ts
 * import { pubSubRows } from "./rows.ts";
 * import { latencyHistogram } from "../loadgen/histogram.ts";
 * import assert from "node:assert/strict";
 * const latency = latencyHistogram();
 * for (let i = 0; i < 1000; i++) latency.recordValue(110_000); // 0.11 ms
 * const r = {
 *   mode: "one-to-one", publishers: 64, subscribers: 100, channels: 100, fanOut: 1,
 *   payloadBytes: 128, requestedOpsPerSec: 1000, publishRatePerSec: 1000, durationS: 1,
 *   graceS: 2, published: 1000, unsent: 0, publishErrors: 0, delivered: 1000,
 *   deliveredInWindow: 990, lost: 0, duplicated: 0, disconnects: 0, protocolErrors: 0, errors: 0,
 *   errorSamples: [],
 *   achievedOpsPerSec: 990, latency, sendLateness: latencyHistogram(),
 *   perSecond: [{ second: 0, sent: 1000, completed: 1000, errors: 0, p50FromIntendedMs: 0.11,
 *     p99FromIntendedMs: 0.11 }],
 *   clientCpuS: 0.2,
 * } as const;
 * const rows = pubSubRows("r1", r as never, { start: new Date(0), end: new Date(1000) });
 * assert.equal(rows.results[0].test, "PUBSUB_ONE_TO_ONE");
 * assert.equal(rows.results[0].requested_ops_per_sec, 1000);
 * assert.equal(rows.results[0].ops_per_sec, 990);
 * assert.equal(rows.results[0].latency_basis, "intended");
 * assert.ok(Math.abs(rows.results[0].p50_latency_ms! - 0.11) < 0.001);
 * assert.equal(rows.hdr_histograms[0].total_count, 1000);
 * assert.equal(rows.hdr_histograms[0].max_value_us, 110);
 * assert.equal(rows.time_series[0].count, 1000);
 * ```
 */
export function pubSubRows(
  runId: string,
  r: Omit<PubSubResult, "summary" | "lateness" | "setupCpuS" | "wallS">,
  window: { start: Date; end: Date },
): PubSubRows {
  const test = PUBSUB_TESTS[r.mode];
  const ms = (ns: number) => ns / 1e6;
  const h = r.latency;
  const empty = h.totalCount === 0;
  const at = (p: number) => (empty ? null : ms(hdrValueAtPercentile(h, p)!));
  const results: ResultsRow[] = [{
    run_id: runId,
    test_index: 0,
    test,
    test_title: pubSubTitle(r),
    clients: r.publishers, // as seed 000 counts them ("64 publishers"); subscribers are in the title
    threads: 1,
    pipeline: null,
    data_size_bytes: r.payloadBytes,
    requests: r.published,
    duration_s: r.durationS,
    ops_per_sec: r.achievedOpsPerSec,
    requested_ops_per_sec: r.requestedOpsPerSec,
    avg_latency_ms: empty ? null : ms(h.mean),
    min_latency_ms: empty ? null : ms(h.minNonZeroValue),
    p50_latency_ms: at(50),
    p95_latency_ms: at(95),
    p99_latency_ms: at(99),
    p999_latency_ms: at(99.9),
    max_latency_ms: empty ? null : ms(h.maxValue),
    latency_basis: "intended",
    send_lateness_p99_ms: r.sendLateness.totalCount === 0
      ? null
      : ms(hdrValueAtPercentile(r.sendLateness, 99)!),
    // a publisher never waits for a reply: its whole send delay is its lateness
    send_delay_p99_ms: r.sendLateness.totalCount === 0
      ? null
      : ms(hdrValueAtPercentile(r.sendLateness, 99)!),
    client_cpu_s: r.clientCpuS,
    client_cpu_us_per_request: r.published > 0 ? (r.clientCpuS / r.published) * 1e6 : null,
    error_count: r.errors,
    fan_out: r.fanOut,
    messages_published: r.published,
    messages_delivered: r.delivered,
    messages_lost: r.lost,
    messages_duplicated: r.duplicated,
    // the counts as measured: a run with connections lost or protocol errors is stored
    // incomplete or failed (`step.ts`), its row still gives the sweep its verdict; a step a
    // signal cut short did not run as asked (issue 30)
    complete: !r.interrupted,
    source_line: 0,
  }];
  const time_series: TimeSeriesRow[] = r.perSecond.map((b) => ({
    run_id: runId,
    test_index: 0,
    test,
    source: "kvlab",
    second: b.second,
    count: b.completed,
    ops_per_sec: b.completed,
    p50_latency_ms: b.completed > 0 ? b.p50FromIntendedMs : null,
    p99_latency_ms: b.completed > 0 ? b.p99FromIntendedMs : null,
    source_line: 0,
  }));
  const us = histogramInMicroseconds(h);
  const hdr_histograms: HdrHistogramsRow[] = [{
    run_id: runId,
    test_index: 0,
    test,
    source: "kvlab",
    source_file: null,
    start_time: window.start,
    end_time: window.end,
    lowest_discernible_value_us: 1,
    highest_trackable_value_us: us.highestTrackableValue,
    significant_digits: 3,
    total_count: us.totalCount,
    max_value_us: empty ? null : us.maxValue,
    compressed: encodeHistogram(us),
    derived: false,
    latency_basis: "intended",
    source_line: 0,
  }];
  return { results, time_series, hdr_histograms };
}
