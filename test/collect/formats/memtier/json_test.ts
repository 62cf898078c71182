import assert from "node:assert/strict";
import {
  decodeMemtierHistogram,
  memtierPercentileMs,
  parseMemtierJson,
  parseMemtierReport,
} from "../../../../src/collect/formats/memtier/mod.ts";
import { readJson } from "../../../../src/collect/formats/memtier/json/reader.ts";
import { ParseError } from "../../../../src/errors.ts";

import {
  MEMTIER_RUNS,
  MEMTIER_SIGINT_RUN,
  readTestdata as read,
} from "../../../_support/testdata.ts";

/** Every memtier JSON fixture with its stdout, complete ones only (SIGINT's JSON is whole). */
const RUNS = [...MEMTIER_RUNS, MEMTIER_SIGINT_RUN];

Deno.test("parseMemtierJson() reads the numbers memtier prints", async (t) => {
  for (const run of RUNS) {
    await t.step(`${run}: ops/sec and percentiles per type equal the stdout table`, () => {
      const json = parseMemtierJson(read(run + ".json"), { file: run + ".json" });
      const report = parseMemtierReport(read(run + ".txt"), { file: run + ".txt" });
      assert.ok(json.complete);
      assert.equal(json.blocks.length, report.blocks.length);
      json.blocks.forEach((block, i) => {
        const table = report.blocks[i];
        assert.equal(block.title, table.title);
        assert.ok(block.complete);
        assert.deepEqual(block.types.map((x) => x.test), table.rows.map((x) => x.test));
        block.types.forEach((type, j) => {
          const row = table.rows[j];
          assert.equal(type.opsPerSec, row.opsPerSec, `${block.title} ${type.test} ops/sec`);
          assert.deepEqual(type.percentiles, row.percentiles, `${block.title} ${type.test}`);
          for (const k of ["p50LatencyMs", "p99LatencyMs", "p999LatencyMs"] as const) {
            assert.equal(type[k], row[k], `${block.title} ${type.test} ${k}`);
          }
          // the derived TOTALS mean is the table's (an HdrHistogram mean, printed %.5f)
          if (type.test === "TOTALS") {
            assert.ok(type.derived.includes("avgLatencyMs"));
            assert.equal(type.avgLatencyMs!.toFixed(5), row.avgLatencyMs!.toFixed(5), block.title);
          }
        });
        assert.deepEqual(
          block.distributions.map((d) => [d.test, d.latencyMs, d.percent]),
          table.distributions.map((d) => [d.test, d.latencyMs, d.percent]),
        );
      });
    });
    await t.step(`${run}: every value equals JSON.parse's`, () => {
      const naive = JSON.parse(read(run + ".json"));
      const json = parseMemtierJson(read(run + ".json"));
      assert.equal(json.configuration?.threads, naive.configuration.threads);
      assert.equal(json.configuration?.clients, naive.configuration.clients);
      assert.equal(json.runInformation?.threads, naive["run information"].Threads);
      for (const block of json.blocks) {
        for (const type of block.types) {
          const raw = naive[block.title][type.label];
          assert.equal(type.count, raw.Count);
          assert.equal(type.kbPerSec, raw["KB/sec"]);
          assert.equal(type.hitsPerSec, raw["Hits/sec"]);
          assert.equal(type.timeSeries.length, Object.keys(raw["Time-Serie"]).length);
          for (const s of type.timeSeries) {
            assert.equal(s.count, raw["Time-Serie"][s.second].Count);
            assert.equal(s.avgLatencyMs, raw["Time-Serie"][s.second]["Average Latency"] ?? null);
          }
          if (!type.derived.includes("histogram")) {
            assert.equal(
              type.histogram,
              raw["Percentile Latencies"]["Histogram log format"]["Compressed Histogram"],
            );
          }
          if (type.test !== "TOTALS" && type.count) {
            assert.equal(type.avgLatencyMs, raw["Average Latency"]);
            assert.equal(type.maxLatencyMs, raw["Max Latency"]);
          }
        }
      }
    });
  }
});

Deno.test("parseMemtierJson() derives what memtier prints as placeholders", async (t) => {
  await t.step("TOTALS latency of a single run is its histogram's mean", () => {
    const json = parseMemtierJson(
      read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratelimit500-test10s.json"),
    );
    const totals = json.blocks[0].types.at(-1)!;
    assert.equal(totals.avgLatencyMs, decodeMemtierHistogram(totals.histogram!).mean / 1000);
    assert.equal(totals.avgLatencyMs!.toFixed(5), "0.43731"); // the stdout table
    assert.deepEqual(json.blocks[0].warnings, []);
  });
  await t.step("without a histogram, Accumulated Latency / Count", () => {
    const text =
      '{"ALL STATS": {"Totals": {"Count": 4, "Latency": 0.000, "Average Latency": 0.000,' +
      ' "Accumulated Latency": 2}}}';
    assert.equal(parseMemtierJson(text).blocks[0].types[0].avgLatencyMs, 0.5);
  });
  await t.step("TOTALS of the aggregated block comes from the SET and GET histograms", () => {
    const file = "corpus/memtier_2.3.0_redis-7.0.15_t2c10-runcount2-test5s.json";
    const avg = parseMemtierJson(read(file)).blocks.at(-1)!;
    assert.equal(avg.aggregate, "average");
    assert.equal(avg.runCount, 2);
    assert.equal(avg.runtime, null);
    const [set, get, , totals] = avg.types;
    assert.equal(totals.accumulatedLatencyMs, 18433 + 181159);
    assert.equal(totals.avgLatencyMs!.toFixed(5), "0.51673"); // the stdout table
    assert.equal(totals.kbPerSecRx, Math.round((set.kbPerSecRx! + get.kbPerSecRx!) * 100) / 100);
    assert.equal(decodeMemtierHistogram(totals.histogram!).totalCount, 386637);
    // as printed by the stdout table of that block
    assert.deepEqual([totals.p50LatencyMs, totals.p99LatencyMs, totals.p999LatencyMs], [
      0.343,
      4.047,
      8.703,
    ]);
    assert.match(
      avg.warnings.join("\n"),
      /TOTALS of "AGGREGATED AVERAGE RESULTS".*histograms added/,
    );
  });
  await t.step("a 300-digit KB/sec TX (uninitialized in memtier 2.3.0) is replaced", () => {
    const json = parseMemtierJson(read("real/memtier-2.3.0_redis-7.0.15_runcount3-allruns.json"));
    const totals = json.blocks.at(-1)!.types.at(-1)!;
    assert.ok(totals.kbPerSecTx! < 1e6);
    assert.ok(totals.derived.includes("kbPerSecTx"));
  });
  await t.step("a type with no requests has no latencies", () => {
    const json = parseMemtierJson(
      read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s.json"),
    );
    const wait = json.blocks[0].types.find((x) => x.test === "WAIT")!;
    assert.equal(wait.count, 0);
    assert.deepEqual([wait.avgLatencyMs, wait.p50LatencyMs, wait.percentiles], [null, null, []]);
  });
});

Deno.test("parseMemtierJson() reads run counts, rate limits, Valkey and arbitrary commands", async (t) => {
  await t.step(
    "--run-count 3 --print-all-runs: RUN #1..3, BEST and WORST named by their run",
    () => {
      const json = parseMemtierJson(read("real/memtier-2.3.0_redis-7.0.15_runcount3-allruns.json"));
      assert.deepEqual(
        json.blocks.map((b) => [b.aggregate, b.runIndex]),
        [[null, 1], [null, 2], [null, 3], ["best", 1], ["worst", 1], ["average", null]],
      );
      assert.equal(json.configuration?.printAllRuns, true);
    },
  );
  await t.step("BEST/WORST without --print-all-runs: run unknown", () => {
    const json = parseMemtierJson(
      read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-runcount2-test5s.json"),
    );
    assert.deepEqual(json.blocks.map((b) => b.runIndex), [null, null, null]);
  });
  await t.step("--rate-limiting: per connection, in the configuration", () => {
    const c = parseMemtierJson(
      read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratelimit500-test10s.json"),
    )
      .configuration!;
    assert.deepEqual([c.rateLimitPerConnection, c.clients, c.threads, c.testTimeS], [
      500,
      10,
      2,
      10,
    ]);
  });
  await t.step("--print-percentiles 50,90,99,99.99", () => {
    const json = parseMemtierJson(read("real/memtier-2.3.0_redis-7.0.15_ratelimit100-pct4.json"));
    assert.deepEqual(json.blocks[0].types[0].percentiles.map((p) => p.percentile), [
      50,
      90,
      99,
      99.99,
    ]);
  });
  await t.step("--requests against Valkey", () => {
    const json = parseMemtierJson(
      read("real/memtier-2.3.0_valkey-8.0.1_t2c5-pipeline4-requests2000.json"),
    );
    assert.deepEqual([json.configuration?.requests, json.configuration?.testTimeS], [2000, null]);
    assert.equal(json.runInformation?.requestsPerClient, 2000);
    assert.equal(json.blocks[0].types.at(-1)!.count, 2000 * 5 * 2);
  });
  await t.step("--command: SET and INCR blocks", () => {
    const json = parseMemtierJson(read("real/memtier-2.3.0_valkey-8.0.1_command-set-incr.json"));
    assert.deepEqual(json.blocks[0].types.map((x) => [x.label, x.test]), [
      ["Sets", "SET"],
      ["Incrs", "INCR"],
      ["Totals", "TOTALS"],
    ]);
    assert.deepEqual([...new Set(json.blocks[0].distributions.map((d) => d.test))], [
      "SET",
      "INCR",
    ]);
  });
  await t.step("SIGINT: complete, Runtime says interrupted", () => {
    const json = parseMemtierJson(read("real/memtier-2.3.0_redis-7.0.15_sigint-at-1.5s.json"));
    assert.equal(json.blocks[0].runtime?.interrupted, true);
    assert.ok(json.complete);
  });
});

Deno.test("parseMemtierJson() reads a cut file as far as it goes", async (t) => {
  await t.step("SIGKILL: configuration only, incomplete", () => {
    const json = parseMemtierJson(read("real/memtier-2.3.0_redis-7.0.15_sigkill-at-1.5s.json"));
    assert.equal(json.complete, false);
    assert.equal(json.configuration?.port, 16501);
    assert.equal(json.configuration?.printAllRuns, false);
    assert.deepEqual(json.blocks, []);
    assert.match(json.warnings[0], /cut short/);
  });
  await t.step("every cut of a real file parses; blocks read before the cut are kept", () => {
    const text = read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-runcount2-test5s.json");
    const whole = parseMemtierJson(text);
    for (let at = 1; at < text.length; at += 997) {
      const cut = parseMemtierJson(text.slice(0, at));
      assert.equal(cut.complete, false);
      const done = cut.blocks.filter((b) => b.complete);
      done.forEach((b, i) => assert.deepEqual(b, whole.blocks[i]));
      assert.ok(cut.blocks.length - done.length <= 1);
    }
  });
  await t.step("empty text", () => {
    assert.deepEqual(parseMemtierJson("").blocks, []);
    assert.equal(parseMemtierJson("").complete, false);
  });
});

Deno.test("parseMemtierJson() rejects what is not memtier JSON", () => {
  let e: unknown;
  try {
    parseMemtierJson('{\n\t"a": 1\n\t,"b" 2}', { file: "x.json" });
  } catch (err) {
    e = err;
  }
  assert.ok(e instanceof ParseError);
  assert.deepEqual([e.file, e.line, e.column], ["x.json", 3, 7]);
  assert.throws(() => parseMemtierJson('"text"'), /expected a memtier JSON object/);
});

Deno.test("parseMemtierJson() recovers percentile keys memtier cuts to six characters", () => {
  // --print-percentiles 99.99,99.999 prints both as "p99.99"
  const json = parseMemtierJson(
    read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s.json"),
  );
  const gets = json.blocks[0].types[1];
  const h = decodeMemtierHistogram(gets.histogram!);
  const [a, b] = [memtierPercentileMs(h, 99.99), memtierPercentileMs(h, 99.999)];
  assert.notEqual(a, b, "the fixture must tell the two apart");
  const text = `{"ALL STATS": {"Gets": {"Count": ${gets.count}, "Percentile Latencies": {` +
    `"p99.99": ${a}, "p99.99": ${b}, "Histogram log format": {"Compressed Histogram": "${gets.histogram}"}}}}}`;
  const fixed = parseMemtierJson(text).blocks[0];
  assert.deepEqual(fixed.types[0].percentiles, [
    { percentile: 99.99, latencyMs: a },
    { percentile: 99.999, latencyMs: b },
  ]);
  assert.match(fixed.warnings[0], /p99\.99 repeats/);
});

Deno.test("readJson() keeps positions, duplicates and cut containers", () => {
  const doc = readJson('{\n\t"a": [1, {"b": tru');
  assert.equal(doc.complete, false);
  const root = doc.root!;
  assert.ok(root.kind === "object" && !root.closed);
  const a = root.entries[0];
  assert.deepEqual([a.key, a.line, a.column], ["a", 2, 2]);
  assert.ok(a.value?.kind === "array" && a.value.items.length === 2 && !a.value.closed);
  assert.throws(() => readJson("{} x"), /1:4: expected the end of the JSON text/);
  assert.throws(() => readJson('{"a": "x\ny"}'), /expected the end of the string/);
});
