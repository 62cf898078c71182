/**
 * Against a real 3-master redis-server cluster (one per file): kvlab's open loop follows the
 * cluster (no MOVED counted as an error, its total equal to the sum of the nodes' commandstats),
 * follows a slot migration started during the run, and redis-benchmark --cluster and memtier
 * --cluster-mode store complete runs.
 */

import assert from "node:assert/strict";
import { cli, type TestCluster, withCluster } from "../../_support/cluster.ts";
import { withTempDir } from "../../_support/temp.ts";
import { toolOrSkip } from "../../_support/tools.ts";
import {
  DenoProcessRunner,
  type NodeCrossCheck,
  parseServerUrl,
  runMemtier,
  runOpenLoopStep,
  runRedisBenchmark,
} from "../../../src/collect/mod.ts";
import { Dataset } from "../../../src/store/dataset.ts";
import { keySlot } from "../../../src/collect/cluster/slots.ts";

/** The node id of each master, by port. */
async function nodeIds(c: TestCluster): Promise<Map<number, string>> {
  const text = await cli(c.nodes[0].port, "cluster", "nodes");
  const ids = new Map<number, string>();
  for (const line of text.trim().split("\n")) {
    const [id, addr] = line.split(" ");
    ids.set(Number(/:(\d+)@/.exec(addr)![1]), id);
  }
  return ids;
}

/** The run's per-node SET/GET calls: every master's counted, their sum the tool's within 1 %. */
function nodesAgree(manifest: Record<string, unknown> | null): void {
  const n = manifest?.cluster_nodes as NodeCrossCheck;
  assert.equal(n.nodes.length, 3, JSON.stringify(n));
  assert.ok(n.tool > 0 && Math.abs(n.sum! - n.tool) <= 0.01 * n.tool, JSON.stringify(n));
  assert.equal(n.warning, null);
}

Deno.test("a 3-master cluster: kvlab load, a slot migration during it, redis-benchmark --cluster, memtier --cluster-mode", async (t) => {
  await withCluster(3, (c) =>
    withTempDir("kvlab-cluster-data-", async (dir) => {
      await t.step(
        "kvlab load: no MOVED counted as an error, total = the nodes' commandstats",
        async () => {
          // the URL does not say cluster: kvlab detects it from INFO
          const run = await runOpenLoopStep(
            {
              target: parseServerUrl(c.url),
              requestedOpsPerSec: 1000,
              connections: 4,
              durationS: 2,
              ratio: "1:1",
            },
            { data: `${dir}/load` },
          );
          assert.equal(run.status, "complete", run.reason ?? "");
          assert.equal(run.results[0].error_count ?? 0, 0);
          assert.match(
            run.notes.join(" "),
            /cluster mode detected from INFO \(cluster_enabled:1\)/,
          );
          const n = run.nodes!;
          assert.equal(n.nodes.length, 3);
          assert.ok(n.nodes.every((x) => x.calls > 0), JSON.stringify(n.nodes));
          assert.ok(Math.abs(n.sum! - n.tool) <= 0.01 * n.tool, `${n.sum} vs ${n.tool}`);
          assert.equal(n.warning, null);
        },
      );

      await t.step("redis-benchmark --cluster stores a complete run", async () => {
        const target = { ...parseServerUrl(c.url), cluster: true };
        const r = await runRedisBenchmark({
          data: `${dir}/rb`,
          runner: new DenoProcessRunner(),
          params: { target, tests: ["set", "get"], requests: 3000, clients: 6, keyspace: 1000 },
        });
        assert.equal(r.status, "complete", r.reason ?? "");
        assert.match(r.command, / --cluster/);
        assert.equal(r.results.length, 2);
        nodesAgree(Dataset.of(`${dir}/rb`).runManifest(r.runId));
        // not told it is a cluster: the run fails saying so, instead of storing MOVED errors
        const plain = await runRedisBenchmark({
          data: `${dir}/rb`,
          runner: new DenoProcessRunner(),
          params: { target: parseServerUrl(c.url), tests: ["get"], requests: 100 },
        });
        assert.equal(plain.status, "failed");
        assert.match(
          plain.reason ?? "",
          /is a Redis Cluster node \(INFO cluster_enabled:1\).*cluster: true/,
        );
      });

      await t.step("memtier --cluster-mode stores a complete run", async () => {
        const memtier = toolOrSkip("memtier_benchmark", "memtier --cluster-mode");
        if (!memtier) return;
        const r = await runMemtier({
          tool: memtier,
          target: { ...parseServerUrl(c.url), cluster: true },
          threads: 1,
          clients: 3,
          ratio: "1:1",
          keyMaximum: 1000,
          requests: 500,
        }, { data: `${dir}/mt`, runner: new DenoProcessRunner() });
        assert.equal(r.status, "complete", r.reason ?? "");
        assert.match(r.command, /--cluster-mode/);
        nodesAgree(Dataset.of(`${dir}/mt`).runManifest(r.runId));
      });
      // (last: it moves 600 slots away from the first node)
      await t.step("a slot migration during the run is followed, no request an error", async () => {
        const ids = await nodeIds(c);
        const [from, to] = [ids.get(c.nodes[0].port)!, ids.get(c.nodes[1].port)!];
        const load = runOpenLoopStep(
          {
            target: { ...parseServerUrl(c.url), cluster: true },
            requestedOpsPerSec: 1000,
            connections: 4,
            durationS: 4,
            ratio: "1:1",
            keys: 2000,
          },
          { data: `${dir}/reshard` },
        );
        // (bounded: 600 slots, the keys in them moved by MIGRATE while the load runs)
        await new Promise((r) => setTimeout(r, 500));
        await cli(
          c.nodes[0].port,
          "--cluster",
          "reshard",
          `127.0.0.1:${c.nodes[0].port}`,
          "--cluster-from",
          from,
          "--cluster-to",
          to,
          "--cluster-slots",
          "600",
          "--cluster-yes",
        );
        const run = await load;
        assert.equal(run.status, "complete", run.reason ?? "");
        assert.equal(run.results.reduce((n, r) => n + (r.error_count ?? 0), 0), 0);
        assert.ok(run.redirects!.moved + run.redirects!.asked > 0, JSON.stringify(run.redirects));
        const m = Dataset.of(`${dir}/reshard`).runManifest(run.runId) as {
          step: { moved: number };
        };
        assert.equal(m.step.moved, run.redirects!.moved);
        const step = run.results.find((r) => r.moved_count !== null && r.moved_count !== undefined);
        assert.deepEqual([step?.moved_count, step?.ask_count], [
          run.redirects!.moved,
          run.redirects!.asked,
        ]);
      });
      await t.step(
        "a slot migrating (ASK): followed with ASKING, no request an error",
        async () => {
          // key:0's slot half-way from its master to another: a key the source no longer holds
          // is answered ASK, and asked again on the target after ASKING
          const slot = keySlot("key:0");
          const ids = await nodeIds(c);
          // (CRC16 as the server computes it)
          assert.equal(
            Number((await cli(c.nodes[0].port, "cluster", "keyslot", "key:0")).trim()),
            slot,
          );
          const nodesText = await cli(c.nodes[0].port, "cluster", "nodes");
          const src = c.nodes.find((n) => {
            const line = nodesText.split("\n").find((l) => l.includes(`:${n.port}@`))!;
            return line.split(" ").slice(8).some((r) => {
              const [a, b] = r.split("-").map(Number);
              return slot >= a && slot <= (b ?? a);
            });
          })!;
          const dst = c.nodes.find((n) => n !== src)!;
          await cli(src.port, "del", "key:0");
          await cli(dst.port, "cluster", "setslot", String(slot), "importing", ids.get(src.port)!);
          await cli(src.port, "cluster", "setslot", String(slot), "migrating", ids.get(dst.port)!);
          try {
            const run = await runOpenLoopStep(
              {
                target: { ...parseServerUrl(c.url), cluster: true },
                requestedOpsPerSec: 400,
                connections: 2,
                durationS: 1,
                keys: 4,
              },
              { data: `${dir}/ask` },
            );
            assert.equal(run.status, "complete", run.reason ?? "");
            assert.equal(run.results.reduce((n, r) => n + (r.error_count ?? 0), 0), 0);
            assert.ok(run.redirects!.asked > 0, JSON.stringify(run.redirects));
          } finally {
            for (const n of [src, dst]) {
              await cli(n.port, "cluster", "setslot", String(slot), "stable");
            }
          }
        },
      );
    }));
});
