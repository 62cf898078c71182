// `kvlab load` says what `kvlab pubsub` says: the sustained rule's verdict and the error count
// (real redis-server on a free loopback port, stopped by PID; a short, low-rate step).
import assert from "node:assert/strict";
import { withServerAndDir } from "../_support/servers.ts";
import { missingOutsideCi } from "../_support/tools.ts";
import { cli } from "./_cli.ts";

Deno.test({
  name: "kvlab load prints the verdict and the error count",
  ignore: missingOutsideCi("redis-server"),
  fn: () =>
    withServerAndDir("kvlab-load-", async (server, data) => {
      const r = await cli([
        ...["load", "--url", server.url, "--rate", "200", "--connections", "2"],
        ...["--duration", "1", "--data", data],
      ]);
      assert.equal(r.code, 0, r.stderr);
      // a verdict whatever this busy machine reached, and errors counted even when 0
      assert.match(r.stdout, /^GET: \d+\/s of 200\/s requested \((sustained|NS|over)\); /m);
      assert.match(r.stdout, /; errors \d+\n/);
    }),
});
