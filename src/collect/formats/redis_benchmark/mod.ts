/**
 * redis-benchmark / valkey-benchmark output: the pure parser of every variant from Redis 2.x to
 * Valkey 8.x ({@link parseRedisBenchmark}, {@link RedisBenchmarkParser}), the command's flag
 * grammar, the live-progress reader, and the rows of the `results` and `latency_distribution`
 * tables.
 *
 * @module
 */

export * from "./parse.ts";
export * from "./rows.ts";
export * from "./flags.ts";
export * from "./format.ts";
