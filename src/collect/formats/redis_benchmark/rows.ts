/**
 * The `results` and `latency_distribution` rows of redis-benchmark / valkey-benchmark tests,
 * shared by live collection and ingest. Pure: parsed tests in, rows out.
 *
 * @module
 */

import type { LatencyDistributionRow, ResultsRow } from "../../../schema.ts";
import type { RedisBenchmarkTest } from "./_types.ts";

/**
 * The `results` and `latency_distribution` rows of tests, numbered from `firstIndex`.
 *
 * @param runId The run.
 * @param tests Its tests.
 * @param firstIndex The `test_index` of the first.
 * @returns The rows.
 */
export function testRows(
  runId: string,
  tests: readonly RedisBenchmarkTest[],
  firstIndex: number,
): { results: ResultsRow[]; distribution: LatencyDistributionRow[] } {
  const results: ResultsRow[] = [];
  const distribution: LatencyDistributionRow[] = [];
  tests.forEach((t, k) => {
    const i = firstIndex + k;
    results.push({
      run_id: runId,
      test_index: i,
      test: t.test,
      test_title: t.testTitle,
      clients: t.clients,
      threads: t.threads,
      pipeline: t.pipeline,
      data_size_bytes: t.dataSizeBytes,
      requests: t.requests,
      keyspace: t.keyspace,
      duration_s: t.durationS,
      ops_per_sec: t.complete ? t.opsPerSec : null,
      avg_latency_ms: t.avgLatencyMs,
      min_latency_ms: t.minLatencyMs,
      p50_latency_ms: t.p50LatencyMs,
      p95_latency_ms: t.p95LatencyMs,
      p99_latency_ms: t.p99LatencyMs,
      p999_latency_ms: null,
      max_latency_ms: t.maxLatencyMs,
      keep_alive: t.keepAlive,
      host_config_save: t.hostConfigSave,
      host_config_appendonly: t.hostConfigAppendonly,
      cluster_nodes: t.clusterNodes,
      requested_ops_per_sec: t.requestedOpsPerSec,
      rate_avg_ops_per_sec: t.rpsAvg,
      rate_min_ops_per_sec: t.rpsMin,
      rate_p50_ops_per_sec: t.rpsP50,
      rate_p95_ops_per_sec: t.rpsP95,
      rate_p99_ops_per_sec: t.rpsP99,
      rate_max_ops_per_sec: t.rpsMax,
      hits_per_sec: null,
      misses_per_sec: null,
      throughput_kb_per_sec: null,
      aggregate: null,
      run_index: null,
      last_progress_ops_per_sec: t.lastProgressOpsPerSec,
      complete: t.complete,
      source_line: t.sourceLine,
    });
    for (const d of t.distribution) {
      distribution.push({
        run_id: runId,
        test_index: i,
        test: t.test,
        distribution: d.distribution,
        percentile: d.percentile,
        latency_ms: d.latencyMs,
        count: d.count,
        source_line: d.sourceLine,
      });
    }
  });
  return { results, distribution };
}
