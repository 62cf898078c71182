import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { loadResults, loadTable, scanTable } from "../../src/analyze/mod.ts";
import { ingestFile, newRunId, writeRun } from "../../src/collect/mod.ts";
import { DatasetError } from "../../src/errors.ts";

const DATA = new URL("../testdata/", import.meta.url).pathname;

Deno.test("loadTable() on an empty or missing dataset", () => {
  const dir = Deno.makeTempDirSync();
  assert.equal(loadTable(dir, "runs").height, 0);
  assert.deepEqual(loadResults(dir).height, 0);
  assert.throws(
    () => loadTable(`${dir}/nope`, "runs"),
    (e: unknown) => e instanceof DatasetError && /no such dataset/.test(e.message),
  );
  assert.throws(() => scanTable(dir, "nope"), /invalid table: nope/);
});

Deno.test("loadTable() refuses runs of another schema major version, naming them", async () => {
  const dir = Deno.makeTempDirSync();
  await ingestFile(DATA + "corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt", { data: dir });
  assert.equal(loadTable(dir, "runs").height, 1);
  const id = newRunId(new Date("2030-01-01T00:00:00Z"));
  await writeRun(dir, {
    run: {
      run_id: id,
      schema_version: "2.0",
      tool: "redis-benchmark",
      server: "redis",
      transport: "tcp",
      tags: "{}",
      ingested_at: new Date(),
      status: "complete",
      output_format: "quiet",
      warning_count: 0,
    },
    tables: {},
    raw: [],
  });
  assert.throws(
    () => loadTable(dir, "runs"),
    (e: unknown) =>
      e instanceof DatasetError && e.message.includes(id) &&
      /schema 2\.0; this kvlab reads schema 1\.x/.test(e.message),
  );
});

Deno.test("writeRun() never overwrites a run", async () => {
  const dir = Deno.makeTempDirSync();
  const run = {
    run_id: "20300101T000000Z-000000000000",
    tool: "redis-benchmark",
    server: "redis",
    transport: "tcp",
    tags: "{}",
    ingested_at: new Date(),
    status: "complete",
    output_format: "quiet",
    warning_count: 0,
  };
  await writeRun(dir, {
    run,
    tables: {},
    raw: [{ name: "a.txt", bytes: new TextEncoder().encode("one") }],
  });
  await assert.rejects(
    writeRun(dir, {
      run,
      tables: {},
      raw: [{ name: "a.txt", bytes: new TextEncoder().encode("two") }],
    }),
    DatasetError,
  );
  assert.equal(Deno.readTextFileSync(`${dir}/runs/${run.run_id}/raw/a.txt`), "one");
  assert.deepEqual([...Deno.readDirSync(`${dir}/tmp`)], []);
  await assert.rejects(
    writeRun(dir, { run: { ...run, run_id: "../x" }, tables: {}, raw: [] }),
    TypeError,
  );
});

Deno.test("loadResults() is lazy over many runs and keeps Parquet types", async () => {
  const dir = Deno.makeTempDirSync();
  for (const f of ["csv.csv", "full.txt", "quiet.txt"]) {
    await ingestFile(`${DATA}corpus/redis-benchmark_7.0.15_redis-7.0.15_${f}`, {
      data: dir,
      label: f,
    });
  }
  const df = loadResults(dir);
  assert.equal(df.height, 18);
  assert.ok(df.getColumn("ops_per_sec").dtype.equals(pl.Float64));
  assert.ok(df.getColumn("clients").dtype.equals(pl.Int64));
  assert.ok(df.getColumn("ingested_at").dtype.equals(pl.Datetime("ms", "UTC")));
  const byLabel = df.groupBy("label").agg(pl.col("ops_per_sec").count().alias("n")).sort("label");
  assert.deepEqual(byLabel.getColumn("n").toArray(), [6, 6, 6]);
});
