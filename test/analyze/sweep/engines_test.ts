// Sweep tables keep load generators apart: `--by server` over kvlab's open-loop steps (latency
// from the intended send) and memtier's rate-limited runs (latency from the send) against the
// same server gives one column per engine, never one pooled column.
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { formatSweep, sweepTable } from "../../../src/analyze/mod.ts";

const row = (
  run: string,
  tool: string,
  basis: string,
  requested: number,
  achieved: number,
  p50: number,
) => ({
  run_id: run,
  test_index: 0,
  test: "GET",
  clients: 10,
  server: "redis",
  label: `redis-${tool}`,
  tool,
  latency_basis: basis,
  requested_ops_per_sec: requested,
  ops_per_sec: achieved,
  p50_latency_ms: p50,
  p99_latency_ms: p50 * 10,
  complete: true,
});

const results = pl.DataFrame([
  row("k1", "kvlab-loadgen", "intended", 2000, 2000, 0.13),
  row("k2", "kvlab-loadgen", "intended", 60000, 47000, 9),
  row("m1", "memtier_benchmark", "send", 2000, 2001, 0.2),
  row("m2", "memtier_benchmark", "send", 60000, 60100, 0.4),
]);

Deno.test("sweepTable() --by server keeps the engines apart", async (t) => {
  await t.step("one arm per engine when an arm holds two", () => {
    const table = sweepTable({ results }, { by: "server" });
    assert.deepEqual(
      table.select("server", "requested_ops_per_sec", "verdict", "p50_latency_ms", "latency_basis")
        .toRecords(),
      [
        {
          server: "redis · kvlab-loadgen",
          requested_ops_per_sec: 2000,
          verdict: "sustained",
          p50_latency_ms: 0.13,
          latency_basis: "intended",
        },
        {
          server: "redis · kvlab-loadgen",
          requested_ops_per_sec: 60000,
          verdict: "NS",
          p50_latency_ms: 9,
          latency_basis: "intended",
        },
        {
          server: "redis · memtier_benchmark",
          requested_ops_per_sec: 2000,
          verdict: "sustained",
          p50_latency_ms: 0.2,
          latency_basis: "send",
        },
        {
          server: "redis · memtier_benchmark",
          requested_ops_per_sec: 60000,
          verdict: "sustained",
          p50_latency_ms: 0.4,
          latency_basis: "send",
        },
      ],
    );
    const md = formatSweep(table, "md", { by: "server" });
    assert.match(md, /redis · kvlab-loadgen \| redis · memtier_benchmark/);
    assert.match(md, /\| requested \(ops\/s\) \|/);
    assert.match(md, /Cells: p50 \/ p99 latency in ms/);
  });

  await t.step("arms of one engine keep their plain names", () => {
    const table = sweepTable({ results }, { by: "label" });
    assert.deepEqual(
      [...new Set(table.getColumn("label").toArray())],
      ["redis-kvlab-loadgen", "redis-memtier_benchmark"],
    );
  });

  await t.step("--format text rounds by unit, headers with units", () => {
    const odd = pl.DataFrame([
      row("x", "kvlab-loadgen", "intended", 10000, 29998 / 3, 0.446498010664),
    ]);
    const text = formatSweep(sweepTable({ results: odd }, { by: "server" }), "text");
    assert.doesNotMatch(text, /9999\.3333|0\.446498/);
    assert.match(text, /achieved \(ops\/s\)/);
    assert.match(text, / 9999\.33 +0\.446 /);
  });
});
