/**
 * Rows of the dataset tables from one open-loop step ({@link runOpenLoop}'s result): `results`
 * (one row per command type, plus `TOTALS` when there are both SETs and GETs), with latency
 * timed from the intended send time (`latency_basis = intended`) and from the actual send, the
 * generator's own send delay (whole, its queue part and its timer lateness), client CPU (and
 * per request) and errors; `hdr_histograms` (both bases of each
 * row, compressed, values in µs as the schema keeps them); `time_series` (the step's seconds,
 * warm-up left out). Pure: a result in, rows out.
 *
 * @module
 */

import { hdrValueAtPercentile } from "../../hdr.ts";
import type { HdrHistogramsRow, ResultsRow, TimeSeriesRow } from "../../schema.ts";
import {
  encodeHistogram,
  HIGHEST_LATENCY_NS,
  type Histogram,
  histogramInMicroseconds,
  latencyHistogram,
  latencySummary,
} from "./histogram.ts";
import type { CommandOutcome, OpenLoopResult } from "./open_loop.ts";
import { parseRatio, type RatioMix } from "./schedule.ts";

/** The workload of a step, as the rows record it. */
export interface OpenLoopWorkload {
  /** SET:GET mix. @default {"0:1"} */
  ratio?: string | RatioMix;
  /** Value size of SETs. */
  valueSize: number;
  /** Key space (keys chosen uniformly from it). */
  keys: number;
  /** When the measured window started (UTC); stored on the histograms. */
  startedAt?: Date | null;
}

/** The rows of one open-loop step, by table. */
export interface OpenLoopRows {
  results: ResultsRow[];
  hdr_histograms: HdrHistogramsRow[];
  time_series: TimeSeriesRow[];
}

/** Largest latency an `hdr_histograms` row holds: one hour in µs. */
const HIGHEST_US = HIGHEST_LATENCY_NS / 1000;

/**
 * The rows of one open-loop step.
 *
 * @param r What {@link runOpenLoop} measured.
 * @param runId The run the rows belong to.
 * @param w The workload (mix, value size, key space).
 * @returns `results`, `hdr_histograms` and `time_series` rows.
 *
 * @example
 * ```ts
 * import { latencyHistogram, openLoopRows, type OpenLoopResult } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const h = (ms: number, n: number) => {
 *   const x = latencyHistogram();
 *   x.recordValueWithCount(ms * 1e6, n);
 *   return x;
 * };
 * const sum = { count: 0, meanMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0 };
 * const r = {
 *   requestedOpsPerSec: 1000, achievedOpsPerSec: 990, sentOpsPerSec: 1000, durationS: 2,
 *   warmupS: 1, connections: 10, workers: 1, engine: "ffi", engineNote: null, pipeline: 1,
 *   arrival: "uniform",
 *   sent: 2000, completed: 1980, errors: 0, disconnects: 0, unsent: 0, unanswered: 20,
 *   errorSamples: [], latencyFromIntended: h(0.3, 1980), latencyFromSend: h(0.2, 1980),
 *   sendLateness: h(0.01, 2000), sendQueue: h(0, 2000), sendDelay: h(0.01, 2000),
 *   fromIntended: sum, fromSend: sum, lateness: sum, queue: sum, delay: sum,
 *   perSecond: [0, 1, 2].map((second) => ({
 *     second, sent: 1000, completed: 990, errors: 0, p50FromIntendedMs: 0.3,
 *     p99FromIntendedMs: 0.5,
 *   })),
 *   commands: [{ test: "GET", sent: 2000, completed: 1980, errors: 0,
 *     latencyFromIntended: h(0.3, 1980), latencyFromSend: h(0.2, 1980) }],
 *   clientCpuS: 0.5, setupCpuS: 0.1, requestsPerCpuS: 3960, clientCpuUsPerRequest: 250,
 *   clientRunQueueS: 0.01, stampedReplies: 0, wallS: 5, timer: null,
 *   interrupted: false,
 * } satisfies OpenLoopResult;
 * const rows = openLoopRows(r, "run1", { valueSize: 256, keys: 1000 });
 * assert.deepEqual(rows.results.map((x) => [x.test, x.requested_ops_per_sec, x.ops_per_sec]), [
 *   ["GET", 1000, 990],
 * ]);
 * assert.equal(rows.results[0].latency_basis, "intended");
 * assert.equal(rows.results[0].error_count, 20); // unanswered count as errors
 * assert.deepEqual(rows.hdr_histograms.map((x) => x.latency_basis), ["intended", "send"]);
 * assert.deepEqual(rows.time_series.map((x) => x.second), [0, 1]); // warm-up second left out
 * ```
 */
export function openLoopRows(r: OpenLoopResult, runId: string, w: OpenLoopWorkload): OpenLoopRows {
  const mix = typeof w.ratio === "object" ? w.ratio : parseRatio(w.ratio ?? "0:1");
  const out: OpenLoopRows = { results: [], hdr_histograms: [], time_series: [] };
  // the types the mix sends (an overloaded step may have measured none of them), SET first
  const types: CommandOutcome["test"][] = [
    ...(mix.set > 0 ? ["SET" as const] : []),
    ...(mix.get > 0 ? ["GET" as const] : []),
  ];
  const parts: (CommandOutcome | null)[] = types.map((test) =>
    r.commands.find((c) => c.test === test) ?? {
      test,
      sent: 0,
      completed: 0,
      errors: 0,
      latencyFromIntended: latencyHistogram(),
      latencyFromSend: latencyHistogram(),
    }
  );
  if (parts.length > 1) parts.push(null); // TOTALS
  const step = parts.length - 1; // the row that stands for the whole step
  parts.forEach((c, i) => {
    const share = c === null ? 1 : (c.test === "SET" ? mix.set : mix.get) / (mix.set + mix.get);
    const isStep = i === step;
    const intended = c?.latencyFromIntended ?? r.latencyFromIntended;
    const send = c?.latencyFromSend ?? r.latencyFromSend;
    const completed = c?.completed ?? r.completed;
    // the step's row also counts the connections lost (a run error, issue 21)
    const errors = (c?.errors ?? r.errors) + (isStep ? r.unanswered + r.disconnects : 0);
    const at: RowAt = { runId, index: i, test: c?.test ?? "TOTALS", w };
    out.results.push(resultRow(r, at, {
      requested: r.requestedOpsPerSec * share,
      completed,
      errors,
      intended,
      send,
      isStep,
    }));
    for (const [basis, h] of [["intended", intended], ["send", send]] as const) {
      out.hdr_histograms.push(histogramRow(r, at, { basis, ns: h }));
    }
  });
  const test = out.results[step].test;
  const warm = Math.ceil(r.warmupS - 1e-9);
  for (const b of r.perSecond) {
    if (b.second < warm) continue;
    out.time_series.push({
      run_id: runId,
      test_index: step,
      test,
      source: "kvlab",
      second: b.second - warm,
      count: b.completed,
      ops_per_sec: b.completed,
      p50_latency_ms: b.completed > 0 ? b.p50FromIntendedMs : null,
      p99_latency_ms: b.completed > 0 ? b.p99FromIntendedMs : null,
      source_line: 0,
    });
  }
  return out;
}

/** Where a row goes: its run, its test's index and name, and the step's workload. */
interface RowAt {
  runId: string;
  index: number;
  test: string;
  w: OpenLoopWorkload;
}

interface RowFacts {
  requested: number;
  completed: number;
  errors: number;
  intended: Histogram;
  send: Histogram;
  /** Whether this row stands for the whole step (TOTALS, or the only type). */
  isStep: boolean;
}

function resultRow(r: OpenLoopResult, at: RowAt, f: RowFacts): ResultsRow {
  const { runId, index, test, w } = at;
  const i = latencySummary(f.intended);
  const s = latencySummary(f.send);
  const any = f.intended.totalCount > 0;
  const ms = (v: number) => (any ? v : null);
  return {
    run_id: runId,
    test_index: index,
    test,
    test_title: test === "TOTALS" ? "Totals" : test,
    clients: r.connections,
    threads: r.workers,
    pipeline: r.pipeline,
    data_size_bytes: w.valueSize,
    requests: f.completed,
    keyspace: w.keys,
    duration_s: r.durationS,
    // the step's row: replies received in the window; a type's: its measured replies
    ops_per_sec: f.isStep ? r.achievedOpsPerSec : f.completed / r.durationS,
    avg_latency_ms: ms(i.meanMs),
    min_latency_ms: ms(f.intended.minNonZeroValue / 1e6),
    p50_latency_ms: ms(i.p50Ms),
    p95_latency_ms: ms(hdrValueAtPercentile(f.intended, 95)! / 1e6),
    p99_latency_ms: ms(i.p99Ms),
    p999_latency_ms: ms(i.p999Ms),
    max_latency_ms: ms(i.maxMs),
    requested_ops_per_sec: f.requested,
    latency_basis: "intended",
    p50_send_latency_ms: ms(s.p50Ms),
    p99_send_latency_ms: ms(s.p99Ms),
    send_lateness_p99_ms: r.lateness.count > 0 ? r.lateness.p99Ms : null,
    send_queue_p99_ms: r.queue.count > 0 ? r.queue.p99Ms : null,
    send_delay_p99_ms: r.delay.count > 0 ? r.delay.p99Ms : null,
    client_cpu_s: f.isStep ? r.clientCpuS : null,
    client_cpu_us_per_request: f.isStep ? r.clientCpuUsPerRequest : null,
    client_run_queue_s: f.isStep ? r.clientRunQueueS : null,
    error_count: f.errors,
    // a step that lost connections, or that a signal cut short, did not run as asked
    complete: r.disconnects === 0 && !r.interrupted,
    source_line: 0,
  };
}

function histogramRow(
  r: OpenLoopResult,
  at: RowAt,
  h: { basis: "intended" | "send"; ns: Histogram },
): HdrHistogramsRow {
  const { runId, index, test, w } = at;
  const { basis, ns } = h;
  const us = histogramInMicroseconds(ns);
  const start = w.startedAt ?? null;
  return {
    run_id: runId,
    test_index: index,
    test,
    source: "kvlab",
    start_time: start,
    end_time: start ? new Date(start.getTime() + r.durationS * 1000) : null,
    lowest_discernible_value_us: 1,
    highest_trackable_value_us: HIGHEST_US,
    significant_digits: 3,
    total_count: us.totalCount,
    max_value_us: us.totalCount > 0 ? us.maxValue : null,
    compressed: encodeHistogram(us),
    derived: false,
    latency_basis: basis,
    source_line: 0,
  };
}
