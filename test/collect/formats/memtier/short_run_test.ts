/**
 * memtier's `Total duration` on runs shorter than its series can cross-check (fewer than 2 full
 * seconds): two real sub-second runs where memtier 2.3.0's start/end clock merge printed a
 * negative duration (−0.375 s, rates 0.0) and a duration one second too long (1.426 s for a
 * ~0.43 s run, so 14,030.86 ops/s instead of ~47,000). Neither rate can be justified: the runs
 * are stored incomplete with memtier's numbers kept as the tool's, never as the run's.
 */
import assert from "node:assert/strict";
import {
  memtierRows,
  parseMemtierJson,
  parseMemtierProgress,
  parseMemtierReport,
} from "../../../../src/collect/mod.ts";

import { readTestdata } from "../../../_support/testdata.ts";

const read = (p: string) => readTestdata("real/" + p);
const rowsOf = (run: string) =>
  memtierRows({
    json: parseMemtierJson(read(run + ".json")),
    jsonFile: "memtier.json",
    report: parseMemtierReport(read(run + ".txt")),
    stderr: parseMemtierProgress(read(run + ".stderr.txt")),
  }, "r1");

for (
  const [run, printedS, printedOps] of [
    ["memtier-2.3.0_redis-7.0.15_t2c20-n500-negative-duration", -0.375, 0],
    ["memtier-2.3.0_redis-7.0.15_t4c20-n250-duration-1s-long", 1.426, 14030.86],
  ] as const
) {
  Deno.test(`a sub-second memtier run whose Total duration is ${printedS} s is not complete`, () => {
    const rows = rowsOf(run);
    assert.equal(rows.complete, false);
    assert.match(rows.reason ?? "", /Total duration disagrees with its per-second series/);
    const totals = rows.results.find((r) => r.test === "TOTALS")!;
    assert.equal(totals.complete, false);
    assert.equal(totals.ops_per_sec, null);
    assert.equal(totals.duration_s, null);
    assert.equal(totals.tool_ops_per_sec, printedOps);
    assert.equal(totals.tool_duration_s, printedS);
    assert.equal(totals.requests, 20000);
    const warning = rows.warnings.find((w) => w.includes("cannot be true"));
    assert.ok(warning, rows.warnings.join("\n"));
    assert.match(warning, new RegExp(`Total duration ${printedS.toFixed(3)} s .* spans 1 s`));
  });
}
