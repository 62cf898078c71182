/**
 * kvlab analyze: load datasets into nodejs-polars DataFrames and format tables for people.
 *
 * @module
 */

export * from "./load.ts";
export * from "./format.ts";
