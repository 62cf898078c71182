import assert from "node:assert/strict";
import { loadTable } from "../src/analyze/load.ts";
import { RunWriter } from "../src/store/writer.ts";
import { tableFrame } from "../src/frame.ts";
import { SCHEMA_VERSION, TABLES } from "../src/schema.ts";

Deno.test("SCHEMA.md documents every column of src/schema.ts, with its type", () => {
  const doc = Deno.readTextFileSync(new URL("../SCHEMA.md", import.meta.url));
  assert.match(
    doc,
    new RegExp(`^# kvlab dataset schema — version ${SCHEMA_VERSION.replace(".", "\\.")}$`, "m"),
  );
  for (const [table, cols] of Object.entries(TABLES)) {
    const start = doc.indexOf(`### \`${table}\``);
    assert.ok(start >= 0, `SCHEMA.md has no section for ${table}`);
    const section = doc.slice(start, doc.indexOf("\n### ", start + 1) >>> 0 || undefined);
    const documented = [...section.matchAll(/^\|\s*`(\w+)`\s*\|\s*(\w+)\s*\|\s*(yes|no)\s*\|/gm)]
      .map((
        m,
      ) => [m[1], m[2], m[3]]);
    assert.deepEqual(
      documented,
      cols.map((c) => [c.name, c.type, c.nullable ? "yes" : "no"]),
      table,
    );
  }
});

Deno.test("loadTable() reads the 1.3 tables, and 1.2 runs with the new columns as null", async (t) => {
  const dir = Deno.makeTempDirSync();
  await t.step("a dataset without the new tables gives empty frames with their columns", () => {
    for (const table of ["time_series", "hdr_histograms"]) {
      const df = loadTable(dir, table);
      assert.equal(df.height, 0);
      assert.deepEqual(df.columns, TABLES[table as keyof typeof TABLES].map((c) => c.name));
    }
  });
  const base = {
    tool: "memtier_benchmark",
    server: "redis",
    transport: "tcp",
    tags: "{}",
    ingested_at: new Date("2026-12-01T00:00:00Z"),
    status: "complete",
    output_format: "json",
    warning_count: 0,
  };
  const w = new RunWriter(dir, "20261201T000000Z-000000000013");
  w.commit({
    run: { ...base, run_id: w.runId, server_cpu_user_s: 1.5, server_cpu_sys_s: 0.25 },
    tables: {
      time_series: [{
        run_id: w.runId,
        test: "SET",
        source: "json",
        second: 0,
        count: 10,
        source_line: 7,
      }],
      hdr_histograms: [{
        run_id: w.runId,
        test: "TOTALS",
        source: "hgrm",
        total_count: 0,
        compressed: "HISTFAAAACF4nJNpmSzMwMDAyAABTFCaC0QoH3ZjsP8AEWAEAEsrA7A=",
        derived: false,
        source_line: 5,
      }],
    },
    raw: [],
  });
  // a 1.2 run: its runs.parquet has no server CPU columns
  const old = "20261130T000000Z-000000000012";
  Deno.mkdirSync(`${dir}/runs/${old}`, { recursive: true });
  const cols = TABLES.runs.filter((c) => !c.name.startsWith("server_cpu_")).map((c) => c.name);
  tableFrame("runs", [{ ...base, run_id: old, schema_version: "1.2", kvlab_version: "0.1.0" }])
    .select(...cols).writeParquet(`${dir}/runs/${old}/runs.parquet`);
  await t.step("runs of 1.2 and 1.3 load together; the old run's CPU is null", () => {
    const runs = loadTable(dir, "runs").sort("run_id");
    assert.deepEqual(runs.getColumn("schema_version").toArray(), ["1.2", SCHEMA_VERSION]);
    assert.deepEqual(runs.getColumn("server_cpu_user_s").toArray(), [null, 1.5]);
    assert.deepEqual(runs.getColumn("server_cpu_sys_s").toArray(), [null, 0.25]);
  });
  await t.step("the new tables' rows read back, unset nullable columns as null", () => {
    const ts = loadTable(dir, "time_series");
    assert.deepEqual(ts.select("test", "second", "count", "ops_per_sec").toRecords(), [
      { test: "SET", second: 0, count: 10, ops_per_sec: null },
    ]);
    const h = loadTable(dir, "hdr_histograms");
    assert.equal(h.getColumn("test").get(0), "TOTALS");
    assert.equal(h.getColumn("test_index").get(0), null);
  });
});
