/**
 * A latency-sweep plan against a server that never answers SET or GET (issue 30): the preload
 * stops at the plan's `timeout_s` (its own 120 s limit no longer overrides it), is not said to
 * have written every key, and the cell is stored failed with the reason, exit 1 (it ran 124 s,
 * printed "preload: every key written once", stored the cell complete and exited 0).
 */

import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/mod.ts";
import { kvlab } from "./_cli.ts";
import { hostileServer } from "./_resp_server.ts";
import { preloadKeys } from "../../src/collect/loadgen/tool.ts";

Deno.test("hostile: a latency-sweep cell against a server that never answers fails", async () => {
  const server = hostileServer({
    reply: (w) => ["GET", "SET"].includes(w[0].toUpperCase()) ? "" : undefined,
  });
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-lying-plan-" });
  try {
    const plan = `${dir}/plan.yaml`;
    Deno.writeTextFileSync(
      plan,
      `name: silent\nkind: latency-sweep\nservers:\n  - { name: a, url: "redis://127.0.0.1:${server.port}" }\n` +
        "repetitions: 1\ntimeout_s: 3\n" +
        "sweep: {engine: kvlab, threads: 1, clients: 2, rates: [100], step_s: 1, keys: 100}\n",
    );
    const r = await kvlab(["run", plan, "--data", `${dir}/d`]);
    assert.equal(r.code, 1, r.printed);
    assert.doesNotMatch(r.printed, /every key written once/);
    const runs = loadTable(`${dir}/d`, "runs");
    assert.deepEqual(runs.getColumn("status").toArray(), ["failed"], r.printed);
    assert.match(
      runs.getColumn("error").get(0),
      /^preload failed \(redis:\/\/127\.0\.0\.1:\d+: TimedOut: preload exceeded its 3 s limit, 0 of 100 keys written\); step not run$/,
    );
    assert.match(r.printed, /failed: 0 tests, run \S+ \(preload failed/);
  } finally {
    server.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("hostile: the preload of a silent server stops when it goes quiet, or on Ctrl-C", async (t) => {
  const server = hostileServer({ reply: (w) => w[0].toUpperCase() === "SET" ? "" : undefined });
  try {
    // (a limit well above both: without them, the preload waits it out)
    const o = { port: server.port, keys: 100, timeoutMs: 20_000 };
    await t.step("no reply to a batch for idleMs: TimedOut, naming the batch", async () => {
      await assert.rejects(
        () => preloadKeys({ ...o, idleMs: 300 }),
        (e) =>
          e instanceof Deno.errors.TimedOut && /no reply to 100 SETs in 0\.3 s/.test(e.message),
      );
    });
    await t.step("Ctrl-C (the signal) ends it at once, not after its limits", async () => {
      const ac = new AbortController();
      const stopped = preloadKeys({ ...o, signal: ac.signal });
      setTimeout(() => ac.abort("SIGINT"), 200);
      await assert.rejects(() => stopped, Deno.errors.Interrupted);
    });
  } finally {
    server.close();
  }
});
