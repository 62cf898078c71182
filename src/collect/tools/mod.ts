/**
 * What kvlab runs to measure: the {@link Tool} contract every tool and engine implements, and
 * finding the external tools (PATH, then the tools cache `.ci/install` builds them into).
 *
 * @module
 */

export * from "./find.ts";
export * from "./tool.ts";
export * from "./workload.ts";
