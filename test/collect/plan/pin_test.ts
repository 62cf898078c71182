// A plan's `cpus:` for what kvlab does not start: kvlab itself when its own engine is the client,
// and local servers. Read from /proc while a cell runs: kvlab's and the server's
// Cpus_allowed_list are the plan's lists; after the plan, both are back as they were.
import assert from "node:assert/strict";
import { readSystemFiles } from "../../../src/system/proc.ts";
import { loadTable } from "../../../src/analyze/mod.ts";
import { parsePlan, PlanError, runPlan } from "../../../src/collect/mod.ts";
import { findTool } from "../../../src/collect/tools/find.ts";
import { affinityList, localServerPid } from "../../../src/collect/plan/pin.ts";
import { withServers } from "../../_support/servers.ts";

const allowed = (pid: number) =>
  /^Cpus_allowed_list:\s*(\S+)/m.exec(
    readSystemFiles([`/proc/${pid}/status`])[`/proc/${pid}/status`] ?? "",
  )?.[1];

const sweep = (url: string, extra: string) =>
  `name: pin
kind: latency-sweep
servers: [{ name: redis, url: "${url}"${extra.includes("container") ? ", container: c1" : ""} }]
timeout_s: 60
sweep: { engine: kvlab, threads: 1, clients: 2, rates: [200], step_s: 1, keys: 100 }
${extra.replace("container", "")}`;

// two CPUs to tell pinned from not; under CI one CPU or a missing taskset is a failure, not a skip
const canPin = (() => {
  const can = navigator.hardwareConcurrency >= 2 && findTool("taskset") !== null;
  if (!can && Deno.env.get("CI") === "true") {
    throw new Error("the pinning tests need 2 CPUs and taskset (util-linux)");
  }
  return can;
})();

Deno.test("affinityList() reads taskset -p's answer", () => {
  assert.equal(affinityList("pid 1's current affinity list: 0-1\n"), "0-1");
  assert.equal(affinityList(""), null);
});

Deno.test({
  name:
    "a kvlab-engine plan pins kvlab (cpus.client) and the server (cpus.server), then puts both back",
  ignore: !canPin,
  fn: async () => {
    await withServers([{}], async ([server]) => {
      const dir = Deno.makeTempDirSync({ prefix: "kvlab-pin-" });
      const mine = allowed(Deno.pid), theirs = allowed(server.pid);
      assert.ok(mine && theirs, "Cpus_allowed_list read from /proc");
      const p = parsePlan(sweep(server.url, "cpus: { client: 0, server: 1 }\n"), "p.yaml");
      const during: (string | undefined)[][] = [];
      const r = await runPlan(p, {
        data: `${dir}/data`,
        onEvent: (e) => {
          if (e.kind === "start") during.push([allowed(Deno.pid), allowed(server.pid)]);
        },
      });
      assert.equal(r.failed, 0);
      assert.deepEqual(during, [["0", "1"]]);
      assert.deepEqual([allowed(Deno.pid), allowed(server.pid)], [mine, theirs]);
      const tags = JSON.parse(loadTable(`${dir}/data`, "runs").getColumn("tags").get(0) as string);
      assert.deepEqual([tags.client_cpus, tags.server_cpus], ["0", "1"]);
      Deno.removeSync(dir, { recursive: true });
    });
  },
});

Deno.test({
  name: "a server kvlab cannot pin fails at cpus.server, before any cell, nothing left pinned",
  ignore: !canPin,
  fn: async () => {
    await withServers([{}], async ([server]) => {
      const dir = Deno.makeTempDirSync({ prefix: "kvlab-pin-" });
      const mine = allowed(Deno.pid);
      assert.ok(mine, "Cpus_allowed_list read from /proc");
      const p = parsePlan(
        sweep(server.url, "container\ncpus: { client: 0, server: 1 }\n"),
        "p.yaml",
      );
      const events: string[] = [];
      await assert.rejects(
        () => runPlan(p, { data: `${dir}/data`, onEvent: (e) => events.push(e.kind) }),
        (e) =>
          e instanceof PlanError &&
          /p\.yaml:7:\d+: server redis runs in container c1: start it pinned/.test(e.message),
      );
      assert.deepEqual(events, []);
      assert.equal(allowed(Deno.pid), mine, "kvlab is back on its CPUs");
      // the pid a server gives must be the process that holds its port (or, where that cannot
      // be told, names it); its command line is never shown (issue 30)
      const local = { ...p.servers[0], container: undefined };
      for (const listens of [() => false, () => null]) {
        await assert.rejects(
          () =>
            localServerPid(local, () => "redis-server 127.0.0.1:1 --requirepass s3cret", listens),
          (e) =>
            /says its pid is \d+, but that process does not listen on port \d+/.test(String(e)) &&
            !String(e).includes("s3cret") && !String(e).includes("redis-server 127"),
        );
      }
      assert.equal(await localServerPid({ ...p.servers[0], container: undefined }), server.pid);
      Deno.removeSync(dir, { recursive: true });
    });
  },
});
