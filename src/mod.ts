/**
 * kvlab: collect, ingest and analyze Redis-family benchmark results.
 *
 * @module
 */

export * from "./errors.ts";
export * from "./schema.ts";
export * from "./frame.ts";
export * from "./version.ts";
export * from "./fixed_rate.ts";
