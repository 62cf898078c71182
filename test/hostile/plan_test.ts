/**
 * Hostile plans and options (issue 11, D7, D11, D18 and the plan "Minor" items): the real CLI
 * checks each with `--dry-run` (no server needed) and must refuse it with one clear line at the
 * field's real line, fast, without running out of memory.
 */

import assert from "node:assert/strict";
import { HOSTILE, kvlab } from "./_cli.ts";

const SERVER = "servers:\n  - { name: a, url: 'redis://127.0.0.1:7412' }\n";

/** A plan (its text) and the one error line expected for it. */
const PLANS: { name: string; plan: string; error: RegExp }[] = [
  {
    name: "D7: repetitions: 30000000 is counted, not expanded",
    plan: `name: p\n${SERVER}tests: [set]\nrepetitions: 30000000\n`,
    error: /p\.yaml:5:\d+: repetitions: the plan has 30,000,000 cells .* at most 100,000/,
  },
  {
    name: "D7: a 20⁴ matrix × 1000 repetitions",
    plan: `name: p\n${SERVER}tests: [set]\nrepetitions: 1000\nmatrix:\n` +
      ["clients", "data_size_bytes", "pipeline", "keyspace"].map((k) =>
        `  ${k}: [${Array.from({ length: 20 }, (_, i) => i + 1).join(", ")}]\n`
      ).join(""),
    error: /p\.yaml:7:3: matrix: the plan has 160,000,000 cells .* at most 100,000/,
  },
  {
    name: "D11: tests: [set, gett] names the unknown test",
    plan: `name: p\n${SERVER}tests: [set, gett]\n`,
    error: /p\.yaml:4:\d+: tests\.1: unknown test "gett".*\(did you mean get\?\)/,
  },
  {
    name: "D18: a YAML syntax error at its real line and column",
    plan: `name: p\n${SERVER}tests: [set]\nmatrix:\n  clients: [1, 2\n  pipeline: 1\n`,
    error: /p\.yaml:7:\d+: expected YAML or JSON/,
  },
  {
    name: "an unknown field inside a servers entry",
    plan: `name: p\nservers:\n  - name: a\n    url: redis://127.0.0.1:7412\n    pasword: x\n` +
      "tests: [set]\n",
    error:
      /p\.yaml:5:\d+: servers\.0\.pasword: unknown field \(known: name, url, container, start, params, cluster, tls, password_env\)/,
  },
  {
    name: "timeout_s: 0",
    plan: `name: p\n${SERVER}tests: [set]\ntimeout_s: 0\n`,
    error: /p\.yaml:5:\d+: timeout_s: expected a number > 0 and ≤ 604800/,
  },
  {
    name: "pause_s: 1e9 (would overflow a timer)",
    plan: `name: p\n${SERVER}tests: [set]\npause_s: 1e9\n`,
    error: /p\.yaml:5:\d+: pause_s: expected a number ≥ 0 and ≤ 86400/,
  },
  {
    name: "tags: {nested: {b: 1}}",
    plan: `name: p\n${SERVER}tests: [set]\ntags: {nested: {b: 1}}\n`,
    error: /p\.yaml:5:\d+: tags\.nested: expected a string, number or boolean/,
  },
  {
    name: "a user tag named plan",
    plan: `name: p\n${SERVER}tests: [set]\ntags: {plan: mine}\n`,
    error: /p\.yaml:5:\d+: tags\.plan: reserved tag name/,
  },
  {
    name: "a user tag named clients",
    plan: `name: p\n${SERVER}tests: [set]\ntags: {clients: many}\n`,
    error: /p\.yaml:5:\d+: tags\.clients: reserved tag name/,
  },
  {
    name: "port 0",
    plan: `name: p\nservers: [{ name: a, url: 'redis://127.0.0.1:0' }]\ntests: [set]\n`,
    error: /p\.yaml:2:\d+: servers\.0\.url: invalid server URL: .*port 0: expected 1 to 65535/,
  },
  {
    name: "port 99999",
    plan: `name: p\nservers: [{ name: a, url: 'redis://127.0.0.1:99999' }]\ntests: [set]\n`,
    error: /port 99999: expected 1 to 65535/,
  },
];

Deno.test("hostile: bad plans fail plan checking with one clear line", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-plan-" });
  await t.step("a good plan passes (the harness can pass)", async () => {
    Deno.writeTextFileSync(`${dir}/p.yaml`, `name: p\n${SERVER}tests: [set, get]\n`);
    const r = await kvlab(["run", `${dir}/p.yaml`, "--data", `${dir}/ok`, "--dry-run"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /1 cells? \(dry run: nothing was run\)/);
  });
  for (const c of PLANS) {
    await t.step(c.name, async () => {
      Deno.writeTextFileSync(`${dir}/p.yaml`, c.plan);
      // 192 MB of heap: a plan expanded in memory dies; one counted first fails in a second
      const r = await kvlab(["run", `${dir}/p.yaml`, "--data", `${dir}/d`, "--dry-run"], 192);
      assert.equal(r.code, 1, r.printed);
      assert.match(r.stderr, c.error);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.doesNotMatch(r.printed, /TimeoutOverflowWarning|out of memory/);
      assert.ok(r.ms < 30_000, `took ${r.ms} ms`);
    });
  }
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("hostile: ingest --tool takes only tools it reads", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-tool-" });
  const r = await kvlab([
    "ingest",
    HOSTILE + "banner-mid-line-redis-benchmark-7.0.15.txt",
    "--data",
    `${dir}/d`,
    "--tool",
    "memtier",
  ]);
  assert.equal(r.code, 1, r.printed);
  assert.match(
    r.stderr,
    /invalid tool: memtier \(did you mean memtier_benchmark\? ingest reads output of redis-benchmark, valkey-benchmark, keydb-benchmark or memtier_benchmark\)/,
  );
  assert.equal(r.stdout, "");
  Deno.removeSync(dir, { recursive: true });
});
