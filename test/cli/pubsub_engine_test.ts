// `kvlab pubsub --engine`: each engine runs, says so, and the stored run keeps which one ran
// (real redis-server on a free loopback port, stopped by PID; short, low-rate steps).
import assert from "node:assert/strict";
import { withServers } from "../_support/servers.ts";
import { missingOutsideCi } from "../_support/tools.ts";
import { checkEngines, quoted } from "./_engine.ts";

Deno.test({
  name: "kvlab pubsub --engine ffi|deno runs that engine, prints it and stores it",
  ignore: missingOutsideCi("redis-server"),
  fn: () =>
    withServers([{}], ([server]) =>
      checkEngines({
        args: [
          ...["pubsub", "--url", server.url, "--rate", "200", "--publishers", "2"],
          ...["--subscribers", "2", "--duration", "0.5", "--grace", "1"],
        ],
        engineLine: (said) => new RegExp(`^engine ${quoted(said)}$`, "m"),
        summary: (summary, engine) => {
          assert.equal(summary.engineNote, engine === "deno" ? "asked for" : null);
          assert.ok((summary.delivered as number) > 0);
        },
      })),
});
