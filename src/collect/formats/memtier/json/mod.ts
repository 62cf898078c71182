/**
 * memtier_benchmark's `--json-out-file`: the located, chunked JSON reader it is read with, the
 * blocks and per-type statistics kvlab reads from it (with the numbers memtier prints but never
 * computed, derived), and the file read in chunks so that its size never sets kvlab's memory.
 *
 * @module
 */

export * from "./parse.ts";
export * from "./stats.ts";
