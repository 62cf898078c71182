// Plan servers kvlab starts itself (`start:`, issue 34): what a plan may say, each error at its
// line, and what --dry-run shows.
import assert from "node:assert/strict";
import { parsePlan, planCells, runPlan, usesDocker } from "../../../src/collect/mod.ts";
import { ROOT } from "../../_support/testdata.ts";

const plan = (server: string) =>
  `name: p\nkind: memory\nservers:\n  - ${server}\nmemory: { key_counts: [10] }\n`;

Deno.test("parsePlan() reads start: { engine, container: true, memory_limit, cpus }", async (t) => {
  await t.step("the fields, the placeholder target, the cells", () => {
    const p = parsePlan(
      plan(
        "{ name: r, start: { engine: valkey, container: true, memory_limit: 1.5g, cpus: 0.5 } }",
      ),
      "p.yaml",
    );
    const s = p.servers[0];
    assert.deepEqual(s.start, {
      engine: "valkey",
      container: true,
      memoryLimitBytes: 1.5 * 2 ** 30,
      cpus: 0.5,
    });
    assert.deepEqual([s.url, s.target.host, s.target.port, s.container], [
      "redis://127.0.0.1:0",
      "127.0.0.1",
      0,
      undefined,
    ]);
    assert.equal(usesDocker(p), true);
    assert.deepEqual(planCells(p).map((c) => c.id), ["p/r/memory/rep1"]);
  });
  await t.step("the example plan", () => {
    const f = "examples/container-plan.yaml";
    const p = parsePlan(Deno.readTextFileSync(ROOT + f), f);
    assert.deepEqual(p.servers.map((s) => [s.name, s.start?.engine, s.start?.memoryLimitBytes]), [
      ["redis", "redis", 512 * 2 ** 20],
      ["valkey", "valkey", 512 * 2 ** 20],
    ]);
  });
  await t.step("the cluster example plan", () => {
    const f = "examples/cluster-plan.yaml";
    const p = parsePlan(Deno.readTextFileSync(ROOT + f), f);
    assert.deepEqual(p.servers.map((s) => [s.name, s.start?.cluster, s.target.cluster]), [
      ["redis-cluster", { shards: 3, replicas: 1 }, true],
      ["valkey-cluster", { shards: 3, replicas: 1 }, true],
    ]);
  });
  await t.step("each mistake at its line", () => {
    const cases: [string, RegExp][] = [
      [
        '{ name: r, url: "redis://h", start: { engine: redis, container: true } }',
        /p\.yaml:4:\d+: servers\.0\.url: give url: or start:, not both/,
      ],
      [
        "{ name: r, container: c1, start: { engine: redis, container: true } }",
        /servers\.0\.container: kvlab names the containers it starts/,
      ],
      [
        "{ name: r, start: { engine: keydb, container: true } }",
        /start\.engine: expected redis or valkey/,
      ],
      // (without container: true kvlab starts processes: issue 33)
      [
        "{ name: r, start: { engine: redis, memory_limit: 64m } }",
        /start\.memory_limit: needs container: true/,
      ],
      [
        "{ name: r, start: { engine: redis, container: true, tls: true } }",
        /start\.tls: not with container: true/,
      ],
      [
        "{ name: r, start: { engine: redis, container: sure } }",
        /start\.container: expected true or false/,
      ],
      [
        "{ name: r, start: { engine: redis, container: true, memory_limit: 5m } }",
        /start\.memory_limit: expected a size of at least 6 MiB/,
      ],
      [
        "{ name: r, start: { engine: redis, container: true, memory_limit: lots } }",
        /start\.memory_limit: expected a size/,
      ],
      [
        "{ name: r, start: { engine: redis, container: true, cpus: 0 } }",
        /start\.cpus: expected a number > 0/,
      ],
      [
        "{ name: r, start: { engine: redis, container: true, image: x } }",
        /start\.image: unknown field \(known: engine, container, memory_limit, cpus, version, config, tls/,
      ],
      ["{ name: r }", /servers\.0\.url: expected a non-empty string/],
    ];
    for (const [server, re] of cases) {
      assert.throws(() => parsePlan(plan(server), "p.yaml"), re, server);
    }
  });
});

Deno.test("--dry-run says what kvlab would start, and starts nothing", async () => {
  const p = parsePlan(
    plan("{ name: r, start: { engine: redis, container: true, memory_limit: 64m } }"),
    "p.yaml",
  );
  const lines: string[] = [];
  const commands: string[] = [];
  const r = await runPlan(p, {
    data: Deno.makeTempDirSync(),
    dryRun: true,
    onServers: (l) => lines.push(l),
    onEvent: (e) => e.kind === "start" && commands.push(e.command),
  });
  assert.equal(r.cells, 1);
  assert.deepEqual(lines, [
    "server r: a container of kvlab/redis (the installed redis-server), memory limit 64 MiB, " +
    "on a free loopback port (port 0 until it runs)",
  ]);
  assert.deepEqual(commands, ["memory sweep of redis://127.0.0.1:0: 10 keys, 3-byte values"]);
});

Deno.test("--dry-run says which topology kvlab would start as processes", async () => {
  const p = parsePlan(
    plan("{ name: c, start: { engine: valkey, tls: true, cluster: { shards: 3, replicas: 1 } } }"),
    "p.yaml",
  );
  assert.equal(usesDocker(p), false);
  assert.deepEqual([p.servers[0].url, p.servers[0].target.cluster], ["rediss://127.0.0.1:0", true]);
  const lines: string[] = [];
  await runPlan(p, { data: Deno.makeTempDirSync(), dryRun: true, onServers: (l) => lines.push(l) });
  assert.deepEqual(lines, [
    "server c: the installed valkey-server as a cluster of 3 shards (1 primary + 1 replica " +
    "each, 6 processes), TLS, on free loopback ports (port 0 until it runs)",
  ]);
});
