/**
 * Steps that are interrupted (issue 30): SIGTERM during a `kvlab pubsub` step stores it
 * incomplete with its rate over the time that ran (it stored `complete = true`, `duration_s 10`
 * and a rate over the planned window); a SIGHUP's reason says SIGHUP; Ctrl-C during a
 * latency-sweep preload ends it at once (it was ignored: over 60 s against a silent server);
 * Ctrl-C or SIGTERM during a redis-benchmark or memtier warm-up gives the run a reason that says
 * so (it was `failed` with no reason).
 */

import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/mod.ts";
import { commandsProcessed as processed, withServers } from "../_support/servers.ts";
import { interruptCli } from "../_support/interrupt.ts";
import { toolOrSkip } from "../_support/tools.ts";
import { hostileServer } from "./_resp_server.ts";

/** The one run of a dataset: its status and error. */
const onlyRun = (data: string) => {
  const runs = loadTable(data, "runs").select("status", "error").toRecords();
  assert.equal(runs.length, 1, JSON.stringify(runs));
  return runs[0] as { status: string; error: string | null };
};

Deno.test("hostile: interrupted steps are stored as what ran, the signal named", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-interrupted-" });
  await withServers([{}], async ([server]) => {
    const url = `redis://127.0.0.1:${server.port}`;
    const busy = async (more: number) => {
      const before = await processed(server.port);
      return async () => await processed(server.port) > before + more;
    };

    await t.step(
      "SIGTERM 10 s pubsub step: incomplete, its rate over the time that ran",
      async () => {
        const data = `${dir}/pubsub`;
        const out = await interruptCli(
          [
            ...["pubsub", "--url", url, "--data", data, "--rate", "200", "--publishers", "2"],
            ...["--subscribers", "2", "--duration", "10"],
          ],
          "SIGTERM",
          await busy(200), // a second of publishing
        );
        assert.equal(out.code, 130, out.printed);
        const run = onlyRun(data);
        assert.equal(run.status, "incomplete");
        assert.match(String(run.error), /^interrupted \(SIGTERM\) after [\d.]+ s of the step/);
        const row = loadTable(data, "results").toRecords()[0];
        assert.equal(row.complete, false);
        const ran = Number(row.duration_s);
        assert.ok(ran > 0 && ran < 10, `duration_s ${ran}: the time that ran, not the 10 s asked`);
        // the rate over that time: every delivery counted in it (at 200/s asked)
        assert.ok(Number(row.ops_per_sec) > 100, JSON.stringify(row));
        assert.ok(Number(row.ops_per_sec) * ran <= Number(row.messages_delivered) + 1e-6);
      },
    );

    await t.step("SIGHUP during kvlab load: the reason says SIGHUP", async () => {
      const data = `${dir}/hup`;
      const out = await interruptCli(
        [
          "load",
          "--url",
          url,
          "--data",
          data,
          "--rate",
          "200",
          "--connections",
          "2",
          "--duration",
          "600",
        ],
        "SIGHUP",
        await busy(200),
      );
      assert.equal(out.code, 129, out.printed);
      assert.match(String(onlyRun(data).error), /^interrupted \(SIGHUP\) after [\d.]+ s/);
    });

    const benchmark = toolOrSkip("redis-benchmark", "Ctrl-C in a redis-benchmark warm-up");
    if (benchmark) {
      await t.step("Ctrl-C during a redis-benchmark warm-up: the run says so", async () => {
        const plan = `${dir}/rb.yaml`;
        Deno.writeTextFileSync(
          plan,
          `name: rbw\nkind: redis-benchmark\ntool: ${benchmark}\nservers:\n  - { name: a, url: "${url}" }\n` +
            "tests: [get]\nrequests: 1000\nwarmup_requests: 100000000\nmatrix: { clients: [1] }\n",
        );
        const data = `${dir}/rb`;
        const out = await interruptCli(["run", plan, "--data", data], "SIGINT", await busy(2000));
        assert.equal(out.code, 130, out.printed);
        const run = onlyRun(data);
        assert.equal(run.status, "failed");
        assert.match(
          String(run.error),
          /^interrupted \(Ctrl-C\) before the run started \(during its warm-up\)$/,
        );
      });
    }

    const memtier = toolOrSkip("memtier_benchmark", "SIGTERM in a memtier warm-up");
    if (memtier) {
      await t.step("SIGTERM during a memtier warm-up: the run says so", async () => {
        const plan = `${dir}/mt.yaml`;
        Deno.writeTextFileSync(
          plan,
          `name: mtw\nkind: latency-sweep\nservers:\n  - { name: a, url: "${url}" }\n` +
            `sweep: {engine: memtier, tool: ${memtier}, threads: 1, clients: 1, rates: [200], ` +
            "step_s: 1, warmup_s: 300, keys: 100, preload: false}\n",
        );
        const data = `${dir}/mt`;
        const out = await interruptCli(["run", plan, "--data", data], "SIGTERM", await busy(200));
        assert.equal(out.code, 130, out.printed);
        const run = onlyRun(data);
        assert.equal(run.status, "failed");
        assert.match(
          String(run.error),
          /^interrupted \(SIGTERM\) before the run started \(during its warm-up\)$/,
        );
      });
    }
  });

  await t.step("Ctrl-C during a latency-sweep preload of a silent server ends it", async () => {
    let sets = 0;
    const silent = hostileServer({
      reply: (w) => {
        if (w[0].toUpperCase() !== "SET") return undefined;
        sets++;
        return ""; // never answered
      },
    });
    try {
      const plan = `${dir}/pre.yaml`;
      Deno.writeTextFileSync(
        plan,
        `name: pre\nkind: latency-sweep\nservers:\n  - { name: a, url: "redis://127.0.0.1:${silent.port}" }\n` +
          "timeout_s: 600\n" +
          "sweep: {engine: kvlab, threads: 1, clients: 1, rates: [100], step_s: 1, keys: 100}\n",
      );
      const data = `${dir}/pre`;
      // a bound, not a timing: a preload that ignores Ctrl-C runs into interruptCli's SIGKILL
      const out = await interruptCli(
        ["run", plan, "--data", data],
        "SIGINT",
        () => Promise.resolve(sets > 0),
      );
      assert.notEqual(out.signal, "SIGKILL", "Ctrl-C was ignored");
      assert.equal(out.code, 130, out.printed);
      assert.match(
        String(onlyRun(data).error),
        /^interrupted \(Ctrl-C\) before the step started \(during its preload\)$/,
      );
    } finally {
      silent.close();
    }
  });
  Deno.removeSync(dir, { recursive: true });
});
