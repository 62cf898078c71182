/**
 * Rows of the dataset tables built from parsed results, shared by ingest and live collection.
 *
 * @module
 */

import type { Row } from "../schema.ts";
import type { HostFacts } from "./host.ts";
import type { RedisBenchmarkTest } from "./redis_benchmark.ts";
import type { ServerSnapshot } from "./server.ts";

/** The `results` and `latency_distribution` rows of tests, numbered from `firstIndex`. */
export function testRows(
  runId: string,
  tests: readonly RedisBenchmarkTest[],
  firstIndex: number,
): { results: Row[]; distribution: Row[] } {
  const results: Row[] = [];
  const distribution: Row[] = [];
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

/** `server_info` and `server_config` rows of server snapshots (`before`, `after`, …). */
export function snapshotRows(
  runId: string,
  snaps: ReadonlyArray<readonly [string, ServerSnapshot | undefined]>,
): { info: Row[]; config: Row[] } {
  const info: Row[] = [];
  const config: Row[] = [];
  for (const [phase, snap] of snaps) {
    if (!snap) continue;
    for (const f of snap.info) {
      info.push({
        run_id: runId,
        phase,
        section: f.section,
        key: f.key,
        value: f.value,
        value_num: f.valueNum,
      });
    }
    if (snap.dbsize !== null) {
      info.push({
        run_id: runId,
        phase,
        section: "DBSIZE",
        key: "dbsize",
        value: String(snap.dbsize),
        value_num: snap.dbsize,
      });
    }
    for (const [key, value] of snap.config) config.push({ run_id: runId, phase, key, value });
  }
  return { info, config };
}

/** The host columns of a `runs` row. */
export function hostColumns(host: HostFacts): Row {
  return {
    host: host.hostname,
    host_cpu_model: host.cpuModel,
    host_cpu_count: host.cpuCount,
    host_memory_bytes: host.memoryBytes,
    host_kernel: host.kernel,
    host_os: host.os,
    deno_version: host.denoVersion,
  };
}

/** A `memory` row with every measurement null, then the given fields. */
export function memoryRow(runId: string, step: number, server: string, fields: Row): Row {
  return {
    run_id: runId,
    step,
    server,
    keys: null,
    target_keys: null,
    value_size_bytes: null,
    used_memory_bytes: null,
    used_memory_rss_bytes: null,
    used_memory_peak_bytes: null,
    process_rss_bytes: null,
    container_memory_bytes: null,
    container_name: null,
    source_line: null,
    elapsed_s: null,
    ...fields,
  };
}
