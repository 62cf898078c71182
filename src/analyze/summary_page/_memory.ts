/**
 * The memory section of the summary page: memory per size and arm (MiB), each candidate's
 * difference from the baseline in %, and the memory figure. Private to `summary_page/`.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { memoryChart } from "../charts/memory.ts";
import { memoryDifference, memoryTable } from "../memory.ts";
import { formatForPeople } from "../present.ts";
import { dropEmpty, md, type Resolved, type Section } from "./_section.ts";

/** Memory per size and arm (MiB), each candidate's difference in %, and the memory figure. */
export function memorySection(memory: pl.DataFrame, o: Resolved): Section {
  const lines = [
    "## Memory",
    "",
    formatForPeople(dropEmpty(memoryTable(memory, { by: o.by })), "md"),
  ];
  const table = memoryTable(memory, { by: o.by });
  const armsWithMemory = new Set((memory.getColumn(o.by).toArray() as unknown[]).map(String));
  for (const arm of o.arms) {
    if (arm === o.baseline || !armsWithMemory.has(arm) || !armsWithMemory.has(o.baseline)) continue;
    lines.push(
      `${md(arm)} against ${md(o.baseline)}, difference in % (negative: ${md(arm)} uses less):`,
      "",
      formatForPeople(dropEmpty(memoryDifference(table, o.baseline, arm)), "md"),
    );
  }
  const candidate = o.arms.find((a) => a !== o.baseline && armsWithMemory.has(a));
  return {
    lines,
    figures: [{
      name: "memory",
      caption: "Memory against keys, per arm",
      spec: memoryChart(memory, { by: o.by, baseline: o.baseline, candidate }),
    }],
  };
}
