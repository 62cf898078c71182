// `kvlab pubsub --engine`: each engine runs, says so, and the stored run keeps which one ran
// (real redis-server on a free loopback port, stopped by PID; short, low-rate steps).
import assert from "node:assert/strict";
import { findTool } from "../../src/collect/tools/find.ts";
import { walk, withServers } from "../_support/servers.ts";
import { cli } from "./_cli.ts";

Deno.test({
  name: "kvlab pubsub --engine ffi|deno runs that engine, prints it and stores it",
  ignore: findTool("redis-server") === null && Deno.env.get("CI") !== "true",
  fn: () =>
    withServers([{}], async ([server]) => {
      for (const [engine, said] of [["ffi", "ffi (epoll by FFI)"], ["deno", "deno (Deno TCP)"]]) {
        const data = Deno.makeTempDirSync({ prefix: "kvlab-pubsub-engine-" });
        try {
          const r = await cli([
            ...["pubsub", "--url", server.url, "--rate", "200", "--publishers", "2"],
            ...["--subscribers", "2", "--duration", "0.5", "--grace", "1", "--engine", engine],
            ...["--data", data],
          ]);
          assert.equal(r.code, 0, r.stderr);
          assert.match(r.stdout, new RegExp(`^engine ${said.replace(/[()]/g, "\\$&")}$`, "m"));
          const raw = walk(data).filter((p) => p.includes("/raw/"));
          assert.equal(raw.length, 1, `one raw file in ${walk(data).join(", ")}`);
          const summary = JSON.parse(Deno.readTextFileSync(raw[0]));
          assert.equal(summary.engine, engine);
          assert.equal(summary.engineNote, engine === "deno" ? "asked for" : null);
          assert.ok(summary.delivered > 0);
        } finally {
          Deno.removeSync(data, { recursive: true });
        }
      }
      const bad = await cli([
        ...["pubsub", "--url", server.url, "--rate", "200", "--engine", "uring"],
        ...["--data", "unused"],
      ]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /invalid --engine: uring/);
    }),
});
