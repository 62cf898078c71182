// A pubsub plan against real servers: Redis 7.0.15 and Valkey 8.0.1 on loopback, stopped by PID.
// Steps are 1 s with a 0.5 s grace; the unreachable rate is there to be NS.
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { loadTable } from "../../../src/analyze/load.ts";
import { sweepTable } from "../../../src/analyze/sweep/sweep.ts";
import { type CollectedRun, parsePlan, runPlan } from "../../../src/collect/mod.ts";
import { type LocalServer, startLocalServer } from "../../../src/collect/redis_server.ts";
import { toolOrSkip } from "../../_support/tools.ts";

const PLAN = (servers: string) => `
name: ps
kind: pubsub
servers: ${servers}
pubsub:
  modes: [fan-out, sharded]
  publishers: 4
  subscribers: 8
  fan_out: 4
  rates: [1000, 9000000, 10000000]
  step_s: 1
  grace_s: 0.5
`;

Deno.test("a pubsub plan sweeps Redis and Valkey, stops each sweep at its first NS, stores every table", async () => {
  const valkey = toolOrSkip("valkey-server", "pubsub plan");
  if (!valkey) return;
  const started: LocalServer[] = [];
  try {
    started.push(await startLocalServer(), await startLocalServer({ program: valkey }));
    const [r, v] = started;
    const plan = parsePlan(
      PLAN(`[{name: redis, url: "${r.url}"}, {name: valkey, url: "${v.url}"}]`),
      "ps.yaml",
    );
    const data = Deno.makeTempDirSync({ prefix: "kvlab-ps-plan-" });
    const ends: CollectedRun[] = [];
    const result = await runPlan(plan, {
      data,
      onEvent: (e) => {
        if (e.kind === "end") ends.push(e.run);
      },
    });
    // 2 servers × 2 modes: 1,000/s runs (sustained unless the box stalls), 9,000,000/s runs
    // and is NS (or is skipped after an NS at 1,000/s), 10,000,000/s is always skipped; a step
    // whose subscriber the server dropped (its pub/sub output buffer limit) is incomplete, as
    // any step with a connection lost (issue 21), and still ends the sweep
    assert.equal(result.cells, 12);
    assert.equal(result.complete + result.failed + result.incomplete, 12);
    for (const r of ends.filter((r) => r.status === "incomplete")) {
      assert.match(r.reason!, /^\d+ of \d+ connections lost \(/);
    }
    // a skipped step is reported with its reason and stores nothing (as in latency sweeps)
    const skipped = ends.filter((r) => r.runId === "");
    assert.ok(skipped.length >= 4);
    for (const r of skipped) {
      assert.equal(r.status, "complete");
      assert.match(
        r.reason!,
        /^skipped: (redis|valkey) did not sustain (1,000|9,000,000) deliveries\/s/,
      );
    }
    const runs = loadTable(data, "runs");
    assert.equal(runs.height, 12 - skipped.length);
    assert.equal(runs.filter(pl.col("error").str.startsWith("skipped:")).height, 0);
    const done = runs.filter(pl.col("status").isIn(["complete", "incomplete"]));
    assert.ok((done.getColumn("server_cpu_user_s").toArray() as number[]).every((x) => x >= 0));
    assert.deepEqual(new Set(done.getColumn("server").toArray()), new Set(["redis", "valkey"]));
    const tags = (done.getColumn("tags").toArray() as string[]).map((t) => JSON.parse(t));
    assert.ok(tags.every((t) => t.mode && t.requested_ops_per_sec && t.fan_out));
    assert.ok(tags.every((t) => t.sweep_rates === "1000,9000000,10000000"));

    const res = loadTable(data, "results").sort("requested_ops_per_sec");
    assert.equal(res.height, done.height);
    assert.equal(res.filter(pl.col("requested_ops_per_sec").eq(1000)).height, 4);
    assert.deepEqual(
      new Set(res.getColumn("test").toArray()),
      new Set(["PUBSUB_FAN_OUT", "PUBSUB_SHARDED"]),
    );
    for (const row of res.toRecords()) {
      assert.equal(row.latency_basis, "intended");
      if (row.requested_ops_per_sec === 1000) {
        assert.equal(row.messages_lost, 0);
        assert.equal(row.messages_delivered, Number(row.messages_published) * Number(row.fan_out));
        assert.ok(Number(row.ops_per_sec) <= 1030, `achieved ${row.ops_per_sec}`);
      } else {
        assert.ok(Number(row.ops_per_sec) < 0.97 * 9_000_000, `achieved ${row.ops_per_sec}`);
      }
      assert.ok(Number(row.client_cpu_s) > 0);
    }
    assert.equal(loadTable(data, "hdr_histograms").height, done.height);
    assert.ok(loadTable(data, "time_series").height >= done.height);
    // the sweep table reads both kinds the same way: 10,000,000/s is `skipped` for every arm
    const table = sweepTable(data);
    const top = table.filter(pl.col("requested_ops_per_sec").eq(10_000_000));
    assert.equal(top.height, 4); // 2 servers × 2 modes
    assert.ok(top.getColumn("verdict").toArray().every((v) => v === "skipped"));
  } finally {
    for (const s of started) await s.stop();
  }
});
