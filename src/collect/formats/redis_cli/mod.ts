/**
 * redis-cli / valkey-cli replies kvlab reads: `DBSIZE` and `--latency` / `--latency-history`.
 *
 * @module
 */

export * from "./redis_cli.ts";
export * from "./format.ts";
