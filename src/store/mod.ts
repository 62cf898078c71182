/**
 * The dataset: one {@link Dataset} handle owns its layout (batches, raw files, claims, locks, `tmp/`);
 * writers in batches, narrow lazy readers, compaction, and the count of Parquet reads.
 *
 * @module
 */

export * from "./dataset.ts";
export * from "./writer.ts";
export * from "./compact.ts";
export * from "./reads.ts";
export * from "./runs_follower.ts";
