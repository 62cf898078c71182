// Each command reads each table of its dataset at most once: the frames it read are handed
// down, never read again (issue 29). Counted by `store/reads.ts`, which the one place that
// scans a table's Parquet files calls.
import assert from "node:assert/strict";
import { ingestFile } from "../../src/collect/mod.ts";
import { readsByTable } from "../../src/store/reads.ts";
import { cli } from "./_cli.ts";

const CORPUS = new URL("../../test/testdata/corpus/", import.meta.url).pathname;
const FULL = CORPUS + "redis-benchmark_7.0.15_redis-7.0.15_full.txt";
const MEMTIER = CORPUS + "memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s.json";

/** The tables read while `kvlab …args` ran, and how often; its exit code. */
async function readsOf(
  args: string[],
): Promise<{ reads: Record<string, number>; code: number; stderr: string }> {
  const before = readsByTable();
  const r = await cli(args);
  const reads: Record<string, number> = {};
  for (const [table, n] of Object.entries(readsByTable())) {
    if (n > (before[table] ?? 0)) reads[table] = n - (before[table] ?? 0);
  }
  return { reads, code: r.code, stderr: r.stderr };
}

/** The tables read more than once. */
const twice = (reads: Record<string, number>) => Object.entries(reads).filter(([, n]) => n > 1);

Deno.test("a command reads each table of its dataset at most once", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-reads-" });
  const data = `${dir}/data`;
  // two arms with latency distributions (redis-benchmark); memtier's HdrHistograms beside
  for (const label of ["before", "after"]) {
    const o = await ingestFile(FULL, { data, server: "redis", label });
    assert.equal(o.status, "ingested");
  }
  const memtier = `${dir}/memtier`;
  for (const label of ["before", "after"]) {
    const o = await ingestFile(MEMTIER, { data: memtier, server: "redis", label });
    assert.equal(o.status, "ingested");
  }

  await t.step("kvlab plot, every kind that draws this data", async () => {
    for (const kind of ["throughput", "ratio", "latency", "delta", "changes"]) {
      const out = `${dir}/${kind}.vl.json`;
      const { reads, code, stderr } = await readsOf(["plot", kind, "--data", data, "-o", out]);
      assert.equal(code, 0, `${kind}: ${stderr}`);
      assert.deepEqual(twice(reads), [], kind);
      assert.equal(reads.results, 1, kind);
      assert.equal(reads.runs, 1, kind);
    }
    // memtier's latency comes from its histograms
    const latency = await readsOf(["plot", "latency", "--data", memtier, "-o", `${dir}/l.svg`]);
    assert.equal(latency.code, 0, latency.stderr);
    assert.deepEqual(latency.reads, {
      runs: 1,
      results: 1,
      latency_distribution: 1,
      hdr_histograms: 1,
    });
  });

  await t.step("kvlab summary: runs, results and the tables its page shows", async () => {
    const { reads, code, stderr } = await readsOf(["summary", data, "-o", `${dir}/summary`]);
    assert.equal(code, 0, stderr);
    // the page also asks for server_config, hdr_histograms and memory: this dataset has no file
    // of them, and a scan of no file reads nothing (it is not counted)
    assert.deepEqual(reads, { runs: 1, results: 1, latency_distribution: 1 });
  });

  await t.step("compare, delta, changes, sweep and table", async () => {
    const commands = [
      ["compare", "--data", data],
      ["delta", "--data", data, "--dimension", "label", "--from", "before", "--to", "after"],
      ["changes", "--data", data],
      ["sweep", "--data", data], // no fixed-rate step here: exit 1, after one read
      ["table", "results", "--data", data, "--format", "csv"],
      ["table", "results", "--data", data, "--columns", "label,test,ops_per_sec"],
      ["table", "hdr_histograms", "--data", memtier, "--format", "csv"], // + runs: its schema
    ];
    for (const args of commands) {
      const { reads, code, stderr } = await readsOf(args);
      assert.equal(code, args[0] === "sweep" ? 1 : 0, `${args.join(" ")}: ${stderr}`);
      assert.deepEqual(twice(reads), [], args.join(" "));
      assert.equal(reads.runs, 1, args.join(" "));
    }
  });
  Deno.removeSync(dir, { recursive: true });
});
