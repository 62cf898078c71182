/**
 * kvlab collect: parsers for the raw outputs of benchmark tools (pure functions of text), the
 * transcript splitter, redaction, and the dataset writer.
 *
 * @module
 */

export * from "./command.ts";
export * from "./ingest/detect.ts";
export * from "./ingest/ingest.ts";
export * from "../text/redact.ts";
export * from "./redis_benchmark/parse.ts";
export * from "../store/writer.ts";
export * from "./ingest/transcript.ts";
export * from "./host.ts";
export * from "./memory/info.ts";
export * from "./plan/plan.ts";
export * from "./plan/kinds/mod.ts";
export * from "./process.ts";
export * from "./redis_benchmark/run.ts";
export * from "./collector.ts";
export * from "./redis_server.ts";
export * from "./server.ts";
export * from "./plan/study.ts";
export * from "./target.ts";
export * from "./ingest/studies.ts";
export * from "../text/units.ts";
export * from "./memory/docker_stats.ts";
export * from "./redis_cli.ts";
export * from "./memory/sweep.ts";
export * from "./memtier/mod.ts";
export * from "./memtier/rows.ts";
export * from "./memtier/run.ts";
export * from "./tools.ts";
export * from "./loadgen/mod.ts";
export * from "../store/compact.ts";
export * from "./pubsub/step.ts";
export * from "./loadgen/step.ts";
export * from "./loadgen/rows.ts";
export * from "./ingest/published_sweep.ts";
