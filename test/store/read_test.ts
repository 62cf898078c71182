import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { ingestPaths } from "../../src/collect/mod.ts";
import { DatasetError } from "../../src/errors.ts";
import { Dataset } from "../../src/store/dataset.ts";
import { readsByTable } from "../../src/store/reads.ts";

/** A dataset of three batches, one `-q` run each (SET and GET), labelled a, b, c. */
async function threeBatches(): Promise<{ dir: string; ds: Dataset }> {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-read-" });
  for (const [i, label] of ["a", "b", "c"].entries()) {
    const f = `${dir}/q${i}.txt`;
    Deno.writeTextFileSync(
      f,
      `SET: ${i + 1}000.00 requests per second\nGET: 5.00 requests per second\n`,
    );
    await ingestPaths([f], { data: `${dir}/data`, label });
  }
  return { dir, ds: Dataset.open(`${dir}/data`) };
}

Deno.test("Dataset.read() narrows in the scan", async (t) => {
  const { dir, ds } = await threeBatches();
  const runs = ds.runFacts(["run_id", "label"]); // in run id order (not always a, b, c)
  const id = (label: string) => String(runs.find((r) => r.label === label)!.run_id);
  await t.step("run ids, tests, a predicate and columns", () => {
    const df = ds.read("results", {
      runIds: [id("b"), id("c")],
      tests: ["SET"],
      where: pl.col("ops_per_sec").gt(2500),
      columns: ["ops_per_sec", "run_id"],
    });
    assert.deepEqual(df.toRecords(), [{ ops_per_sec: 3000, run_id: id("c") }]);
    assert.equal(ds.read("results", { runIds: [] }).height, 0);
    assert.throws(() => ds.read("runs", { tests: ["SET"] }), /runs has no test column/);
  });
  await t.step("runFacts() takes a predicate on the runs", () => {
    const kept = ds.runFacts(["label"], { where: pl.col("label").neq(pl.lit("b")) });
    assert.deepEqual(kept.map((r) => r.label).sort(), ["a", "c"]);
    assert.deepEqual(Dataset.open(`${dir}/none`).runFacts(["run_id"]), []);
  });
  await t.step("each read of a table's files is one count, by table", () => {
    const before = readsByTable();
    ds.read("results", { columns: ["run_id"] });
    // this dataset has no memory file: a scan of none reads nothing and is not counted
    ds.scan("memory").collectSync();
    const after = readsByTable();
    assert.equal(after.results - (before.results ?? 0), 1);
    assert.equal(after.memory ?? 0, before.memory ?? 0);
    assert.equal(after.runs, before.runs);
  });
  await t.step("a file polars fails on is named, whatever the columns read", () => {
    const batch = [...Deno.readDirSync(`${dir}/data/batches`)].map((e) => e.name).sort()[1];
    const results = `${dir}/data/batches/${batch}/results.parquet`;
    pl.DataFrame({ run_id: ["x"], test_index: ["zero"] }).writeParquet(results);
    assert.throws(
      () => ds.read("results", { tests: ["SET"], columns: ["test_index"] }),
      (e: unknown) => e instanceof DatasetError && e.message.startsWith(`${results}: `),
    );
  });
  Deno.removeSync(dir, { recursive: true });
});
