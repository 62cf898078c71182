/**
 * Output formats: one room per tool's text, each the pure reader of that text plus its tool's
 * flag grammar, behind one contract (`format.ts`) and one registry (`registry.ts`); the shell
 * transcripts they are pasted in, and how a text is recognised (`detect.ts`).
 *
 * @module
 */

export * from "./format.ts";
export * from "./registry.ts";
export * from "./command.ts";
export * from "./transcript.ts";
export * from "./detect.ts";
export * from "./redis_benchmark/mod.ts";
export * from "./memtier/mod.ts";
export * from "./info/mod.ts";
export * from "./docker_stats/mod.ts";
export * from "./redis_cli/mod.ts";
