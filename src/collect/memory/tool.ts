/**
 * The memory sweep as a {@link Tool}: kvlab's own collector over a Redis client (nothing to
 * find, kvlab's version), filling a server to each key count and reading its memory views, each
 * sweep one stored run ({@link runMemorySweep}); its progress is how far each fill got.
 *
 * @module
 */

import { prepareEngine, type Tool } from "../tools/tool.ts";
import type { CollectedRun } from "../collector.ts";
import type { ServerTarget } from "../target.ts";
import { runMemorySweep } from "./sweep.ts";

/** One memory sweep to make. */
export interface MemorySweepCall {
  target: ServerTarget;
  /** Key counts to measure at, ascending. */
  keyCounts: number[];
  valueSizeBytes: number;
  /** FLUSHDB first. */
  flush: boolean;
  /** Container whose `docker stats` memory to record. */
  container?: string;
}

/**
 * How a sweep is shown (`--dry-run`, progress) and stored.
 *
 * @param call The sweep.
 * @returns The line.
 *
 * @example
 * ```ts
 * import { memorySweepCommand, parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   memorySweepCommand({ target: parseServerUrl("redis://:pw@h:1"), keyCounts: [10, 20],
 *     valueSizeBytes: 3, flush: true }),
 *   "memory sweep of redis://:***@h:1: 10, 20 keys, 3-byte values (FLUSHDB first)",
 * );
 * ```
 */
export function memorySweepCommand(call: MemorySweepCall): string {
  return `memory sweep of ${call.target.display}: ${call.keyCounts.join(", ")} keys, ` +
    `${call.valueSizeBytes}-byte values` + (call.flush ? " (FLUSHDB first)" : "");
}

/**
 * The memory sweep (`kind: memory`).
 *
 * @example
 * ```ts
 * import { kvlabMemoryTool } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(kvlabMemoryTool.external, false);
 * ```
 */
export const kvlabMemoryTool: Tool<MemorySweepCall> = {
  name: "kvlab-memory-sweep",
  programs: ["kvlab"],
  external: false,
  formats: [],
  prepare: () => prepareEngine("kvlab"),
  argv: (call) => ["kvlab", "memory-sweep", call.target.display, ...call.keyCounts.map(String)],
  command: memorySweepCommand,
  run: async (call, ctx): Promise<CollectedRun> => {
    const sweep = await runMemorySweep({
      data: ctx.data,
      target: call.target,
      label: ctx.label,
      tags: ctx.tags,
      plan: ctx.plan,
      watch: ctx.watch,
      keyCounts: call.keyCounts,
      valueSizeBytes: call.valueSizeBytes,
      flush: call.flush,
      container: call.container,
      runner: ctx.runner,
      maxDurationS: ctx.timeoutMs / 1000,
      signal: ctx.signal,
      onProgress: (p) => ctx.onProgress?.({ kind: "fill", keys: p.keys, target: p.target }),
      host: ctx.host,
      now: ctx.now,
    });
    return {
      runId: sweep.runId,
      status: sweep.status,
      tests: sweep.steps,
      reason: sweep.runReason,
      command: memorySweepCommand(call),
      interrupted: ctx.signal?.aborted ?? false,
      results: [...sweep.results],
    };
  },
};
