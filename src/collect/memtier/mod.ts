/**
 * Live collection with memtier_benchmark ({@link runMemtier}): its argv from one typed flags
 * object, the server snapshotted around it, every file it writes parsed by the pure readers of
 * `../formats/memtier/`.
 *
 * @module
 */

export * from "./run.ts";
export * from "./tool.ts";
