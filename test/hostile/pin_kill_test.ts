/**
 * `kill -9` of `kvlab run` while a plan with `cpus: { server: … }` runs (issue 30): the server
 * stays pinned (kvlab never got to put it back), so the CPUs it had are written down before it
 * is moved; `kvlab doctor` and the next `kvlab run` put it back (it stayed pinned to CPU 0,
 * also after the next run).
 */

import assert from "node:assert/strict";
import { readSystemFiles } from "../../src/system/proc.ts";
import { findTool } from "../../src/collect/tools/find.ts";
import { withServers } from "../_support/servers.ts";
import { kvlabProcess, TASK_PERMISSIONS } from "../_support/kvlab.ts";
import { ROOT } from "../_support/testdata.ts";

const allowed = (pid: number) =>
  /^Cpus_allowed_list:\s*(\S+)/m.exec(
    readSystemFiles([`/proc/${pid}/status`])[`/proc/${pid}/status`] ?? "",
  )?.[1];

// two CPUs to tell pinned from not; under CI one CPU or a missing taskset is a failure
const canPin = (() => {
  const can = navigator.hardwareConcurrency >= 2 && findTool("taskset") !== null;
  if (!can && Deno.env.get("CI") === "true") {
    throw new Error("the pinning tests need 2 CPUs and taskset (util-linux)");
  }
  return can;
})();

Deno.test({
  name: "hostile: a server left pinned by a killed kvlab is put back by doctor and the next run",
  ignore: !canPin,
  fn: async (t) => {
    await withServers([{}], async ([server]) => {
      const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-pinkill-" });
      const env = { KVLAB_PINS_DIR: `${dir}/pins` };
      const before = allowed(server.pid);
      assert.ok(before, "Cpus_allowed_list read from /proc");
      const plan = `${dir}/plan.yaml`;
      Deno.writeTextFileSync(
        plan,
        `name: pinkill\nkind: latency-sweep\nservers: [{ name: a, url: "${server.url}" }]\n` +
          "cpus: { client: 0, server: 1 }\ntimeout_s: 600\n" +
          "sweep: { engine: kvlab, threads: 1, clients: 1, rates: [50], step_s: 300, keys: 10 }\n",
      );
      /** Runs the plan until the server is pinned, then kills kvlab with SIGKILL. */
      const killedMidPlan = async () => {
        const child = new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            ...TASK_PERMISSIONS,
            `${ROOT}src/cli.ts`,
            "run",
            plan,
            "--data",
            `${dir}/d`,
          ],
          env,
          stdout: "null",
          stderr: "null",
        }).spawn();
        for (let i = 0; i < 600 && allowed(server.pid) !== "1"; i++) {
          await new Promise((r) => setTimeout(r, 100));
        }
        child.kill("SIGKILL");
        await child.status;
        assert.equal(allowed(server.pid), "1", "pinned when kvlab died");
      };

      await t.step("kvlab doctor puts it back", async () => {
        await killedMidPlan();
        const r = await kvlabProcess(["doctor", "--sample-s", "0.1"], { env });
        assert.match(
          r.stdout,
          new RegExp(
            `^put server a \\(pid ${server.pid}\\) back on CPUs \\S+: kvlab pid \\d+ pinned it and is gone$`,
            "m",
          ),
        );
        assert.equal(allowed(server.pid), before);
      });

      await t.step("the next kvlab run puts it back before its cells", async () => {
        await killedMidPlan();
        const other = `${dir}/other.yaml`;
        Deno.writeTextFileSync(
          other,
          `name: other\nkind: latency-sweep\nservers: [{ name: a, url: "${server.url}" }]\n` +
            "sweep: { engine: kvlab, threads: 1, clients: 1, rates: [50], step_s: 0.2, keys: 10 }\n",
        );
        const r = await kvlabProcess(["run", other, "--data", `${dir}/d2`], { env });
        assert.equal(r.code, 0, r.printed);
        assert.match(
          r.stderr,
          new RegExp(`put server a \\(pid ${server.pid}\\) back on CPUs \\S+`),
        );
        assert.equal(allowed(server.pid), before);
        assert.deepEqual([...Deno.readDirSync(`${dir}/pins`)], [], "no record left");
      });
      Deno.removeSync(dir, { recursive: true });
    });
  },
});
