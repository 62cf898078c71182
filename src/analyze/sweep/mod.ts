/**
 * Fixed-rate sweeps: per arm and requested rate, achieved rate and merged p50/p99 with the
 * sustained verdict; each arm's steps against the baseline's, with intervals and verdicts; the latency spectrum of a step; seed 000's published tables, read from the
 * dataset ingest wrote.
 *
 * @module
 */

export * from "./sweep.ts";
export * from "./compare.ts";
export * from "./compare_people.ts";
export * from "./spectrum.ts";
export * from "./published.ts";
