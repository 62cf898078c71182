/**
 * Ingest: raw outputs and transcripts people already have, read by the registry's formats into
 * a dataset ({@link ingestPaths}); the bundled studies and seed 000's published tables as
 * datasets.
 *
 * @module
 */

export * from "./ingest.ts";
export * from "./studies.ts";
export * from "./published_sweep.ts";
