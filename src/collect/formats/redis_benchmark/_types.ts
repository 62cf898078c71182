/**
 * The records the redis-benchmark parser produces: a run, its tests, their latency distribution
 * rows, warnings, and the parser's options. `redis_benchmark.ts` re-exports every one of them.
 *
 * @module
 */

import type { BenchmarkArgs } from "./flags.ts";

/** Which output variant a run was printed in. */
export type RedisBenchmarkFormat =
  /** 6.2+ default report with distributions and a summary table. */
  | "full"
  /** ≤6.0 default report: `x% <= N milliseconds` and `N requests per second`. */
  | "full-legacy"
  /** `-q` with `, p50=… msec` (6.2+). */
  | "quiet"
  /** `-q` without p50 (≤6.0). */
  | "quiet-legacy"
  /** `--csv` with the header row (6.2+). */
  | "csv"
  /** `--csv` without header, two fields (≤6.0). */
  | "csv-legacy"
  /** Variants mixed in one output. */
  | "mixed"
  /** No result at all (only errors or progress). */
  | "none";

/** Which block of a report a latency distribution row comes from. */
export type DistributionKind = "percentile" | "cumulative" | "legacy";

/** One row of a latency distribution block. */
export interface DistributionRow {
  /** Block the row was printed in. */
  distribution: DistributionKind;
  /** Percent of requests at or below `latencyMs` (0–100). */
  percentile: number;
  /** Latency bound, ms. */
  latencyMs: number;
  /** Cumulative count of requests at or below `latencyMs`; `null` in ≤6.0 output. */
  count: number | null;
  /** Line of the raw text. */
  sourceLine: number;
}

/** One test of one run, as printed (plus what the command line says, once merged). */
export interface RedisBenchmarkTest {
  /** Normalized test name: `SET`, `LRANGE_100`, `LPUSH_FOR_LRANGE`, `MSET`, … */
  test: string;
  /** The title as printed: `LRANGE_100 (first 100 elements)`. */
  testTitle: string;
  clients: number | null;
  threads: number | null;
  pipeline: number | null;
  dataSizeBytes: number | null;
  requests: number | null;
  keyspace: number | null;
  durationS: number | null;
  opsPerSec: number | null;
  avgLatencyMs: number | null;
  minLatencyMs: number | null;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
  p99LatencyMs: number | null;
  maxLatencyMs: number | null;
  keepAlive: boolean | null;
  /** `host configuration "save"` as printed ("" when save is disabled). */
  hostConfigSave: string | null;
  /** `host configuration "appendonly"` as printed. */
  hostConfigAppendonly: string | null;
  /** Number of cluster nodes in `--cluster` mode. */
  clusterNodes: number | null;
  /** Valkey `--rps`: the requested rate. */
  requestedOpsPerSec: number | null;
  /** Valkey `--rps`: RPS distribution (reqs/sec) avg/min/p50/p95/p99/max. */
  rpsAvg: number | null;
  rpsMin: number | null;
  rpsP50: number | null;
  rpsP95: number | null;
  rpsP99: number | null;
  rpsMax: number | null;
  /** Last live-progress throughput of a test that did not finish: never a result. */
  lastProgressOpsPerSec: number | null;
  /** Whether the tool finished printing this test's result. */
  complete: boolean;
  /** Line of the raw text the test's result (or report header) was read from. */
  sourceLine: number;
  /** Latency distribution rows of this test. */
  distribution: DistributionRow[];
}

/** A note about a line that was not understood or looked wrong. */
export interface ParseWarning {
  line: number;
  message: string;
  text: string;
}

/** What a redis-benchmark output holds. */
export interface RedisBenchmarkRun {
  format: RedisBenchmarkFormat;
  /** The tests (those not already taken with `RedisBenchmarkParser.takeCompleted`). */
  tests: RedisBenchmarkTest[];
  /** Number of tests in the whole output, taken ones included. */
  testCount: number;
  /** True when every test finished and nothing was cut. */
  complete: boolean;
  /** Error messages printed by the tool (connection refused, server errors …). */
  errors: { line: number; text: string }[];
  warnings: ParseWarning[];
  /** Number of live-progress updates skipped. */
  progressUpdates: number;
}

/** Options of `parseRedisBenchmark`. */
export interface ParseRedisBenchmarkOptions {
  /**
   * Name of the file the text came from, used in errors.
   * @default {"<text>"}
   */
  file?: string;
  /**
   * Line number of the text's first line in that file (for blocks of a transcript).
   * @default {1}
   */
  firstLine?: number;
  /**
   * The command's flags, when known: fill what the output does not print (pipeline, keyspace,
   * and everything in `-q` / `--csv` modes). Printed values win.
   */
  args?: BenchmarkArgs;
}
