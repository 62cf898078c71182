import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { claimKey, claimPath, claimSource, ingestPaths } from "../../src/collect/mod.ts";
import { compactDataset } from "../../src/store/compact.ts";
import { loadResults, loadTable } from "../../src/analyze/mod.ts";
import { DatasetError } from "../../src/errors.ts";

const DATA = new URL("../testdata/", import.meta.url).pathname;
const ROOT = new URL("../../", import.meta.url).pathname;
const QUIET = DATA + "corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt";

/** A transcript of `n` `-q` runs. */
function transcript(path: string, n: number): void {
  const q = Deno.readTextFileSync(QUIET);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(`$ redis-benchmark -q -n ${1000 + i}\n${q}`);
  Deno.writeTextFileSync(path, parts.join(""));
}

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const p = new Deno.Command("true").spawn();
  await p.status;
  return p.pid;
}

Deno.test("an ingest killed half-way leaves nothing of the file, and a retry just works", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-kill9-" });
  transcript(`${dir}/t.txt`, 10_000);
  const data = `${dir}/data`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ROOT + "src/cli.ts", "ingest", `${dir}/t.txt`, "--data", data],
    stdout: "null",
    stderr: "null",
  }).spawn();
  // kill -9 once the claim is taken and runs are being written
  for (let i = 0; i < 600; i++) {
    await new Promise((r) => setTimeout(r, 50));
    try {
      if ([...Deno.readDirSync(`${data}/tmp`)].length > 0) break;
    } catch { /* not yet */ }
  }
  await new Promise((r) => setTimeout(r, 300));
  child.kill("SIGKILL");
  await child.status;
  assert.equal(loadTable(data, "runs").height, 0, "no run of the killed file is visible");
  const again = await ingestPaths([`${dir}/t.txt`], { data });
  assert.equal(again[0].status, "ingested", again[0].error?.message);
  assert.equal(again[0].runs.length, 10_000);
  const runs = loadTable(data, "runs");
  assert.equal(runs.height, 10_000);
  assert.equal(new Set(runs.getColumn("run_id").toArray()).size, 10_000);
  assert.equal((await ingestPaths([`${dir}/t.txt`], { data }))[0].status, "duplicate");
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("claimSource() takes over the claim of a writer that is gone", async (t) => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-takeover-" });
  const key = claimKey("ab".repeat(32), null);
  const now = new Date();
  assert.equal(
    (await claimSource(data, key, { sourcePath: "/in/a.txt", now, batch: "b1" })).claimed,
    true,
  );
  await t.step("a live writer's claim is kept", async () => {
    assert.equal((await claimSource(data, key, { sourcePath: "/in/a.txt", now })).claimed, false);
  });
  await t.step("a dead writer's claim is taken over by exactly one writer", async () => {
    const claim = JSON.parse(Deno.readTextFileSync(claimPath(data, key)));
    claim.writer.pid = await deadPid();
    Deno.writeTextFileSync(claimPath(data, key), JSON.stringify(claim));
    const wins = await Promise.all(
      Array.from(
        { length: 4 },
        () => claimSource(data, key, { sourcePath: "/in/a.txt", now, batch: "b2" }),
      ),
    );
    assert.equal(wins.filter((w) => w.claimed).length, 1);
    const after = JSON.parse(Deno.readTextFileSync(claimPath(data, key)));
    assert.deepEqual([after.writer.pid, after.batch], [Deno.pid, "b2"]);
  });
  await t.step("a dead writer whose batch is in place is not taken over", async () => {
    const claim = JSON.parse(Deno.readTextFileSync(claimPath(data, key)));
    claim.writer.pid = await deadPid();
    Deno.writeTextFileSync(claimPath(data, key), JSON.stringify(claim));
    Deno.mkdirSync(`${data}/batches/b2`, { recursive: true });
    assert.equal((await claimSource(data, key, { sourcePath: "/in/a.txt", now })).claimed, false);
  });
  await t.step("a writer on another host is never taken to be gone", async () => {
    Deno.removeSync(`${data}/batches/b2`);
    const claim = JSON.parse(Deno.readTextFileSync(claimPath(data, key)));
    claim.writer.host = "elsewhere";
    Deno.writeTextFileSync(claimPath(data, key), JSON.stringify(claim));
    assert.equal((await claimSource(data, key, { sourcePath: "/in/a.txt", now })).claimed, false);
  });
  Deno.removeSync(data, { recursive: true });
});

Deno.test("ingest into a dataset inside its own input folder skips the dataset", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-self-" });
  Deno.copyFileSync(QUIET, `${dir}/q.txt`);
  transcript(`${dir}/t.txt`, 3);
  const first = await ingestPaths([dir], { data: `${dir}/data` });
  assert.deepEqual(first.map((o) => o.status), ["ingested", "ingested"]);
  const second = await ingestPaths([dir], { data: `${dir}/data` });
  assert.deepEqual(second.map((o) => [o.path.split("/").pop(), o.status]), [
    ["q.txt", "duplicate"],
    ["t.txt", "duplicate"],
  ]);
  assert.equal(loadTable(`${dir}/data`, "runs").height, 4);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("a damaged Parquet file is named, never skipped", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-damaged-" });
  const data = `${dir}/data`;
  for (const i of [1, 2, 3]) {
    Deno.writeTextFileSync(`${dir}/q${i}.txt`, `SET: ${i}000.00 requests per second\n`);
    await ingestPaths([`${dir}/q${i}.txt`], { data });
  }
  const batches = [...Deno.readDirSync(`${data}/batches`)].map((e) => e.name).sort();
  const results = `${data}/batches/${batches[1]}/results.parquet`;
  const good = Deno.readFileSync(results);
  const expectNamed = (what: RegExp) =>
    assert.throws(
      () => loadResults(data),
      (e: unknown) =>
        e instanceof DatasetError && e.message.startsWith(`${results}: `) && what.test(e.message) &&
        /move it out of the dataset/.test(e.message),
    );
  await t.step("truncated", () => {
    Deno.writeFileSync(results, good.subarray(0, good.length - 9));
    expectNamed(/truncated Parquet file/);
  });
  await t.step("empty", () => {
    Deno.writeFileSync(results, new Uint8Array(0));
    expectNamed(/empty file/);
  });
  await t.step("a column of another type", () => {
    pl.DataFrame({ run_id: ["x"], test_index: ["zero"] }).writeParquet(results);
    expectNamed(/test_index/);
  });
  await t.step("a batch with rows but no runs", () => {
    Deno.writeFileSync(results, good);
    assert.equal(loadResults(data).height, 3);
    Deno.removeSync(`${data}/batches/${batches[1]}/runs.parquet`);
    assert.throws(() => loadResults(data), /holds rows but no runs\.parquet/);
  });
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("an ingest stopped half-way through a file leaves nothing of that file", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-stop-" });
  transcript(`${dir}/t.txt`, 200);
  Deno.copyFileSync(QUIET, `${dir}/a.txt`);
  const ac = new AbortController();
  const data = `${dir}/data`;
  // stop half-way through the second file (the clock is read once or more per run)
  let ticks = 0;
  const now = () => {
    if (++ticks === 100) ac.abort();
    return new Date();
  };
  const out = await ingestPaths([`${dir}/a.txt`, `${dir}/t.txt`], { data, now, signal: ac.signal });
  assert.deepEqual(out.map((o) => o.status), ["ingested", "error"]);
  assert.match(out[1].error!.message, /stopped/);
  assert.equal(loadTable(data, "runs").height, 1);
  assert.deepEqual([...Deno.readDirSync(`${data}/tmp`)], []);
  // the stopped file was released: ingesting it again works
  const again = await ingestPaths([`${dir}/t.txt`], { data });
  assert.equal(again[0].runs.length, 200);
  assert.equal(loadTable(data, "runs").height, 201);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("reads and writes during a compaction see every run once", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-compact-" });
  const data = `${dir}/data`;
  const files = Array.from({ length: 60 }, (_, i) => {
    const f = `${dir}/q${i}.txt`;
    Deno.writeTextFileSync(
      f,
      `SET: ${i + 1}.00 requests per second\nGET: 1.00 requests per second\n`,
    );
    return f;
  });
  for (const f of files.slice(0, 30)) await ingestPaths([f], { data });
  const before = loadResults(data).sort(["run_id", "test_index"]);
  // compactions in another process, again and again, while this one writes and reads
  const compactor = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--config",
      ROOT + "deno.json",
      `
      import { compactDataset } from "${ROOT}src/store/compact.ts";
      for (let i = 0; i < 15; i++) {
        try { compactDataset("${data}", { targetMb: 1 }); } catch (e) { if (!/another compaction/.test(String(e))) throw e; }
        await new Promise((r) => setTimeout(r, 20));
      }`,
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let written = 30;
  for (const f of files.slice(30)) {
    await ingestPaths([f], { data });
    written++;
    const runs = loadTable(data, "runs");
    const ids = runs.getColumn("run_id").toArray();
    assert.ok(runs.height >= written, `${runs.height} runs after ${written} ingests`);
    assert.equal(new Set(ids).size, ids.length, "a run counted twice");
    assert.equal(loadResults(data).height, 2 * runs.height);
  }
  const status = await compactor.output();
  assert.equal(status.code, 0, new TextDecoder().decode(status.stderr));
  compactDataset(data);
  assert.equal([...Deno.readDirSync(`${data}/batches`)].length, 1);
  const after = loadResults(data).sort(["run_id", "test_index"]);
  assert.equal(after.height, 120);
  assert.deepEqual(
    after.filter(pl.col("run_id").isIn(before.getColumn("run_id").toArray())).toRecords(),
    before.toRecords(),
  );
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("a compaction killed before removing what it merged counts no run twice", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-compact-kill-" });
  const data = `${dir}/data`;
  for (const i of [1, 2, 3]) {
    Deno.writeTextFileSync(`${dir}/q${i}.txt`, `SET: ${i}.00 requests per second\n`);
    await ingestPaths([`${dir}/q${i}.txt`], { data });
  }
  const saved = `${dir}/saved`;
  const first = [...Deno.readDirSync(`${data}/batches`)][0].name;
  Deno.mkdirSync(saved);
  for (const e of Deno.readDirSync(`${data}/batches/${first}`)) {
    Deno.copyFileSync(`${data}/batches/${first}/${e.name}`, `${saved}/${e.name}`);
  }
  compactDataset(data);
  // as if the compaction had died before removing this batch
  Deno.renameSync(saved, `${data}/batches/${first}`);
  assert.equal(loadTable(data, "runs").height, 3);
  assert.equal(loadResults(data).height, 3);
  compactDataset(data);
  assert.equal([...Deno.readDirSync(`${data}/batches`)].length, 1);
  Deno.removeSync(dir, { recursive: true });
});
