import assert from "node:assert/strict";
import {
  type MemtierHdrLog,
  memtierRows,
  parseHdrFileName,
  parseHdrIntervalLog,
  parseHdrPercentiles,
  parseMemtierJson,
  parseMemtierProgress,
  parseMemtierReport,
} from "../../../../src/collect/mod.ts";
import { tableFrame } from "../../../../src/frame.ts";

import {
  MEMTIER_RUNS as RUNS,
  MEMTIER_SIGINT_RUN,
  MEMTIER_SIGKILL_RUN,
  readTestdata as read,
  TESTDATA as DATA,
} from "../../../_support/testdata.ts";

/** The interval logs next to a fixture. */
function hdrLogs(run: string): MemtierHdrLog[] {
  const [dir, base] = run.split("/");
  return [...Deno.readDirSync(DATA + dir)]
    .map((e) => e.name)
    .filter((n) => n.startsWith(base + "_hdr_") && n.endsWith(".hgrm"))
    .sort()
    .map((file) => ({
      file,
      name: parseHdrFileName(file)!,
      log: parseHdrIntervalLog(read(`${dir}/${file}`), { file }),
    }));
}

function rowsOf(run: string) {
  return memtierRows({
    json: parseMemtierJson(read(run + ".json")),
    jsonFile: "out.json",
    report: parseMemtierReport(read(run + ".txt")),
    stderr: parseMemtierProgress(read(run + ".stderr.txt")),
    hdr: hdrLogs(run),
  }, "r1");
}

Deno.test("memtierRows() gives the numbers memtier prints", async (t) => {
  for (const run of RUNS) {
    await t.step(
      `${run}: ops/sec, p50, p99, p99.9 and Totals latency equal the stdout table`,
      () => {
        const rows = rowsOf(run);
        const report = parseMemtierReport(read(run + ".txt"));
        const naive = JSON.parse(read(run + ".json"));
        assert.equal(rows.source, "json");
        assert.ok(rows.complete, rows.reason ?? "");
        // every stdout row with requests (or Totals) has its results row, same numbers
        const printed = report.blocks.flatMap((b) =>
          b.rows.filter((r) => r.test === "TOTALS" || r.opsPerSec).map((r) => ({ b, r }))
        );
        assert.equal(rows.results.length, printed.length);
        printed.forEach(({ b, r }, i) => {
          const row = rows.results[i];
          const what = `${b.title} ${r.test}`;
          assert.equal(row.test_index, i);
          assert.equal(row.test, r.test, what);
          assert.equal(row.test_title, r.label, what);
          assert.equal(row.aggregate, b.aggregate, what);
          // memtier's printed rate: in ops_per_sec, or beside the one kvlab justified instead
          assert.equal(row.tool_ops_per_sec ?? row.ops_per_sec, r.opsPerSec, what);
          if (row.tool_ops_per_sec == null) {
            assert.equal(row.hits_per_sec, r.hitsPerSec, what);
            assert.equal(row.throughput_kb_per_sec, r.kbPerSec, what);
          }
          assert.equal(row.p50_latency_ms, r.p50LatencyMs, what);
          assert.equal(row.p99_latency_ms, r.p99LatencyMs, what);
          assert.equal(row.p999_latency_ms, r.p999LatencyMs, what);
          if (r.test === "TOTALS") {
            // derived: the histogram mean, as the table prints it
            assert.equal(row.avg_latency_ms!.toFixed(5), r.avgLatencyMs!.toFixed(5), what);
          } else {
            // a type's mean as the JSON prints it (its own rounding, not the table's)
            assert.equal(row.avg_latency_ms, naive[b.title][r.label]["Average Latency"], what);
          }
          assert.equal(row.complete, true);
        });
        // the typed rows are valid table rows
        for (const table of ["results", "latency_distribution", "time_series", "hdr_histograms"]) {
          const list = rows[table as "results"];
          assert.equal(tableFrame(table as "results", list).height, list.length);
        }
      },
    );
    await t.step(`${run}: run parameters, requests and duration from the JSON`, () => {
      const rows = rowsOf(run);
      const naive = JSON.parse(read(run + ".json"));
      const c = naive.configuration;
      for (const row of rows.results) {
        assert.equal(row.clients, c.clients * c.threads);
        assert.equal(row.threads, c.threads);
        assert.equal(row.pipeline, c.pipeline);
        assert.equal(row.data_size_bytes, c.data_size);
        assert.equal(row.keyspace, c.key_maximum - c.key_minimum + 1);
      }
      const first = naive[Object.keys(naive).find((k) => /STATS|RUN/.test(k))!];
      const row0 = rows.results[0];
      assert.equal(row0.requests, first[row0.test_title].Count);
      assert.equal(row0.tool_duration_s ?? row0.duration_s, first.Runtime["Total duration"] / 1000);
      const totals = rows.results.filter((r) => r.test === "TOTALS");
      assert.ok(
        totals.every((r) =>
          r.requested_ops_per_sec === (c.rate_limit ? c.rate_limit * c.clients * c.threads : null)
        ),
      );
    });
    await t.step(`${run}: distributions, seconds and histograms join their results row`, () => {
      const rows = rowsOf(run);
      const json = parseMemtierJson(read(run + ".json"));
      const byIndex = new Map(rows.results.map((r) => [r.test_index, r]));
      const joined = (r: { test_index?: number | null; test: string }) =>
        r.test_index != null && byIndex.get(r.test_index)!.test === r.test;
      assert.ok(rows.latency_distribution.length > 0);
      assert.ok(rows.latency_distribution.every(joined));
      assert.ok(rows.time_series.every(joined));
      const seconds = json.blocks.flatMap((b) =>
        b.types.filter((x) => x.test === "TOTALS" || x.count).flatMap((x) => x.timeSeries)
      );
      assert.equal(rows.time_series.length, seconds.length);
      assert.ok(rows.time_series.every((s) => s.source === "json"));
      assert.deepEqual(
        rows.time_series.map((s) => s.count),
        seconds.map((s) => s.count),
      );
      // each JSON histogram once, then each interval log
      const fromJson = rows.hdr_histograms.filter((h) => h.source === "json");
      assert.ok(fromJson.every(joined));
      for (const h of fromJson) {
        assert.equal(h.total_count, byIndex.get(h.test_index!)!.requests, `${h.test}`);
      }
      const hgrm = rows.hdr_histograms.filter((h) => h.source === "hgrm");
      assert.equal(hgrm.length, hdrLogs(run).length);
      for (const h of hgrm) {
        const pct = parseHdrPercentiles(
          read(`${run.split("/")[0]}/${h.source_file!.replace(/\.hgrm$/, ".txt")}`),
        );
        assert.equal(h.total_count, pct.totalCount, h.source_file!);
        // without --print-all-runs only BEST and WORST name their run (when they can)
        if (rows.results.some((r) => r.run_index === h.run_index)) {
          assert.ok(joined(h), h.source_file!);
          assert.equal(byIndex.get(h.test_index!)!.run_index, h.run_index);
        } else assert.equal(h.test_index, null, h.source_file!);
      }
    });
  }
});

Deno.test("memtierRows() stores the rate memtier's own per-second series justifies", () => {
  // a 10 s run whose JSON says Total duration 9003 ms: its Totals (11,072.80 ops/s) divide
  // 99,683 requests by it, while its seconds count 9,954–10,000 requests each
  const run = "corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratelimit500-test10s";
  const rows = rowsOf(run);
  const totals = rows.results.find((r) => r.test === "TOTALS")!;
  assert.equal(totals.tool_ops_per_sec, 11072.8);
  assert.equal(totals.tool_duration_s, 9.003);
  const series = rows.time_series.filter((s) => s.test_index === totals.test_index);
  const full = series.slice(0, -1).reduce((a, s) => a + s.count!, 0) / (series.length - 1);
  assert.equal(full, 9966.3);
  assert.ok(Math.abs(totals.ops_per_sec! - full) < 1e-6, `${totals.ops_per_sec}`);
  assert.ok(Math.abs(totals.duration_s! - 99683 / 9966.3) < 1e-9);
  // every type of the block on the same duration: SET and GET add up to Totals
  const types = rows.results.filter((r) => r.test !== "TOTALS");
  const sum = types.reduce((a, r) => a + r.ops_per_sec!, 0);
  assert.ok(Math.abs(sum - totals.ops_per_sec!) < 0.05, `${sum}`);
  assert.ok(types.every((r) => r.tool_ops_per_sec !== null && r.tool_duration_s === 9.003));
  const warning = rows.warnings.find((w) => /per-second series/.test(w));
  assert.equal(
    warning,
    "ALL STATS: memtier's Totals say 11072.80 ops/s over 9.003 s (Total duration), but its " +
      "per-second series says 9966.30 ops/s (99663 requests in 10 full seconds): stored " +
      "9966.30 ops/s over 10.002 s; memtier's numbers are kept in tool_ops_per_sec and " +
      "tool_duration_s",
  );
  // a run whose duration is right keeps memtier's numbers as they are, with no warning
  const right = rowsOf("corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s");
  assert.ok(right.results.every((r) => r.tool_ops_per_sec == null));
  assert.ok(!right.warnings.some((w) => /per-second series/.test(w)));
});

Deno.test("memtierRows() on the aggregated block of --run-count derives Totals and says so", () => {
  const rows = rowsOf("real/memtier-2.3.0_redis-7.0.15_runcount3-allruns");
  const avg = rows.results.filter((r) => r.aggregate === "average");
  assert.deepEqual(avg.map((r) => r.test), ["SET", "GET", "TOTALS"]);
  assert.ok(avg.every((r) => r.run_index === null));
  assert.ok(rows.warnings.some((w) => /^AGGREGATED AVERAGE RESULTS \(3 runs\): .*derived/.test(w)));
  const best = rows.results.find((r) => r.aggregate === "best")!;
  assert.ok(best.run_index! >= 1 && best.run_index! <= 3);
  assert.deepEqual(
    rows.results.filter((r) => r.aggregate === null && r.test === "TOTALS").map((r) => r.run_index),
    [1, 2, 3],
  );
});

Deno.test("memtierRows() on runs memtier did not finish", async (t) => {
  await t.step("SIGINT: the interrupted run's numbers are kept, the run is incomplete", () => {
    const rows = rowsOf(MEMTIER_SIGINT_RUN);
    assert.equal(rows.source, "json");
    assert.equal(rows.complete, false);
    assert.match(rows.reason!, /^interrupted/);
    assert.ok(rows.results.some((r) => r.test === "TOTALS" && r.ops_per_sec! > 0));
  });
  await t.step("SIGKILL: one incomplete TOTALS row with the last progress rate", () => {
    const run = MEMTIER_SIGKILL_RUN;
    const stderr = parseMemtierProgress(read(run + ".stderr.txt"));
    const rows = memtierRows({
      json: parseMemtierJson(read(run + ".json")),
      report: parseMemtierReport(read(run + ".txt")),
      stderr,
    }, "r1");
    assert.equal(rows.source, "progress");
    assert.equal(rows.complete, false);
    assert.equal(rows.reason, "killed before memtier printed its results");
    assert.equal(rows.results.length, 1);
    const [row] = rows.results;
    assert.equal(row.test, "TOTALS");
    assert.equal(row.complete, false);
    assert.equal(row.ops_per_sec, null);
    assert.equal(row.last_progress_ops_per_sec, stderr.progress.at(-1)!.opsPerSec);
    assert.equal(row.clients, 10); // 2 threads × 5 connections, from the cut JSON's configuration
    assert.deepEqual(
      rows.time_series.map((s) => [s.source, s.test_index, s.ops_per_sec]),
      stderr.progress.map((p) => ["progress", 0, p.opsPerSec]),
    );
  });
  await t.step("nothing at all: no rows, not complete", () => {
    const rows = memtierRows({ report: parseMemtierReport("") }, "r1");
    assert.equal(rows.source, "none");
    assert.equal(rows.results.length, 0);
    assert.equal(rows.reason, "no result in the output");
  });
});

Deno.test("memtierRows() from stdout alone takes the settings from the command line", () => {
  const run = "corpus/memtier_2.3.0_redis-7.0.15_preload-allkeys-100k";
  const rows = memtierRows({
    report: parseMemtierReport(read(run + ".txt")),
    settings: {
      threads: 8, // stdout's run information wins
      pipeline: 1,
      dataSizeBytes: 256,
      keyMinimum: 1,
      keyMaximum: 100000,
    },
  }, "r1");
  assert.equal(rows.source, "stdout");
  assert.ok(rows.complete);
  assert.deepEqual(rows.results.map((r) => r.test), ["SET", "TOTALS"]);
  assert.ok(rows.results.every((r) => r.clients === 20 && r.threads === 2));
  assert.ok(rows.results.every((r) => r.keyspace === 100000 && r.data_size_bytes === 256));
  assert.ok(rows.results.every((r) => r.requests === null && r.requested_ops_per_sec === null));
  assert.equal(rows.time_series.length, 0);
});
