/**
 * The dataset: one {@link Dataset} handle owns its layout (batches, raw files, claims, locks, `tmp/`);
 * writers in batches, lazy readers, compaction.
 *
 * @module
 */

export * from "./dataset.ts";
export * from "./writer.ts";
export * from "./compact.ts";
export * from "./layout.ts";
export * from "./reads.ts";
export * from "./runs_follower.ts";
