/**
 * redis-benchmark / valkey-benchmark: the pure parser of every output variant ({@link parseRedisBenchmark}),
 * its live progress, and live collection ({@link runRedisBenchmark}).
 *
 * @module
 */

export * from "./parse.ts";
export * from "./run.ts";
