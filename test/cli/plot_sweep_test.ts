// `kvlab plot sweep` draws `kvlab sweep`'s numbers: a real latency-sweep plan (kvlab's open-loop
// engine, three repetitions of each step) against two real servers (redis-server and
// valkey-server from the tools cache, else two redis-servers), then every point of the chart
// holds the table row of its step (p50 and p99 merged as HDR histograms, the achieved rate, the
// verdict, generator-bound) and nothing else (issue 31: the chart took medians of the
// repetitions and ringed both arms as generator-bound where the table did not).
import assert from "node:assert/strict";
import { findTool } from "../../src/collect/tools/find.ts";
import { type LocalServer, startLocalServer } from "../../src/collect/redis_server.ts";
import { plotOptions } from "../../src/cli/plot.ts";
import { readsByTable } from "../../src/store/reads.ts";
import { cli } from "./_cli.ts";

type Rec = Record<string, unknown>;

/** A two-server latency sweep of three repetitions per step, made by `kvlab run`. */
async function sweepDataset(dir: string): Promise<string> {
  const valkey = findTool("valkey-server");
  if (!valkey && Deno.env.get("CI") === "true") throw new Error("valkey-server is required");
  const servers: LocalServer[] = [];
  try {
    servers.push(await startLocalServer());
    servers.push(await startLocalServer(valkey ? { program: valkey } : {}));
    const [a, b] = servers;
    Deno.writeTextFileSync(
      `${dir}/plan.yaml`,
      `name: plot-sweep
kind: latency-sweep
servers:
  - { name: redis, url: "${a.url}" }
  - { name: ${valkey ? "valkey" : "redis-b"}, url: "${b.url}" }
repetitions: 3
pause_s: 0
timeout_s: 60
sweep: { engine: kvlab, threads: 1, clients: 4, rates: [2000, 8000], step_s: 1, warmup_s: 0, keys: 1000,
  continue_after_ns: true }
`,
    );
    // every step runs, NS or not (a loaded machine's NS at 2,000/s skipped 8,000/s in a CI run,
    // and this test is about the chart holding the table's rows; skipping has its own tests)
    const run = await cli(["run", `${dir}/plan.yaml`, "--data", `${dir}/data`]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout + run.stderr, /12 cells: 12 complete/);
  } finally {
    for (const s of servers) await s.stop();
  }
  return `${dir}/data`;
}

Deno.test("kvlab plot sweep shows kvlab sweep's numbers and flags", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-plot-sweep-" });
  const data = await sweepDataset(dir);
  // the default rule, and a strict one given to both commands: the same flags either way
  const strict = plotOptions("sweep", { data, output: "s.svg", sustained: "0.9995:1.0005" });
  assert.deepEqual(strict.plot.sustained, { min: 0.9995, max: 1.0005 });
  for (const rule of [[], ["--sustained", "0.9995:1.0005"]]) {
    const printed = await cli(["sweep", "--data", data, "--format", "json", ...rule]);
    assert.equal(printed.code, 0, printed.stderr);
    const table = JSON.parse(printed.stdout) as Rec[];
    assert.equal(table.length, 4); // 2 arms × 2 rates, every step run
    assert.ok(table.every((r) => r.verdict !== "skipped"));
    const measured = table;
    // every step merged from three repetitions' histograms
    for (const r of measured) assert.deepEqual([r.repetitions, r.merge], [3, "hdr"]);
    const out = `${dir}/s${rule.length}.vl.json`;
    const before = readsByTable();
    const plotted = await cli(["plot", "sweep", "--data", data, "-o", out, ...rule]);
    assert.equal(plotted.code, 0, plotted.stderr);
    // each table once: what kvlab sweep reads
    const after = readsByTable();
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(after).filter(([t, n]) => n > (before[t] ?? 0))
          .map(([t, n]) => [t, n - (before[t] ?? 0)]),
      ),
      { runs: 1, results: 1, hdr_histograms: 1 },
    );
    const spec = JSON.parse(Deno.readTextFileSync(out));
    const values = spec.data.values as Rec[];
    const points = values.filter((v) => v.layer === "point");
    assert.equal(points.length, 2 * measured.length);
    for (const row of measured) {
      for (const p of ["p50", "p99"]) {
        const step = `${rule.join(" ")} ${row.label} at ${row.requested_ops_per_sec}/s, ${p}`;
        const point = points.find((v) =>
          v.label === row.label && v.requested_ops_per_sec === row.requested_ops_per_sec &&
          v.percentile === p
        );
        assert.ok(point, step);
        assert.equal(point.latency_ms, row[`${p}_latency_ms`], step);
        // the table's row, column for column: numbers, verdict, generator-bound, merge
        assert.deepEqual(
          Object.fromEntries(Object.keys(row).map((k) => [k, point[k]])),
          row,
          step,
        );
      }
    }
    // an NS step's rule, for each NS row of the table
    const ns = values.filter((v) => v.layer === "ns").map((v) =>
      `${v.label} ${v.requested_ops_per_sec}`
    );
    assert.deepEqual(
      ns,
      measured.filter((r) => r.verdict === "NS").map((r) =>
        `${r.label} ${r.requested_ops_per_sec}`
      ),
    );
    // the ring of generator-bound steps is drawn exactly when the table flags one
    const ringed = JSON.stringify(spec.layer ?? spec.spec).includes("generator_bound == true");
    assert.equal(ringed, table.some((r) => r.generator_bound === true), rule.join(" "));
  }
  Deno.removeSync(dir, { recursive: true });
});
