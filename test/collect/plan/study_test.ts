import assert from "node:assert/strict";
import pl from "nodejs-polars";
import {
  DenoProcessRunner,
  parsePlan,
  parseServerUrl,
  planCells,
  PlanError,
  runPlan,
  runRedisBenchmark,
  type StudyEvent,
  ToolNotFoundError,
} from "../../../src/collect/mod.ts";
import { loadResults, loadTable } from "../../../src/analyze/mod.ts";
import { Dataset } from "../../../src/store/dataset.ts";
import { closedPort, commandCalls, fakeTool, walk, withServers } from "../../_support/servers.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const DATA = ROOT + "test/testdata/";

function plan(servers: { name: string; url: string }[], extra = ""): string {
  return `name: t
servers:
${servers.map((s) => `  - { name: ${s.name}, url: "${s.url}" }`).join("\n")}
tests: [set, get]
requests: 2000
matrix:
  clients: [1, 10]
repetitions: 2
timeout_s: 60
${extra}`;
}

Deno.test("runPlan() runs a plan against two live servers, interleaved, with snapshots", async () => {
  await withServers([{}, { args: ["--io-threads", "2"] }], async ([a, b]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-study-" });
    const p = parsePlan(
      plan([{ name: "redis-io1", url: a.url }, { name: "redis-io2", url: b.url }]),
      "p.yaml",
    );
    const events: StudyEvent[] = [];
    const r = await runPlan(p, { data, onEvent: (e) => events.push(e) });
    assert.deepEqual(r, {
      cells: 8,
      complete: 8,
      skipped: 0,
      incomplete: 0,
      failed: 0,
      interrupted: false,
    });
    // A B A B …
    const order = events.filter((e) => e.kind === "start").map((e) =>
      e.kind === "start" && e.cell.server.name
    );
    assert.deepEqual(order, [
      "redis-io1",
      "redis-io2",
      "redis-io1",
      "redis-io2",
      "redis-io1",
      "redis-io2",
      "redis-io1",
      "redis-io2",
    ]);
    assert.ok(events.some((e) => e.kind === "progress"));

    const runs = loadTable(data, "runs").sort("started_at");
    assert.equal(runs.height, 8);
    assert.deepEqual(runs.getColumn("label").toArray().slice(0, 4), [
      "redis-io1",
      "redis-io2",
      "redis-io1",
      "redis-io2",
    ]);
    assert.ok(runs.getColumn("server").toArray().every((s) => s === "redis"));
    const version = new TextDecoder().decode(
      (await new Deno.Command("redis-server", { args: ["--version"] }).output()).stdout,
    );
    assert.ok(runs.getColumn("server_version").toArray().every((v) => version.includes(`v=${v} `)));
    assert.ok(runs.getColumn("tool_version").toArray().every((v) => version.includes(`v=${v} `)));
    const io = runs.select("label", "server_io_threads").unique().sort("label");
    assert.deepEqual(io.getColumn("server_io_threads").toArray(), [1, 2]);
    assert.ok(runs.getColumn("server_config_status").toArray().every((s) => s === "ok"));
    assert.ok(runs.getColumn("host_cpu_count").toArray().every((n) => (n as number) >= 1));
    assert.ok(
      runs.getColumn("command").toArray().every((c) =>
        /^redis-benchmark -h 127\.0\.0\.1 -p \d+ -c (1|10) -n 2000 -d 3 -P 1 -t set,get$/.test(
          c as string,
        )
      ),
    );

    const results = loadResults(data);
    assert.equal(results.height, 16);
    assert.ok(results.getColumn("ops_per_sec").toArray().every((x) => (x as number) > 0));
    assert.deepEqual([...new Set(results.getColumn("clients").toArray())].sort(), [1, 10]);
    assert.ok(results.getColumn("pipeline").toArray().every((x) => x === 1));
    assert.ok(loadTable(data, "latency_distribution").height > 0);
    const info = loadTable(data, "server_info");
    assert.deepEqual(info.getColumn("phase").unique().sort().toArray(), ["after", "before"]);
    const calls = info.filter(
      pl.col("key").eq(pl.lit("cmdstat_set.calls")).and(pl.col("phase").eq(pl.lit("after"))),
    );
    assert.ok(
      calls.height > 0 &&
        calls.getColumn("value_num").toArray().every((x) => (x as number) >= 2000),
    );
    const cfg = loadTable(data, "server_config");
    assert.ok(cfg.filter(pl.col("key").eq(pl.lit("io-threads"))).height === 16);
    // the raw output of each run is kept
    const runId = runs.getColumn("run_id").get(0);
    assert.match(
      new TextDecoder().decode(
        Dataset.open(data).runRaw(runId).find((r) => r.name === "stdout.txt")!.bytes,
      ),
      /====== SET ======/,
    );
  });
});

Deno.test("a plan killed in the middle keeps the partial run and completes on re-run", async () => {
  await withServers([{}, {}], async ([a, b]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-kill-" });
    const planPath = `${dir}/plan.yaml`;
    Deno.writeTextFileSync(
      planPath,
      plan([{ name: "a", url: a.url }, { name: "b", url: b.url }]).replace(
        "requests: 2000",
        "requests: 150000",
      )
        .replace("clients: [1, 10]", "clients: [10]").replace("repetitions: 2", "repetitions: 1"),
    );
    const cli = (signalWhen?: () => Promise<boolean>) => {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", ROOT + "src/cli.ts", "run", planPath, "--data", `${dir}/data`],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      let out = "";
      const reading = (async () => {
        for await (const c of child.stdout.pipeThrough(new TextDecoderStream())) out += c;
      })();
      // polls until `signalWhen` holds, then SIGTERM (bounded: 1,200 polls, and not after the end)
      let ended = false;
      const signalling = (async () => {
        for (let i = 0; signalWhen && !ended && i < 1200; i++) {
          if (await signalWhen()) return child.kill("SIGTERM");
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      return Promise.all([child.status, reading, new Response(child.stderr).text()]).then(
        async ([s, , err]) => {
          ended = true;
          await signalling;
          return { code: s.code, out, err };
        },
      );
    };
    // SIGTERM while the second cell's tool runs, once server b has answered 50,000 of its
    // 150,000 SETs (the server's own count: a printed "ops/s so far" line comes only after 2 s,
    // and a fast moment's SET ended before it, so a fresh-clone run never sent the signal)
    const first = await cli(async () => await commandCalls(b.port, "set") >= 50_000);
    assert.match(first.out, /\[2\/2\]/);
    assert.equal(first.code, 130, first.out + first.err);
    assert.match(first.out, /interrupted/);
    let runs = loadTable(`${dir}/data`, "runs").sort("started_at");
    assert.deepEqual(runs.getColumn("status").toArray(), ["complete", "incomplete"]);
    const cut = runs.getColumn("run_id").get(1);
    const raw = Dataset.open(`${dir}/data`).runRaw(cut);
    assert.ok(raw.find((r) => r.name === "stdout.txt")!.bytes.length > 0, "partial output kept");
    assert.match(runs.getColumn("error").get(1), /interrupted/);

    const second = await cli();
    assert.equal(second.code, 0, second.out + second.err);
    assert.match(second.out, /\[1\/2\] t\/a\/\S+: already complete/);
    runs = loadTable(`${dir}/data`, "runs", { everyAttempt: true }); // the record, redone too
    const complete = runs.filter(pl.col("status").eq(pl.lit("complete")));
    assert.equal(complete.height, 2);
    assert.equal(
      new Set(complete.getColumn("plan_cell").toArray()).size,
      2,
      "no finished cell twice",
    );
    assert.equal(runs.height, 3); // the interrupted run stays as the record of what happened
  });
});

Deno.test("a server that is down fails its cells; the plan goes on with the others", async () => {
  await withServers([{}], async ([a]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-down-" });
    const down = `redis://127.0.0.1:${closedPort()}`;
    const p = parsePlan(plan([{ name: "down", url: down }, { name: "up", url: a.url }]), "p.yaml");
    const r = await runPlan(p, { data });
    assert.equal(r.failed, 4);
    assert.equal(r.complete, 4);
    const failed = loadTable(data, "runs").filter(pl.col("status").eq(pl.lit("failed")));
    assert.ok(
      failed.getColumn("error").toArray().every((e) =>
        (e as string).startsWith(`cannot connect to ${down}`)
      ),
    );
    assert.ok(failed.getColumn("label").toArray().every((l) => l === "down"));
  });
});

Deno.test("a tool missing from PATH stops the plan before any cell, with a clear message", async () => {
  await withServers([{}], async ([a]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-notool-" });
    const p = parsePlan(
      plan([{ name: "a", url: a.url }], "tool: redis-benchmark-not-installed\n"),
      "p.yaml",
    );
    await assert.rejects(runPlan(p, { data }), (e: unknown) => {
      assert.ok(e instanceof ToolNotFoundError);
      assert.match(e.message, /^redis-benchmark-not-installed: not found on PATH/);
      return true;
    });
    assert.throws(() => Deno.statSync(`${data}/runs`));
  });
});

Deno.test("a tool that exits non-zero, replayed by a fake executable on PATH", async () => {
  await withServers([{}], async ([a]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-fake-" });
    const bin = `${dir}/bin`;
    // killed during its first test: exit 130, partial output
    fakeTool(bin, "redis-benchmark", DATA + "real/redis-benchmark-7.0.15_sigint-full.txt", 130);
    const planPath = `${dir}/plan.yaml`;
    Deno.writeTextFileSync(
      planPath,
      plan([{ name: "a", url: a.url }]).replace("repetitions: 2", "repetitions: 1").replace(
        "clients: [1, 10]",
        "clients: [1]",
      ),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", ROOT + "src/cli.ts", "run", planPath, "--data", `${dir}/data`],
      env: { PATH: `${bin}:${Deno.env.get("PATH")}` },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 1, text);
    assert.match(text, /→ incomplete: 1 test, run \S+ \(exited with 130/);
    const runs = loadTable(`${dir}/data`, "runs");
    assert.equal(runs.getColumn("tool_exit_code").get(0), 130);
    assert.equal(runs.getColumn("tool_version").get(0), "7.0.15");

    // a clean replay of a real report: every number as printed, exit 0
    fakeTool(
      bin,
      "redis-benchmark",
      DATA + "corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt",
      0,
    );
    const r = await runRedisBenchmark({
      data: `${dir}/data2`,
      runner: new DenoProcessRunner(),
      params: {
        tool: `${bin}/redis-benchmark`,
        target: parseServerUrl(a.url),
        tests: ["set", "get", "incr", "lpush", "lrange_100"],
        requests: 20000,
      },
    });
    assert.equal(r.status, "complete");
    const res = loadResults(`${dir}/data2`).sort("test_index");
    assert.deepEqual(res.getColumn("ops_per_sec").toArray(), [
      52219.32,
      51948.05,
      57971.02,
      54347.82,
      65573.77,
      34482.76,
    ]);
  });
});

Deno.test("no stored file holds the password of a server or a plan", async () => {
  const pw = "Zq9-kvlab-secret-77";
  await withServers([{ password: pw }], async ([a]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-pw-" });
    const planPath = `${dir}/plan.yaml`;
    Deno.writeTextFileSync(
      planPath,
      plan([{ name: "a", url: a.url }]).replace("repetitions: 2", "repetitions: 1"),
    );
    assert.ok(Deno.readTextFileSync(planPath).includes(pw));
    const dry = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        ROOT + "src/cli.ts",
        "run",
        planPath,
        "--data",
        `${dir}/data`,
        "--dry-run",
      ],
      stdout: "piped",
    }).output();
    const dryText = new TextDecoder().decode(dry.stdout);
    assert.equal(dry.code, 0);
    assert.match(dryText, /\$ redis-benchmark -h 127\.0\.0\.1 -p \d+ -a \*\*\* -c 1 -n 2000/);
    assert.match(dryText, /2 cells \(dry run: nothing was run\)/);
    assert.ok(!dryText.includes(pw));
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", ROOT + "src/cli.ts", "run", planPath, "--data", `${dir}/data`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    const files = walk(`${dir}/data`);
    assert.ok(files.length > 10);
    for (const f of files) {
      assert.ok(
        !new TextDecoder("latin1").decode(Deno.readFileSync(f)).includes(pw),
        `password in ${f}`,
      );
    }
    const cfg = loadTable(`${dir}/data`, "server_config").filter(
      pl.col("key").eq(pl.lit("requirepass")),
    );
    assert.deepEqual([...new Set(cfg.getColumn("value").toArray())], ["***"]);
    assert.equal(
      loadTable(`${dir}/data`, "runs").getColumn("target").get(0),
      `redis://:***@127.0.0.1:${a.port}`,
    );
  });
});

Deno.test("kvlab run prints plain progress lines into a pipe", async () => {
  // In a pipe, a test's rate so far is printed once it has run 2 s, then every 10 s: the tool's
  // first figures cover a fraction of a second. The tool is a replay of a real recording's GET
  // test (20000 requests, 50 clients), printed at once: its first progress line,
  // `GET: rps=25104.0 (overall: 54103.4)`, is not the test's rate (stored: 51,948.05) and is
  // never shown; the test shows `done` alone.
  await withServers([{}], async ([a]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-pipe-" });
    const recording = Deno.readTextFileSync(
      DATA + "corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt",
    );
    const getTest = recording.slice(
      recording.indexOf(" \rGET: rps="),
      recording.indexOf(" \rINCR: rps="),
    );
    assert.match(getTest, /^ \rGET: rps=25104\.0 \(overall: 54103\.4\)/);
    assert.match(getTest, /throughput summary: 51948\.05 requests per second\n.*\n.*\n.*\n$/);
    Deno.writeTextFileSync(`${dir}/get.txt`, getTest);
    fakeTool(`${dir}/bin`, "redis-benchmark", `${dir}/get.txt`);
    const planPath = `${dir}/plan.json`;
    Deno.writeTextFileSync(
      planPath,
      JSON.stringify({
        name: "pipe",
        servers: [{ name: "a", url: a.url }],
        tests: ["get"],
        requests: 20000,
        matrix: { clients: [50] },
      }),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", ROOT + "src/cli.ts", "run", planPath, "--data", `${dir}/data`],
      env: { PATH: `${dir}/bin:${Deno.env.get("PATH")}` },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, text);
    assert.ok(!text.includes("\x1b"), "no terminal escapes in a pipe");
    assert.ok(!text.includes("\r"), "no carriage returns in a pipe");
    assert.match(text, /^\[1\/1\] pipe\/a\/c50-d3-P1-t0-r0\/rep1$/m);
    assert.doesNotMatch(text, /so far/);
    assert.doesNotMatch(text, /rps=/);
    assert.match(text, /^ {2}GET: done$/m);
    assert.match(text, /^ {2}→ complete: 1 test, run \S+$/m);
    assert.match(text, /^1 cells: 1 complete, 0 skipped/m);
  });
});

Deno.test("parsePlan() errors name the file, line and field", () => {
  const bad = (text: string, re: RegExp) =>
    assert.throws(
      () => parsePlan(text, "p.yaml"),
      (e: unknown) => e instanceof PlanError && re.test(e.message),
    );
  bad(
    "name: x\nservers:\n  - { name: a, url: 'http://h' }\ntests: [set]\n",
    /^p\.yaml:3:\d+: servers\.0\.url: invalid server URL: http:\/\/h/,
  );
  bad(
    "name: x\nservers:\n  - { name: a, url: 'redis://h' }\ntests: [set]\nmatrix:\n  clients: [1, x]\n",
    /^p\.yaml:6:\d+: matrix\.clients\.1: expected an integer ≥ 1 \(found "x"\)/,
  );
  bad(
    "name: x\nservers:\n  - { name: a, url: 'redis://h' }\ntests: [set]\nrepetitons: 3\n",
    /^p\.yaml:5:\d+: repetitons: unknown field/,
  );
  bad("name: [unclosed\n", /^p\.yaml:\d+:\d+: expected YAML or JSON/);
  bad(
    "name: x\nservers:\n  - { name: a, url: 'redis://h' }\n  - { name: a, url: 'redis://h2' }\ntests: [set]\n",
    /duplicate server name a/,
  );
  const p = parsePlan(plan([{ name: "a", url: "redis://:pw@h:1" }]), "p.yaml");
  assert.equal(p.servers[0].url, "redis://:***@h:1");
  assert.equal(planCells(p).length, 4);
});

Deno.test("examples/plan.yaml and data/plans/demo.yaml are valid plans", () => {
  const ex = parsePlan(Deno.readTextFileSync(ROOT + "examples/plan.yaml"), "examples/plan.yaml");
  assert.equal(planCells(ex).length, 2 * 3 * 2 * 3);
  const mem = parsePlan(
    Deno.readTextFileSync(ROOT + "examples/memory-plan.yaml"),
    "examples/memory-plan.yaml",
  );
  assert.equal(mem.kind, "memory");
  assert.deepEqual(planCells(mem).map((c) => c.id).slice(0, 2), [
    "memory-per-key/redis/memory/rep1",
    "memory-per-key/dragonfly/memory/rep1",
  ]);
  assert.equal(mem.servers[0].container, "mem-redis");
  const sc = parsePlan(
    Deno.readTextFileSync(ROOT + "examples/client-scaling.yaml"),
    "examples/client-scaling.yaml",
  );
  assert.equal(planCells(sc).length, 2 * 8 * 3);
  const demo = parsePlan(
    Deno.readTextFileSync(ROOT + "data/plans/demo.yaml"),
    "data/plans/demo.yaml",
  );
  assert.equal(planCells(demo).length, 2 * 2 * 5); // redis and valkey × clients × repetitions
});
