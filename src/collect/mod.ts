/**
 * kvlab collect: parsers for the raw outputs of benchmark tools (pure functions of text), live
 * collectors on one skeleton ({@link collectRun}), ingest, study plans, and kvlab's own load
 * generators; re-exports the dataset writer and redaction. One folder per tool and per job, each
 * with its own face.
 *
 * @module
 */

export * from "./collector.ts";
export * from "./formats/mod.ts";
export * from "./host.ts";
export * from "./process.ts";
export * from "./redis_server.ts";
export * from "./server.ts";
export * from "./target.ts";
export * from "./tools/mod.ts";
export * from "./redis_benchmark/mod.ts";
export * from "./memtier/mod.ts";
export * from "./loadgen/mod.ts";
export * from "./pubsub/mod.ts";
export * from "./memory/mod.ts";
export * from "./cluster/mod.ts";
export * from "./docker/mod.ts";
export * from "./topology/mod.ts";
export * from "./failover/mod.ts";
export * from "./ingest/mod.ts";
export * from "./plan/mod.ts";
export * from "../store/writer.ts";
export * from "../store/compact.ts";
export * from "../store/dataset.ts";
export * from "../text/mod.ts";
