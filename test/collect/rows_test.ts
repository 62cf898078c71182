import assert from "node:assert/strict";
import { type TableName, TABLES } from "../../src/schema.ts";
import { tableFrame } from "../../src/frame.ts";
import { hostColumns, memoryRow, runRow, snapshotRows } from "../../src/collect/_rows.ts";
import { infoNumber, memoryViews } from "../../src/collect/formats/info/info.ts";
import { testRows } from "../../src/collect/formats/redis_benchmark/rows.ts";
import { parseRedisBenchmark } from "../../src/collect/formats/redis_benchmark/parse.ts";
import { parseInfo } from "../../src/collect/formats/info/info.ts";

const fixture = (name: string) =>
  Deno.readTextFileSync(new URL(`../testdata/corpus/${name}`, import.meta.url));

/** Every key of every row is a column of its table, and the rows make a frame. */
function assertRowsFit(table: TableName, rows: readonly object[]) {
  assert.ok(rows.length > 0, `no ${table} rows to check`);
  const names = new Set<string>(TABLES[table].map((c) => c.name));
  for (const r of rows) {
    for (const k of Object.keys(r)) assert.ok(names.has(k), `${table} has no column ${k}`);
  }
  assert.equal(tableFrame(table, rows as never).height, rows.length);
}

const host = {
  hostname: "h",
  cpuModel: "cpu",
  cpuCount: 2,
  memoryBytes: 1 << 30,
  kernel: "6.1",
  os: "Debian",
  denoVersion: "2.9.6",
};

Deno.test("row builders write only the schema's columns", async (t) => {
  await t.step("runRow() with host facts", () => {
    const row = runRow({
      run_id: "r1",
      tool: "redis-benchmark",
      server: "redis",
      transport: "tcp",
      ingested_at: new Date(0),
      status: "complete",
      output_format: "full",
      tags: { arm: "a" },
    }, host);
    assert.equal(row.host_cpu_count, 2);
    assert.equal(row.tags, '{"arm":"a"}');
    assertRowsFit("runs", [{ ...row, schema_version: "1.2", kvlab_version: "0" }]);
    assertRowsFit("runs", [{
      ...hostColumns(host),
      run_id: "r",
      schema_version: "1.2",
      kvlab_version: "0",
      tool: "t",
      server: "s",
      transport: "tcp",
      tags: "{}",
      ingested_at: new Date(0),
      status: "complete",
      output_format: "raw",
      warning_count: 0,
    }]);
  });

  await t.step("testRows() from a real redis-benchmark report", () => {
    const parsed = parseRedisBenchmark(fixture("redis-benchmark_7.0.15_redis-7.0.15_full.txt"));
    const rows = testRows("r1", parsed.tests, 0);
    assertRowsFit("results", rows.results);
    assertRowsFit("latency_distribution", rows.distribution);
  });

  await t.step("snapshotRows(), memoryRow() and memoryViews() from a real INFO", () => {
    const info = parseInfo(fixture("redis-cli_7.0.15_redis-7.0.15_info-all.txt"));
    const snaps = snapshotRows("r1", [["before", { info, dbsize: 3, config: [["save", ""]] }]]);
    assertRowsFit("server_info", snaps.info);
    assertRowsFit("server_config", snaps.config);
    const views = memoryViews(info);
    assert.equal(views.used_memory_bytes, infoNumber(info, "used_memory"));
    assert.ok((views.used_memory_bytes ?? 0) > 0);
    assertRowsFit("memory", [memoryRow("r1", { step: 0, server: "redis" }, { keys: 1, ...views })]);
  });

  await t.step("a misspelt column fails with the table and the key named", () => {
    const row = memoryRow("r1", { step: 0, server: "redis" }, {});
    assert.throws(
      () => tableFrame("memory", [{ ...row, used_memroy_bytes: 1 } as typeof row]),
      (e: Error) =>
        e instanceof TypeError && /memory has no column "used_memroy_bytes"/.test(e.message),
    );
    // the same for large frames, built column by column
    const many = Array.from(
      { length: 100 },
      (_, i) => memoryRow("r1", { step: i, server: "redis" }, {}),
    );
    many[70] = { ...many[70], keyz: 5 } as typeof row;
    assert.throws(() => tableFrame("memory", many), /memory has no column "keyz"/);
  });
});
