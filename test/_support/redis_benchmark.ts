/**
 * Test support: a redis-benchmark / valkey-benchmark test's numbers in the order the tools print
 * them (the `--csv` columns and the 6.2+ summary table), for comparing a parsed run with the
 * printed text or with a table of expected values.
 *
 * @module
 */

import type { RedisBenchmarkRun } from "../../src/collect/mod.ts";

/** One test of a parsed run. */
export type BenchmarkTest = RedisBenchmarkRun["tests"][number];

/** The latency columns, in the tools' order. */
const LATENCIES = ["avg", "min", "p50", "p95", "p99", "max"] as const;

/**
 * A test's latency summary in the tools' column order: avg, min, p50, p95, p99, max (ms).
 *
 * @param t The parsed test.
 * @returns Its six latencies.
 */
export function latencySummary(t: BenchmarkTest): (number | null)[] {
  return LATENCIES.map((k) => t[`${k}LatencyMs` as const]);
}

/**
 * A test as a `--csv` line reads: its normalized name, ops/sec, then {@link latencySummary}.
 *
 * @param t The parsed test.
 * @returns `[test, opsPerSec, avg, min, p50, p95, p99, max]`.
 */
export function csvRow(t: BenchmarkTest): (string | number | null)[] {
  return [t.test, t.opsPerSec, ...latencySummary(t)];
}
