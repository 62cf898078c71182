/**
 * Plan kind `memory`: a key-count sweep per server and repetition (fill with pipelined SETs to
 * each count, let memory settle, record DBSIZE, INFO memory, process RSS and container memory),
 * each sweep one stored run.
 *
 * @module
 */

import type { MemorySweepCall } from "../../memory/tool.ts";
import type { Tool } from "../../tools/tool.ts";
import { toolFor } from "../tools.ts";
import { limitProblem, LIMITS } from "../../limits.ts";
import {
  cellRecord,
  interleavedCells,
  type PlanKind,
  type PlanReader,
  toolEvent,
} from "../kind.ts";
import type { CellRunner, KindContext, PlanBase, PlanCellBase, PlanCommon } from "../kind.ts";

/** The `memory:` section of a memory plan. */
export interface MemoryPlan {
  /** Key counts to measure at, ascending. */
  keyCounts: number[];
  valueSizeBytes: number;
  /** FLUSHDB before each sweep. */
  flush: boolean;
}

/** A checked plan of kind `memory`. */
export interface MemoryStudyPlan extends PlanBase {
  kind: "memory";
  memory: MemoryPlan;
}

/** One sweep to make: a server and a repetition (id `<plan>/<server>/memory/rep<k>`). */
export type MemoryCell = PlanCellBase;

/**
 * The `memory` plan kind.
 *
 * @example
 * ```ts
 * import { parsePlan, planCells } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan(
 *   "name: m\nkind: memory\nservers: [{name: a, url: 'redis://h'}]\nmemory: {key_counts: [10, 20]}\n",
 *   "m.yaml",
 * );
 * assert.ok(plan.kind === "memory");
 * assert.deepEqual(plan.memory, { keyCounts: [10, 20], valueSizeBytes: 3, flush: false });
 * assert.deepEqual(planCells(plan).map((c) => c.id), ["m/a/memory/rep1"]);
 * assert.throws(
 *   () => parsePlan("name: m\nkind: memory\nservers: [{name: a, url: 'redis://h'}]\ntests: [set]\n", "m.yaml"),
 *   /m\.yaml:4:\d+: tests: only for kind: redis-benchmark/,
 * );
 * ```
 */
export const memoryKind: PlanKind<MemoryStudyPlan, MemoryCell> = {
  fields: ["memory"],
  parse: parseMemoryPlan,
  // one sweep per server and repetition, interleaved
  cells: (plan) => interleavedCells(plan, [{}], () => "memory"),
  describe: describeMemoryCell,
  open: openMemory,
};

/** Reads the kind's fields of a plan (errors carry file:line). */
function parseMemoryPlan(read: PlanReader, common: PlanCommon): MemoryStudyPlan {
  read.mapping(["memory"], "expected { key_counts: [...], value_size_bytes, flush }");
  const keyCounts = read.list(["memory", "key_counts"], "expected a list of key counts")
    .map((_, i) => read.integer(["memory", "key_counts", i]));
  keyCounts.forEach((c, i) => {
    const why = limitProblem(c, LIMITS.memoryKeys);
    if (why) read.fail(["memory", "key_counts", i], why);
    if (i > 0 && c <= keyCounts[i - 1]) {
      read.fail(["memory", "key_counts", i], "expected ascending key counts");
    }
  });
  // checked before any load (`../../limits.ts`): a 10^12-byte value stopped the whole plan
  // with "Invalid string length" when its cell began
  const valueSizeBytes = read.integer(["memory", "value_size_bytes"], 3);
  const why = limitProblem(valueSizeBytes, LIMITS.valueBytes);
  if (why) read.fail(["memory", "value_size_bytes"], why);
  return {
    ...common,
    kind: "memory",
    memory: { keyCounts, valueSizeBytes, flush: read.boolean(["memory", "flush"], false) },
  };
}

/** The memory sweep, from the registry. */
function sweeper(): Tool<MemorySweepCall> {
  return toolFor("kvlab-memory-sweep", "kvlab-memory-sweep");
}

/** The sweep of a cell. */
function sweepCall(plan: MemoryStudyPlan, cell: MemoryCell): MemorySweepCall {
  const m = plan.memory;
  return {
    target: cell.server.target,
    keyCounts: m.keyCounts,
    valueSizeBytes: m.valueSizeBytes,
    flush: m.flush,
    container: cell.server.container,
  };
}

/** The command a cell runs, as `--dry-run` and progress show it (secrets redacted). */
function describeMemoryCell(plan: MemoryStudyPlan, cell: MemoryCell) {
  const m = plan.memory;
  return {
    command: sweeper().command(sweepCall(plan, cell)),
    // the SETs of the largest fill
    requests: m.keyCounts[m.keyCounts.length - 1],
  };
}

/** Prepares the plan's runs once; returns the function that runs one cell. */
function openMemory(plan: MemoryStudyPlan, ctx: KindContext): Promise<CellRunner<MemoryCell>> {
  return Promise.resolve((cell, emit) =>
    sweeper().run(sweepCall(plan, cell), {
      data: ctx.data,
      runner: ctx.runner,
      label: cell.label,
      ...cellRecord(plan, cell),
      timeoutMs: plan.timeoutS * 1000,
      signal: ctx.signal,
      toolVersion: null,
      onProgress: (e) => emit(toolEvent(e)),
      host: ctx.host,
      now: ctx.now,
    })
  );
}
