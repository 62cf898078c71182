import { SCHEMA_VERSION } from "../../src/schema.ts";
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { loadResults, loadTable, scanTable } from "../../src/analyze/mod.ts";
import { ingestFile, newRunId, writeRun } from "../../src/collect/mod.ts";
import { DatasetError } from "../../src/errors.ts";
import { Dataset } from "../../src/store/dataset.ts";
import { minimalRun as storedRun } from "../_support/stored.ts";

/** The smallest valid `runs` row, of a schema version when given. */
const minimalRun = (runId: string, schemaVersion?: string) =>
  storedRun(runId, schemaVersion ? { schema_version: schemaVersion } : {});

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
  await writeRun(dir, { run: minimalRun(id, "2.0"), tables: {}, raw: [] });
  assert.throws(
    () => loadTable(dir, "runs"),
    (e: unknown) =>
      e instanceof DatasetError && e.message.includes(id) &&
      /schema 2\.0; this kvlab reads schema 1\.x/.test(e.message),
  );
});

Deno.test("writeRun() never overwrites a run", async () => {
  const dir = Deno.makeTempDirSync();
  const run = minimalRun("20300101T000000Z-000000000000");
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
  const [raw] = Dataset.open(dir).runRaw(run.run_id);
  assert.equal(new TextDecoder().decode(raw.bytes), "one");
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

Deno.test("loadResults() reads only the runs, tests, labels, servers and columns asked for", async (t) => {
  const dir = Deno.makeTempDirSync();
  for (
    const [f, server] of [["csv.csv", "redis"], ["full.txt", "valkey"], ["quiet.txt", "redis"]]
  ) {
    await ingestFile(`${DATA}corpus/redis-benchmark_7.0.15_redis-7.0.15_${f}`, {
      data: dir,
      label: f,
      server,
    });
  }
  const all = loadResults(dir);
  const same = (narrow: pl.DataFrame, eager: pl.DataFrame) => {
    assert.ok(narrow.height > 0 && narrow.height < all.height, `${narrow.height} rows`);
    assert.ok(narrow.frameEqual(eager, true));
  };
  const oneRun = String(all.getColumn("run_id").get(0));
  await t.step("one run, some tests: the rows the eager filter keeps, in its order", () => {
    same(
      loadResults(dir, { runIds: [oneRun], tests: ["SET", "GET"] }),
      all.filter(pl.col("run_id").eq(pl.lit(oneRun)).and(pl.col("test").isIn(["SET", "GET"]))),
    );
    assert.equal(loadResults(dir, { runIds: [] }).height, 0);
  });
  await t.step("labels and servers pick runs by their own columns", () => {
    const mid = all.getColumn("ops_per_sec").median();
    same(
      loadResults(dir, { labels: ["full.txt"] }),
      all.filter(pl.col("label").eq(pl.lit("full.txt"))),
    );
    same(
      loadResults(dir, { servers: ["redis"] }),
      all.filter(pl.col("server").eq(pl.lit("redis"))),
    );
    same(
      loadResults(dir, { servers: ["redis"], where: pl.col("ops_per_sec").gt(mid) }),
      all.filter(pl.col("server").eq(pl.lit("redis")).and(pl.col("ops_per_sec").gt(mid))),
    );
  });
  await t.step("columns of results and of runs, in the order asked", () => {
    const df = loadResults(dir, { columns: ["label", "test", "ops_per_sec"] });
    assert.deepEqual(df.columns, ["label", "test", "ops_per_sec"]);
    assert.ok(df.frameEqual(all.select("label", "test", "ops_per_sec"), true));
    assert.throws(() => loadResults(dir, { columns: ["opsPerSec"] }), /invalid column: opsPerSec/);
  });
  await t.step("the runs loaded already are joined on, not read again", () => {
    const runs = loadTable(dir, "runs");
    assert.ok(loadResults(dir, { runs }).frameEqual(all, true));
    same(
      loadResults(dir, { runs, labels: ["quiet.txt"] }),
      all.filter(pl.col("label").eq(pl.lit("quiet.txt"))),
    );
  });
  await t.step("the filter is on the Parquet scan, before anything is collected", () => {
    const plan = scanTable(dir, "results", { runIds: [oneRun], columns: ["test"] })
      .describeOptimizedPlan();
    const scans = plan.split("Parquet SCAN").slice(1);
    assert.equal(scans.length, 3); // one batch per ingest
    for (const scan of scans) {
      assert.match(scan, /^[^\n]*\n\s*PROJECT 2\/\d+ COLUMNS\n\s*SELECTION: .*run_id.*is_in/);
    }
  });
});

Deno.test("tableFrame() gives every table the schema's exact types, nulls included", async () => {
  const { tableFrame } = await import("../../src/frame.ts");
  const { TABLES } = await import("../../src/schema.ts");
  const { dtype } = await import("../../src/frame.ts");
  for (const [name, spec] of Object.entries(TABLES)) {
    for (const rows of [[], [{ run_id: "r" }]]) {
      const filled = rows.map((r) => {
        const o: Record<string, unknown> = { ...r };
        for (const c of spec) {
          if (!c.nullable && o[c.name] === undefined) {
            o[c.name] = c.type === "string"
              ? "x"
              : c.type === "bool"
              ? true
              : c.type === "timestamp"
              ? new Date(0)
              : 1;
          }
        }
        return o;
      });
      const df = tableFrame(name as keyof typeof TABLES, filled as never);
      assert.deepEqual(df.columns, spec.map((c) => c.name));
      spec.forEach((c) =>
        assert.ok(df.getColumn(c.name).dtype.equals(dtype(c.type)), `${name}.${c.name}`)
      );
    }
  }
  assert.throws(
    () => tableFrame("results", [{ run_id: "r" }] as never),
    /results\.test_index must not be null/,
  );
});

Deno.test("tableFrame() builds the same frame from few rows and from many", async () => {
  const { tableFrame } = await import("../../src/frame.ts");
  const row = (i: number) => ({
    run_id: "r",
    test_index: i,
    test: "SET",
    test_title: "SET",
    complete: i % 3 !== 0,
    source_line: i + 1,
    ops_per_sec: i % 5 === 0 ? null : i * 1.25,
    clients: i % 2 ? 50 : null,
    keep_alive: i % 4 === 0 ? null : i % 2 === 0,
    duration_s: i % 7 === 0 ? Infinity : i % 7 === 1 ? NaN : i / 8,
    requests: i % 6 === 0 ? undefined : 2 ** 52 + i,
  });
  const many = Array.from({ length: 200 }, (_, i) => row(i));
  const big = tableFrame("results", many);
  const small = pl.concat(
    Array.from({ length: 10 }, (_, k) => tableFrame("results", many.slice(k * 20, k * 20 + 20))),
  );
  assert.deepEqual(big.toRecords(), small.toRecords());
  assert.deepEqual(big.schema, small.schema);
  assert.equal(big.getColumn("p999_latency_ms").nullCount(), 200);
  assert.equal(big.getColumn("duration_s").nullCount(), 58);
  assert.equal(big.getColumn("requests").toArray()[1], 2 ** 52 + 1);
  assert.ok(big.getColumn("requests").dtype.equals(pl.Int64));
  assert.throws(
    () =>
      tableFrame(
        "results",
        many.map((r, i) => (i === 150 ? { ...r, source_line: null } : r) as never),
      ),
    /results\.source_line must not be null/,
  );
});

Deno.test("runs written with schema 1.0 load under 1.1, new columns as null", async () => {
  const dir = Deno.makeTempDirSync();
  await ingestFile(DATA + "corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt", { data: dir });
  // a 1.0 run: the runs.parquet of that time had no 1.1 columns
  const id = "20250101T000000Z-00000000aaaa";
  Deno.mkdirSync(`${dir}/runs/${id}`, { recursive: true });
  pl.DataFrame({
    run_id: [id],
    schema_version: ["1.0"],
    tool: ["redis-benchmark"],
    status: ["complete"],
  }).writeParquet(`${dir}/runs/${id}/runs.parquet`);
  const runs = loadTable(dir, "runs").sort("run_id");
  assert.equal(runs.height, 2);
  assert.equal(runs.getColumn("plan_name").get(0), null);
  assert.equal(runs.getColumn("schema_version").get(0), "1.0");
  assert.equal(runs.getColumn("schema_version").get(1), SCHEMA_VERSION);
});

Deno.test("loadResults() orders rows by run id, then test, as a join and a sort would", async (t) => {
  /** What loadResults() returned before it joined onto the sorted runs. */
  const joinThenSort = (dir: string) => {
    const results = loadTable(dir, "results").filter(pl.col("complete"));
    const runs = loadTable(dir, "runs");
    return results.join(runs, { on: "run_id", how: "left" }).sort(["run_id", "test_index"]);
  };
  const dir = Deno.makeTempDirSync();
  for (const f of ["csv.csv", "full.txt", "quiet.txt", "threads2.txt"]) {
    await ingestFile(`${DATA}corpus/redis-benchmark_7.0.15_redis-7.0.15_${f}`, { data: dir });
  }
  await t.step("runs written in any order", () => {
    const df = loadResults(dir);
    assert.equal(df.height, 24);
    assert.ok(df.frameEqual(joinThenSort(dir), true));
    const ids = df.getColumn("run_id").toArray() as string[];
    assert.deepEqual(ids, [...ids].sort());
  });
  await t.step("tests written out of order in a run", async () => {
    const results = loadTable(dir, "results").head(3).withColumns(
      pl.lit("20000101T000000Z-000000000000").alias("run_id"),
      pl.Series("test_index", [2, 0, 1], pl.Int64),
    );
    await writeRun(dir, {
      run: minimalRun("20000101T000000Z-000000000000"),
      tables: { results: results.toRecords() as never },
      raw: [],
    });
    const df = loadResults(dir);
    assert.equal(df.height, 27);
    assert.deepEqual(df.getColumn("test_index").head(3).toArray(), [0, 1, 2]);
    assert.ok(df.frameEqual(joinThenSort(dir), true));
  });
});
