/**
 * A failover study on a cluster kvlab starts (issue 33 item 6, its Done-when line): 3 shards ×
 * 1 replica of Valkey 8 (the tools cache's) with `cluster-node-timeout` 1000 ms, kvlab's open loop at
 * 800/s, kill -9 of the primary serving slot 0 at 2 s. The stored run names the node killed and
 * the replica that took over, and its unavailable window lies in the range the node timeout
 * sets (derived below); every process kvlab started is gone by its PID and its port free.
 */

import assert from "node:assert/strict";
import { DenoProcessRunner } from "../../../src/collect/mod.ts";
import { runFailover } from "../../../src/collect/failover/mod.ts";
import { failoverReport, readFailover } from "../../../src/analyze/mod.ts";
import { failoverTest, nothingLeft, startedNodes } from "./_support.ts";
import { missingOutsideCi } from "../../_support/tools.ts";
import { failoverCommand, failoverOptions } from "../../../src/cli/failover.ts";

/** The cluster's node timeout, ms. */
const T = 1000;

/**
 * The range the node timeout sets on the window (Redis Cluster's failure detection and replica
 * election, redis.io "Redis cluster specification"):
 * - lower: no replica is promoted before its primary is flagged PFAIL, which takes a ping
 *   without a pong for T; the window starts at or before the kill (the killed shard's keys are
 *   refused at once: a third of the requests, every interval short of 90 %) → at least T.
 * - upper: PFAIL within 1.5 T (a node pings every node whose pong is older than T/2, then waits
 *   T), FAIL once the other primary's report arrives (within T/2: the same pings carry it),
 *   the replica's election delay (500 ms + up to 500 ms random, rank 0), one failed election and
 *   its retry (2 × the auth timeout max(2 T, 2 s)), the generator's slot map refreshed (every
 *   100 ms) and the 100 ms intervals' granularity at each end, and 1 s for a loaded 2-core
 *   machine's timers: 2 T + 1 s + 2 × max(2 T, 2 s) + 0.3 s + 1 s.
 */
const LOWER_MS = T;
const UPPER_MS = 2 * T + 1000 + 2 * Math.max(2 * T, 2000) + 300 + 1000;

failoverTest(
  "a Valkey cluster's primary killed: the window lies in the node timeout's range, the replica named",
  async (tmp, data) => {
    const lines: string[] = [];
    const atS = 2;
    const r = await runFailover({
      data,
      topology: {
        engine: "valkey",
        cluster: { shards: 3, replicas: 1 },
        config: { "cluster-node-timeout": String(T) },
      },
      action: { action: "kill", atS },
      requestedOpsPerSec: 800,
      // the window's upper bound after the kill, and 3 intervals back at the rate
      durationS: atS + UPPER_MS / 1000 + 0.5,
      requestTimeoutMs: 500,
      runner: new DenoProcessRunner(),
      onMessage: (l) => lines.push(l),
    });
    const nodes = startedNodes(lines);
    const text = lines.join("\n");
    assert.equal(r.status, "complete", `${r.reason}\n${text}`);
    assert.equal(nodes.length, 6, text);
    nothingLeft(nodes, tmp);
    // no node but the killed one had ended before kvlab stopped them all
    assert.deepEqual(r.stopProblems, []);

    // read back from the dataset: the same rows, and the numbers every view shows
    const stored = readFailover(data)!;
    assert.equal(stored.runId, r.runId);
    assert.equal(stored.intervals.length, r.intervals.length);
    const rep = failoverReport(stored.intervals, stored.events);
    assert.equal(rep.verdict, "measured", `${rep.reason}\n${text}`);

    const killed = stored.events.find((e) => e.event === "action")!;
    const took = stored.events.find((e) => e.event === "took_over")!;
    const killedNode = nodes.find((n) => n.name === killed.node)!;
    const tookNode = nodes.find((n) => n.name === took.node);
    assert.equal(killedNode.role, "primary");
    assert.equal(killed.pid, killedNode.pid);
    assert.ok(tookNode, `no node took over: ${took.detail}\n${text}`);
    assert.equal(tookNode.role, "replica", `${took.node} took over: it was no replica`);
    assert.equal(rep.failedNode, `${killed.node} (127.0.0.1:${killedNode.port})`);
    assert.equal(rep.tookOver, `${took.node} (127.0.0.1:${tookNode.port})`);

    assert.ok(rep.unavailable);
    const window = `window ${rep.windowMs} ms (from ${rep.windowStartMs} ms; kill at ${
      rep.actionMs?.toFixed(0)
    } ms), range ${LOWER_MS}–${UPPER_MS} ms`;
    assert.ok(rep.windowMs! >= LOWER_MS && rep.windowMs! <= UPPER_MS, window);
    // the killed shard's sockets fail at once; 1 s allows a loaded machine's steal
    assert.ok(rep.timeToFirstErrorMs! <= 1000, `first error ${rep.timeToFirstErrorMs} ms after`);
    // the killed shard's requests were refused or reset, none counted for a MOVED
    assert.ok(rep.failedByKind.refused + rep.failedByKind.reset > 0, JSON.stringify(rep));
    assert.equal(rep.failedByKind.other, 0, JSON.stringify(rep));
    assert.equal(
      r.intervals.reduce((n, i) => n + i.sent, 0) > 0.9 * 800 * (atS + UPPER_MS / 1000),
      true,
    );
    // kvlab failover --show prints the same numbers (one function computes them)
    let printed = "";
    const out = { print: (t: string) => (printed += t), printErr: (t: string) => (printed += t) };
    // --chart over an existing file: replaced, and said so
    const chart = `${data}/chart.vl.json`;
    Deno.writeTextFileSync(chart, "old\n");
    const show = { data, show: true, engine: "redis", action: "kill", at: "2", rate: "1", chart };
    await failoverCommand(
      failoverOptions({
        ...show,
        duration: "1",
        connections: "1",
        requestTimeoutMs: "1000",
        format: "text",
      }),
      out,
    );
    assert.match(printed, new RegExp(`unavailable window +${rep.windowMs} ms`));
    assert.ok(printed.includes(`took over            ${rep.tookOver}`), printed);
    assert.match(printed, /--chart: replaced .*chart\.vl\.json/);
    assert.match(Deno.readTextFileSync(chart), /"\$schema"/);
  },
  missingOutsideCi("valkey-server", "valkey-cli"),
);
