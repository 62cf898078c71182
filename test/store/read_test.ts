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

Deno.test("damage in a batch's place is named, and links out of the dataset are not followed", async (t) => {
  /** A fresh dataset of three batches, and the path of its second batch. */
  const fresh = async () => {
    const { dir, ds } = await threeBatches();
    const batches = `${dir}/data/batches`;
    const second = `${batches}/${[...Deno.readDirSync(batches)].map((e) => e.name).sort()[1]}`;
    assert.equal(ds.read("runs").height, 3);
    return { dir, ds, second };
  };
  const named = (path: string, what: RegExp) => (e: unknown) =>
    e instanceof DatasetError && e.message.startsWith(`${path}: `) && what.test(e.message);
  await t.step("a file in place of a batch folder", async () => {
    const { dir, ds, second } = await fresh();
    Deno.removeSync(second, { recursive: true });
    Deno.writeTextFileSync(second, "not a batch\n");
    assert.throws(() => ds.read("runs"), named(second, /a file where a batch folder should be/));
    Deno.removeSync(dir, { recursive: true });
  });
  await t.step("a batch folder moved out of the dataset and linked back", async () => {
    const { dir, ds, second } = await fresh();
    Deno.renameSync(second, `${dir}/elsewhere`);
    Deno.symlinkSync(`${dir}/elsewhere`, second);
    assert.throws(
      () => ds.read("runs"),
      named(second, new RegExp(`a symbolic link out of the dataset \\(to ${dir}/elsewhere\\)`)),
    );
    // a link to nothing is named too
    Deno.removeSync(`${dir}/elsewhere`, { recursive: true });
    assert.throws(() => ds.read("runs"), named(second, /a symbolic link to .*does not exist/));
    Deno.removeSync(dir, { recursive: true });
  });
  await t.step("batches/ itself linked out of the dataset", async () => {
    const { dir, ds } = await fresh();
    Deno.renameSync(`${dir}/data/batches`, `${dir}/batches`);
    Deno.symlinkSync(`${dir}/batches`, `${dir}/data/batches`);
    assert.throws(() => ds.read("results"), named(`${dir}/data/batches`, /out of the dataset/));
    Deno.removeSync(dir, { recursive: true });
  });
  await t.step("a Parquet file linked out of the dataset", async () => {
    const { dir, ds, second } = await fresh();
    Deno.renameSync(`${second}/results.parquet`, `${dir}/results.parquet`);
    Deno.symlinkSync(`${dir}/results.parquet`, `${second}/results.parquet`);
    assert.throws(
      () => ds.read("results"),
      named(`${second}/results.parquet`, /out of the dataset/),
    );
    Deno.removeSync(dir, { recursive: true });
  });
  await t.step("a link that stays inside the dataset is followed", async () => {
    const { dir, ds, second } = await fresh();
    Deno.mkdirSync(`${dir}/data/moved`);
    Deno.renameSync(second, `${dir}/data/moved/batch`);
    Deno.symlinkSync(`${dir}/data/moved/batch`, second);
    assert.equal(ds.read("runs").height, 3);
    Deno.removeSync(dir, { recursive: true });
  });
  await t.step("a raw file linked out of the dataset", async () => {
    const { dir, ds } = await fresh();
    const id = String(ds.runFacts(["run_id"])[0].run_id);
    const raw = `${dir}/data/raw`;
    const sub = [...Deno.readDirSync(raw)].map((e) => e.name)
      .find((d) => [...Deno.readDirSync(`${raw}/${d}`)].length > 0)!;
    const all = [...Deno.readDirSync(raw)].flatMap((d) =>
      [...Deno.readDirSync(`${raw}/${d.name}`)].map((f) => `${raw}/${d.name}/${f.name}`)
    );
    assert.ok(sub && all.length > 0);
    for (const f of all) {
      Deno.renameSync(f, `${dir}/${f.slice(f.lastIndexOf("/") + 1)}`);
      Deno.symlinkSync(`${dir}/${f.slice(f.lastIndexOf("/") + 1)}`, f);
    }
    assert.throws(() => ds.runRaw(id), /a symbolic link out of the dataset/);
    Deno.removeSync(dir, { recursive: true });
  });
  await t.step("a folder in place of results.parquet", async () => {
    const { dir, ds, second } = await fresh();
    const results = `${second}/results.parquet`;
    Deno.removeSync(results);
    Deno.mkdirSync(results);
    assert.throws(() => ds.read("results"), named(results, /a folder, not a Parquet file/));
    Deno.removeSync(dir, { recursive: true });
  });
});
