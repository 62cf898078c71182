/**
 * kvlab collect: parsers for the raw outputs of benchmark tools (pure functions of text), the
 * transcript splitter, redaction, and the dataset writer.
 *
 * @module
 */

export * from "./command.ts";
export * from "./detect.ts";
export * from "./ingest.ts";
export * from "./redact.ts";
export * from "./redis_benchmark.ts";
export * from "./store.ts";
export * from "./transcript.ts";
