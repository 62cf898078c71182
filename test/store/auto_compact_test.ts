import assert from "node:assert/strict";
import { loadResults } from "../../src/analyze/load.ts";
import { AUTO_COMPACT_SMALL_BATCHES } from "../../src/store/auto_compact.ts";
import { ingestFile, parsePlan, runPlan } from "../../src/collect/mod.ts";
import { withServers } from "../_support/servers.ts";
import { nightFolder, nightlyHistory, writeNightlyHistory } from "../_support/history.ts";

Deno.test("one ingest per night: small batches are compacted, every run read once", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-auto-compact-" });
  try {
    const nights = AUTO_COMPACT_SMALL_BATCHES + 8;
    writeNightlyHistory(`${dir}/nightly`, nightlyHistory(4, { nights, shifts: 0 }));
    const batchCounts: number[] = [];
    for (let i = 0; i < nights; i++) {
      const file = `${dir}/nightly/${nightFolder(i)}/redis-benchmark.csv`;
      const o = await ingestFile(file, { data: `${dir}/data`, server: "redis" });
      assert.equal(o.status, "ingested");
      batchCounts.push([...Deno.readDirSync(`${dir}/data/batches`)].length);
    }
    // batches grow one per night until there are more small ones than the limit, then merge
    assert.deepEqual(
      batchCounts.slice(0, AUTO_COMPACT_SMALL_BATCHES),
      Array.from({ length: AUTO_COMPACT_SMALL_BATCHES }, (_, i) => i + 1),
    );
    assert.equal(batchCounts[AUTO_COMPACT_SMALL_BATCHES], 1);
    assert.equal(batchCounts.at(-1), 8);
    const df = loadResults(`${dir}/data`);
    assert.equal(df.height, nights * 20);
    assert.equal(df.getColumn("run_id").nUnique(), nights);
    // the claims of compacted nights still hold: the same file again is a duplicate
    const again = await ingestFile(`${dir}/nightly/${nightFolder(0)}/redis-benchmark.csv`, {
      data: `${dir}/data`,
      server: "redis",
    });
    assert.equal(again.status, "duplicate");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a plan of many cells (a batch each) ends compacted, every run read once", async () => {
  await withServers([{}], async ([a]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-auto-compact-plan-" });
    try {
      const cells = AUTO_COMPACT_SMALL_BATCHES + 2;
      const plan = parsePlan(
        `name: many
servers:
  - { name: redis, url: "${a.url}" }
tests: [set]
requests: 200
matrix:
  clients: [1]
repetitions: ${cells}
timeout_s: 60
`,
        "many.yaml",
      );
      const r = await runPlan(plan, { data });
      assert.equal(r.complete, cells);
      assert.equal([...Deno.readDirSync(`${data}/batches`)].length, 1);
      const df = loadResults(data);
      assert.equal(df.getColumn("run_id").nUnique(), cells);
      // the plan knows its cells after the compaction: a re-run skips them all
      const again = await runPlan(plan, { data });
      assert.equal(again.skipped, cells);
    } finally {
      Deno.removeSync(data, { recursive: true });
    }
  });
});
