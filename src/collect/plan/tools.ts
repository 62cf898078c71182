/**
 * The registry of what plans run: every {@link Tool} kvlab drives, in one list. A plan kind asks
 * it for the tool its plan names (a program, a path to one, or an engine of a latency sweep) and
 * talks to that tool through the contract (`../tools/tool.ts`); a new tool is its module and one
 * line here.
 *
 * @module
 */

import type { FixedRate, FixedRateRun, Tool } from "../tools/tool.ts";
import { redisBenchmarkTool } from "../redis_benchmark/tool.ts";
import { memtierTool } from "../memtier/tool.ts";
import { kvlabLoadTool } from "../loadgen/tool.ts";
import { kvlabPubSubTool } from "../pubsub/tool.ts";
import { kvlabMemoryTool } from "../memory/tool.ts";

/** A tool of any call (each kind knows the calls of the tools it asks for). */
// deno-lint-ignore no-explicit-any -- the registry holds tools of different calls
export type AnyTool = Tool<any, any>;

/** Every tool and engine kvlab runs. */
export const TOOLS: readonly AnyTool[] = [
  redisBenchmarkTool,
  memtierTool,
  kvlabLoadTool,
  kvlabPubSubTool,
  kvlabMemoryTool,
];

/**
 * The tool a plan's program names: the tool of that name, or whose programs include the
 * program's base name (`./src/valkey-benchmark` is redis-benchmark's), else the kind's default.
 *
 * @param program A tool's name, a program name or a path.
 * @param fallback The registry name of the tool the kind runs when the program is none of them
 * (a path to a renamed binary).
 * @returns The tool.
 * @throws {TypeError} `invalid tool: …` when neither names one.
 *
 * @example
 * ```ts
 * import { toolFor } from "./tools.ts";
 * import assert from "node:assert/strict";
 * assert.equal(toolFor("./src/valkey-benchmark", "redis-benchmark").name, "redis-benchmark");
 * assert.equal(toolFor("/opt/mt", "memtier_benchmark").name, "memtier_benchmark");
 * assert.throws(() => toolFor("x", "y"), /invalid tool: y/);
 * ```
 */
export function toolFor(program: string, fallback: string): AnyTool {
  const base = program.slice(program.lastIndexOf("/") + 1);
  const named = TOOLS.find((t) => t.name === base || t.programs.includes(base));
  if (named) return named;
  const dflt = TOOLS.find((t) => t.name === fallback);
  if (!dflt) {
    throw new TypeError(`invalid tool: ${fallback} (expected ${TOOLS.map((t) => t.name)})`);
  }
  return dflt;
}

/** A tool that runs fixed-rate steps, with what it says of them. */
// deno-lint-ignore no-explicit-any -- as AnyTool
export type FixedRateTool = Tool<any, FixedRateRun> & { fixedRate: FixedRate<any> };

/**
 * The tools that run a latency sweep's fixed-rate steps, in registry order.
 *
 * @returns Each, with its `fixedRate`.
 *
 * @example
 * ```ts
 * import { fixedRateTools } from "./tools.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(fixedRateTools().map((t) => t.fixedRate.engine), ["memtier", "kvlab"]);
 * ```
 */
export function fixedRateTools(): FixedRateTool[] {
  return TOOLS.filter((t) => t.fixedRate !== undefined) as FixedRateTool[];
}
