import assert from "node:assert/strict";
import { ingestFile } from "../../src/collect/mod.ts";
import { loadResults, plotChart } from "../../src/analyze/mod.ts";
import { summaryCommand, summaryOptions } from "../../src/cli/summary.ts";

import { MEMTIER_RUNS, TESTDATA } from "../_support/testdata.ts";

/** The JSON of the memtier run whose name ends in `name`. */
const json = (name: string) => `${TESTDATA}${MEMTIER_RUNS.find((r) => r.endsWith(name))}.json`;
const RATIO = json("redis-7.0.15_t2c10-ratio1-10-d256-test10s");
const RUNS2 = json("redis-7.0.15_t2c10-runcount2-test5s");
const RATE = json("redis-7.0.15_t2c10-ratelimit500-test10s");

type Step = Record<string, unknown> & { from_percentile: number; to_percentile: number };

/** A dataset of memtier runs, one label per file. */
async function memtierDataset(files: Record<string, string>): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-plot-memtier-" });
  for (const [label, file] of Object.entries(files)) {
    const o = await ingestFile(file, { data: `${dir}/data`, server: "redis", label });
    assert.equal(o.status, "ingested");
  }
  return `${dir}/data`;
}

/** `kvlab summary` of a dataset (written beside it, in `summary/`): its page. */
async function summaryPage(data: string): Promise<string> {
  const out = data.replace(/\/data$/, "/summary");
  await summaryCommand(summaryOptions(data, { output: out }), {
    print: () => {},
    printErr: () => {},
  });
  return Deno.readTextFileSync(`${out}/summary.md`);
}

Deno.test("plot latency on memtier_benchmark datasets", async (t) => {
  await t.step("plotChart() draws each arm's spectrum from its HdrHistograms", async () => {
    const data = await memtierDataset({ one: RATIO, runs2: RUNS2 });
    const spec = plotChart(data, "latency", { by: "label" }) as {
      data: { values: Step[] };
    };
    const values = spec.data.values;
    assert.deepEqual([...new Set(values.map((v) => v.label))].sort(), ["one", "runs2"]);
    // one panel per test: best/worst/average are not panels of their own
    assert.ok(values.every((v) => !("aggregate" in v)));
    // the p99 step is the one memtier printed for the run (its histogram's bucket)
    const printed = loadResults(data).toRecords().find((r) => r.label === "one" && r.test === "GET")
      ?.p99_latency_ms as number;
    const p99 = values.find((v) =>
      v.label === "one" && v.test === "GET" && v.from_percentile < 99 && v.to_percentile >= 99
    );
    assert.ok(p99, "a step holds p99");
    assert.ok(
      Math.abs((p99.latency_ms as number) - printed) <= printed * 0.01,
      `${p99.latency_ms} vs memtier's ${printed}`,
    );
    // the --run-count run is both runs merged (memtier's `average` histogram)
    const counts = new Set(
      values.filter((v) => v.label === "runs2" && v.test === "SET").map((v) => v.count),
    );
    assert.deepEqual([...counts], [15839 + 19327]);
    Deno.removeSync(data.replace(/\/data$/, ""), { recursive: true });
  });

  await t.step("summaryCommand() includes the latency figure for memtier runs", async () => {
    const data = await memtierDataset({ redis: RATIO, valkey: RATE });
    const page = await summaryPage(data);
    assert.match(page, /## Latency distribution/);
    assert.match(page, /figures\/latency\.png/);
    Deno.removeSync(data.replace(/\/data$/, ""), { recursive: true });
  });

  await t.step(
    "summaryCommand() beside a --run-count run: no compare group, no crash",
    async () => {
      // memtier --run-count stores best / worst / average, never paired with a single run
      const data = await memtierDataset({ redis: RATIO, valkey: RUNS2 });
      const page = await summaryPage(data);
      assert.match(page, /## Throughput: nothing to compare\n\nNo group \(test, aggregate\)/);
      assert.match(page, /## Latency distribution/);
      Deno.removeSync(data.replace(/\/data$/, ""), { recursive: true });
    },
  );
});
