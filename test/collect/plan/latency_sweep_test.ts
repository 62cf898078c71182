// Latency sweeps: plan parsing, and live sweeps against Debian's redis-server on free loopback
// ports (stopped by PID), with kvlab's generator and with memtier_benchmark. Steps are short
// and the rates far apart, so verdicts do not depend on how busy the machine is.
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { loadResults, loadTable } from "../../../src/analyze/load.ts";
import { sweepTable } from "../../../src/analyze/sweep/sweep.ts";
import {
  DenoProcessRunner,
  MAX_PLAN_CELLS,
  memtierRows,
  newRunId,
  parseMemtierJson,
  parsePlan,
  planCells,
  planKind,
  runPlan,
  RunWriter,
} from "../../../src/collect/mod.ts";
import { runRow } from "../../../src/collect/_rows.ts";
import { withServers } from "../../_support/servers.ts";
import { toolOrSkip } from "../../_support/tools.ts";
import { Dataset } from "../../../src/store/dataset.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

function plan(url: string, sweep: string, top = ""): string {
  return `name: sw\nkind: latency-sweep\nservers: [{ name: redis, url: "${url}" }]\n` +
    `timeout_s: 60\n${top}sweep:\n${sweep.split("\n").map((l) => `  ${l}`).join("\n")}\n`;
}

Deno.test("latency-sweep plans: fields, defaults, cells, limits", async (t) => {
  await t.step("parsePlan() reads the example plan", () => {
    const p = parsePlan(Deno.readTextFileSync(`${ROOT}examples/latency-sweep.yaml`), "x.yaml");
    assert.ok(p.kind === "latency-sweep");
    assert.deepEqual([p.engine, p.threads, p.clients, p.stepS, p.warmupS], ["kvlab", 4, 12, 20, 2]);
    assert.deepEqual(p.rates, [10000, 50000, 100000, 200000, 300000]);
    assert.deepEqual(p.sustained, { min: 0.97, max: 1.03 });
    const cells = planCells(p);
    assert.equal(cells.length, 2 * 5 * 2);
    assert.deepEqual(cells.slice(0, 3).map((c) => c.id), [
      "fixed-rate/redis/r10000/rep1",
      "fixed-rate/redis-io2/r10000/rep1",
      "fixed-rate/redis/r50000/rep1",
    ]);
    assert.match(planKind(p).describe(p, cells[0]).command, /^kvlab load --url redis:\/\/127/);
  });
  await t.step("memtier rates are whole per connection; per-connection rates multiply", () => {
    const m = parsePlan(
      plan("redis://h", "engine: memtier\nthreads: 4\nclients: 12\nrates: [10000]"),
      "p",
    );
    assert.ok(m.kind === "latency-sweep");
    assert.deepEqual(m.rates, [9984]); // 208/s × 48, as seed 000's 48-connection table
    const k = parsePlan(
      plan("redis://h", "clients: 34\nthreads: 24\nrates_per_connection: [24, 122]"),
      "p",
    );
    assert.ok(k.kind === "latency-sweep");
    assert.deepEqual(k.rates, [19584, 99552]);
  });
  await t.step("bad fields fail at their line", () => {
    const bad = (sweep: string, re: RegExp) =>
      assert.throws(() => parsePlan(plan("redis://h", sweep), "p.yaml"), re);
    bad("rates: [2000, 1000]", /p\.yaml:6:\d+: sweep\.rates\.1: expected ascending rates/);
    bad("rates: [1]\nrates_per_connection: [1]", /give rates \(totals\) or rates_per_connection/);
    bad("rates: [1]\nengine: wrk", /sweep\.engine: expected kvlab or memtier/);
    bad("rates: [1]\nengine: memtier\narrivals: poisson", /only for engine: kvlab/);
    bad("rates: [1]\nratio: fast", /sweep\.ratio: expected SET:GET/);
    bad("rates: [1]\nsustained: { min: 1.2 }", /sweep\.sustained\.min/);
    bad("rates: [1]\nspeed: 3", /unknown field/);
    const many = Array.from({ length: 1001 }, (_, i) => i + 1).join(", ");
    assert.throws(
      () => parsePlan(plan("redis://h", `rates: [${many}]`, "repetitions: 100\n"), "p.yaml"),
      new RegExp(`at most ${MAX_PLAN_CELLS.toLocaleString("en")}`),
    );
  });
});

Deno.test("a live kvlab sweep skips a server's steps after its first NS, also when resumed", async () => {
  await withServers([{}], async ([server]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-sweep-" });
    const p = parsePlan(
      plan(
        server.url,
        "threads: 1\nclients: 4\nrates: [250, 1000, 400000, 800000]\n" +
          'step_s: 2\nwarmup_s: 0.5\nkeys: 2000\nratio: "1:4"',
      ),
      "p.yaml",
    );
    const events: string[] = [];
    const r = await runPlan(p, { data, onEvent: (e) => events.push(e.kind) });
    assert.deepEqual([r.complete, r.failed], [4, 0]);
    assert.equal(events.filter((e) => e === "warmup").length, 1); // the preload, once
    // the skipped step stored nothing
    assert.equal(loadTable(data, "runs").height, 3);
    const t = sweepTable(data);
    assert.deepEqual(t.select("test", "requested_ops_per_sec", "verdict").toRecords(), [
      { test: "SET+GET", requested_ops_per_sec: 250, verdict: "sustained" },
      { test: "SET+GET", requested_ops_per_sec: 1000, verdict: "sustained" },
      { test: "SET+GET", requested_ops_per_sec: 400000, verdict: "NS" },
      { test: "SET+GET", requested_ops_per_sec: 800000, verdict: "skipped" },
    ]);
    assert.deepEqual(t.getColumn("merge").toArray().slice(0, 2), ["hdr", "hdr"]);
    const first = loadResults(data).filter(pl.col("requested_ops_per_sec").eq(250))
      .getColumn("run_id").get(0);
    const results = loadResults(data).filter(pl.col("run_id").eq(pl.lit(first)));
    assert.deepEqual(results.getColumn("test").toArray(), ["SET", "GET", "TOTALS"]);
    assert.deepEqual(results.getColumn("requested_ops_per_sec").toArray(), [50, 200, 250]);
    assert.ok(results.getColumn("latency_basis").toArray().every((b) => b === "intended"));
    const runs = loadTable(data, "runs");
    assert.ok(runs.getColumn("server_cpu_user_s").toArray().every((x) => x !== null));
    assert.ok(runs.getColumn("host_cpu_count").toArray().every((x) => (x as number) > 0));
    assert.ok(loadTable(data, "time_series").height >= 3);
    assert.ok(loadTable(data, "server_info").height > 0);
    // resumed: complete steps skipped, the step after the NS still not run
    const again = await runPlan(p, { data });
    assert.deepEqual([again.skipped, again.complete], [3, 1]);
    assert.equal(loadTable(data, "runs").height, 3);
  });
});

/**
 * Stores a memtier JSON file as one run through the same row builder live runs use (what
 * ingesting it will do; `ingestFile` does not read memtier JSON yet).
 */
function storeMemtierJson(text: string, data: string): void {
  const w = new RunWriter(data, newRunId(new Date()));
  const rows = memtierRows({ json: parseMemtierJson(text, { file: "memtier.json" }) }, w.runId);
  w.commit({
    run: runRow({
      run_id: w.runId,
      tool: "memtier_benchmark",
      server: "redis",
      transport: "tcp",
      label: "redis",
      ingested_at: new Date(),
      status: "complete",
      output_format: "json",
    }),
    tables: { results: rows.results, hdr_histograms: rows.hdr_histograms },
    raw: [],
  });
}

/** memtier, or null (with one line saying what is skipped) when it is missing. */
const memtier = (test: string) => toolOrSkip("memtier_benchmark", test);

Deno.test("a live memtier sweep, and its memtier JSON files alone, label every step", async () => {
  const tool = memtier("live memtier sweep");
  if (!tool) return;
  await withServers([{}], async ([server]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-sweep-mt-" });
    const p = parsePlan(
      plan(
        server.url,
        `engine: memtier\ntool: ${tool}\nthreads: 1\nclients: 2\n` +
          "rates_per_connection: [100, 200000]\nstep_s: 3\nkeys: 1000\ncontinue_after_ns: true",
      ),
      "p.yaml",
    );
    const ends: Record<string, unknown>[] = [];
    const r = await runPlan(p, {
      data,
      runner: new DenoProcessRunner(),
      onEvent: (e) => {
        if (e.kind === "end") ends.push({ ...e.run });
      },
    });
    assert.equal(r.failed, 0);
    const live = sweepTable(data);
    // the rule reads memtier's rate from what its runner returned (the stored TOTALS rate)
    assert.deepEqual(
      ends.map((e) => e.achievedOpsPerSec),
      live.getColumn("achieved_ops_per_sec").toArray(),
    );
    const check = (t: pl.DataFrame) => {
      const recs = t.toRecords();
      assert.deepEqual(recs.map((x) => [x.test, x.requested_ops_per_sec]), [
        ["GET", 200],
        ["GET", 400000],
      ]);
      // 200/s: memtier's token bucket may over-deliver ("over"), and a short run on a busy
      // machine may fall short; the verdict follows the achieved rate either way
      const ratio = (recs[0].achieved_ops_per_sec as number) / 200;
      assert.equal(recs[0].verdict, ratio > 1.03 ? "over" : ratio < 0.97 ? "NS" : "sustained");
      // 400,000/s over two connections is out of reach: NS, with what was achieved
      assert.equal(recs[1].verdict, "NS");
      assert.ok((recs[1].achieved_ops_per_sec as number) > 1000);
    };
    check(live);
    assert.equal(live.getColumn("merge").get(0), "hdr");
    // the raw memtier JSON alone (no plan, no tags): the requested rate comes from its
    // configuration (rate limit × clients × threads)
    const alone = Deno.makeTempDirSync({ prefix: "kvlab-sweep-json-" });
    for (const id of loadTable(data, "runs").getColumn("run_id").toArray()) {
      storeMemtierJson(
        new TextDecoder().decode(
          Dataset.open(data).runRaw(String(id)).find((r) => r.name === "memtier.json")!.bytes,
        ),
        alone,
      );
    }
    const fromJson = sweepTable(alone);
    assert.deepEqual(
      fromJson.getColumn("verdict").toArray(),
      live.getColumn("verdict").toArray().slice(0, 2),
    );
    assert.deepEqual(
      fromJson.getColumn("achieved_ops_per_sec").toArray(),
      live.getColumn("achieved_ops_per_sec").toArray(),
    );
  });
});
