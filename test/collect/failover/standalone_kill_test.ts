/**
 * A failover study on a standalone primary with a replica kvlab starts (issue 33 item 6): kill -9
 * of the primary at 1.5 s under kvlab's open loop at 800/s; 1 s later kvlab promotes the replica
 * (`REPLICAOF NO ONE`) and points the generator at it. Every interval from the kill to the
 * promotion holds no completion (errors over the span), none after it; the report's window covers that
 * span; the replica is named as the node that took over; every process is gone by its PID.
 */

import assert from "node:assert/strict";
import { DenoProcessRunner } from "../../../src/collect/mod.ts";
import { runFailover } from "../../../src/collect/failover/mod.ts";
import { failoverReport } from "../../../src/analyze/mod.ts";
import { Dataset } from "../../../src/store/dataset.ts";
import { failoverTest, nothingLeft, startedNodes } from "./_support.ts";

failoverTest(
  "a standalone primary killed: errors until the replica is promoted, none after",
  async (tmp, data) => {
    const lines: string[] = [];
    const r = await runFailover({
      data,
      topology: { engine: "redis", replicas: 1 },
      action: { action: "kill", atS: 1.5, promoteAfterS: 1 },
      requestedOpsPerSec: 800,
      durationS: 4.5,
      runner: new DenoProcessRunner(),
      onMessage: (l) => lines.push(l),
    });
    const text = lines.join("\n");
    const nodes = startedNodes(lines);
    assert.equal(r.status, "complete", `${r.reason}\n${text}`);
    assert.equal(nodes.length, 2, text);
    nothingLeft(nodes, tmp);

    const action = r.events.find((e) => e.event === "action")!;
    const done = r.events.find((e) => e.event === "action_done")!;
    assert.equal(action.node, "node 1");
    assert.equal(done.node, "node 2");
    assert.equal(r.events.find((e) => e.event === "took_over")?.node, "node 2");
    assert.ok(done.elapsed_ms! - action.elapsed_ms! >= 1000);

    const at = (ms: number) => Math.floor(ms / 100);
    const from = at(action.elapsed_ms!), to = at(done.elapsed_ms!);
    // (from the second interval after the kill: replies already in flight may land in the first)
    const down = r.intervals.filter((i) => i.interval > from + 1 && i.interval < to);
    assert.ok(down.length >= 7, `${down.length} intervals between the kill and the promotion`);
    // over the span, not each interval (a stalled generator leaves an interval with no send)
    for (const i of down) {
      assert.equal(i.completed, 0, `interval ${i.interval}: ${i.completed} completed`);
      assert.equal(i.refused + i.reset, i.errors, JSON.stringify(i));
    }
    const spanErrors = down.reduce((n, i) => n + i.errors, 0);
    assert.ok(spanErrors >= down.length * 40, `${spanErrors} errors in ${down.length} intervals`);
    // the replica serves from the promotion on (one interval's slack for requests in flight)
    const after = r.intervals.filter((i) => i.interval > to + 1);
    assert.ok(after.length >= 10);
    assert.deepEqual(after.filter((i) => i.errors > 0), []);

    // the run's results are stored under its id, complete (lost connections are the measurement)
    const results = Dataset.of(data).read("results", { columns: ["run_id", "test", "complete"] });
    assert.deepEqual(results.toRecords(), [{ run_id: r.runId, test: "GET", complete: true }]);
    const rep = failoverReport(r.intervals, r.events);
    assert.equal(rep.verdict, "measured", rep.reason ?? "");
    assert.equal(rep.tookOver, `node 2 (127.0.0.1:${nodes[1].port})`);
    // the window starts at the kill's 100 ms interval, or the next one when the kill came at its
    // very end (a fresh-clone run: kill at 1,499.87 ms, interval 1,400–1,500 still at the rate)
    assert.ok(rep.windowStartMs! <= (at(action.elapsed_ms!) + 1) * 100, JSON.stringify(rep));
    assert.ok(rep.windowStartMs! + rep.windowMs! >= done.elapsed_ms! - 100, JSON.stringify(rep));
    assert.ok(rep.backToTargetMs! >= done.elapsed_ms! - action.elapsed_ms! - 100);
    assert.ok(rep.failed >= 8 * 70, `${rep.failed} errors`);
  },
);

failoverTest(
  "stopped mid-SIGSTOP (Ctrl-C): the node resumed and every process stopped by its PID",
  async (tmp, data) => {
    const lines: string[] = [];
    const ctrl = new AbortController();
    const r = await runFailover({
      data,
      topology: { engine: "redis", replicas: 1 },
      action: { action: "stop", atS: 1, stopS: 30 },
      requestedOpsPerSec: 500,
      durationS: 20,
      runner: new DenoProcessRunner(),
      signal: ctrl.signal,
      onMessage: (l) => {
        lines.push(l);
        if (l.includes("SIGSTOP")) setTimeout(() => ctrl.abort(), 500);
      },
    });
    const text = lines.join("\n");
    assert.ok(r.interrupted, `${r.status} ${r.reason}\n${text}`);
    assert.equal(r.status, "incomplete", text);
    assert.ok(r.events.some((e) => e.event === "action" && e.action === "stop"));
    // SIGCONT came as the load ended, not after the 30 s stop
    const resumed = r.events.find((e) => e.event === "action_done");
    assert.match(resumed?.detail ?? "", /as the load ended/);
    nothingLeft(startedNodes(lines), tmp);
  },
);

failoverTest(
  "an A/A run (action none): the same run with no action, no take-over, no outage",
  async (tmp, data) => {
    const lines: string[] = [];
    const r = await runFailover({
      data,
      topology: { engine: "redis" },
      action: { action: "none", atS: 1 },
      requestedOpsPerSec: 500,
      durationS: 2.5,
      runner: new DenoProcessRunner(),
      onMessage: (l) => lines.push(l),
    });
    const text = lines.join("\n");
    assert.equal(r.status, "complete", `${r.reason}\n${text}`);
    nothingLeft(startedNodes(lines), tmp);
    assert.deepEqual(r.events.map((e) => [e.event, e.action, e.node]), [["action", "none", null]]);
    assert.deepEqual(r.intervals.filter((i) => i.errors > 0), []);
    const rep = failoverReport(r.intervals, r.events);
    assert.equal(rep.unavailable, false, JSON.stringify(rep));
    assert.equal(rep.failed, 0);
  },
);
