import assert from "node:assert/strict";
import {
  type BenchmarkArgs,
  benchmarkArgs,
  benchmarkArgv,
  cellParams,
  parseBenchmarkArgs,
  parsePlan,
  parseServerUrl,
  PLAN_KINDS,
  planCells,
  PlanError,
  redisBenchmarkArgv,
  runPlan,
  type StudyEvent,
  type StudyPlan,
} from "../../../src/collect/mod.ts";
import { ROOT } from "../../_support/testdata.ts";

const EXAMPLES = [
  "examples/plan.yaml",
  "examples/client-scaling.yaml",
  "examples/memory-plan.yaml",
  "examples/failover.yaml",
  "examples/failover-reshard.yaml",
  "data/plans/demo.yaml",
];
const load = (f: string): StudyPlan => parsePlan(Deno.readTextFileSync(ROOT + f), f);

/** Drops fields that are undefined, as a parser leaves them out. */
const defined = (a: BenchmarkArgs) =>
  Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined));

Deno.test("PLAN_KINDS: each kind's fields are its own", () => {
  const common = ["name", "kind", "servers", "repetitions", "pause_s", "timeout_s", "tags"];
  const seen = new Map<string, string>();
  for (const [name, kind] of Object.entries(PLAN_KINDS)) {
    for (const f of kind.fields) {
      assert.ok(!common.includes(f), `${name}: ${f} is a common field`);
      assert.equal(seen.get(f), undefined, `${f} belongs to ${seen.get(f)} and ${name}`);
      seen.set(f, name);
    }
  }
  assert.deepEqual(Object.keys(PLAN_KINDS), [
    "redis-benchmark",
    "memory",
    "memtier",
    "pubsub",
    "latency-sweep",
    "failover",
  ]);
});

Deno.test("parsePlan() reads each kind's section and rejects another kind's", async (t) => {
  const servers = "servers:\n  - { name: a, url: 'redis://h' }\n";
  const bad = (text: string, re: RegExp) =>
    assert.throws(
      () => parsePlan(text, "p.yaml"),
      (e: unknown) => e instanceof PlanError && re.test(e.message),
      text,
    );
  await t.step("a kind it does not know names the kinds it knows", () => {
    bad(
      `name: x\nkind: nope\n${servers}`,
      /^p\.yaml:2:7: kind: expected redis-benchmark, memory, memtier, pubsub, latency-sweep or failover/,
    );
  });
  await t.step("a field of another kind says whose it is", () => {
    bad(
      `name: x\n${servers}tests: [set]\nmemory: {}\n`,
      /^p\.yaml:5:9: memory: only for kind: memory/,
    );
    bad(
      `name: x\nkind: memory\n${servers}tests: [set]\nmemory: {key_counts: [1]}\n`,
      /^p\.yaml:5:8: tests: only for kind: redis-benchmark/,
    );
  });
  await t.step("an unknown field lists the common fields and the kind's", () => {
    bad(
      `name: x\nkind: memory\n${servers}memroy: {}\n`,
      /memroy: unknown field \(known: name, kind, servers, repetitions, pause_s, timeout_s, tags, cpus, until_decided, memory\)/,
    );
  });
  await t.step("a bad server URL is reported once, at its line", () => {
    bad(
      "name: x\nservers:\n  - { name: a }\n",
      /^p\.yaml:3:5: servers\.0\.url: expected a non-empty string$/,
    );
  });
  await t.step("the memory section is checked field by field", () => {
    bad(`name: x\nkind: memory\n${servers}`, /^p\.yaml:1:1: memory: expected \{ key_counts/);
    bad(
      `name: x\nkind: memory\n${servers}memory:\n  key_counts: [3, 2]\n`,
      /^p\.yaml:6:19: memory\.key_counts\.1: expected ascending key counts/,
    );
    bad(
      `name: x\nkind: memory\n${servers}memory:\n  key_counts: [3]\n  flush: maybe\n`,
      /^p\.yaml:7:10: memory\.flush: expected true or false/,
    );
  });
  await t.step("each kind's plan has its own fields and no other's", () => {
    const mem = load("examples/memory-plan.yaml");
    assert.ok(mem.kind === "memory");
    assert.deepEqual(mem.memory, {
      keyCounts: [100000, 200000, 300000, 400000, 500000],
      valueSizeBytes: 3,
      flush: true,
    });
    assert.ok(!("matrix" in mem) && !("tests" in mem) && !("requests" in mem));
    const cell = planCells(mem)[0];
    assert.deepEqual(Object.keys(cell).sort(), ["id", "label", "repetition", "server"]);
    const rb = load("examples/plan.yaml");
    assert.ok(rb.kind === "redis-benchmark");
    assert.ok(!("memory" in rb));
    assert.equal(planCells(rb)[0].label, "redis");
  });
});

Deno.test("redisBenchmarkArgv() builds the commands it built before", async (t) => {
  await t.step("the example plans' first and last cells", () => {
    const plan = load("examples/plan.yaml");
    assert.ok(plan.kind === "redis-benchmark");
    const cells = planCells(plan);
    const cmd = (i: number) => redisBenchmarkArgv(cellParams(plan, cells.at(i)!)).join(" ");
    assert.equal(
      cmd(0),
      "redis-benchmark -h 127.0.0.1 -p 6379 -c 1 -n 100000 -d 3 -P 1 -r 100000 -t set,get,incr,lpush,lrange_100",
    );
    assert.equal(
      cmd(-1),
      "redis-benchmark -h 127.0.0.1 -p 6380 -c 50 -n 100000 -d 256 -P 1 -r 100000 -t set,get,incr,lpush,lrange_100",
    );
  });
  await t.step("credentials, db, TLS, sockets and --threads", () => {
    const call = {
      tool: "valkey-benchmark",
      tests: ["set", "get"],
      clients: 8,
      requests: 500,
      dataSizeBytes: 64,
      pipeline: 16,
      threads: 4,
      keyspace: 1000,
    };
    const argv = (url: string) => redisBenchmarkArgv({ ...call, target: parseServerUrl(url) });
    const flags = ["-c", "8", "-n", "500", "-d", "64", "-P", "16", "--threads", "4", "-r", "1000"];
    assert.deepEqual(argv("rediss://u:secretpw@h:7000/3"), [
      "valkey-benchmark",
      ...["-h", "h", "-p", "7000", "--user", "u", "-a", "secretpw", "--dbnum", "3", "--tls"],
      ...flags,
      ...["-t", "set,get"],
    ]);
    assert.deepEqual(argv("unix:///tmp/r.sock"), [
      "valkey-benchmark",
      ...["-s", "/tmp/r.sock"],
      ...flags,
      ...["-t", "set,get"],
    ]);
    assert.deepEqual(
      redisBenchmarkArgv({
        target: parseServerUrl("redis://:pw@[::1]:6380"),
        threads: 0,
        transport: "rdma",
      }),
      ["redis-benchmark", "-h", "::1", "-p", "6380", "-a", "pw", "--rdma"],
    );
  });
});

Deno.test("benchmarkArgv() and parseBenchmarkArgs() agree on every cell of the example plans", () => {
  const servers = [
    "redis://127.0.0.1:6379",
    "rediss://alice:Zq9-secret@h:7000/3",
    "unix:///run/redis.sock",
    "valkey://[::1]:6390",
  ];
  let n = 0;
  for (const f of EXAMPLES) {
    const plan = load(f);
    if (plan.kind !== "redis-benchmark") continue;
    for (const cell of planCells(plan)) {
      for (const url of servers) {
        const call = cellParams(plan, {
          ...cell,
          server: { ...cell.server, target: parseServerUrl(url) },
        });
        const args = benchmarkArgs(call);
        const argv = benchmarkArgv(plan.tool, args);
        assert.deepEqual(argv, redisBenchmarkArgv(call));
        // what the parser reads back is what the argv was built from, less the password
        assert.deepEqual(
          parseBenchmarkArgs(argv.slice(1)),
          defined({ ...args, password: undefined }),
          argv.join(" "),
        );
        n++;
      }
    }
  }
  assert.equal(n, 4 * (36 + 48 + 20)); // examples, then the demo plan (5 repetitions)
});

Deno.test("runPlan() in a dry run lists every cell of any kind, touching nothing", async () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-dry-" });
  for (const f of EXAMPLES) {
    const plan = load(f);
    const events: StudyEvent[] = [];
    // a tool that is not installed: a dry run does not look for it
    const p = plan.kind === "redis-benchmark" ? { ...plan, tool: "not-installed-benchmark" } : plan;
    const r = await runPlan(p, { data, dryRun: true, onEvent: (e) => events.push(e) });
    const cells = planCells(plan);
    assert.deepEqual(r, {
      cells: cells.length,
      complete: 0,
      skipped: 0,
      incomplete: 0,
      failed: 0,
      interrupted: false,
    });
    assert.deepEqual(events.map((e) => e.kind), cells.map(() => "start"));
    assert.deepEqual(events.map((e) => e.cell.id), cells.map((c) => c.id));
  }
  const mem = load("examples/memory-plan.yaml");
  const events: StudyEvent[] = [];
  await runPlan(mem, { data, dryRun: true, onEvent: (e) => events.push(e) });
  const start = events[0];
  assert.ok(start.kind === "start");
  assert.equal(
    start.command,
    "memory sweep of redis://127.0.0.1:6379: 100000, 200000, 300000, 400000, 500000 keys, " +
      "3-byte values (FLUSHDB first)",
  );
  assert.equal(start.requests, 500000);
  assert.deepEqual([...Deno.readDirSync(data)], []);
});

Deno.test("a memtier plan's ratio must ask for something (0:0 fails at its line)", () => {
  const text = 'name: x\nkind: memtier\nservers: [{name: a, url: "redis://127.0.0.1:6399"}]\n' +
    'memtier:\n  ratio: "0:0"\n  test_time_s: 1\n';
  assert.throws(
    () => parsePlan(text, "m.yaml"),
    /^.*m\.yaml:5:\d+: memtier\.ratio: invalid SET:GET ratio/,
  );
  assert.doesNotThrow(() => parsePlan(text.replace('"0:0"', '"1:0"'), "m.yaml"));
});

Deno.test("a pub/sub plan's topology is checked when the plan is read, at its line", () => {
  const text = 'name: x\nkind: pubsub\nservers: [{name: a, url: "redis://127.0.0.1:6399"}]\n' +
    "pubsub:\n  modes: [fan-out]\n  subscribers: 100\n  fan_out: 200\n  rates: [1000]\n";
  assert.throws(
    () => parsePlan(text, "p.yaml"),
    /p\.yaml:7:\d+: pubsub\.fan_out: fan-out: fan-out 200 exceeds the 100 subscribers/,
  );
  assert.doesNotThrow(() => parsePlan(text.replace("fan_out: 200", "fan_out: 10"), "p.yaml"));
});
