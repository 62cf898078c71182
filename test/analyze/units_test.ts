import assert from "node:assert/strict";
import {
  decimalsFor,
  directionOf,
  headerFor,
  isFractional,
  metricDirection,
  metricTitle,
} from "../../src/analyze/units.ts";

// The rules the units module replaced, as they were written in compare.ts, present.ts,
// chart.ts, scaling.ts and rowsFrame: the module must give the same answers on every column
// kvlab reads or writes.
const OLD = {
  direction(m: string): string {
    if (/_per_sec$/.test(m)) return "higher";
    if (/latency|_ms$|_s$|_bytes$/.test(m)) return "lower";
    return "throws";
  },
  decimals(c: string): number | null {
    if (/per_sec$/.test(c)) return 2;
    if (/_mib$/.test(c)) return 2;
    if (/_per_key$/.test(c)) return 1;
    if (/^r_squared$/.test(c)) return 4;
    if (/_ms$/.test(c)) return 3;
    if (/^ratio|_ratio$|factor/.test(c)) return 2;
    if (/_pct$/.test(c)) return 1;
    if (/_s$/.test(c)) return 2;
    if (c === "nines") return 2;
    return null;
  },
  header(c: string): string {
    const rules: [RegExp, string][] = [
      [/^(.*?)_?ops_per_sec$/, "ops/s"],
      [/^(.*)_ms$/, "ms"],
      [/^(.*)_pct$/, "%"],
      [/^(.*)_bytes$/, "bytes"],
      [/^(.*)_mib$/, "MiB"],
      [/^(.*)_bytes_per_key$/, "bytes/key"],
      [/^(.*)_per_sec$/, "/s"],
      [/^(.*)_s$/, "s"],
    ];
    for (const [re, unit] of rules) {
      const m = re.exec(c);
      if (m) return `${(m[1].trim() || "throughput").replace(/_/g, " ")} (${unit})`;
    }
    return c.replace(/_/g, " ");
  },
  title(m: string): string {
    if (m === "ops_per_sec") return "throughput (ops/s)";
    const l = /^(.*)_latency_ms$/.exec(m);
    if (l) return `${l[1]} latency (ms)`;
    return m.replace(/_per_sec$/, " (/s)").replace(/_ms$/, " (ms)").replace(/_/g, " ");
  },
  fractional: (c: string) => /median|ratio|ci_|factor|pct|_ms|per_sec/.test(c),
};

/** Columns of the schema's tables (results, latency, memory, runs). */
const SCHEMA = `run_id tool server server_version transport label repetition server_io_threads
server_maxmemory_bytes host_cpu_count host_memory_bytes test_index test clients threads pipeline
data_size_bytes requests keyspace duration_s ops_per_sec avg_latency_ms min_latency_ms
p50_latency_ms p95_latency_ms p99_latency_ms p999_latency_ms max_latency_ms keep_alive
cluster_nodes requested_ops_per_sec rate_avg_ops_per_sec rate_min_ops_per_sec
rate_p50_ops_per_sec rate_p95_ops_per_sec rate_p99_ops_per_sec rate_max_ops_per_sec hits_per_sec
misses_per_sec throughput_kb_per_sec run_index source_line percentile latency_ms value_num step
keys target_keys value_size_bytes used_memory_bytes used_memory_rss_bytes used_memory_peak_bytes
process_rss_bytes container_memory_bytes elapsed_s`.split(/\s+/);

const METRICS = SCHEMA.filter((c) => /_per_sec$|_ms$/.test(c));

/** Columns the analyses write (compare, delta, scaling, crossovers, spectra, memory). */
const DERIVED = [
  // each metric's statistics, alone and on each side of a comparison
  ...METRICS.flatMap((m) =>
    ["", "baseline_", "candidate_"].flatMap((side) =>
      ["median", "min", "max"].map((stat) => `${side}${stat}_${m}`)
    ).concat([`from_${m}`, `to_${m}`])
  ),
  ..."baseline_n candidate_n ratio ratio_ci_low ratio_ci_high verdict direction also_differs"
    .split(" "),
  ..."from to from_n to_n throughput_factor n crossover_x points nines count".split(" "),
  ...["avg", "p50", "p95", "p99"].map((l) => `${l}_latency_change_pct`),
  ..."bytes_per_key intercept_bytes r_squared payload_bytes_per_key overhead_bytes_per_key"
    .split(" "),
  ..."min_keys max_keys size first_line raw_sha256 run_ids sources".split(" "),
  ...["redis", "valkey", "dragonfly"].flatMap((a) =>
    ["keys", "container_mib", "malloc_mib", "rss_mib"].map((v) => `${a}_${v}`)
  ),
  ...["container", "malloc", "rss"].map((v) => `${v}_difference_pct`),
  // a table pivoted by mode (the redis-benchmark-modes notebook)
  ...["default", "-q", "-q -c 100", "--csv -c 100"].map((m) => `${m} ops_per_sec`),
];

const direction = (m: string) => {
  try {
    return metricDirection(m);
  } catch (e) {
    assert.match((e as Error).message, /^invalid metric: /);
    return "throws";
  }
};

Deno.test("units: the same answers as the five rule lists they replace", async (t) => {
  const all = [...new Set([...SCHEMA, ...DERIVED])];
  await t.step("metricDirection()", () => {
    for (const c of all) assert.equal(direction(c), OLD.direction(c), c);
  });
  await t.step("decimalsFor(), except that whole bytes now print as whole numbers", () => {
    for (const c of all) {
      const want = /_bytes$/.test(c) && !/per_key/.test(c) ? 0 : OLD.decimals(c);
      assert.equal(decimalsFor(c), want, c);
    }
    // issue 10: a memory-per-key intercept printed as 59554057.1318
    assert.equal(decimalsFor("intercept_bytes"), 0);
  });
  await t.step("headerFor()", () => {
    for (const c of all) assert.equal(headerFor(c), OLD.header(c), c);
  });
  await t.step("metricTitle() of every metric a chart can be asked for", () => {
    for (const c of SCHEMA) assert.equal(metricTitle(c), OLD.title(c), c);
  });
  await t.step("isFractional() (rowsFrame's Int64 vs Float64)", () => {
    for (const c of all) assert.equal(isFractional(c), OLD.fractional(c), c);
  });
});

Deno.test("directionOf() is null where metricDirection() throws", () => {
  assert.equal(directionOf("clients"), null);
  assert.throws(() => metricDirection("clients"), /invalid metric: clients/);
  assert.equal(directionOf("used_memory_bytes"), "lower");
  assert.equal(directionOf("ops_per_sec"), "higher");
});
