/**
 * `kvlab load` interrupted (issue 21): Ctrl-C or SIGTERM ends the step, stores what ran as an
 * `incomplete` run with its rows, and exits 130 (Deno's default handler used to end it at once,
 * storing nothing).
 */

import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/mod.ts";
import { commandsProcessed as processed, withServers } from "../_support/servers.ts";
import { interruptCli } from "../_support/interrupt.ts";

Deno.test("hostile: Ctrl-C and SIGTERM end kvlab load, keeping the partial step", async (t) => {
  await withServers([{}], async ([server]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-load-signal-" });
    for (const [signal, threads] of [["SIGINT", 1], ["SIGTERM", 2]] as const) {
      await t.step(`${signal}, ${threads} thread(s)`, async () => {
        const data = `${dir}/${signal}`;
        const before = await processed(server.port);
        // started once its GETs reach the server; an ignored signal would run the whole 600 s
        const out = await interruptCli(
          [
            ...["load", "--url", `redis://127.0.0.1:${server.port}`, "--data", data],
            ...["--rate", "200", "--connections", "2", "--threads", String(threads)],
            ...["--duration", "600"],
          ],
          signal,
          async () => await processed(server.port) > before + 200,
        );
        const printed = out.printed;
        assert.notEqual(out.signal, "SIGKILL", `${signal} was ignored`);
        assert.equal(out.code, 130, printed);
        // the signal named (issue 30: a SIGHUP's reason said "Ctrl-C / SIGTERM" too)
        const said = signal === "SIGINT" ? "Ctrl-C" : signal;
        assert.match(printed, new RegExp(`incomplete: interrupted \\(${said}\\) after [\\d.]+ s`));
        const runs = loadTable(data, "runs");
        assert.deepEqual(runs.getColumn("status").toArray(), ["incomplete"]);
        assert.match(runs.getColumn("error").get(0), /interrupted/);
        const results = loadTable(data, "results");
        assert.equal(results.height, 1);
        // the rate covers the part of the window that ran, not the 600 s asked for
        assert.ok(results.getColumn("requests").get(0) > 0);
        assert.ok(results.getColumn("ops_per_sec").get(0) > 10, printed);
      });
    }
    Deno.removeSync(dir, { recursive: true });
  });
});
