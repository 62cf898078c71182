// `kvlab compare` on fixed-rate steps (issue 31): each arm's steps against the baseline's, rate
// by rate, with the numbers `kvlab sweep` prints, p99 and p50 ratios with intervals and verdicts
// over repetitions, and NS steps shown, never compared. Live two-arm studies against real
// redis-servers (kvlab's generator; one arm also by memtier_benchmark), stopped by PID, and seed
// 000's published tables.
import assert from "node:assert/strict";
import { parsePlan, runPlan, writePublishedSweep } from "../../src/collect/mod.ts";
import { PUBLISHED_TABLES } from "../_support/published_sweep.ts";
import { withServers } from "../_support/servers.ts";
import { withTempDir } from "../_support/temp.ts";
import { toolOrSkip } from "../_support/tools.ts";
import { cli } from "./_cli.ts";

type Row = Record<string, unknown>;

/** A latency-sweep plan of the servers (name, URL), short steps. */
function plan(servers: [string, string][], sweep: string, repetitions: number): string {
  return `name: fr\nkind: latency-sweep\nrepetitions: ${repetitions}\ntimeout_s: 60\n` +
    `servers:\n${servers.map(([n, u]) => `  - { name: ${n}, url: "${u}" }`).join("\n")}\n` +
    `sweep:\n${sweep.split("\n").map((l) => `  ${l}`).join("\n")}\n`;
}

/** `kvlab <args> --format json`, parsed. */
async function json(args: string[]): Promise<Row[]> {
  const r = await cli([...args, "--format", "json"]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

Deno.test("kvlab compare on a two-arm fixed-rate study: p99 ratios with intervals and verdicts per rate", async () => {
  await withServers([{}, {}], async ([a, b]) => {
    await withTempDir("kvlab-compare-steps-", async (dir) => {
      const data = `${dir}/data`;
      // 4 repetitions of 300/s (sustained) and 400,000/s (NS on this machine)
      const p = parsePlan(
        plan(
          [["redis", a.url], ["valkey", b.url]],
          'threads: 1\nclients: 2\nrates: [300, 400000]\nstep_s: 0.5\nwarmup_s: 0\nkeys: 1000\nratio: "0:1"' +
            // both rates in every repetition: a busy machine's short 300/s step (15 ms late is
            // NS at 150 requests) would skip 400,000/s in the repetitions after it
            "\ncontinue_after_ns: true",
          4,
        ),
        "p.yaml",
      );
      const r = await runPlan(p, { data });
      assert.equal(r.failed, 0);
      const c = await cli(["compare", "--data", data]);
      assert.equal(c.code, 0, c.stderr);
      assert.match(c.stdout, /\| p99 ratio \| p99 ratio interval \| p99 verdict \|/);
      assert.match(c.stderr, /^fixed-rate steps: p99 differs in \d of 1 steps compared/m);
      const rows = await json(["compare", "--data", data]);
      const sweep = await json(["sweep", "--data", data]);
      const at = (label: string, rate: number) =>
        sweep.find((s) => s.label === label && s.requested_ops_per_sec === rate)!;
      assert.deepEqual(rows.map((x) => [x.label, x.baseline, x.requested_ops_per_sec]), [
        ["valkey", "redis", 300],
        ["valkey", "redis", 400000],
      ]);
      const [ok, ns] = rows;
      // the numbers `kvlab sweep` prints (repetitions merged as histograms), side by side
      assert.deepEqual([ok.baseline_n, ok.candidate_n, ok.merge], [4, 4, "hdr"]);
      for (const [side, label] of [["baseline", "redis"], ["candidate", "valkey"]]) {
        for (const c of ["achieved_ops_per_sec", "p50_latency_ms", "p99_latency_ms"]) {
          assert.equal(ok[`${side}_${c}`], at(label, 300)[c], `${side} ${c}`);
        }
      }
      assert.equal(
        ok.p99_ratio,
        at("valkey", 300).p99_latency_ms as number /
          (at("redis", 300).p99_latency_ms as number),
      );
      // 4 repetitions a side: an interval and a verdict of the rank rule
      for (const m of ["p99", "p50"]) {
        assert.ok(typeof ok[`${m}_ratio_ci_low`] === "number", m);
        assert.ok((ok[`${m}_ratio_ci_low`] as number) <= (ok[`${m}_ratio_ci_high`] as number));
        assert.ok(
          ["better", "worse", "no difference", "inconclusive"].includes(String(ok[`${m}_verdict`])),
        );
      }
      // the NS step: shown with its achieved rate, never compared
      assert.equal(ns.p99_verdict, "not compared");
      assert.equal(ns.p99_ratio, null);
      assert.match(String(ns.p99_verdict_note), /^redis NS at 400,000\/s \(achieved [\d,]+\/s\)$/);
      assert.equal(ns.baseline_step, "NS");
      // the summary page shows the same rows
      const s = await cli(["summary", data, "-o", `${dir}/summary`]);
      assert.equal(s.code, 0, s.stderr);
      const md = Deno.readTextFileSync(`${dir}/summary/summary.md`);
      assert.match(md, /^## Fixed-rate latency: each arm against redis, rate by rate$/m);
      assert.match(md, /\| GET \| 2 \| valkey \| 300\.00 \|/);
      assert.match(md, /\| not compared \| redis NS at 400,000\/s/);
      assert.doesNotMatch(md, /## Throughput: each arm/); // the steps are not compared per test
    });
  });
});

Deno.test("kvlab compare on latency sweeps from two engines shows the steps (was `|  |`, exit 0)", async () => {
  const memtier = toolOrSkip("memtier_benchmark", "compare of two engines' sweeps");
  if (!memtier) return;
  await withServers([{}, {}], async ([a, b]) => {
    await withTempDir("kvlab-compare-engines-", async (dir) => {
      const data = `${dir}/data`;
      const sweep = "threads: 1\nclients: 2\nrates: [500]\nstep_s: 1\nwarmup_s: 0\nkeys: 1000";
      const kvlab = plan([["redis", a.url]], `engine: kvlab\n${sweep}`, 1);
      const mt = plan([["valkey", b.url]], `engine: memtier\ntool: ${memtier}\n${sweep}`, 1);
      for (const text of [kvlab, mt]) {
        const r = await runPlan(parsePlan(text, "p.yaml"), { data });
        assert.equal(r.failed, 0);
      }
      const c = await cli(["compare", "--data", data]);
      assert.equal(c.code, 0, c.stderr);
      assert.doesNotMatch(c.stdout, /^\|\s*\|$/m);
      assert.match(c.stdout, /\| GET \| 2 \| valkey \| 500\.00 \|/);
      const [row] = await json(["compare", "--data", data]);
      assert.equal(row.p99_verdict, "not compared");
      assert.equal(
        row.p99_verdict_note,
        "different load generators (kvlab-loadgen vs memtier_benchmark)",
      );
    });
  });
});

Deno.test("kvlab compare on seed 000's published tables: every rate, one repetition, no verdict", async () => {
  await withTempDir("kvlab-compare-published-", async (dir) => {
    writePublishedSweep(Deno.readTextFileSync(PUBLISHED_TABLES), `${dir}/data`);
    const rows = await json([
      "compare",
      "--data",
      `${dir}/data`,
      "--baseline",
      "Redis 1 thread",
    ]);
    const row = (label: string, rate: number) =>
      rows.find((r) =>
        r.label === label && r.requested_ops_per_sec === rate && r.test === "GET" &&
        r.clients === 816
      )!;
    // p99 at 19,584/s: Valkey 1 thread 5.13 ms against Redis 1 thread 5.29 ms
    const v = row("Valkey 1 thread", 19584);
    assert.deepEqual([v.baseline_p99_latency_ms, v.candidate_p99_latency_ms], [5.29, 5.13]);
    assert.ok(Math.abs((v.p99_ratio as number) - 5.13 / 5.29) < 1e-12);
    assert.equal(v.p99_verdict, "inconclusive");
    assert.equal(v.p99_verdict_note, "fewer than 4 runs per arm");
    assert.equal(v.p99_ratio_ci_low, null);
    // Redis 1 thread NS at 399,840/s (258k), then not run
    assert.equal(
      row("Valkey 1 thread", 399840).p99_verdict_note,
      "Redis 1 thread NS at 399,840/s (achieved 258,000/s)",
    );
    assert.equal(
      row("HotKV", 799680).p99_verdict_note,
      "Redis 1 thread did not run 799,680/s (after its first NS)",
    );
  });
});

Deno.test("kvlab compare on a dataset with per-test runs and fixed-rate steps shows both", async () => {
  await withTempDir("kvlab-compare-both-", async (dir) => {
    const data = `${dir}/data`;
    writePublishedSweep(Deno.readTextFileSync(PUBLISHED_TABLES), data);
    // HotKV and Dragonfly also ran redis-benchmark -q, five times each
    for (const [label, rps] of [["HotKV", 100_000], ["Dragonfly", 120_000]] as const) {
      for (let i = 0; i < 5; i++) {
        const file = `${dir}/${label}-${i}.txt`;
        Deno.writeTextFileSync(file, `SET: ${(rps + i * 101).toFixed(2)} requests per second\n`);
        const r = await cli(["ingest", file, "--data", data, "--label", label]);
        assert.equal(r.code, 0, r.stderr);
      }
    }
    const md = await cli(["compare", "--data", data, "--baseline", "HotKV"]);
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /^\*\*Per test\*\*\n\n\| test \| label \|/);
    assert.match(md.stdout, /\| SET \| Dragonfly \| 5 \| 5 \| .* \| better \|/);
    assert.match(md.stdout, /\n\*\*Fixed-rate steps, rate by rate\*\*\n\n\| test \| clients \|/);
    assert.match(md.stderr, /^1 of 1 cells differ/m);
    assert.match(md.stderr, /^fixed-rate steps: p99 differs in 0 of \d+ steps compared/m);
    // CSV: the per-test table, and --steps the steps'
    const csv = await cli(["compare", "--data", data, "--baseline", "HotKV", "--format", "csv"]);
    assert.match(csv.stdout, /^test,label,baseline,baseline_n,/);
    assert.match(csv.stderr, /`kvlab compare --steps` prints their comparison/);
    const steps = await cli([
      "compare",
      "--data",
      data,
      "--baseline",
      "HotKV",
      "--format",
      "csv",
      "--steps",
    ]);
    assert.match(steps.stdout, /^test,clients,label,baseline,requested_ops_per_sec,/);
  });
});
