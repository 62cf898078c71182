// `kvlab load --engine`: each engine runs, says so, and the stored run keeps which one ran
// (real redis-server on a free loopback port, stopped by PID; short, low-rate steps).
import assert from "node:assert/strict";
import { withServers } from "../_support/servers.ts";
import { missingOutsideCi } from "../_support/tools.ts";
import { checkEngines, quoted } from "./_engine.ts";

Deno.test({
  name: "kvlab load --engine ffi|deno runs that engine, prints it and stores it",
  ignore: missingOutsideCi("redis-server"),
  fn: () =>
    withServers([{}], ([server]) =>
      checkEngines({
        args: [
          ...["load", "--url", server.url, "--rate", "200", "--connections", "4"],
          ...["--duration", "0.5", "--threads", "2"],
        ],
        engineLine: (said) => new RegExp(`^engine ${quoted(said)}, 2 threads$`, "m"),
        // a load step's one raw file is its loadgen.json
        summary: (summary) => assert.equal(summary.workers, 2),
      })),
});
