import assert from "node:assert/strict";
import fc from "fast-check";
import pl from "nodejs-polars";
import { ingestFile, ingestPaths, parseRedisBenchmark } from "../../../src/collect/mod.ts";
import { loadResults, loadTable } from "../../../src/analyze/mod.ts";
import { walk } from "../../_support/servers.ts";
import { Dataset } from "../../../src/store/dataset.ts";

const DATA = new URL("../../testdata/", import.meta.url).pathname;

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of walk(dir)) out[f] = new TextDecoder().decode(Deno.readFileSync(f));
  return out;
}

Deno.test("ingestFile() writes a run that loads back with every number", async (t) => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-ingest-" });
  const files = [...Deno.readDirSync(DATA + "corpus")].map((e) => e.name)
    .filter((n) => /^(redis|valkey)-benchmark_/.test(n)).sort();
  assert.equal(files.length, 9);
  for (const name of files) {
    await t.step(name, async () => {
      const path = DATA + "corpus/" + name;
      const o = await ingestFile(path, {
        data,
        server: name.includes("valkey") ? "valkey" : "redis",
      });
      assert.equal(o.status, "ingested", o.error?.message);
      assert.equal(o.runs.length, 1);
      const runId = o.runs[0].runId;
      // the raw file, byte for byte
      const raw = Dataset.open(data).runRaw(runId);
      assert.deepEqual(raw.map((r) => r.name), [name]);
      assert.deepEqual(raw[0].bytes, Deno.readFileSync(path));
      const manifest = Dataset.open(data).runManifest(runId)!;
      assert.equal(manifest.status, "complete");
      assert.equal(
        manifest.tool,
        name.startsWith("valkey") ? "valkey-benchmark" : "redis-benchmark",
      );
      // numbers read back from Parquet equal the parser's
      const parsed = parseRedisBenchmark(Deno.readTextFileSync(path));
      const mine = pl.col("run_id").eq(pl.lit(runId));
      const df = loadTable(data, "results").filter(mine).sort("test_index");
      assert.deepEqual(df.getColumn("ops_per_sec").toArray(), parsed.tests.map((x) => x.opsPerSec));
      assert.deepEqual(
        df.getColumn("p50_latency_ms").toArray(),
        parsed.tests.map((x) => x.p50LatencyMs),
      );
      assert.deepEqual(
        df.getColumn("source_line").toArray(),
        parsed.tests.map((x) => x.sourceLine),
      );
      const dist = parsed.tests.reduce((n, x) => n + x.distribution.length, 0);
      if (dist > 0) {
        assert.equal(loadTable(data, "latency_distribution").filter(mine).height, dist);
      }
    });
  }
  await t.step("loadResults() joins results with runs", () => {
    const df = loadResults(data);
    assert.equal(df.height, 9 * 6);
    const valkeySet = df.filter(
      pl.col("server").eq(pl.lit("valkey")).and(pl.col("output_format").eq(pl.lit("full"))),
    )
      .filter(pl.col("test").eq(pl.lit("SET")));
    assert.equal(valkeySet.height, 1);
    assert.equal(valkeySet.getColumn("tool_version").get(0), "8.0.1");
    assert.equal(
      loadTable(data, "latency_distribution").getColumn("count").dtype.equals(pl.Int64),
      true,
    );
  });
  await t.step("the same bytes again are reported and skipped, and nothing changes", async () => {
    const before = snapshot(data);
    const o = await ingestFile(DATA + "corpus/" + files[0], {
      data,
      server: files[0].includes("valkey") ? "valkey" : "redis",
    });
    assert.equal(o.status, "duplicate");
    assert.equal(o.duplicateOf!.length, 1);
    assert.deepEqual(snapshot(data), before);
  });
});

Deno.test("ingestPaths() reads seed transcripts into one run per benchmark command", async () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-seeds-" });
  const out = await ingestPaths([DATA + "seeds/seed-001.txt", DATA + "seeds/seed-003.txt"], {
    data,
  });
  assert.deepEqual(out.map((o) => o.status), ["ingested", "ingested"]);
  const runs = loadTable(data, "runs");
  const bench = runs.filter(pl.col("tool").str.contains("benchmark"));
  assert.equal(bench.height, 4);
  const df = loadResults(data);
  const seed1 = df.filter(pl.col("source_path").str.contains("seed-001"));
  assert.equal(seed1.height, 42);
  assert.deepEqual(
    seed1.filter(pl.col("test").eq(pl.lit("LRANGE_300"))).sort("source_line").getColumn(
      "ops_per_sec",
    ).toArray(),
    [29824.04, 28810.14],
  );
  const rdma = df.filter(pl.col("transport").eq(pl.lit("rdma")));
  assert.equal(rdma.height, 6);
  assert.equal(rdma.getColumn("target").get(0), "192.168.248.229:6380");
  // each run keeps its own block of the transcript, and source lines point into the source file
  const r0 = bench.filter(pl.col("source_path").str.contains("seed-001")).sort("source_line_start")
    .row(0);
  const runId = r0[bench.columns.indexOf("run_id")];
  const [block] = Dataset.open(data).runRaw(runId);
  assert.deepEqual([block.name, block.firstLine], ["seed-001.txt", 104]);
  const raw = new TextDecoder().decode(block.bytes).split("\n");
  const src = Deno.readTextFileSync(DATA + "seeds/seed-001.txt").split("\n");
  assert.equal(raw[0], src[103]);
  assert.equal(raw.length - 1, 128 - 104 + 1);
  // the transcript is stored once, however many runs it made
  assert.equal(walk(`${data}/raw`).length, 2);
  const line = seed1.filter(pl.col("test").eq(pl.lit("XADD"))).sort("source_line").getColumn(
    "source_line",
  ).get(0);
  assert.equal(src[line - 1], "XADD: 110864.74 requests per second, p50=0.231 msec");
});

Deno.test("ingestPaths() reports bad files with file and line, and ingests the others", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-bad-" });
  const data = `${dir}/data`;
  Deno.writeTextFileSync(`${dir}/a-empty.txt`, "");
  Deno.writeFileSync(
    `${dir}/b-junk.bin`,
    new Uint8Array(Array.from({ length: 3000 }, (_, i) => (i * 131) % 256)),
  );
  Deno.copyFileSync(
    DATA + "corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s.txt",
    `${dir}/c-memtier.txt`,
  );
  Deno.copyFileSync(
    DATA + "corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt",
    `${dir}/d-good.txt`,
  );
  Deno.writeTextFileSync(`${dir}/e-prose.txt`, "hello\nworld\n");
  const out = await ingestPaths([dir], { data });
  const by = Object.fromEntries(out.map((o) => [o.path.split("/").pop(), o]));
  assert.equal(by["d-good.txt"].status, "ingested");
  // memtier_benchmark output is read (issue 12)
  assert.equal(by["c-memtier.txt"].status, "ingested");
  for (const bad of ["a-empty.txt", "b-junk.bin", "e-prose.txt"]) {
    assert.equal(by[bad].status, "error", bad);
    assert.match(
      by[bad].error!.message,
      new RegExp(`${bad.replace(".", "\\.")}:\\d+:\\d+: expected redis-benchmark`),
    );
  }
  assert.match(by["b-junk.bin"].error!.message, /binary data/);
  assert.match(by["a-empty.txt"].error!.message, /empty/);
  // only the good files left a run; no half-written run, no stale claim
  assert.equal(loadTable(data, "runs").height, 2);
  assert.equal([...Deno.readDirSync(`${data}/batches`)].length, 1);
  assert.deepEqual([...Deno.readDirSync(`${data}/tmp`)], []);
  assert.equal([...Deno.readDirSync(`${data}/sources`)].length, 2);
});

Deno.test("ingest marks truncated and failed runs", async () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-cut-" });
  const out = await ingestPaths([
    DATA + "real/redis-benchmark-7.0.15_sigint-full.txt",
    DATA + "real/redis-benchmark-7.0.15_connection-refused.txt",
    DATA + "handmade/redis-benchmark-6.0.16_full-cut-during-get.txt",
  ], { data });
  assert.deepEqual(out.map((o) => o.runs[0]?.status), ["incomplete", "failed", "incomplete"]);
  const runs = loadTable(data, "runs").sort("source_path");
  const failed = runs.filter(pl.col("status").eq(pl.lit("failed")));
  assert.match(failed.getColumn("error").get(0), /Connection refused/);
  // incomplete tests are not results unless asked for
  const all = loadResults(data, { completeOnly: false });
  const done = loadResults(data);
  assert.equal(all.height, 4);
  assert.equal(done.height, 2);
  assert.ok(
    all.filter(pl.col("complete").not()).getColumn("ops_per_sec").toArray().every((x) =>
      x === null
    ),
  );
});

Deno.test("ingest never stores a password", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-secret-" });
  const data = `${dir}/data`;
  Deno.writeTextFileSync(
    `${dir}/t.txt`,
    "$ redis-benchmark -h db -a hunter2pw --user alice -q -t set\nSET: 1000.00 requests per second, p50=0.100 msec\n" +
      "$ valkey-benchmark -u redis://alice:hunter2pw@db:6379 -q -t get\nGET: 900.00 requests per second, p50=0.200 msec\n" +
      "$ redis-cli -a hunter2pw CONFIG GET requirepass\nrequirepass\nhunter2pw\n",
  );
  Deno.copyFileSync(DATA + "real/redis-benchmark-7.0.15_script-q-requirepass.txt", `${dir}/s.txt`);
  const out = await ingestPaths([`${dir}/t.txt`, `${dir}/s.txt`], { data });
  assert.deepEqual(out.map((o) => o.status), ["ingested", "ingested"]);
  for (const f of walk(data)) {
    const bytes = new TextDecoder("latin1").decode(Deno.readFileSync(f));
    for (const secret of ["hunter2pw", "s3cretpw"]) {
      assert.ok(!bytes.includes(secret), `${secret} in ${f}`);
    }
  }
  const runs = loadTable(data, "runs").sort("source_line_start");
  assert.ok(
    runs.getColumn("command").toArray().some((c) =>
      c === "redis-benchmark -h db -a *** --user *** -q -t set"
    ),
  );
  // the script banner's command was read: the run knows its tool and command
  const s = runs.filter(pl.col("source_path").str.contains("s.txt"));
  assert.equal(
    s.getColumn("command").get(0),
    "redis-benchmark -p 16399 -a *** -n 5000 -t set,get -q",
  );
  assert.equal(
    (s.getColumn("started_at").toArray()[0] as unknown as Date).toISOString(),
    "2026-11-29T21:36:02.000Z",
  );
});

Deno.test("concurrent writers share a dataset without clashes", async () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-conc-" });
  const f = DATA + "corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt";
  const same = await Promise.all([
    ingestFile(f, { data }),
    ingestFile(f, { data }),
    ingestFile(f, { data }),
  ]);
  assert.deepEqual(same.map((o) => o.status).sort(), ["duplicate", "duplicate", "ingested"]);
  const others = [...Deno.readDirSync(DATA + "corpus")].map((e) => DATA + "corpus/" + e.name)
    .filter((p) => /(redis|valkey)-benchmark_/.test(p) && p !== f);
  const outs = await Promise.all(others.map((p) => ingestFile(p, { data })));
  assert.ok(outs.every((o) => o.status === "ingested"));
  assert.equal(loadTable(data, "runs").height, 9);
  assert.equal(new Set(loadTable(data, "runs").getColumn("run_id").toArray()).size, 9);
});

Deno.test("parse → Parquet → load round trip (property)", async () => {
  const title = fc.constantFrom(
    "SET",
    "GET",
    "INCR",
    "LPUSH",
    "MSET (10 keys)",
    "LRANGE_100 (first 100 elements)",
    "XADD",
  );
  const row = fc.record({
    title,
    rps: fc.integer({ min: 0, max: 99_999_999 }).map((c) => c / 100),
    p50: fc.integer({ min: 1, max: 999_999 }).map((c) => c / 1000),
  });
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-prop-" });
  let k = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(row, { minLength: 1, maxLength: 25 }),
      fc.boolean(),
      async (rows, crlf) => {
        const nl = crlf ? "\r\n" : "\n";
        const text =
          rows.map((r) =>
            `${r.title}: ${r.rps.toFixed(2)} requests per second, p50=${r.p50.toFixed(3)} msec`
          )
            .join(nl) + nl;
        const data = `${dir}/d${k}`;
        const file = `${dir}/f${k++}.txt`;
        Deno.writeTextFileSync(file, text);
        const o = await ingestFile(file, { data });
        if (o.status !== "ingested") return false;
        // every row as stored (loadResults leaves incomplete tests out)
        const df = loadTable(data, "results").sort("test_index");
        const got = df.toRecords();
        return got.length === rows.length &&
          rows.every((r, i) =>
            // 0.00 requests per second: nothing completed, no rate (the test is incomplete)
            got[i].ops_per_sec === (r.rps > 0 ? r.rps : null) &&
            got[i].complete === (r.rps > 0) &&
            got[i].p50_latency_ms === r.p50 &&
            got[i].test_title === r.title &&
            got[i].source_line === i + 1
          );
      },
    ),
    // the case a run found: a test at 0.00 requests per second, asked every time
    { numRuns: 25, examples: [[[{ title: "SET", rps: 0, p50: 0.001 }], false]] },
  );
});

Deno.test("a very long output (-l loop) is written in Parquet parts and loads whole", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-parts-" });
  const q = "GET: 51282.05 requests per second, p50=0.487 msec\n";
  // 25,000 results: more than one part (20,000 rows)
  Deno.writeTextFileSync(`${dir}/loop.txt`, "$ redis-benchmark -q -t get -l\n" + q.repeat(25_000));
  const o = await ingestFile(`${dir}/loop.txt`, { data: `${dir}/data` });
  assert.equal(o.status, "ingested");
  const [batch] = [...Deno.readDirSync(`${dir}/data/batches`)];
  const files = [...Deno.readDirSync(`${dir}/data/batches/${batch.name}`)].map((e) => e.name)
    .sort();
  assert.deepEqual(files.filter((f) => f.startsWith("results")), [
    "results.part-0000.parquet",
    "results.part-0001.parquet",
  ]);
  const df = loadResults(`${dir}/data`).sort("test_index");
  assert.equal(df.height, 25_000);
  assert.deepEqual(df.getColumn("test_index").toArray().slice(19_998, 20_002), [
    19_998,
    19_999,
    20_000,
    20_001,
  ]);
  assert.equal(df.getColumn("source_line").get(24_999), 25_001);
  assert.equal(o.runs[0].tests, 25_000);
  // the raw copy is the whole file, byte for byte
  assert.deepEqual(
    Dataset.open(`${dir}/data`).runRaw(o.runs[0].runId)[0].bytes,
    Deno.readFileSync(`${dir}/loop.txt`),
  );
});
