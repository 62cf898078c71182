/**
 * kvlab's pub/sub engine against a real 3-master redis-server cluster (one per file): sharded
 * mode SSUBSCRIBEs and SPUBLISHes each channel at its slot's master (every master's
 * commandstats agree with what kvlab sent it, every message delivered once, none an error),
 * classic PUBLISH is broadcast to subscribers spread over the masters, a MOVED reply to
 * SSUBSCRIBE (a stale map) or SPUBLISH (a slot moved during the step) is named with its slot and
 * channel, and the epoll engine says it cannot route. A few hundred messages per step, a 1 s
 * window.
 */

import assert from "node:assert/strict";
import { cli, type TestCluster, waitFor, withCluster } from "../../_support/cluster.ts";
import { withTempDir } from "../../_support/temp.ts";
import { parseServerUrl } from "../../../src/collect/mod.ts";
import { runPubSubStep } from "../../../src/collect/pubsub/step.ts";
import { type PubSubResult, runPubSub } from "../../../src/collect/pubsub/mod.ts";
import { readSlotMap } from "../../../src/collect/cluster/nodes.ts";
import { keySlot } from "../../../src/collect/cluster/slots.ts";
import { Dataset } from "../../../src/store/dataset.ts";

/** Each master's calls of `command` so far (INFO commandstats, read by redis-cli), by port. */
async function calls(c: TestCluster, command: string): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const n of c.nodes) {
    const text = await cli(n.port, "info", "commandstats");
    out.set(n.port, Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(text)?.[1] ?? 0));
  }
  return out;
}

const describe = (r: PubSubResult) =>
  `published ${r.published}, delivered ${r.delivered}, lost ${r.lost}, duplicated ` +
  `${r.duplicated}, errors ${r.errors} ${r.errorSamples.join("; ")}`;

/** Every message delivered once to each of its `fanOut` subscribers, nothing an error. */
function exactlyOnce(r: PubSubResult): void {
  assert.ok(r.published >= 200, describe(r));
  assert.equal(r.delivered, r.published * r.fanOut, describe(r));
  assert.deepEqual(
    [r.lost, r.duplicated, r.errors, r.publishErrors, r.protocolErrors, r.unsent],
    [0, 0, 0, 0, 0, 0],
    describe(r),
  );
}

Deno.test({
  name: "pub/sub across a cluster's shards",
  sanitizeResources: false,
  fn: async (t) => {
    await withCluster(3, (c) =>
      withTempDir("kvlab-pubsub-cluster-", async (dir) => {
        const seed = parseServerUrl(c.url);
        const map = await readSlotMap(seed);
        const step = {
          publishers: 2,
          subscribers: 4,
          channels: 12,
          fanOut: 2,
          requestedOpsPerSec: 600, // deliveries: 300 messages a second
          durationS: 1,
          graceS: 2,
          timeoutS: 30,
        };

        await t.step(
          "sharded: each channel at its slot's master, SPUBLISH counted there",
          async () => {
            // the channels land on every master (and each subscriber's on more than one)
            const owners = new Set(
              Array.from(
                { length: step.channels },
                (_, i) => map.slotNode[keySlot(`kvlab:ps:${i}`)],
              ),
            );
            assert.equal(owners.size, 3);
            const before = await calls(c, "spublish");
            const run = await runPubSubStep(
              { ...step, target: { ...seed, cluster: true }, mode: "sharded" },
              { data: `${dir}/sharded` },
            );
            assert.equal(run.status, "complete", run.reason ?? "");
            const r = run.result!;
            exactlyOnce(r);
            assert.equal(r.engine, "deno");
            assert.match(r.engineNote ?? "", /cluster/);
            // every master got its channels' SPUBLISH, and only those: its commandstats say so
            const after = await calls(c, "spublish");
            assert.equal(r.shards?.length, 3);
            let sum = 0;
            for (const s of r.shards!) {
              const port = Number(s.node.split(":").at(-1));
              const served = after.get(port)! - before.get(port)!;
              assert.ok(s.channels > 0 && s.published > 0, JSON.stringify(s));
              assert.equal(served, s.published, JSON.stringify(s));
              assert.equal(s.serverCalls, served);
              sum += served;
            }
            assert.equal(sum, r.published);
            // kept in the run (manifest and raw/pubsub.json), no warning
            const m = Dataset.of(`${dir}/sharded`).runManifest(run.runId) as {
              pubsub: { shards: { node: string; published: number }[]; notes: string[] };
            };
            assert.deepEqual(
              m.pubsub.shards.map((s) => s.published),
              r.shards!.map((s) => s.published),
            );
            assert.deepEqual(m.pubsub.notes, []);
          },
        );

        await t.step(
          "PUBLISH (cluster detected from INFO): broadcast to subscribers on every master",
          async () => {
            const before = await calls(c, "publish");
            const run = await runPubSubStep(
              {
                ...step,
                target: seed,
                mode: "fan-out",
                fanOut: undefined,
                channels: 1,
                requestedOpsPerSec: 1200, // 300 messages a second to 4 subscribers each
              },
              { data: `${dir}/broadcast` },
            );
            assert.equal(run.status, "complete", run.reason ?? "");
            const r = run.result!;
            assert.equal(r.fanOut, 4);
            exactlyOnce(r);
            assert.deepEqual(r.shards!.map((s) => s.subscriberConnections), [2, 1, 1]);
            const after = await calls(c, "publish");
            const sum = c.nodes.reduce((n, x) => n + after.get(x.port)! - before.get(x.port)!, 0);
            assert.equal(sum, r.published);
            const m = Dataset.of(`${dir}/broadcast`).runManifest(run.runId) as {
              pubsub: { notes: string[] };
            };
            assert.match(m.pubsub.notes.join(" "), /cluster mode detected .*broadcast/);
          },
        );

        await t.step(
          "SSUBSCRIBE at a master that does not serve the slot: MOVED, named",
          async () => {
            // a stale map: channel 0's slot pointed at another master
            const slot = keySlot("kvlab:ps:0");
            const stale = { nodes: map.nodes, slotNode: map.slotNode.slice() };
            stale.slotNode[slot] = (map.slotNode[slot] + 1) % 3;
            await assert.rejects(
              runPubSub({ ...step, port: c.nodes[0].port, mode: "sharded", cluster: stale }),
              new RegExp(
                `SSUBSCRIBE refused: MOVED: slot ${slot} \\(channel kvlab:ps:0\\) is now served by`,
              ),
            );
          },
        );

        // (last: it moves channel 0's slot to another master)
        await t.step(
          "a channel whose slot moves during the step: SPUBLISH's MOVED named",
          async () => {
            const slot = keySlot("kvlab:ps:0");
            const from = c.nodes.find((n) => n.port === map.nodes[map.slotNode[slot]].port)!;
            const to = c.nodes.find((n) => n !== from)!;
            const stop = new AbortController();
            const running = runPubSub({
              ...step,
              durationS: 60, // ended by the signal once the old master refused SPUBLISHes
              port: c.nodes[0].port,
              mode: "sharded",
              cluster: map,
              signal: stop.signal,
            });
            try {
              await waitFor(
                "channel 0 subscribed",
                async () =>
                  /\n2\s*$/.test(await cli(from.port, "pubsub", "shardnumsub", "kvlab:ps:0")),
              );
              const id = (await cli(to.port, "cluster", "myid")).trim();
              for (
                const n of [to, from, ...c.nodes.filter((n) => n !== to && n !== from)]
              ) {
                await cli(n.port, "cluster", "setslot", String(slot), "node", id);
              }
              // 25 refusals, a second of channel 0's messages (one per 40 ms): the engine, which
              // sent them, has read its replies since (it reads them every 100 ms of its pacing)
              const rejected = async () =>
                Number(
                  /cmdstat_spublish:.*rejected_calls=(\d+)/.exec(
                    await cli(from.port, "info", "commandstats"),
                  )?.[1] ?? 0,
                );
              await waitFor(
                "SPUBLISH refused by the old master",
                async () => await rejected() >= 25,
              );
            } finally {
              stop.abort();
            }
            const r = await running;
            assert.ok(r.interrupted && r.publishErrors > 0, describe(r));
            assert.match(
              r.errorSamples.join("\n"),
              new RegExp(
                `publish: MOVED: slot ${slot} \\(channel kvlab:ps:0\\) is now served by ` +
                  `127\\.0\\.0\\.1:${to.port}: the slot map changed during the step`,
              ),
            );
          },
        );

        await t.step("engine ffi says it cannot route to the masters", async () => {
          await assert.rejects(
            runPubSub({
              ...step,
              port: c.nodes[0].port,
              mode: "sharded",
              engine: "ffi",
              cluster: map,
            }),
            /engine ffi: a cluster/,
          );
        });
      }));
  },
});
