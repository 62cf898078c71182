/**
 * Output formats: one room per tool's text, each the pure reader of that text plus its tool's
 * flag grammar.
 *
 * @module
 */

export * from "./command.ts";
export * from "./redis_benchmark/mod.ts";
export * from "./memtier/mod.ts";
export * from "./info/mod.ts";
export * from "./docker_stats/mod.ts";
export * from "./redis_cli/mod.ts";
