/**
 * Errors on the collect side that did not say what happened (issue 30): a server that takes the
 * connection and answers nothing, not even INFO, was "cannot connect … Command timed out" after
 * 20 s; `--threads 128 --connections 1` printed "128 threads" and ran one Worker, and
 * `--threads 256 --connections 256` started 256 Workers on 2 CPUs (4.3 GB for a 1 s step).
 */

import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/mod.ts";
import { readSystemFiles } from "../../src/system/proc.ts";
import { withServers } from "../_support/servers.ts";
import { kvlabStep } from "./_cli.ts";
import { hostileServer } from "./_resp_server.ts";

Deno.test("hostile: a server that answers nothing is said to, not to be unreachable", async (t) => {
  const server = hostileServer({ reply: () => "" });
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-mute-" });
  try {
    const url = `redis://127.0.0.1:${server.port}`;
    const said = new RegExp(
      `${url.replaceAll(".", "\\.")} accepted the connection but did not answer \\(no reply to ` +
        "INFO in 5 s\\): not a Redis-compatible server, or one that is stuck",
    );
    for (
      const [command, o] of [
        ["load", { rate: 10, connections: 1, duration: 0.2 }],
        ["sample", { duration: 0.2 }],
      ] as const
    ) {
      await t.step(`kvlab ${command}`, async () => {
        const r = await kvlabStep(command, url, `${dir}/${command}`, o);
        assert.equal(r.code, 1, r.printed);
        assert.match(r.printed, said);
        assert.doesNotMatch(r.printed, /Command timed out|cannot connect/);
        const runs = loadTable(`${dir}/${command}`, "runs");
        assert.deepEqual(runs.getColumn("status").toArray(), ["failed"]);
        assert.match(runs.getColumn("error").get(0), said);
      });
    }
  } finally {
    server.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("hostile: kvlab load's threads are capped by its connections and CPUs, said once", async (t) => {
  const status = readSystemFiles([`/proc/${Deno.pid}/status`])[`/proc/${Deno.pid}/status`] ?? "";
  const cpus = (/^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1] ?? "")
    .split(",").filter((r) => r).reduce((n, r) => {
      const [a, b] = r.split("-").map(Number);
      return n + (b === undefined ? 1 : b - a + 1);
    }, 0) || navigator.hardwareConcurrency;
  await withServers([{}], async ([server]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-threads-" });
    for (const [threads, connections] of [[128, 1], [256, 256]]) {
      await t.step(`--threads ${threads} --connections ${connections}`, async () => {
        const used = Math.min(threads, connections, cpus);
        const o = { rate: 100, connections, threads, duration: 0.3 };
        const r = await kvlabStep("load", server.url, `${dir}/t${threads}`, o);
        assert.equal(r.code, 0, r.printed);
        assert.match(r.stdout, new RegExp(`^engine .*, ${used} threads?\\n`, "m"));
        assert.match(
          r.stdout,
          new RegExp(
            `^ {2}\\(${threads} threads asked, ${used} used \\(at most one per connection: ` +
              `${connections}, and per CPU kvlab may use: ${cpus}\\)\\)$`,
            "m",
          ),
        );
        assert.equal(r.stdout.match(/threads asked/g)?.length, 1, "said once");
      });
    }
    Deno.removeSync(dir, { recursive: true });
  });
});
