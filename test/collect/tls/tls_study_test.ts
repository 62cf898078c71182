/**
 * Issue 33's TLS study, small: Redis and Valkey, each as a 3-shard cluster with a replica per
 * shard that kvlab starts (once plaintext, once TLS-only), under both tools of the study —
 * memtier_benchmark in cluster mode and kvlab's own open-loop generator at a fixed rate (one
 * 1-second step per arm) — as examples/tls-plan.yaml and examples/tls-fixed-rate.yaml run them,
 * every number cut down. Checked: every run complete, over the transport its server names; each
 * run's total equal to the sum of the primaries' commandstats within 1 %; and the TLS/plaintext
 * delta per server: Valkey's (4 memtier runs per arm, the fewest for an interval) with its
 * interval and a verdict, Redis's (one run per arm) a factor that is never a verdict. memtier
 * takes a second per run however small, so Redis gets one run per arm: 10 memtier runs, not 16.
 * The four clusters start once, together, for both tools (the plans name them by `url:`, as
 * their `start:` gives them to every tool); examples/ are checked to be valid plans naming the
 * same topologies.
 */

import assert from "node:assert/strict";
import pl from "nodejs-polars";
import {
  DenoProcessRunner,
  type NodeCrossCheck,
  parsePlan,
  prepareTopology,
  type RunningTopology,
  runPlan,
  startTopology,
  type TopologySpec,
} from "../../../src/collect/mod.ts";
import { delta, loadResults, notFixedRate } from "../../../src/analyze/mod.ts";
import { Dataset } from "../../../src/store/dataset.ts";
import { processState } from "../../../src/system/pids.ts";
import { withTempDir } from "../../_support/temp.ts";
import { missingOutsideCi } from "../../_support/tools.ts";
import { ROOT } from "../../_support/testdata.ts";

const ENGINES = ["redis", "valkey"] as const;

/** `delta`'s default equivalence band (5 %). */
const BAND = 0.05;

/**
 * Asserts that a `delta` row's throughput verdict is one of the calibrated outcomes and fits
 * its interval: `better` only above 1 (low end > 1), `worse` only below (high end < 1), `no
 * difference` only inside 1 ± the band, `inconclusive` only when the interval is not inside the
 * band (the row has runs enough for a verdict; a throughput has no resolution tie).
 */
function verdictFitsInterval(row: Record<string, unknown>): void {
  const lo = Number(row.throughput_factor_ci_low), hi = Number(row.throughput_factor_ci_high);
  const eps = 1e-9;
  const inBand = lo >= 1 - BAND - eps && hi <= 1 + BAND + eps;
  const fits: Record<string, boolean> = {
    better: lo > 1,
    worse: hi < 1,
    "no difference": inBand,
    inconclusive: !inBand,
  };
  const verdict = String(row.throughput_verdict);
  assert.ok(verdict in fits, `not a calibrated verdict: ${verdict}`);
  assert.ok(fits[verdict], `verdict ${verdict} against the interval [${lo}, ${hi}]`);
}

Deno.test("the verdict check of the study: it refuses a verdict its interval does not allow", () => {
  const row = (verdict: string, lo: number, hi: number) => ({
    throughput_verdict: verdict,
    throughput_factor_ci_low: lo,
    throughput_factor_ci_high: hi,
  });
  for (
    const ok of [
      row("worse", 0.6, 0.8),
      row("better", 1.2, 1.4),
      row("inconclusive", 0.9, 1.2),
      row("no difference", 0.97, 1.03),
      row("worse", 0.96, 0.99),
    ]
  ) {
    verdictFitsInterval(ok);
  }
  for (
    const bad of [
      row("worse", 0.9, 1.1),
      row("better", 0.7, 0.9),
      row("no difference", 0.8, 1.1),
      row("inconclusive", 0.98, 1.01),
      row("slower", 0.6, 0.8),
    ]
  ) {
    assert.throws(() => verdictFitsInterval(bad), JSON.stringify(bad));
  }
});

Deno.test("examples/tls-*.yaml: Redis and Valkey, plaintext and TLS, the topologies of the study", () => {
  for (const f of ["tls-plan.yaml", "tls-fixed-rate.yaml", "tls-handshake.yaml"]) {
    const plan = parsePlan(Deno.readTextFileSync(`${ROOT}examples/${f}`), `examples/${f}`);
    const names = plan.servers.map((s) => s.name);
    assert.deepEqual(names, ["redis", "redis-tls", "valkey", "valkey-tls"], f);
    for (const s of plan.servers) {
      const start = s.start!;
      assert.equal(start.engine, s.name.replace(/-tls$/, ""), f);
      assert.equal(start.tls ?? false, s.name.endsWith("-tls"), `${f}: ${s.name}`);
      if (f !== "tls-handshake.yaml") assert.deepEqual(start.cluster, { shards: 3, replicas: 1 });
    }
  }
});

/** The URL entry of a started topology (what its `start:` gives every tool). */
function urlEntry(name: string, t: RunningTopology): string {
  const tls = t.target.tlsFiles;
  const url = `${t.target.tls ? "rediss" : "redis"}://${t.target.host}:${t.target.port}`;
  return `  - name: ${name}\n    url: ${url}\n    cluster: true\n` +
    (tls
      ? `    tls: { ca_file: ${tls.caFile}, cert_file: ${tls.certFile}, key_file: ${tls.keyFile} }\n`
      : "");
}

Deno.test({
  name: "TLS vs plaintext on 3-shard clusters (1 replica each), Redis and Valkey, memtier " +
    "--cluster-mode and kvlab's open loop: totals = the primaries' commandstats; the delta per " +
    "server has an interval and a verdict",
  ignore: missingOutsideCi(
    "redis-server",
    "redis-cli",
    "valkey-server",
    "valkey-cli",
    "memtier_benchmark",
    "openssl",
  ),
  fn: () =>
    withTempDir("kvlab-tls-study-", async (data) => {
      const runner = new DenoProcessRunner();
      const started: { name: string; t: RunningTopology }[] = [];
      try {
        // (the four at once: most of a start is waiting for the cluster to agree)
        const arms = ENGINES.flatMap((engine) => [false, true].map((tls) => ({ engine, tls })));
        const starts = arms.map(async ({ engine, tls }) => {
          const spec: TopologySpec = { engine, tls, cluster: { shards: 3, replicas: 1 } };
          const t = await startTopology(await prepareTopology(spec, runner), { runner });
          started.push({ name: tls ? `${engine}-tls` : engine, t });
        });
        const failed = (await Promise.allSettled(starts)).find((r) => r.status === "rejected");
        if (failed) throw (failed as PromiseRejectedResult).reason;
        started.sort((a, b) => a.name.localeCompare(b.name));
        const entries = new Map(started.map((s) => [s.name, urlEntry(s.name, s.t)]));
        const servers = [...entries.values()].join("");
        // memtier: 4 runs per Valkey arm (the fewest for an interval), one per Redis arm (memtier
        // takes a second per run whatever its size: 10 runs, not 16)
        const lines: string[] = [];
        for (const [engine, repetitions] of [["valkey", 4], ["redis", 1]] as const) {
          const memtier = parsePlan(
            `name: tls-small-${engine}\nkind: memtier\nservers:\n${entries.get(engine)}` +
              `${entries.get(`${engine}-tls`)}repetitions: ${repetitions}\npause_s: 0\n` +
              `timeout_s: 60\nmemtier: { ratio: "1:1", key_maximum: 1000, requests: 300, ` +
              `matrix: { threads: [1], clients: [2] } }\n`,
            `tls-small-${engine}.yaml`,
          );
          const m = await runPlan(memtier, { data, onServers: (l) => lines.push(l) });
          assert.equal(m.complete, 2 * repetitions, lines.join("\n"));
        }
        const sweep = parsePlan(
          `name: tls-small-rate\nkind: latency-sweep\nservers:\n${servers}timeout_s: 60\n` +
            `sweep: { engine: kvlab, threads: 1, clients: 2, rates: [300], step_s: 1, ` +
            `warmup_s: 0, ratio: "1:1", keys: 500, preload: false, data_size_bytes: 32 }\n`,
          "tls-small-rate.yaml",
        );
        const s = await runPlan(sweep, { data });
        assert.equal(s.complete, 4);
      } finally {
        for (const { t } of started) await t.stop();
      }
      for (const { t } of started) {
        for (const n of t.nodes) assert.equal(processState(n.pid).state, "gone", `pid ${n.pid}`);
      }

      const ds = Dataset.of(data);
      const runs = ds.read("runs").toRecords() as Record<string, unknown>[];
      assert.equal(runs.length, 14);
      for (const r of runs) {
        const label = String(r.label);
        const what = `${label} ${r.tool}`;
        assert.equal(r.status, "complete", what);
        assert.equal(r.transport, label.endsWith("-tls") ? "tls" : "tcp", what);
        assert.equal(r.server, label.replace(/-tls$/, ""), what);
        // each run's total is the sum of the three primaries' commandstats, within 1 %
        const n = ds.runManifest(String(r.run_id))?.cluster_nodes as NodeCrossCheck;
        assert.equal(n.nodes.length, 3, `${what}: ${JSON.stringify(n)}`);
        assert.ok(n.tool > 0 && Math.abs(n.sum! - n.tool) <= 0.01 * n.tool, JSON.stringify(n));
        assert.equal(n.warning, null, what);
      }
      // both tools ran against every server
      const tools = new Set(runs.map((r) => `${r.label} ${r.tool}`));
      for (const { name } of started) {
        assert.ok(tools.has(`${name} memtier_benchmark`), [...tools].join(", "));
        assert.ok(tools.has(`${name} kvlab-loadgen`), [...tools].join(", "));
      }

      // TLS's cost per server (memtier's runs; the steps at a fixed rate are `compare --steps`'s):
      // a row each for Redis and Valkey
      const results = loadResults(ds);
      const d = delta(notFixedRate(results), {
        dimension: "transport",
        from: "tcp",
        to: "tls",
        per: ["server"],
      });
      const rows = d.filter(pl.col("test").eq(pl.lit("TOTALS"))).toRecords() as Record<
        string,
        unknown
      >[];
      assert.deepEqual(rows.map((r) => r.server), ["redis", "valkey"], JSON.stringify(d.columns));
      const [redis, valkey] = rows;
      // Valkey, 4 runs per arm: the factor with its interval, and a verdict
      assert.deepEqual([valkey.from_n, valkey.to_n], [4, 4], JSON.stringify(valkey));
      const [lo, f, hi] = ["_ci_low", "", "_ci_high"].map((k) =>
        Number(valkey[`throughput_factor${k}`])
      );
      assert.ok(lo > 0 && lo <= f && f <= hi && Number.isFinite(hi), JSON.stringify(valkey));
      // the verdict is the one the interval allows (4 runs per arm: enough for any of them)
      verdictFitsInterval(valkey);
      // Redis, one run per arm: a factor, no interval, never a verdict
      assert.deepEqual([redis.from_n, redis.to_n], [1, 1], JSON.stringify(redis));
      assert.ok(Number(redis.throughput_factor) > 0, JSON.stringify(redis));
      assert.equal(redis.throughput_factor_ci_low, null);
      assert.equal(redis.throughput_verdict, "inconclusive");
    }),
});
