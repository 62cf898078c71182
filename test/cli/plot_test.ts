import assert from "node:assert/strict";
import { ingestFile } from "../../src/collect/mod.ts";
import { latencyChart, latencySteps, loadTable, plotChart } from "../../src/analyze/mod.ts";
import { plotCommand, plotOptions } from "../../src/cli/plot.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FULL = ROOT + "test/testdata/corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt";

Deno.test("kvlab plot handler", async (t) => {
  await t.step(
    "plotOptions() rejects the kind, then the output format, before reading data",
    () => {
      const raw = { data: "/nonexistent-kvlab", output: "x.txt", by: "server" };
      assert.throws(
        () => plotOptions("pie", raw),
        /^TypeError: invalid chart kind: pie \(expected/,
      );
      assert.throws(() => plotOptions("ratio", raw), /invalid chart format: x\.txt/);
      const o = plotOptions("scaling", { ...raw, output: "x.vl.json", x: "pipeline" });
      assert.equal(o.kind, "scaling");
      assert.equal(o.plot.x, "pipeline");
      assert.equal(o.plot.baseline, undefined);
    },
  );

  await t.step("plotCommand() draws latency per arm from the runs' column", async () => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-plot-" });
    for (const label of ["before", "after"]) {
      const o = await ingestFile(FULL, { data: `${dir}/data`, server: "redis", label });
      assert.equal(o.status, "ingested");
    }
    let printed = "";
    await plotCommand(
      plotOptions("latency", { data: `${dir}/data`, output: `${dir}/l.vl.json`, by: "label" }),
      { print: (s) => printed += s, printErr: () => {} },
    );
    assert.equal(printed, `wrote ${dir}/l.vl.json\n`);
    const spec = JSON.parse(Deno.readTextFileSync(`${dir}/l.vl.json`));
    const values = (spec.data as { values: Record<string, unknown>[] }).values;
    assert.deepEqual([...new Set(values.map((v) => v.label))].sort(), ["after", "before"]);
    assert.ok(
      values.some((v) =>
        v.test === "SET" && (v.from_percentile as number) < 99 &&
        (v.to_percentile as number) >= 99
      ),
    );
    // the same spec as joining by hand
    const runs = loadTable(`${dir}/data`, "runs").select("run_id", "label");
    const dist = loadTable(`${dir}/data`, "latency_distribution").join(runs, { on: "run_id" });
    assert.deepEqual(
      plotChart(`${dir}/data`, "latency", { by: "label" }),
      latencyChart(latencySteps(dist, { by: ["label"] }), { by: "label" }),
    );
  });
});
