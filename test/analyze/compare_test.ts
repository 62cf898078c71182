import assert from "node:assert/strict";
import pl from "nodejs-polars";
import {
  compare,
  crossovers,
  delta,
  latencySpectrum,
  loadResults,
  loadTable,
} from "../../src/analyze/mod.ts";
import { ingestFile, parseRedisBenchmark } from "../../src/collect/mod.ts";

const parseRedisBenchmarkTable = (path: string) =>
  parseRedisBenchmark(Deno.readTextFileSync(path)).tests;

const ROOT = new URL("../../", import.meta.url).pathname;

async function seedDataset(study: string, arms: [string, string, string][]): Promise<string> {
  const data = Deno.makeTempDirSync({ prefix: `kvlab-${study}-` });
  for (const [file, server, version] of arms) {
    const o = await ingestFile(`${ROOT}data/raw/${study}/${file}`, {
      data,
      server,
      serverVersion: version,
    });
    assert.equal(o.status, "ingested", o.error?.message);
  }
  return data;
}

// Seed 001's table: valkey-tp/redis-tp and valkey-lat/redis-lat, as published (2 decimals).
const SEED1_RATIOS: [string, number, number][] = [
  ["PING_INLINE", 1.01, 1.00],
  ["PING_MBULK", 1.01, 0.97],
  ["SET", 1.02, 0.97],
  ["GET", 1.02, 0.97],
  ["INCR", 1.02, 0.97],
  ["LPUSH", 1.04, 0.97],
  ["RPUSH", 1.02, 0.97],
  ["LPOP", 1.02, 1.00],
  ["RPOP", 1.03, 0.97],
  ["SADD", 1.01, 1.00],
  ["HSET", 1.02, 0.97],
  ["SPOP", 1.01, 1.00],
  ["ZADD", 1.04, 0.97],
  ["ZPOPMIN", 1.02, 0.97],
  ["LPUSH_FOR_LRANGE", 1.04, 0.97],
  ["LRANGE_100", 1.01, 1.00],
  ["LRANGE_300", 1.04, 0.97],
  ["LRANGE_500", 1.01, 0.99],
  ["LRANGE_600", 1.01, 0.99],
  ["MSET", 1.01, 1.00],
  ["XADD", 0.99, 1.00],
];

Deno.test("compare() reproduces seed 001's ratio columns from the ingested raw outputs", async () => {
  const data = await seedDataset("valkey-vs-redis", [
    ["valkey-8.0.1.txt", "valkey", "8.0.1"],
    ["redis-6.0.16.txt", "redis", "6.0.16"],
  ]);
  const df = loadResults(data);
  const tp = compare(df, { by: "server", baseline: "redis" });
  const lat = compare(df, { by: "server", baseline: "redis", metric: "p50_latency_ms" });
  const round2 = (x: unknown) => Number((x as number).toFixed(2));
  assert.deepEqual(
    tp.getColumn("test").toArray().map((
      t,
      i,
    ) => [t, round2(tp.getColumn("ratio").get(i)), round2(lat.getColumn("ratio").get(i))]),
    SEED1_RATIOS,
  );
  // one run per arm: no interval, no claim (never "no difference": it cannot be told)
  assert.ok(tp.getColumn("verdict").toArray().every((v) => v === "inconclusive"));
  assert.equal(tp.getColumn("ratio_ci_low").nullCount(), 21);
  assert.equal(lat.getColumn("direction").get(0), "lower is better");
});

Deno.test("delta() reproduces seed 003: RDMA over TCP throughput factors and latency changes", async () => {
  const data = await seedDataset("rdma-vs-tcp", [["rdma.txt", "valkey", "8.0.1"], [
    "tcp.txt",
    "valkey",
    "8.0.1",
  ]]);
  const d = delta(loadResults(data), { dimension: "transport", from: "tcp", to: "rdma" });
  const r = (c: string, k: number) =>
    (d.getColumn(c).toArray() as number[]).map((x) => Number(x.toFixed(k)));
  assert.deepEqual(d.getColumn("test").toArray(), [
    "PING_INLINE",
    "PING_MBULK",
    "SET",
    "GET",
    "LPUSH_FOR_LRANGE",
    "LRANGE_100",
  ]);
  assert.deepEqual(r("throughput_factor", 2), [2.57, 2.76, 2.26, 2.32, 2.13, 0.98]);
  assert.deepEqual(r("avg_latency_change_pct", 1), [-60.0, -63.0, -54.9, -56.1, -51.8, -10.4]);
  assert.deepEqual(r("p50_latency_change_pct", 1), [-59.3, -59.3, -55.3, -53.0, -50.3, -10.1]);
  assert.deepEqual(r("p99_latency_change_pct", 1), [-67.9, -73.0, -56.9, -64.1, -61.7, 52.1]);
  // the post's claim, "2x+ throughput and latency cut by more than 50%", holds except LRANGE_100
  for (let i = 0; i < 5; i++) {
    assert.ok(d.getColumn("throughput_factor").get(i) > 2);
    assert.ok(d.getColumn("avg_latency_change_pct").get(i) < -50);
  }
  // the two runs also used different -r: said, not hidden
  assert.equal(d.getColumn("also_differs").get(0), "keyspace 1000000000 vs 1000000");
});

Deno.test("compare() statistics: verdicts follow the interval and the metric's direction", () => {
  const frame = (base: number[], cand: number[], metric = "ops_per_sec") =>
    pl.DataFrame({
      test: [...base, ...cand].map(() => "SET"),
      server: [...base.map(() => "redis"), ...cand.map(() => "valkey")],
      [metric]: [...base, ...cand],
    });
  const verdict = (df: pl.DataFrame, metric = "ops_per_sec") =>
    compare(df, { by: "server", baseline: "redis", metric }).getColumn("verdict").get(0);
  const base = [100000, 100400, 99700, 100100, 99900];
  // identical candidate: no difference
  assert.equal(verdict(frame(base, base)), "no difference");
  // 20 % faster in 5 low-noise repetitions: better
  const faster = base.map((x, i) => x * 1.2 * (1 + (i - 2) * 0.001));
  assert.equal(verdict(frame(base, faster)), "better");
  assert.equal(verdict(frame(faster, base)), "worse");
  // latency: lower is better
  const lat = [0.5, 0.51, 0.49, 0.5, 0.505];
  assert.equal(
    verdict(frame(lat, lat.map((x) => x * 0.8), "p99_latency_ms"), "p99_latency_ms"),
    "better",
  );
  assert.equal(
    verdict(frame(lat, lat.map((x) => x * 1.2), "p99_latency_ms"), "p99_latency_ms"),
    "worse",
  );
  // a 2 % change inside ±5 % noise with 5 runs: the interval is wider than ±5 %, so it cannot
  // be told either way
  const noisy = [100000, 95000, 105000, 98000, 102000];
  assert.equal(verdict(frame(noisy, noisy.map((x) => x * 1.02))), "inconclusive");
  // fewer than 4 runs on a side: inconclusive, whatever the ratio (never "no difference")
  assert.equal(verdict(frame([100000], [1049000])), "inconclusive");
  assert.equal(verdict(frame(base.slice(0, 3), faster.slice(0, 3))), "inconclusive");
  assert.equal(verdict(frame(base.slice(0, 4), faster.slice(0, 4))), "better");
  // a latency difference of one redis-benchmark bucket (8 µs) is never a verdict
  const buckets = (v: number, tool: string) =>
    pl.DataFrame({
      test: Array(10).fill("SET"),
      server: [...Array(5).fill("redis"), ...Array(5).fill("valkey")],
      tool: Array(10).fill(tool),
      p50_latency_ms: [...Array(5).fill(0.023), ...Array(5).fill(v)],
    });
  const p50 = (df: pl.DataFrame) =>
    compare(df, { by: "server", baseline: "redis", metric: "p50_latency_ms" }).toRecords()[0];
  assert.equal(p50(buckets(0.031, "redis-benchmark")).verdict, "inconclusive");
  assert.match(
    String(p50(buckets(0.031, "redis-benchmark")).verdict_note),
    /resolution \(0\.008\)/,
  );
  assert.equal(p50(buckets(0.039, "redis-benchmark")).verdict, "worse");
  // an unstable arm is flagged: CV above 10 %, or a monotone drift over 5 runs
  const drift = [100000, 101000, 102000, 103000, 104000];
  assert.equal(
    compare(frame(drift, base), { by: "server", baseline: "redis" }).getColumn("unstable").get(0),
    "baseline: drift +4.0 % over 5 runs",
  );
  assert.equal(
    compare(frame(base, base), { by: "server", baseline: "redis" }).getColumn("unstable").get(0),
    null,
  );
  // deterministic interval
  const a = compare(frame(base, faster), { by: "server", baseline: "redis" });
  const b = compare(frame(base, faster), { by: "server", baseline: "redis" });
  assert.deepEqual(a.toRecords(), b.toRecords());
  const row = a.toRecords()[0] as Record<string, number>;
  assert.ok(row.ratio_ci_low <= row.ratio && row.ratio <= row.ratio_ci_high);
  assert.throws(
    () => compare(frame(base, base), { by: "server", baseline: "keydb" }),
    /invalid baseline: keydb \(values of server: redis, valkey\)/,
  );
});

Deno.test("crossovers() finds where Dragonfly overtakes Redis (seed 002's client scaling)", () => {
  const clients = [1, 2, 4, 8, 16, 32, 64, 128];
  const dragonfly = [2217.32, 4021.99, 8207.76, 15476.01, 26968.31, 39939.89, 52767.00, 57385.52];
  const redis = [2437.10, 4721.11, 9020.48, 17048.82, 29695.61, 44350.43, 53059.89, 55254.50];
  const df = pl.DataFrame({
    test: [...clients, ...clients].map(() => "SET"),
    server: [...clients.map(() => "dragonfly"), ...clients.map(() => "redis")],
    clients: [...clients, ...clients],
    ops_per_sec: [...dragonfly, ...redis],
  });
  const c =
    crossovers(df, { x: "clients", by: "server", baseline: "redis", candidate: "dragonfly" })
      .toRecords()[0];
  assert.equal(c.crossover_x, 128);
  assert.equal(c.candidate_median_ops_per_sec, 57385.52);
  const none =
    crossovers(df, { x: "clients", by: "server", baseline: "dragonfly", candidate: "redis" })
      .toRecords()[0];
  assert.equal(none.crossover_x, null);
});

Deno.test("latencySpectrum() merges runs as histograms, not by averaging percentiles", async () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-spectrum-" });
  await ingestFile(`${ROOT}test/testdata/corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt`, {
    data,
    server: "redis",
  });
  const runs = loadTable(data, "runs").select("run_id", "server");
  const dist = loadTable(data, "latency_distribution").join(runs, { on: "run_id" });
  const one = latencySpectrum(dist).filter(pl.col("test").eq(pl.lit("SET")));
  const at = (df: pl.DataFrame, p: number) =>
    df.filter(pl.col("percentile").eq(pl.lit(p))).getColumn("latency_ms").get(0);
  // one run: percentiles printed as bucket bounds come back (HdrHistogram, 3 significant
  // digits); others land on the next printed bound above the tool's figure
  const printed = parseRedisBenchmarkTable(
    `${ROOT}test/testdata/corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt`,
  )[0];
  for (const [p, v] of [[50, printed.p50LatencyMs], [100, printed.maxLatencyMs]] as const) {
    assert.ok(Math.abs(at(one, p) - v!) / v! < 0.005, `p${p}: ${at(one, p)} vs ${v}`);
  }
  // p99 = 1.359 ms in the summary; the printed points around it are 1.303 (19767) and 1.407 (19822)
  assert.ok(
    at(one, 99) >= printed.p99LatencyMs! && Math.abs(at(one, 99) - 1.407) < 0.005,
    `p99 ${at(one, 99)}`,
  );
  assert.equal(one.getColumn("count").get(0), 20000);
  // two runs with different distributions: the merged median is the median of all requests
  const fake = pl.DataFrame({
    run_id: ["a", "a", "b", "b"],
    test_index: [0, 0, 0, 0],
    test: ["GET", "GET", "GET", "GET"],
    distribution: ["percentile", "percentile", "percentile", "percentile"],
    latency_ms: [1, 1, 10, 10],
    count: [1, 1000, 1, 10],
    server: ["x", "x", "x", "x"],
  });
  const merged = latencySpectrum(fake);
  assert.equal(merged.getColumn("count").get(0), 1010);
  assert.equal(at(merged, 50), 1); // 1000 of 1010 requests took 1 ms; averaging p50s would say 5.5
  assert.ok(Math.abs(at(merged, 99.5) - 10) < 0.01);
});

Deno.test("compare() flags a cell whose runs the noise guard found disturbed", () => {
  const n = 5;
  const df = pl.DataFrame({
    test: Array(2 * n).fill("SET"),
    server: [...Array(n).fill("a"), ...Array(n).fill("b")],
    ops_per_sec: [100, 101, 100, 99, 100, 100, 100, 101, 99, 100],
    noise_disturbance: [
      ...Array(n).fill(null),
      null,
      "other processes used 49 % of the CPUs",
      ...Array(n - 2).fill(null),
    ],
  });
  const c = compare(df, { by: "server", baseline: "a" }).toRecords()[0];
  assert.equal(c.unstable, "candidate: 1/5 runs disturbed (other processes ≤ 49 %)");
  assert.equal(
    c.unstable_details,
    "candidate: runs disturbed (other processes used 49 % of the CPUs)",
  );
  const quiet = compare(df.drop("noise_disturbance"), { by: "server", baseline: "a" });
  assert.equal(quiet.toRecords()[0].unstable, null);
});

Deno.test("compare() says why a cell is unstable in one short reason per arm (issue 31)", () => {
  // 5 runs per arm on a noisy VM: every run's steal differs, so each has its own reason
  const n = 5;
  const steal = [37.04, 21.3, 0, 12.71, 30.5];
  const df = pl.DataFrame({
    test: Array(2 * n).fill("GET"),
    server: [...Array(n).fill("redis"), ...Array(n).fill("valkey")],
    ops_per_sec: [100, 101, 99, 100, 100.5, 80, 135, 95, 70, 120],
    noise_disturbance: [
      ...Array(n).fill(null),
      ...steal.map((s) =>
        s === 0
          ? null
          : `steal ${s.toFixed(1)} %; other processes used ${Math.round(s / 2)} % of the CPUs`
      ),
    ],
  });
  const c = compare(df, { by: "server", baseline: "redis" }).toRecords()[0];
  assert.equal(
    c.unstable,
    "candidate: CV 27 %, 4/5 runs disturbed (steal ≤ 37 %, other processes ≤ 19 %)",
  );
  // the details keep every reason, for JSON and the summary page's details section
  for (const s of steal.filter((s) => s > 0)) {
    assert.ok(String(c.unstable_details).includes(`steal ${s.toFixed(1)} %`), String(s));
  }
  assert.ok(
    String(c.unstable_details).startsWith(
      "candidate: runs disturbed (steal 37.0 %; other processes used 19 % of the CPUs; steal 21.3",
    ),
  );
});
