import assert from "node:assert/strict";
import { parsePlan, type StudyEvent } from "../../src/collect/mod.ts";
import { studyProgress } from "../../src/cli/progress.ts";
import { cellOutcome, runStudy } from "../../src/cli/run.ts";
import { withServers } from "../_support/servers.ts";
import { stepLines } from "../../src/cli/_step_line.ts";
import { loadTable } from "../../src/analyze/load.ts";
import type { ResultsRow } from "../../src/schema.ts";

const cell = { id: "p/redis/c1-d3-P1-t0-r0/rep1" } as StudyEvent["cell"];
const at = { cell, index: 1, total: 1 };

Deno.test("studyProgress() in a pipe: warm-up apart, settled rates only, every 10 s", () => {
  let out = "";
  let clock = 0;
  const on = studyProgress((s) => out += s, false, () => clock);
  const progress = (test: string, rps: number, overall: number | null) =>
    on({
      kind: "progress",
      cell,
      event: { kind: "progress", test, opsPerSec: rps, overallOpsPerSec: overall },
    });
  const done = (test: string) =>
    on({ kind: "progress", cell, event: { kind: "done", test, opsPerSec: null } });
  on({ kind: "start", ...at, command: "redis-benchmark -t set,get", requests: 1000 });
  on({ kind: "warmup", cell });
  progress("SET", 0, null);
  clock += 500;
  // redis-benchmark's first figures cover a fraction of a second: a test shorter than 2 s shows
  // no rate (this one's first overall, 61,000, was stored at 39,062)
  progress("SET", 232.8, 61000);
  clock += 1000;
  progress("SET", 41000, 39500);
  done("SET");
  // a long test: its first rate once it has run 2 s, then one every 10 s
  for (let s = 1; s <= 14; s++) {
    clock += 1000;
    progress("GET", 50000, 50000 + s);
  }
  done("GET");
  on({
    kind: "end",
    ...at,
    run: {
      runId: "r1",
      status: "complete",
      tests: 2,
      reason: null,
      command: "",
      interrupted: false,
      results: [],
    },
  });
  assert.equal(
    out,
    "[1/1] p/redis/c1-d3-P1-t0-r0/rep1\n" +
      "  $ redis-benchmark -t set,get\n" +
      "  warm-up run (not stored)\n" +
      "  measured run:\n" +
      "  SET: done\n" +
      "  GET: 50,003 ops/s so far\n" +
      "  GET: 50,013 ops/s so far\n" +
      "  GET: done\n" +
      "  → complete: 2 tests, run r1\n",
  );
  assert.doesNotMatch(out, /rps=0|overall: -/);
});

Deno.test("a sweep step not run after a first NS is not counted as complete", () => {
  let out = "";
  const on = studyProgress((s) => out += s, false, () => 0);
  const end = {
    kind: "end" as const,
    ...at,
    run: {
      runId: "",
      status: "complete" as const,
      tests: 0,
      reason: "skipped: redis did not sustain 60,000/s",
      command: "",
      interrupted: false,
      results: [],
    },
  };
  on(end);
  assert.match(out, /→ not run \(skipped: redis did not sustain 60,000\/s\)\n$/);
  assert.doesNotMatch(out, /→ complete/);
  assert.equal(cellOutcome(end)?.status, "skipped");
});

Deno.test("studyProgress() tells a preload from a warm-up run", () => {
  let out = "";
  const on = studyProgress((s) => out += s, false, () => 0);
  on({ kind: "start", ...at, command: "memtier_benchmark --rate-limiting 100", requests: 1 });
  on({ kind: "warmup", what: "preload", cell });
  on({ kind: "warmup", cell });
  assert.match(
    out,
    /\n {2}preload: writing every key once \(not stored\)\n {2}warm-up run \(not stored\)\n$/,
  );
});

Deno.test("runStudy() ends with a per-cell summary table", async () => {
  await withServers([{}], async ([a]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-run-" });
    const plan = parsePlan(
      `name: t
servers:
  - { name: redis, url: "${a.url}" }
tests: [set, get]
requests: 2000
warmup_requests: 500
matrix:
  clients: [1, 5]
repetitions: 1
timeout_s: 60
`,
      "p.yaml",
    );
    let out = "";
    const o = { print: (s: string) => void (out += s), printErr: () => {} };
    const r = await runStudy(plan, { data, dryRun: false }, o);
    assert.equal(r.complete, 2);
    assert.equal((out.match(/warm-up run \(not stored\)\n {2}measured run:\n/g) ?? []).length, 2);
    assert.doesNotMatch(out, /rps=0|overall: -/);
    const table = out.slice(out.indexOf("2 cells: 2 complete"));
    const lines = table.trim().split("\n");
    // one row per cell and test: SET's and GET's rates are never pooled into one figure
    assert.equal(lines[2], "| cell | status | test | throughput (ops/s) | p99 latency (ms) |");
    assert.equal(lines[3], "|---|---|---|---:|---:|");
    const row = (cell: string, test: string) =>
      new RegExp(
        `^\\| t/redis/${cell}/rep1 \\| complete \\| ${test} \\| \\d+\\.\\d\\d \\| \\d+\\.\\d+ \\|$`,
      );
    assert.match(lines[4], row("c1-d3-P1-t0-r0", "SET"));
    assert.match(lines[5], row("c1-d3-P1-t0-r0", "GET"));
    assert.match(lines[6], row("c5-d3-P1-t0-r0", "SET"));
    assert.match(lines[7], row("c5-d3-P1-t0-r0", "GET"));

    // again: both cells skipped, listed with their earlier runs; aligned text on a terminal
    out = "";
    await runStudy(plan, { data, dryRun: false }, { ...o, isTerminal: true });
    const again = out.trim().split("\n");
    assert.match(
      again.at(-6)!,
      /^cell {25}status {3}test {2}throughput \(ops\/s\)\s+p99 latency \(ms\)$/,
    );
    assert.match(
      again.at(-4)!,
      /^t\/redis\/c1-d3-P1-t0-r0\/rep1 {2}skipped {2}SET\s+\d+\.\d\d\s+\d+\.\d+$/,
    );
    assert.match(
      again.at(-3)!,
      /^t\/redis\/c1-d3-P1-t0-r0\/rep1 {2}skipped {2}GET\s+\d+\.\d\d\s+\d+\.\d+$/,
    );
  });
});

Deno.test("runStudy() says what each fixed-rate step reached", async () => {
  await withServers([{}], async ([a]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-run-step-" });
    const plan = parsePlan(
      `name: s
kind: latency-sweep
servers:
  - { name: redis, url: "${a.url}" }
repetitions: 1
timeout_s: 30
sweep:
  engine: kvlab
  threads: 1
  clients: 2
  rates: [200]
  step_s: 1
  keys: 100
`,
      "s.yaml",
    );
    let out = "";
    await runStudy(plan, { data, dryRun: false }, { print: (s) => out += s, printErr: () => {} });
    // whatever this busy machine reached: the achieved rate, a verdict, p50 and p99
    assert.match(
      out,
      /→ complete: 1 test, run \S+\n {2}GET: [\d,]+\/s of 200\/s requested \((sustained|NS|over)\); p50 [\d.]+ ms, p99 [\d.]+ ms from the intended send\n/,
    );
    // the line judges by the plan's rule (`sustained:`), not the default one
    const rows = loadTable(data, "results").toRecords() as unknown as ResultsRow[];
    assert.match(stepLines(rows, { rule: { min: 0.001, max: 0.002 } }), /\(over\)/);
    assert.match(stepLines(rows, { rule: { min: 1e6, max: 1e7 } }), /\(NS\)/);
    Deno.removeSync(data, { recursive: true });
  });
});

Deno.test("runStudy() --dry-run shows the warm-up and preload commands too", async () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-dry-" });
  const show = async (yaml: string) => {
    let out = "";
    await runStudy(parsePlan(yaml, "p.yaml"), { data, dryRun: true }, {
      print: (s) => out += s,
      printErr: () => {},
    });
    return out;
  };
  const rb = await show(`name: w
servers:
  - { name: redis, url: "redis://127.0.0.1:1" }
tests: [set]
requests: 2000
warmup_requests: 500
matrix:
  clients: [1]
`);
  assert.match(
    rb,
    /\n {2}\$ redis-benchmark .*-n 500 .*# warm-up, not stored\n {2}\$ redis-benchmark .*-n 2000/,
  );
  const mt = await show(`name: m
kind: memtier
servers:
  - { name: redis, url: "redis://127.0.0.1:1" }
memtier:
  preload: once
  key_maximum: 1000
  test_time_s: 1
  matrix:
    threads: [1]
    clients: [1]
`);
  assert.match(
    mt,
    /\n {2}\$ memtier_benchmark .*# preload, once per server, not stored\n {2}\$ memtier_benchmark /,
  );
  Deno.removeSync(data, { recursive: true });
});
