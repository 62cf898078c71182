/**
 * Live collection with redis-benchmark / valkey-benchmark ({@link runRedisBenchmark}); the pure
 * parser of its output is `../formats/redis_benchmark/`.
 *
 * @module
 */

export * from "./run.ts";
export * from "./tool.ts";
