// A plan's `cpus:`: read at its line, checked against this machine before any cell runs, and a
// real redis-benchmark / memtier run pinned with taskset: its own Cpus_allowed_list, read from
// /proc while it runs, is the plan's list. (kvlab itself and servers: pin_test.ts.)
import { readSystemFiles } from "../../../src/system/proc.ts";
import assert from "node:assert/strict";
import { loadTable } from "../../../src/analyze/mod.ts";
import {
  parsePlan,
  PlanError,
  runPlan,
  type StudyEvent,
  ToolNotFoundError,
} from "../../../src/collect/mod.ts";
import { recordingRunner } from "../../_support/runners.ts";
import { withServers } from "../../_support/servers.ts";
import { missingOutsideCi } from "../../_support/tools.ts";

const plan = (url: string, extra: string) =>
  `name: pin
servers:
  - { name: redis, url: "${url}" }
tests: [set]
requests: 30000
matrix:
  clients: [1]
${extra}`;

Deno.test("parsePlan() reads cpus.client", async (t) => {
  await t.step("a list, recorded as the client_cpus tag of every run", () => {
    const p = parsePlan(plan("redis://127.0.0.1:1", "cpus: { client: 0 }\n"), "p.yaml");
    assert.equal(p.cpus?.client?.list, "0");
    assert.deepEqual(p.cpus?.client?.cpus, [0]);
    assert.equal(p.tags.client_cpus, "0");
    const q = parsePlan(plan("redis://h", 'cpus: { client: "2-3, 5" }\n'), "p.yaml");
    assert.equal(q.cpus?.client?.list, "2-3,5");
    assert.deepEqual(q.cpus?.client?.cpus, [2, 3, 5]);
  });
  await t.step("cpus.server, recorded as the server_cpus tag; per server, it is refused", () => {
    const p = parsePlan(plan("redis://h", "cpus: { client: 0, server: 1 }\n"), "p.yaml");
    assert.equal(p.cpus?.server?.list, "1");
    assert.deepEqual([p.tags.client_cpus, p.tags.server_cpus], ["0", "1"]);
    const q = parsePlan(plan("redis://h", "cpus: { server: 1 }\n"), "p.yaml");
    assert.deepEqual([q.cpus?.client, q.tags.client_cpus, q.tags.server_cpus], [
      undefined,
      undefined,
      "1",
    ]);
    assert.throws(
      () => parsePlan(plan("redis://h", "cpus: { clients: 1 }\n"), "p.yaml"),
      /p\.yaml:8:\d+: cpus\.clients: unknown field \(known: client, server\)/,
    );
    assert.throws(
      () =>
        parsePlan(
          "name: p\nservers:\n  - { name: a, url: 'redis://h', cpus: 1 }\ntests: [set]\n",
          "p.yaml",
        ),
      /p\.yaml:3:\d+: servers\.0\.cpus: a plan pins its servers with the plan's cpus: \{ server: LIST \}/,
    );
  });
  await t.step("a bad list fails at its line", () => {
    assert.throws(
      () => parsePlan(plan("redis://h", "cpus:\n  client: 3-1\n"), "p.yaml"),
      (e) =>
        e instanceof PlanError && /p\.yaml:9:11: cpus\.client: invalid CPU list/.test(e.message),
    );
    assert.throws(
      () => parsePlan(plan("redis://h", "tags: { client_cpus: x }\n"), "p.yaml"),
      /reserved tag name/,
    );
  });
  await t.step("a load generated inside kvlab takes cpus.client too (kvlab is pinned)", () => {
    const p = parsePlan(
      `name: s
kind: latency-sweep
servers: [{ name: a, url: "redis://h" }]
sweep: { engine: kvlab, clients: 4, rates: [1000], step_s: 1 }
cpus: { client: 0 }
`,
      "s.yaml",
    );
    assert.equal(p.cpus?.client?.list, "0");
  });
});

Deno.test("runPlan() refuses CPUs this machine cannot pin to, before any cell", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-cpus-" });
  const p = parsePlan(plan("redis://127.0.0.1:1", "cpus:\n  client: 4000\n"), "p.yaml");
  const events: StudyEvent[] = [];
  await assert.rejects(
    () => runPlan(p, { data: `${dir}/data`, onEvent: (e) => events.push(e) }),
    (e) =>
      e instanceof PlanError &&
      /p\.yaml:9:11: cpus\.client: CPU 4000 is not online/.test(e.message),
  );
  await assert.rejects(
    () => runPlan(p, { data: `${dir}/data`, pinning: { findTool: () => null } }),
    /p\.yaml:9:11: cpus\.client: taskset: not found on PATH/,
  );
  assert.equal(events.length, 0);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("kvlab run (with ./kvlab's permissions, /sys read through sh) refuses an offline CPU", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-cpus-" });
  Deno.writeTextFileSync(`${dir}/p.yaml`, plan("redis://127.0.0.1:1", "cpus:\n  client: 4000\n"));
  const root = new URL("../../../", import.meta.url).pathname;
  const flags = ["--allow-read", "--allow-write", "--allow-env", "--allow-ffi", "--allow-sys"];
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "--allow-run", `${root}src/cli.ts`, "run", `${dir}/p.yaml`, "--dry-run"]
      .concat(["--data", `${dir}/data`]),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.notEqual(out.code, 0);
  assert.match(err, /p\.yaml:9:11: cpus\.client: CPU 4000 is not online \(online: [\d,-]+\)/);
  assert.equal(new TextDecoder().decode(out.stdout), "", "no cell listed");
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("runPlan() pinned: a tool that is not installed is ToolNotFoundError, as unpinned", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-cpus-" });
  const p = parsePlan(
    plan("redis://127.0.0.1:1", "cpus: { client: 0 }\ntool: no-such-benchmark\n"),
    "p.yaml",
  );
  await assert.rejects(() => runPlan(p, { data: `${dir}/data` }), ToolNotFoundError);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test({
  name: "runPlan() runs redis-benchmark pinned: taskset -c 0, its Cpus_allowed_list is 0",
  ignore: missingOutsideCi("redis-benchmark", "taskset"),
  fn: async () => {
    await withServers([{}], async ([server]) => {
      const dir = Deno.makeTempDirSync({ prefix: "kvlab-cpus-" });
      const p = parsePlan(plan(server.url, "cpus: { client: 0 }\ntimeout_s: 120\n"), "p.yaml");
      const allowed: string[] = [];
      // on the tool's first output (a progress line: it is still running), find it in /proc
      // by its command line and read the CPUs it may run on
      const { runner, argvs } = recordingRunner((o) => {
        let looked = false;
        return {
          ...o,
          onStdout: (chunk) => {
            if (!looked && o.argv.includes("-n")) {
              looked = true;
              allowed.push(...cpusOf(o.argv.slice(3)));
            }
            o.onStdout?.(chunk);
          },
        };
      });
      const events: StudyEvent[] = [];
      const result = await runPlan(p, {
        data: `${dir}/data`,
        runner,
        onEvent: (e) => events.push(e),
      });
      assert.equal(result.complete, 1);
      const bench = argvs.filter((a) => a.includes("-n"));
      assert.equal(bench.length, 1);
      assert.deepEqual(bench[0].slice(0, 4), ["taskset", "-c", "0", "redis-benchmark"]);
      assert.deepEqual(allowed, ["0"], "the running redis-benchmark's Cpus_allowed_list");
      const start = events.find((e) => e.kind === "start");
      assert.match(start?.kind === "start" ? start.command : "", /^taskset -c 0 redis-benchmark /);
      const runs = loadTable(`${dir}/data`, "runs");
      assert.equal(JSON.parse(runs.getColumn("tags").get(0) as string).client_cpus, "0");
      // the stored command is the one started
      assert.match(runs.getColumn("command").get(0) as string, /^taskset -c 0 \S*redis-benchmark /);
      Deno.removeSync(dir, { recursive: true });
    });
  },
});

/**
 * `Cpus_allowed_list` of each running process whose command line is `argv`. The processes are
 * listed by `ps` and their status read through `readSystemFiles`: the test task's permissions
 * (no `--allow-all`) do not let Deno read `/proc` itself.
 */
function cpusOf(argv: readonly string[]): string[] {
  const want = argv.join(" ");
  const ps = new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" }).outputSync();
  const pids = new TextDecoder().decode(ps.stdout).split("\n")
    .map((l) => /^\s*(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && m[2].trimEnd().endsWith(want))
    .map((m) => m[1]);
  const files = readSystemFiles(pids.map((pid) => `/proc/${pid}/status`));
  return Object.values(files).flatMap((status) => {
    const m = status === null ? null : /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
    return m ? [m[1]] : []; // null: the process ended meanwhile
  });
}

Deno.test({
  name: "runPlan() runs memtier_benchmark and its preload pinned: taskset -c 0",
  ignore: missingOutsideCi("memtier_benchmark", "taskset"),
  fn: async () => {
    await withServers([{}], async ([server]) => {
      // the server on CPU 1 (all its threads), the client tools on CPU 0: they share none,
      // though kvlab itself may run on both
      const twoCpus = navigator.hardwareConcurrency >= 2;
      // under CI the share check must run: one CPU there is a failure, not a skip
      if (!twoCpus && Deno.env.get("CI") === "true") throw new Error("this check needs 2 CPUs");
      if (twoCpus) {
        const pinned = new Deno.Command("taskset", { args: ["-apc", "1", `${server.pid}`] })
          .outputSync();
        assert.ok(pinned.success, new TextDecoder().decode(pinned.stderr));
      }
      const dir = Deno.makeTempDirSync({ prefix: "kvlab-cpus-" });
      const p = parsePlan(
        `name: pinm
kind: memtier
servers: [{ name: redis, url: "${server.url}" }]
timeout_s: 60
cpus: { client: 0 }
memtier:
  test_time_s: 3 # 3 s or more: shorter, memtier's duration may be a second off (SCHEMA.md)
  key_maximum: 2000
  preload: once
  matrix: { threads: [1], clients: [2] }
`,
        "m.yaml",
      );
      const { runner, argvs } = recordingRunner();
      const result = await runPlan(p, { data: `${dir}/data`, runner });
      assert.equal(result.complete, 1);
      const memtier = argvs.filter((a) => a.some((w) => w.endsWith("memtier_benchmark")));
      assert.ok(memtier.length >= 3, "version, preload, measured run");
      for (const a of memtier) assert.deepEqual(a.slice(0, 3), ["taskset", "-c", "0"]);
      const runs = loadTable(`${dir}/data`, "runs");
      assert.equal(JSON.parse(runs.getColumn("tags").get(0) as string).client_cpus, "0");
      assert.match(
        runs.getColumn("command").get(0) as string,
        /^taskset -c 0 \S*memtier_benchmark /,
      );
      // the noise guard compares the pinned tool's CPUs with the server's, not kvlab's
      if (twoCpus) assert.deepEqual(runs.getColumn("client_server_share_cpus").toArray(), [false]);
      Deno.removeSync(dir, { recursive: true });
    });
  },
});
