/**
 * Who took over (review item 1): a node that served no slots (a replica named with `--node`)
 * or whose slot is still its own after the run (a stop shorter than the node timeout) took over
 * nothing; the old reading fell back to slot 0 and named its primary, or the stopped node itself.
 */

import assert from "node:assert/strict";
import { servedSlot, takeOverOf } from "../../../src/collect/failover/nodes.ts";
import { emptySlotMap } from "../../../src/collect/cluster/slots.ts";
import { failoverReport } from "../../../src/analyze/mod.ts";
import { failoverReportText } from "../../../src/cli/failover.ts";

const node = (i: number) => ({ name: `node ${i}`, port: 7000 + i });

Deno.test("a replica acted on serves no slot; its take-over names nobody", () => {
  // 3 shards: nodes 1–3 primaries, node 4 a replica
  const map = emptySlotMap();
  for (const i of [1, 2, 3]) map.nodes.push({ host: "127.0.0.1", port: 7000 + i, id: null });
  map.slotNode.fill(0, 0, 5461);
  map.slotNode.fill(1, 5461, 10923);
  map.slotNode.fill(2, 10923);
  assert.equal(servedSlot(map, 7001), 0);
  assert.equal(servedSlot(map, 7002), 5461);
  assert.equal(servedSlot(map, 7004), null);
  const took = takeOverOf(node(4), servedSlot(map, 7004), { owner: node(1), from: "node 2" });
  assert.equal(took.node, undefined);
  assert.equal(took.detail, "node 4 served no slots (a replica)");
});

Deno.test("the same owner after the run: no failover, not a take-over by itself", () => {
  const same = takeOverOf(node(1), 0, { owner: node(1), from: "node 2" });
  assert.equal(same.node, undefined);
  assert.match(same.detail, /^no failover: still served by node 1/);
  const moved = takeOverOf(node(1), 0, { owner: node(4), from: "node 2" });
  assert.equal(moved.node?.name, "node 4");
  assert.match(moved.detail, /serves slot 0, which node 1 served before/);
});

Deno.test("the report and its text say nobody took over, and why", () => {
  const rows = Array.from({ length: 30 }, (_, i) => ({
    interval: i,
    start_ms: i * 100,
    width_ms: 100,
    requested_ops_per_sec: 1000,
    sent: 100,
    completed: 100,
    errors: 0,
  }));
  const r = failoverReport(rows, [
    { event: "action", elapsed_ms: 1000, action: "stop", node: "node 1" },
    {
      event: "took_over",
      elapsed_ms: null,
      action: "stop",
      node: null,
      detail: "no failover: still served by node 1 (slot 0, CLUSTER SHARDS from node 2)",
    },
  ]);
  assert.equal(r.tookOver, null);
  assert.match(r.tookOverDetail!, /no failover/);
  assert.match(failoverReportText("r", r), /took over +none \(no failover: still served by node 1/);
});
