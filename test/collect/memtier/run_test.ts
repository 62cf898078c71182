import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { compare } from "../../../src/analyze/compare/compare.ts";
import { loadResults, loadTable } from "../../../src/analyze/load.ts";
import {
  DenoProcessRunner,
  findTool,
  memtierArgv,
  memtierCall,
  memtierPreloadCall,
  parsePlan,
  parseServerUrl,
  planCells,
  type ProcessRunner,
  redactArgv,
  runMemtier,
  runPlan,
  startLocalServer,
} from "../../../src/collect/mod.ts";
import type { LocalServer } from "../../../src/collect/redis_server.ts";
import { closedPort } from "../../_support/servers.ts";
import { Dataset } from "../../../src/store/dataset.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

/**
 * The plan the tests run: every field of kind memtier that matters, short runs. `extra` lines
 * go into the `memtier:` section (`repetitions` stays at the top).
 */
function plan(servers: { name: string; url: string }[], extra = ""): string {
  return [
    "name: mt",
    "kind: memtier",
    "servers:",
    ...servers.map((s) => `  - { name: ${s.name}, url: "${s.url}" }`),
    "timeout_s: 60",
    "memtier:",
    '  ratio: "1:4"',
    "  key_minimum: 1",
    "  key_maximum: 2000",
    "  preload: once",
    "  matrix: { threads: [1], clients: [2], data_size_bytes: [64] }",
    ...extra.split("\n").filter(Boolean).map((
      l,
    ) => (/^(repetitions|tags):/.test(l) ? l : `  ${l}`)),
  ].join("\n") + "\n";
}

Deno.test("memtier plans: fields, defaults, cells and commands", async (t) => {
  const servers = [{ name: "a", url: "redis://h:1" }, { name: "b", url: "redis://:secret@h:2/3" }];
  await t.step("parsePlan() reads kind memtier with memtier's defaults", () => {
    const p = parsePlan(plan(servers, "test_time_s: 2\nrepetitions: 2"), "p.yaml");
    assert.ok(p.kind === "memtier");
    assert.equal(p.tool, "memtier_benchmark");
    assert.deepEqual([p.ratio, p.keyPattern, p.testTimeS, p.requests], ["1:4", "R:R", 2, null]);
    assert.deepEqual(p.matrix, { threads: [1], clients: [2], pipeline: [1], dataSizeBytes: [64] });
    assert.deepEqual(p.percentiles, [50, 99, 99.9]);
    const cells = planCells(p);
    assert.deepEqual(cells.map((c) => c.id), [
      "mt/a/t1-c2-P1-d64/rep1",
      "mt/b/t1-c2-P1-d64/rep1",
      "mt/a/t1-c2-P1-d64/rep2",
      "mt/b/t1-c2-P1-d64/rep2",
    ]);
    const d = parsePlan(
      "name: d\nkind: memtier\nservers: [{name: a, url: 'redis://h'}]\n",
      "d.yaml",
    );
    assert.ok(d.kind === "memtier");
    assert.deepEqual([d.requests, d.testTimeS, d.keyMaximum, d.preload], [
      10000,
      null,
      1e7,
      "none",
    ]);
  });
  await t.step("memtierCall() and memtierPreloadCall() build the argv from typed flags", () => {
    const p = parsePlan(plan(servers, "requests: 500\nrate_limit: 20\nrun_count: 3"), "p.yaml");
    assert.ok(p.kind === "memtier");
    const cell = planCells(p)[1];
    assert.deepEqual(redactArgv(memtierArgv(memtierCall(p, cell))), [
      ..."memtier_benchmark -s h -p 2 -a *** --select-db=3 --protocol=redis -t 1 -c 2".split(" "),
      "--ratio=1:4",
      "-d",
      "64",
      "--key-pattern=R:R",
      "--key-minimum=1",
      "--key-maximum=2000",
      "--pipeline=1",
      "-n",
      "500",
      "--rate-limiting=20",
      "-x",
      "3",
      "--print-all-runs",
      "--print-percentiles=50,99,99.9",
    ]);
    assert.equal(
      memtierArgv(memtierPreloadCall(p, cell)).slice(-14).join(" "),
      "-t 1 -c 2 --ratio=1:0 -d 64 --key-pattern=P:P --key-minimum=1 --key-maximum=2000 " +
        "--pipeline=16 -n allkeys --hide-histogram",
    );
    const socket = memtierArgv({ target: parseServerUrl("unix:///tmp/r.sock") });
    assert.deepEqual(socket, ["memtier_benchmark", "-S", "/tmp/r.sock", "--protocol=redis"]);
    const tls = memtierArgv({ target: parseServerUrl("rediss://bob:pw@h:7000") });
    assert.deepEqual(redactArgv(tls).slice(1), [
      "-s",
      "h",
      "-p",
      "7000",
      "-a",
      "***",
      "--tls",
      "--protocol=redis",
    ]);
    assert.ok(tls.includes("bob:pw"), "ACL user and password as memtier takes them");
  });
  await t.step("parsePlan() rejects what memtier would not run, at the field's line", () => {
    const bad = (extra: string, re: RegExp) =>
      assert.throws(() => parsePlan(plan(servers, extra), "p.yaml"), re);
    bad(
      "test_time_s: 2\nrequests: 10",
      /p\.yaml:\d+:\d+: memtier\.requests: give test_time_s or requests, not both/,
    );
    assert.throws(
      () => parsePlan(plan(servers).replace('ratio: "1:4"', "ratio: 3"), "p.yaml"),
      /ratio: expected SET:GET/,
    );
    bad("key_pattern: X:Y", /key_pattern: expected e\.g\. R:R/);
    bad("percentiles: [0]", /memtier\.percentiles\.0: expected a percentile/);
    bad("tests: [set]", /memtier\.tests: unknown field \(known: tool, ratio/);
    assert.throws(
      () => parsePlan(plan(servers) + "tests: [set]\n", "p.yaml"),
      /p\.yaml:\d+:\d+: tests: only for kind: redis-benchmark/,
    );
    assert.throws(
      () => parsePlan(plan(servers).replace("  key_maximum: 2000\n", ""), "p.yaml"),
      /preload: a preload needs key_maximum/,
    );
    assert.throws(
      () => parsePlan(plan(servers).replace("preload: once", "preload: always"), "p.yaml"),
      /preload: expected none, once or each/,
    );
    assert.throws(
      () => parsePlan(plan(servers).replace("threads: [1]", "conns: [1]"), "p.yaml"),
      /memtier\.matrix\.conns: unknown parameter/,
    );
  });
});

Deno.test("runMemtier() against a server that is down stores a failed run, without running memtier", async () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-mt-down-" });
  const runner: ProcessRunner = {
    run: () => Promise.reject(new Error("memtier must not run")),
  };
  const run = await runMemtier(
    { target: parseServerUrl(`redis://127.0.0.1:${closedPort()}`), testTimeS: 1 },
    { data, runner, label: "down" },
  );
  assert.equal(run.status, "failed");
  assert.match(run.reason!, /^cannot connect to redis:\/\/127\.0\.0\.1:\d+/);
  const runs = loadTable(data, "runs");
  assert.deepEqual(runs.select("tool", "status", "server", "server_cpu_user_s").toRecords(), [
    { tool: "memtier_benchmark", status: "failed", server: "unknown", server_cpu_user_s: null },
  ]);
});

/** The live tools, or null (with one line saying what is skipped) when one is missing. */
function liveTools(test: string): { memtier: string; valkey: string; redis: string } | null {
  const tools = {
    memtier: findTool("memtier_benchmark"),
    valkey: findTool("valkey-server"),
    redis: findTool("redis-server"),
  };
  const missing = Object.entries(tools).filter(([, p]) => p === null).map(([k]) => k);
  if (missing.length === 0) return tools as { memtier: string; valkey: string; redis: string };
  const why = `${missing.join(", ")} not found on PATH or in the kvlab tools cache ` +
    "(.ci/install builds memtier_benchmark and valkey)";
  if (Deno.env.get("CI") === "true") throw new Error(`${test}: ${why}`);
  // deno-lint-ignore no-console
  console.log(`skipped: ${test}: ${why}`);
  return null;
}

/** Runs `fn` with a fresh redis-server and valkey-server, stopped afterwards by PID. */
async function withRedisAndValkey<T>(
  tools: { redis: string; valkey: string },
  fn: (redis: LocalServer, valkey: LocalServer) => Promise<T>,
): Promise<T> {
  const started: LocalServer[] = [];
  try {
    started.push(await startLocalServer({ program: tools.redis }));
    started.push(await startLocalServer({ program: tools.valkey }));
    return await fn(started[0], started[1]);
  } finally {
    for (const s of started) await s.stop();
  }
}

Deno.test("a live memtier plan runs Redis and Valkey interleaved, with server CPU and every table", async () => {
  const tools = liveTools("live memtier plan");
  if (!tools) return;
  await withRedisAndValkey(tools, async (redis, valkey) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-mt-live-" });
    const p = parsePlan(
      plan(
        [{ name: "redis", url: redis.url }, { name: "valkey", url: valkey.url }],
        `tool: ${tools.memtier}\ntest_time_s: 3\nrepetitions: 2`,
      ),
      "p.yaml",
    );
    const events: string[] = [];
    const r = await runPlan(p, {
      data,
      runner: new DenoProcessRunner(),
      onEvent: (e) => events.push(e.kind),
    });
    assert.deepEqual([r.complete, r.incomplete, r.failed], [4, 0, 0]);
    // preload once per server, then progress from memtier's stderr
    assert.equal(events.filter((e) => e === "warmup").length, 2);
    assert.ok(events.includes("progress"));

    const runs = loadTable(data, "runs").sort("started_at");
    assert.deepEqual(runs.getColumn("label").toArray(), ["redis", "valkey", "redis", "valkey"]);
    assert.deepEqual(runs.getColumn("server").toArray(), ["redis", "valkey", "redis", "valkey"]);
    assert.ok(runs.getColumn("tool").toArray().every((x) => x === "memtier_benchmark"));
    assert.ok(runs.getColumn("tool_version").toArray().every((x) => x === "2.3.0"));
    assert.ok(runs.getColumn("output_format").toArray().every((x) => x === "json"));
    for (const col of ["server_cpu_user_s", "server_cpu_sys_s"]) {
      const cpu = runs.getColumn(col).toArray() as (number | null)[];
      assert.ok(cpu.every((x) => x !== null && x >= 0), `${col}: ${cpu}`);
    }
    assert.ok((runs.getColumn("server_cpu_user_s").toArray() as number[]).some((x) => x > 0));
    // the valkey-server's INFO says valkey_version
    const versions = loadTable(data, "server_info").filter(
      pl.col("key").eq(pl.lit("valkey_version")),
    );
    assert.ok(versions.height > 0);
    // the preload wrote the key space before the first measured run on each server
    const dbsize = loadTable(data, "server_info").filter(
      pl.col("key").eq(pl.lit("dbsize")).and(pl.col("phase").eq(pl.lit("before"))),
    );
    assert.ok(dbsize.getColumn("value_num").toArray().every((n) => n === 2000));

    const results = loadResults(data);
    assert.equal(results.height, 12); // SET, GET, TOTALS × 4 runs
    assert.ok(results.getColumn("ops_per_sec").toArray().every((x) => (x as number) > 0));
    assert.ok(results.getColumn("clients").toArray().every((x) => x === 2));
    assert.ok(results.getColumn("keyspace").toArray().every((x) => x === 2000));
    assert.ok(results.getColumn("p999_latency_ms").toArray().every((x) => (x as number) > 0));
    assert.ok(loadTable(data, "latency_distribution").height > 0);
    assert.ok(loadTable(data, "time_series").height >= 12);
    const hdr = loadTable(data, "hdr_histograms");
    assert.deepEqual(hdr.getColumn("source").unique().sort().toArray(), ["hgrm", "json"]);
    assert.equal(hdr.getColumn("test_index").nullCount(), 0);
    // raw files kept byte for byte with the run
    const id = runs.getColumn("run_id").get(0);
    const raw = Dataset.open(data).runRaw(id).map((r) => r.name).sort();
    assert.ok(
      ["memtier.json", "stderr.txt", "stdout.txt", "hdr_FULL_RUN_1.hgrm"].every((f) =>
        raw.includes(f)
      ),
      raw.join(),
    );

    const c = compare(results, { by: "label", baseline: "redis" });
    assert.deepEqual(c.getColumn("test").toArray().sort(), ["GET", "SET", "TOTALS"]);
    assert.ok(c.getColumn("label").toArray().every((x) => x === "valkey"));
    assert.ok(c.getColumn("candidate_n").toArray().every((n) => n === 2));
  });
});

Deno.test("a live memtier plan killed in the middle resumes without doing a cell twice", async () => {
  const tools = liveTools("memtier plan kill and resume");
  if (!tools) return;
  await withRedisAndValkey(tools, async (redis, valkey) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-mt-kill-" });
    const planPath = `${dir}/plan.yaml`;
    Deno.writeTextFileSync(
      planPath,
      plan(
        [{ name: "redis", url: redis.url }, { name: "valkey", url: valkey.url }],
        // long enough that a rate shown (2 s into the test, at memtier's next progress line)
        // comes well before its end
        `tool: ${tools.memtier}\ntest_time_s: 6`,
      ),
    );
    const cli = async (args: string[], signalAfter?: RegExp) => {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", ROOT + "src/cli.ts", ...args],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const limit = setTimeout(() => child.kill("SIGKILL"), 60_000); // bounded
      let out = "";
      for await (const c of child.stdout.pipeThrough(new TextDecoderStream())) {
        out += c;
        if (signalAfter?.test(out)) {
          signalAfter = undefined;
          child.kill("SIGTERM");
        }
      }
      const [status, err] = await Promise.all([child.status, new Response(child.stderr).text()]);
      clearTimeout(limit);
      return { code: status.code, out, err };
    };
    const run = ["run", planPath, "--data", `${dir}/data`];
    // SIGTERM while the second cell's memtier runs
    const first = await cli(
      run,
      /\[2\/2\][^\n]*\n[^\n]*\n(?:.*\n)*\s+memtier: [\d,]+ ops\/s so far/,
    );
    assert.equal(first.code, 130, first.out + first.err);
    let runs = loadTable(`${dir}/data`, "runs").sort("started_at");
    assert.deepEqual(runs.getColumn("status").toArray(), ["complete", "incomplete"]);
    assert.match(runs.getColumn("error").get(1), /interrupted/);
    const cut = runs.getColumn("run_id").get(1);
    const raw = Dataset.open(`${dir}/data`).runRaw(cut);
    assert.ok(raw.find((r) => r.name === "stderr.txt")!.bytes.length > 0, "partial output kept");

    const second = await cli(run);
    assert.equal(second.code, 0, second.out + second.err);
    assert.match(second.out, /\[1\/2\] mt\/redis\/\S+: already complete/);
    runs = loadTable(`${dir}/data`, "runs", { everyAttempt: true }); // the record, redone too
    const complete = runs.filter(pl.col("status").eq(pl.lit("complete")));
    assert.equal(complete.height, 2);
    assert.equal(new Set(complete.getColumn("plan_cell").toArray()).size, 2, "no cell twice");
    assert.equal(runs.height, 3); // the interrupted run stays as the record of what happened

    const cmp = await cli([
      ...["compare", "--data", `${dir}/data`],
      ...["--by", "label", "--baseline", "redis", "--format", "json"],
    ]);
    assert.equal(cmp.code, 0, cmp.out + cmp.err);
    const rows = JSON.parse(cmp.out) as { test: string; label: string }[];
    assert.deepEqual(rows.map((r) => r.test).sort(), ["GET", "SET", "TOTALS"]);
    assert.ok(rows.every((r) => r.label === "valkey"));
  });
});
