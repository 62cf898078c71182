/**
 * memtier's `Total duration` on runs shorter than its series can cross-check (fewer than 2 full
 * seconds): two real sub-second request-count runs (`-n`) where memtier 2.3.0's start/end clock
 * merge printed a negative duration (−0.375 s, rates 0.0) and a duration one second too long
 * (1.426 s for a ~0.43 s run, so 14,030.86 ops/s instead of ~46,000). A request-count run is
 * timed by memtier's last progress line (requests over its threads' mean time, in µs): the rate
 * is stored from it, memtier's printed numbers kept as the tool's. Without that line no rate can
 * be justified: the run is stored incomplete.
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
const rowsOf = (run: string, o = { stderr: true }) =>
  memtierRows({
    json: parseMemtierJson(read(run + ".json")),
    jsonFile: "memtier.json",
    report: parseMemtierReport(read(run + ".txt")),
    stderr: o.stderr ? parseMemtierProgress(read(run + ".stderr.txt")) : null,
  }, "r1");

for (
  const [run, printedS, printedOps, progressOps] of [
    ["memtier-2.3.0_redis-7.0.15_t2c20-n500-negative-duration", -0.375, 0, 28613],
    ["memtier-2.3.0_redis-7.0.15_t4c20-n250-duration-1s-long", 1.426, 14030.86, 46060],
  ] as const
) {
  Deno.test(`a sub-second memtier run whose Total duration is ${printedS} s`, async (t) => {
    await t.step("is timed by its last progress line", () => {
      const rows = rowsOf(run);
      assert.equal(rows.complete, true, rows.reason ?? "");
      const totals = rows.results.find((r) => r.test === "TOTALS")!;
      assert.equal(totals.complete, true);
      assert.ok(Math.abs(totals.ops_per_sec! - progressOps) < 1e-6);
      assert.ok(Math.abs(totals.duration_s! - 20000 / progressOps) < 1e-9);
      assert.equal(totals.tool_ops_per_sec, printedOps);
      assert.equal(totals.tool_duration_s, printedS);
      const warning = rows.warnings.find((w) =>
        w.includes("timed by memtier's last progress line")
      );
      assert.ok(warning, rows.warnings.join("\n"));
      assert.match(warning, /a request-count run/);
      assert.match(warning, new RegExp(`progress lines ${progressOps} ops/s \\(20000 requests`));
    });
    await t.step("without its progress line, is not complete", () => {
      const rows = rowsOf(run, { stderr: false });
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
  });
}

Deno.test("a request-count run is timed by its last progress line, its sources' range said", () => {
  // 480,000 requests: Totals 38,062.28 ops/s over 12.611 s, progress avg 41,359, series 41,045
  const rows = rowsOf("memtier-2.3.0_redis-7.0.15_t4c10-n12000");
  assert.equal(rows.complete, true);
  const totals = rows.results.find((r) => r.test === "TOTALS" && r.aggregate === null)!;
  assert.ok(Math.abs(totals.ops_per_sec! - 41359) < 1e-6, String(totals.ops_per_sec));
  assert.ok(Math.abs(totals.duration_s! - 480000 / 41359) < 1e-9);
  assert.equal(totals.tool_ops_per_sec, 38062.28);
  assert.equal(totals.tool_duration_s, 12.611);
  // SET and GET rescaled as memtier's Totals were
  const set = rows.results.find((r) => r.test === "SET")!;
  assert.ok(Math.abs(set.ops_per_sec! - set.requests! / totals.duration_s!) < 1e-6);
  const warning = rows.warnings.find((w) => w.includes("timed by memtier's last progress line"));
  assert.ok(warning, rows.warnings.join("\n"));
  assert.match(warning, /its Totals 38062\.28 ops\/s over 12\.611 s/);
  assert.match(warning, /its per-second series 41044\.91 ops\/s over its full seconds/);
  assert.match(warning, /38,062–41,359 ops\/s/);
});
