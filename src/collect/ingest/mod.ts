/**
 * Ingest: raw outputs and transcripts people already have, read by the pure parsers into a
 * dataset ({@link ingestPaths}); what a text is ({@link detectKind}); the transcript splitter;
 * the bundled studies and seed 000's published tables as datasets.
 *
 * @module
 */

export * from "./ingest.ts";
export * from "./detect.ts";
export * from "./transcript.ts";
export * from "./studies.ts";
export * from "./published_sweep.ts";
