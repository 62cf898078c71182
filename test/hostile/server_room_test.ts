/**
 * Connection counts checked against the server before any load (issue 21): `maxclients` minus
 * the clients already connected. `kvlab load` and `kvlab pubsub` asking for more exit 2 naming
 * the option and store nothing; a plan's cell fails at once with the same message.
 */

import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/mod.ts";
import { withServers } from "../_support/servers.ts";
import { kvlab, kvlabStep, writeSweepPlan } from "./_cli.ts";

Deno.test("hostile: more connections than the server's maxclients allows", async (t) => {
  // maxclients 6: room for 6 clients besides the check's own connection
  await withServers([{ args: ["--maxclients", "6"] }], async ([server]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-room-" });
    const url = `redis://127.0.0.1:${server.port}`;

    await t.step("kvlab load --connections 8 exits 2 naming --connections", async () => {
      const o = { rate: 100, connections: 8, duration: 1 };
      const r = await kvlabStep("load", url, `${dir}/l`, o);
      assert.equal(r.code, 2, r.printed);
      assert.match(
        r.stderr,
        /^error: invalid --connections: 8 \(redis:\/\/127\.0\.0\.1:\d+ takes 6 more clients: maxclients 6, 0 connected\)$/m,
      );
      assert.throws(() => Deno.statSync(`${dir}/l/batches`), "nothing stored");
    });

    await t.step("kvlab pubsub with 4 + 4 connections exits 2", async () => {
      const o = { rate: 100, publishers: 4, subscribers: 4, duration: 1 };
      const r = await kvlabStep("pubsub", url, `${dir}/p`, o);
      assert.equal(r.code, 2, r.printed);
      assert.match(r.stderr, /invalid --publishers \+ --subscribers: 8 \(.* maxclients 6/);
      assert.throws(() => Deno.statSync(`${dir}/p/batches`), "nothing stored");
    });

    await t.step("kvlab load within the room runs", async () => {
      const o = { rate: 50, connections: 4, duration: 1 };
      const r = await kvlabStep("load", url, `${dir}/ok`, o);
      assert.equal(r.code, 0, r.printed);
    });

    await t.step("a plan's cell with too many clients fails at once with the message", async () => {
      const plan = writeSweepPlan(dir, url, { name: "room", clients: 8, rate: 100 });
      const r = await kvlab(["run", plan, "--data", `${dir}/plan`]);
      assert.equal(r.code, 1, r.printed);
      const runs = loadTable(`${dir}/plan`, "runs");
      assert.deepEqual(runs.getColumn("status").toArray(), ["failed"]);
      assert.match(runs.getColumn("error").get(0), /invalid --connections: 8 \(.*maxclients 6/);
      assert.equal(loadTable(`${dir}/plan`, "results").height, 0);
    });
    Deno.removeSync(dir, { recursive: true });
  });
});
