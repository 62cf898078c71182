/**
 * kvlab collect: parsers for the raw outputs of benchmark tools (pure functions of text), the
 * transcript splitter, redaction, and the dataset writer.
 *
 * @module
 */

export * from "./command.ts";
export * from "./detect.ts";
export * from "./ingest.ts";
export * from "./redact.ts";
export * from "./redis_benchmark.ts";
export * from "./store.ts";
export * from "./transcript.ts";
export * from "./host.ts";
export * from "./info.ts";
export * from "./plan.ts";
export * from "./plan_kinds/mod.ts";
export * from "./process.ts";
export * from "./redis_benchmark_run.ts";
export * from "./redis_server.ts";
export * from "./server.ts";
export * from "./study.ts";
export * from "./target.ts";
export * from "./studies.ts";
export * from "./units.ts";
export * from "./docker_stats.ts";
export * from "./redis_cli.ts";
export * from "./memory_sweep.ts";
export * from "./memtier.ts";
export * from "./memtier_rows.ts";
export * from "./memtier_run.ts";
export * from "./tools.ts";
export * from "./loadgen/mod.ts";
export * from "./compact.ts";
export * from "./pubsub_run.ts";
export * from "./open_loop_run.ts";
export * from "./open_loop_rows.ts";
export * from "./published_sweep.ts";
