/**
 * A slot migration during a run of a cluster kvlab starts (issue 33, Done-when 1's last clause):
 * 3 shards × 1 replica of Valkey 8, kvlab's open loop at 800/s (SET:GET 1:1), and at 1 s the
 * action `reshard`: `valkey-cli --cluster reshard` moving 300 slots from the master of slot 0 to
 * another master. The load's keys share one hash tag whose slot is among the first moved, so its
 * requests meet the migration: a request for a key already moved gets ASK, one after the slot
 * moved gets MOVED; both are followed and counted per interval (ASK counted: `asked` > 0), none
 * is an error; the load's total equals the sum of the masters' commandstats within 1 %; the cli's
 * output is the run's raw `reshard.txt`; every process kvlab started is gone and its port free.
 */

import assert from "node:assert/strict";
import { DenoProcessRunner } from "../../../src/collect/mod.ts";
import { runFailover } from "../../../src/collect/failover/mod.ts";
import { ReshardError, runReshard } from "../../../src/collect/failover/reshard.ts";
import { parseServerUrl } from "../../../src/collect/target.ts";
import { withServers } from "../../_support/servers.ts";
import { withTempDir } from "../../_support/temp.ts";
import { keySlot } from "../../../src/collect/cluster/slots.ts";
import { failoverReport, readFailover } from "../../../src/analyze/mod.ts";
import { Dataset } from "../../../src/store/dataset.ts";
import { failoverTest, ignore, nothingLeft, startedNodes } from "./_support.ts";
import { missingOutsideCi } from "../../_support/tools.ts";

const SLOTS = 300;

// a hash tag whose slot the reshard moves among its first (the cli moves the source's lowest
// slots first), while the load runs however slow the machine
let tag = 0;
while (keySlot(`{t${tag}}`) >= 5) tag++;
const PREFIX = `{t${tag}}:`;

failoverTest(
  "a reshard under load: MOVED and ASK followed, no error, the total matches the masters'",
  async (tmp, data) => {
    const lines: string[] = [];
    const r = await runFailover({
      data,
      topology: { engine: "valkey", cluster: { shards: 3, replicas: 1 } },
      action: { action: "reshard", atS: 1, slots: SLOTS },
      requestedOpsPerSec: 800,
      durationS: 4,
      ratio: "1:1",
      keys: 2000,
      keyPrefix: PREFIX,
      runner: new DenoProcessRunner(),
      onMessage: (l) => lines.push(l),
    });
    const text = lines.join("\n");
    const nodes = startedNodes(lines);
    assert.equal(r.status, "complete", `${r.reason}\n${text}`);
    assert.equal(r.reason, null, text);
    assert.equal(nodes.length, 6, text);
    nothingLeft(nodes, tmp);
    assert.deepEqual(r.stopProblems, []);

    // the cli ran from the action to its exit; the target master named as the one that took over
    const action = r.events.find((e) => e.event === "action")!;
    const done = r.events.find((e) => e.event === "action_done")!;
    const took = r.events.find((e) => e.event === "took_over")!;
    assert.ok(done.elapsed_ms! > action.elapsed_ms!, JSON.stringify(r.events));
    assert.equal(nodes.find((n) => n.name === action.node)?.role, "primary");
    assert.equal(nodes.find((n) => n.name === took.node)?.role, "primary", took.detail ?? "");
    assert.notEqual(took.node, action.node);
    assert.equal(done.node, took.node);

    // no request counted as an error; the redirections followed and counted apart
    const sum = (k: "errors" | "moved" | "asked" | "completed") =>
      r.intervals.reduce((n, i) => n + Number(i[k] ?? 0), 0);
    assert.equal(
      sum("errors"),
      0,
      `errors: ${JSON.stringify(r.intervals.filter((i) => i.errors))}`,
    );
    assert.ok(sum("moved") + sum("asked") > 0, `moved ${sum("moved")}, asked ${sum("asked")}`);
    assert.ok(sum("asked") > 0, `no ASK counted (moved ${sum("moved")})\n${text}`);
    const rep = failoverReport(r.intervals, r.events);
    assert.equal(rep.failed, 0);
    assert.equal(rep.moved + rep.asked, sum("moved") + sum("asked"));

    // the total against the masters' commandstats, in the run's manifest
    const ds = Dataset.of(data);
    const manifest = ds.runManifest(r.runId) as {
      cluster_nodes: { sum: number; tool: number; nodes: unknown[]; warning: null };
    };
    const check = manifest.cluster_nodes;
    assert.equal(check.tool, sum("completed"));
    assert.equal(check.nodes.length, 3);
    assert.ok(
      Math.abs(check.sum - check.tool) <= 0.01 * check.tool,
      `tool ${check.tool}, nodes ${check.sum}`,
    );
    assert.equal(check.warning, null);
    // the cli's output kept as the run's raw file
    const file = ds.runRaw(r.runId).find((f) => f.name === "reshard.txt");
    const raw = new TextDecoder().decode(file?.bytes);
    assert.match(raw, /--cluster reshard/);
    assert.match(raw, /Moving slot/);
    // stored and read back: the ask counts with the intervals
    const stored = readFailover(ds)!;
    assert.equal(
      stored.intervals.reduce((n, i) => n + Number(i.asked), 0),
      sum("asked"),
    );
  },
  missingOutsideCi("valkey-server", "valkey-cli"),
);

Deno.test({
  name: "a reshard's cli that fails fails with its words, its output kept",
  ignore,
  fn: () =>
    withTempDir("kvlab-reshard-", (dir) =>
      // one cluster node serving no slot: redis-cli refuses to reshard an uncovered cluster
      withServers(
        [{ args: ["--cluster-enabled", "yes", "--dir", dir, "--cluster-config-file", "n.conf"] }],
        async ([s]) => {
          const node = { port: s.port, target: parseServerUrl(s.url) };
          const e = await runReshard({
            cli: "redis-cli",
            runner: new DenoProcessRunner(),
            from: node,
            to: node,
            slots: 10,
          }).catch((e) => e);
          assert.ok(e instanceof ReshardError, String(e));
          assert.match(
            e.message,
            /^redis-cli --cluster reshard failed \(exit 1\): \[ERR\] Not all 16384 slots are covered/,
          );
          assert.match(
            e.output,
            /^\$ redis-cli --cluster reshard 127\.0\.0\.1:\d+ --cluster-from \w+/,
          );
          assert.ok(!e.output.includes("\u001b"), "colours left in the output");
        },
      )),
});
