// One dataset, two plans: a throughput plan (redis-benchmark, pipeline 1 and 16) and a
// fixed-rate plan (a latency sweep), both run by `kvlab run` against two real redis-servers.
// The throughput figures draw the throughput runs only (issue 31: fixed-rate steps were drawn as
// throughput bars, rows named "pipeline 1 · requested ops per sec null" over the y axis' title,
// 5 of 12 latency panels empty), the steps go in the sweep figure, and the summary page holds
// both (it stopped with "invalid primitive cast").
import assert from "node:assert/strict";
import { type LocalServer, startLocalServer } from "../../src/collect/redis_server.ts";
import { plotChart, type VegaLiteSpec } from "../../src/analyze/mod.ts";
import { drawn, overlap } from "../_support/vega_view.ts";
import { cli } from "./_cli.ts";

type Rec = Record<string, unknown>;

/** The dataset: both plans against two local servers, as a user runs them. */
async function mixedDataset(dir: string): Promise<string> {
  const servers: LocalServer[] = [];
  try {
    servers.push(await startLocalServer(), await startLocalServer());
    const [a, b] = servers;
    const arms = `servers:\n  - { name: redis-a, url: "${a.url}" }\n` +
      `  - { name: redis-b, url: "${b.url}" }\n`;
    Deno.writeTextFileSync(
      `${dir}/throughput.yaml`,
      `name: tput\ntool: redis-benchmark\n${arms}tests: [set, get]\nrequests: 2000\n` +
        "matrix:\n  clients: [1, 4]\n  pipeline: [1, 16]\nrepetitions: 1\npause_s: 0\n",
    );
    Deno.writeTextFileSync(
      `${dir}/sweep.yaml`,
      `name: fixed\nkind: latency-sweep\n${arms}repetitions: 1\npause_s: 0\ntimeout_s: 60\n` +
        "sweep: { engine: kvlab, threads: 1, clients: 4, rates: [1000], step_s: 1, " +
        "warmup_s: 0, keys: 100 }\n",
    );
    for (const plan of ["throughput", "sweep"]) {
      const r = await cli(["run", `${dir}/${plan}.yaml`, "--data", `${dir}/data`]);
      assert.equal(r.code, 0, r.stderr);
    }
  } finally {
    for (const s of servers) await s.stop();
  }
  return `${dir}/data`;
}

/** Every text a figure draws. */
async function texts(spec: VegaLiteSpec): Promise<string[]> {
  return (await drawn(spec)).items.map((i) => i.text ?? "").filter((t) => t !== "");
}

Deno.test("a dataset of a throughput plan and a fixed-rate plan: each figure draws its own", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-mixed-" });
  const data = await mixedDataset(dir);

  await t.step("throughput: the throughput runs only, groups named without null", async () => {
    const spec = plotChart(data, "throughput", { by: "label" });
    const values = (spec.data as { values: Rec[] }).values;
    // SET and GET at 1 and 4 clients, pipeline 1 and 16, per arm; no bar for the steps (GET
    // at 1,000/s)
    assert.equal(values.length, 2 * 2 * 2 * 2);
    assert.ok(values.every((v) => v.requested_ops_per_sec === undefined));
    const { items } = await drawn(spec);
    // the facet rows' names (drawn as titles; the figure's own title apart)
    const headers = items.filter((i) => i.role === "title-text" && i.text !== "throughput by test");
    assert.deepEqual(
      [...new Set(headers.map((h) => h.text).filter(Boolean))].sort(),
      [
        "clients 1 · pipeline 1",
        "clients 1 · pipeline 16",
        "clients 4 · pipeline 1",
        "clients 4 · pipeline 16",
      ],
    );
    for (const text of await texts(spec)) assert.doesNotMatch(text, /null/);
    // a row's name is not drawn over the y axis' title
    const titles = items.filter((i) => i.role === "axis-title");
    for (const h of headers) {
      for (const a of titles) assert.ok(!overlap(h, a), `"${h.text}" over "${a.text}"`);
    }
  });

  await t.step("latency: a panel per test and group that has data, none empty", async () => {
    const { items } = await drawn(plotChart(data, "latency", { by: "label" }));
    const lines = items.filter((i) => i.marktype === "line" && i.role === "mark");
    const panels = new Set(
      lines.map((l) => `${l.datum.test} ${l.datum.clients} ${l.datum.pipeline}`),
    );
    assert.deepEqual([...panels].sort(), [
      "GET 1 1",
      "GET 1 16",
      "GET 4 1",
      "GET 4 16",
      "SET 1 1",
      "SET 1 16",
      "SET 4 1",
      "SET 4 16",
    ]);
    const frames = items.filter((i) => i.role === "cell" || i.name.endsWith("_cell"));
    // every panel drawn holds a line
    assert.equal(frames.length === 0 ? panels.size : frames.length, panels.size);
    for (const text of items.map((i) => i.text ?? "")) assert.doesNotMatch(text, /null/);
  });

  await t.step("the steps are in the sweep figure", () => {
    const values = (plotChart(data, "sweep", { by: "label" }).data as { values: Rec[] }).values;
    const steps = values.filter((v) => v.layer === "point");
    assert.deepEqual(
      [...new Set(steps.map((v) => `${v.label} ${v.requested_ops_per_sec}`))].sort(),
      ["redis-a 1000", "redis-b 1000"],
    );
  });

  await t.step("kvlab summary: the throughput figures and tables, and the sweep's", async () => {
    const out = `${dir}/summary`;
    const r = await cli(["summary", data, "-o", out]);
    assert.equal(r.code, 0, r.stderr);
    const md = Deno.readTextFileSync(`${out}/summary.md`);
    // the sweep's table as kvlab sweep prints it
    const sweep = await cli(["sweep", "--data", data]);
    const table = sweep.stdout.split("\n").filter((l) => l.startsWith("|"));
    assert.ok(table.length >= 3);
    for (const line of table) assert.ok(md.includes(line), `the page lacks ${line}`);
    assert.match(md, /!\[[^\]]*\]\(figures\/sweep\.png\)/);
    // the throughput table compares the throughput runs only: no group at a requested rate
    const compared = md.split("## Throughput: each arm")[1].split("\n## ")[0];
    assert.doesNotMatch(compared, /requested|\| 1,?000 \|/);
    Deno.statSync(`${out}/figures/sweep.png`);
  });
  Deno.removeSync(dir, { recursive: true });
});
