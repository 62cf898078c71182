/**
 * "`kvlab sweep` shows two rows for one step" (issue 21). A memtier step asked for 10¹² ops/s
 * (before plans refused it) stored memtier's overflowed requested rate, 3,567,587,328, while its
 * run's tags kept the plan's rate; the sweep table then showed the step at 3,567,587,328 and the
 * plan's 10¹² as a second, `skipped`, row ("not run after the first NS"). A step is now placed at
 * the rate its plan asked for (its `requested_ops_per_sec` tag) when it has one.
 */

import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { sweepTable } from "../../src/analyze/sweep/sweep.ts";

const tags = (requested: number, planned: number[]) =>
  JSON.stringify({
    requested_ops_per_sec: String(requested),
    sweep_rates: planned.join(","),
  });

Deno.test("hostile: one sweep step is one row even when the tool stored another rate", () => {
  const results = pl.DataFrame([
    {
      run_id: "m1",
      test_index: 0,
      test: "TOTALS",
      clients: 4,
      label: "redis",
      tool: "memtier_benchmark",
      // memtier's rate overflowed: not the rate the plan asked for
      requested_ops_per_sec: 3_567_587_328,
      ops_per_sec: 120_000,
      p50_latency_ms: 0.3,
      p99_latency_ms: 0.9,
      complete: true,
      tags: tags(1e12, [1000, 1e12]),
    },
    {
      run_id: "m0",
      test_index: 0,
      test: "TOTALS",
      clients: 4,
      label: "redis",
      tool: "memtier_benchmark",
      requested_ops_per_sec: 1000,
      ops_per_sec: 1000,
      p50_latency_ms: 0.2,
      p99_latency_ms: 0.5,
      complete: true,
      tags: tags(1000, [1000, 1e12]),
    },
  ]);
  const t = sweepTable({ results });
  assert.deepEqual(
    t.select("label", "requested_ops_per_sec", "verdict", "repetitions").toRecords(),
    [
      { label: "redis", requested_ops_per_sec: 1000, verdict: "sustained", repetitions: 1 },
      { label: "redis", requested_ops_per_sec: 1e12, verdict: "NS", repetitions: 1 },
    ],
  );
});
