/**
 * Hostile and unusual redis-benchmark / valkey-benchmark outputs (issue 11, D8–D10, and the
 * formats read from the tools' sources). Inputs are in `test/testdata/hostile-parser/`.
 */
import assert from "node:assert/strict";
import { parseBenchmarkArgs } from "../../../../src/collect/formats/redis_benchmark/flags.ts";
import {
  MAX_OPS_PER_SEC,
  parseRedisBenchmark,
  type RedisBenchmarkRun,
} from "../../../../src/collect/formats/redis_benchmark/parse.ts";

import { readTestdata as read, TESTDATA as DATA } from "../../../_support/testdata.ts";
const hostile = (name: string) => parseRedisBenchmark(read(`hostile-parser/${name}`));

/** The warnings that report an impossible value, as `line: message`. */
function impossible(run: RedisBenchmarkRun): string[] {
  return run.warnings.filter((w) => w.message.startsWith("impossible value")).map((w) =>
    `${w.line}: ${w.message}`
  );
}

Deno.test("parseRedisBenchmark() never keeps an impossible number as a result (D8)", async (t) => {
  await t.step("a negative p50 in a 6.2+ summary table", () => {
    const run = hostile("valkey-benchmark-8.0.1_full-negative-p50.txt");
    assert.equal(run.complete, false);
    const [set, get] = run.tests;
    assert.equal(set.complete, false);
    assert.equal(set.p50LatencyMs, null);
    assert.equal(set.p99LatencyMs, 0.991); // the believable values stay, the test is no result
    assert.equal(get.complete, true);
    assert.deepEqual(impossible(run), [
      "54: impossible value in SET: p50LatencyMs = -0.559 (negative); not kept",
    ]);
    assert.match(run.warnings[0].text, /-0\.559/);
  });

  await t.step("a negative throughput and average: read, then rejected, not skipped", () => {
    const run = hostile("valkey-benchmark-8.0.1_full-negative-throughput.txt");
    assert.equal(run.complete, false);
    const get = run.tests[1];
    assert.deepEqual([get.test, get.complete, get.opsPerSec, get.avgLatencyMs], [
      "GET",
      false,
      null,
      null,
    ]);
    assert.deepEqual(impossible(run), [
      "99: impossible value in GET: opsPerSec = -5000 (negative); not kept",
      "102: impossible value in GET: avgLatencyMs = -5000 (negative); not kept",
    ]);
    assert.ok(!run.warnings.some((w) => w.message === "unrecognized line"));
  });

  await t.step("--csv rows with 1e+44, -5 and -5000 requests per second", () => {
    const run = hostile("redis-benchmark-7.0.15_csv-impossible.csv");
    assert.equal(run.complete, false);
    assert.deepEqual(run.tests.map((r) => [r.test, r.complete, r.opsPerSec]), [
      ["SET", false, null],
      ["GET", false, null],
      ["INCR", false, null],
      ["LPUSH", true, 79681.28],
    ]);
    assert.equal(run.tests[2].avgLatencyMs, null);
    assert.deepEqual(impossible(run), [
      "2: impossible value in SET: opsPerSec = 1e+44 (above 1000000000 operations per second); not kept",
      "3: impossible value in GET: opsPerSec = -5 (negative); not kept",
      "4: impossible value in INCR: opsPerSec = -5000 (negative); not kept",
      "4: impossible value in INCR: avgLatencyMs = -5000 (negative); not kept",
    ]);
  });

  await t.step("≤6.0 --csv rows with -5 and inf: kept as tests that are not results", () => {
    const run = hostile("redis-benchmark-6.0.16_csv-legacy-impossible.csv");
    assert.equal(run.complete, false);
    assert.deepEqual(run.tests.map((r) => [r.test, r.complete, r.opsPerSec]), [
      ["SET", true, 41562.76],
      ["GET", false, null],
      ["INCR", false, null],
    ]);
    assert.deepEqual(impossible(run), [
      "2: impossible value in GET: opsPerSec = -5 (negative); not kept",
      "3: impossible value in INCR: opsPerSec = Infinity (not a finite number); not kept",
    ]);
  });

  await t.step("-q lines: nan, inf, negative, above the bound; the bound itself passes", () => {
    const q = (rps: string, p50 = "0.231") =>
      parseRedisBenchmark(`SET: ${rps} requests per second, p50=${p50} msec\n`);
    for (
      const [rps, p50] of [["nan", "nan"], ["inf", "0.231"], ["-1.00", "0.231"], [
        "52219.32",
        "-0.5",
      ], ["1000000000.01", "0.231"]]
    ) {
      const run = q(rps, p50);
      assert.equal(run.complete, false, rps);
      assert.equal(run.tests[0].complete, false, rps);
      assert.equal(impossible(run).length, rps === p50 ? 2 : 1, `${rps} ${p50}`);
    }
    const top = q(MAX_OPS_PER_SEC.toFixed(2));
    assert.equal(top.complete, true);
    assert.equal(top.tests[0].opsPerSec, MAX_OPS_PER_SEC);
  });

  /** A fixture with one line edited: its first test (SET) is not complete; the run. */
  const incompleteAfter = (path: string, from: string, to: string) => {
    const text = read(path);
    assert.ok(text.includes(from), `${path} holds ${from}`);
    const run = parseRedisBenchmark(text.replace(from, to));
    assert.equal(run.tests[0].complete, false);
    return { run, set: run.tests[0] };
  };

  await t.step("percentiles out of order: the whole table is dropped", () => {
    const { run, set } = incompleteAfter(
      "hostile-parser/valkey-benchmark-8.0.1_full-negative-p50.txt",
      "0.466     0.080     -0.559     0.751     0.991     2.287",
      "0.466     0.080     1.559     0.751     0.991     2.287",
    );
    assert.deepEqual(
      [set.avgLatencyMs, set.minLatencyMs, set.p50LatencyMs, set.p95LatencyMs, set.maxLatencyMs],
      [null, null, null, null, null],
    );
    assert.equal(set.opsPerSec, 79365.08);
    assert.deepEqual(impossible(run), [
      "54: impossible value in SET: p50LatencyMs = 1.559 is above p95LatencyMs = 0.751 " +
      "(statistics out of order); not kept",
    ]);
  });

  await t.step("a cumulative distribution going down: its block is dropped", () => {
    const { run, set } = incompleteAfter(
      "corpus/valkey-benchmark_8.0.1_valkey-8.0.1_full.txt",
      "75.000% <= 0.567 milliseconds (cumulative count 15052)",
      "75.000% <= 0.067 milliseconds (cumulative count 15052)",
    );
    assert.equal(set.p99LatencyMs, 0.991);
    assert.ok(set.distribution.every((d) => d.distribution === "cumulative"));
    assert.ok(set.distribution.length > 0);
    assert.ok(
      impossible(run).some((w) =>
        /^13: .*percentile distribution row \(a cumulative distribution going down\)/.test(w)
      ),
      impossible(run).join("\n"),
    );
  });

  await t.step("every real output in test/testdata parses with no impossible value", () => {
    for (const dir of ["corpus", "real", "handmade"]) {
      for (const e of Deno.readDirSync(DATA + dir)) {
        if (!/benchmark-|benchmark_/.test(e.name) || /memtier/.test(e.name)) continue;
        const text = read(`${dir}/${e.name}`);
        if (text.trim() === "") continue;
        assert.deepEqual(impossible(parseRedisBenchmark(text)), [], e.name);
      }
    }
  });
});

Deno.test("parseRedisBenchmark() reads nan in place of every number as no result (D9)", async (t) => {
  await t.step("a 6.2+ report of nan: two incomplete tests, no THROUGHPUT_SUMMARY", () => {
    const run = hostile("valkey-benchmark-8.0.1_full-all-nan.txt");
    assert.equal(run.format, "full");
    assert.equal(run.complete, false);
    assert.deepEqual(run.tests.map((r) => [r.test, r.complete, r.opsPerSec]), [
      ["SET", false, null],
      ["GET", false, null],
    ]);
    assert.ok(run.tests.every((r) => r.distribution.length === 0 && r.p99LatencyMs === null));
    assert.ok(
      impossible(run).includes(
        "51: impossible value in SET: opsPerSec = NaN (not a finite number); not kept",
      ),
    );
  });

  await t.step("a summary line outside a report is not a -q line", () => {
    const run = parseRedisBenchmark("  throughput summary: nan requests per second\n");
    assert.deepEqual(run.tests, []);
    assert.equal(run.complete, false);
    assert.equal(run.warnings[0].message, "report summary outside a report");
    const after = parseRedisBenchmark(
      "SET: 51020.41 requests per second, p50=0.503 msec\n" +
        "  throughput summary: 52219.32 requests per second\n",
    );
    assert.deepEqual(after.tests.map((r) => r.test), ["SET"]);
    assert.equal(after.complete, false);
  });
});

Deno.test("parseRedisBenchmark() keeps a test cut inside its live progress (D10)", async (t) => {
  await t.step("-q cut inside LPUSH's first progress piece", () => {
    const run = hostile("redis-benchmark-7.0.15_quiet-cut-in-progress.txt");
    assert.equal(run.complete, false);
    assert.deepEqual(
      run.tests.map((r) => [r.test, r.complete, r.opsPerSec, r.lastProgressOpsPerSec]),
      [
        ["SET", true, 51020.41, null],
        ["GET", true, 82644.62, null],
        ["LPUSH", false, null, 91715.8],
      ],
    );
    assert.equal(run.testCount, 3);
  });

  await t.step("cut before the overall rate: the rate of the previous piece stays", () => {
    const run = parseRedisBenchmark(
      "SET: 51020.41 requests per second, p50=0.503 msec\n" +
        " \rLPUSH: rps=50000.0 (overall: 50000.0) avg_msec=0.3 (overall: 0.3)\r   \r" +
        "LPUSH: rps=34713.1 (overall: 917",
    );
    assert.equal(run.complete, false);
    assert.deepEqual(run.tests.map((r) => [r.test, r.complete, r.lastProgressOpsPerSec]), [
      ["SET", true, null],
      ["LPUSH", false, 50000],
    ]);
    assert.deepEqual(run.warnings.map((w) => w.message), ["line cut off at end of output"]);
  });
});

Deno.test("parseRedisBenchmark() reads valkey-benchmark 9.0 progress (--warmup, --duration)", async (t) => {
  await t.step("progress ending in `N requests` / `N seconds`, and `Warming up ` pieces", () => {
    const run = hostile("valkey-benchmark-9.0.0_q-warmup1.txt");
    assert.equal(run.complete, true);
    assert.deepEqual(run.warnings, []);
    assert.equal(run.progressUpdates, 7);
    assert.deepEqual(run.tests.map((r) => [r.test, r.opsPerSec]), [["SET", 80772.51], [
      "GET",
      91157.7,
    ]]);
  });
  await t.step("stopped during a warm-up: the test keeps its name and last rate", () => {
    const run = hostile("valkey-benchmark-9.0.0_q-warmup1-cut-in-warmup.txt");
    assert.equal(run.complete, false);
    assert.deepEqual(run.tests.map((r) => [r.test, r.complete, r.lastProgressOpsPerSec]), [
      ["SET", true, null],
      ["GET", false, 90650.2],
    ]);
    const mid = parseRedisBenchmark("Warming up GET: rps=90312.0 (overall: 900");
    assert.deepEqual(mid.tests.map((r) => [r.test, r.complete]), [["GET", false]]);
  });
});

Deno.test("parseRedisBenchmark() reads the tools' error messages as a failed run", async (t) => {
  const messages = [
    "Unexpected error reply, exiting...",
    "All clients disconnected... aborting.",
    "Cluster node 127.0.0.1:30001 replied with error:",
    "Error from server 127.0.0.1:30002: CLUSTERDOWN The cluster is down",
    "Invalid cluster: 1 node(s).",
    "Invalid quoted string",
    "CLUSTER SLOTS ERROR: ERR This instance has cluster support disabled",
    "NOPERM User bench has no permissions to run the 'config|get' command",
  ];
  for (const text of messages) {
    await t.step(text, () => {
      const run = parseRedisBenchmark(`${text}\n`);
      assert.deepEqual(run.errors, [{ line: 1, text }]);
      assert.deepEqual(run.tests, []);
      assert.deepEqual(run.warnings, []);
      assert.equal(run.complete, false);
    });
  }
  await t.step("an error after a finished test leaves the run incomplete", () => {
    const run = parseRedisBenchmark(
      "SET: 51020.41 requests per second, p50=0.503 msec\n" +
        "Error from server 127.0.0.1:30002: MOVED 3999 127.0.0.1:30003\n",
    );
    assert.equal(run.tests[0].complete, true);
    assert.equal(run.errors.length, 1);
    assert.equal(run.complete, false);
  });
});

Deno.test("parseRedisBenchmark() reads the --cluster preamble and idle mode", async (t) => {
  await t.step("redis-benchmark: `Cluster has 3 master nodes:` and `Master N:` lines", () => {
    const run = hostile("redis-benchmark-7.0.15_cluster-q.txt");
    assert.deepEqual(run.warnings, []);
    assert.equal(run.complete, true);
    assert.deepEqual(run.tests.map((r) => [r.test, r.clusterNodes]), [["SET", 3], ["GET", 3]]);
  });
  await t.step("valkey-benchmark: `… primary nodes:` and `Node N(Primary):` lines", () => {
    const run = hostile("valkey-benchmark-9.0.0_cluster-csv.txt");
    assert.deepEqual(run.warnings, []);
    assert.equal(run.format, "csv");
    assert.deepEqual(run.tests.map((r) => [r.test, r.clusterNodes]), [["SET", 3], ["GET", 3]]);
  });
  await t.step("-I: `Creating N idle connections…` is tool output with no result", () => {
    const run = parseRedisBenchmark(
      "Creating 50 idle connections and waiting forever (Ctrl+C when done)\n" +
        "clients: 50\rclients: 50\r",
    );
    assert.deepEqual(run.warnings, []);
    assert.deepEqual(run.tests, []);
  });
});

Deno.test('parseRedisBenchmark() reads custom command titles holding `"` and `:`', async (t) => {
  await t.step("--csv: the tool prints quotes in the title undoubled", () => {
    const run = hostile("redis-benchmark-7.0.15_csv-quoted-title.csv");
    assert.equal(run.complete, true);
    assert.deepEqual(run.warnings, []);
    assert.deepEqual(run.tests.map((r) => [r.testTitle, r.opsPerSec, r.p99LatencyMs]), [
      ['SET k "v"', 81234, 0.703],
      ['GET "k"', 91157.7, 0.647],
    ]);
    const legacy = hostile("redis-benchmark-6.0.16_csv-quoted-title.csv");
    assert.equal(legacy.complete, true);
    assert.deepEqual(legacy.tests.map((r) => [r.testTitle, r.opsPerSec]), [['SET k "v"', 81234]]);
  });
  await t.step("≤6.0 progress of a title with `:`", () => {
    const run = hostile("redis-benchmark-6.0.16_q-colon-title.txt");
    assert.deepEqual(run.warnings, []);
    assert.equal(run.progressUpdates, 1);
    assert.deepEqual(run.tests.map((r) => [r.testTitle, r.complete, r.opsPerSec]), [
      ["SET key:__rand_int__ v", true, 70126.23],
    ]);
    const stopped = hostile("redis-benchmark-6.0.16_q-colon-title-sigint.txt");
    assert.equal(stopped.complete, false);
    assert.deepEqual(
      stopped.tests.map((r) => [r.testTitle, r.complete, r.lastProgressOpsPerSec]),
      [["SET key:__rand_int__ v", false, 68012.4]],
    );
  });
});

Deno.test("parseRedisBenchmark() does not read a custom command's payload as -d", async (t) => {
  const text = read("hostile-parser/redis-benchmark-7.0.15_full-custom-command.txt");
  await t.step("the printed 35 bytes is the encoded command: no data size, no warning", () => {
    const run = parseRedisBenchmark(text, {
      args: parseBenchmarkArgs(["-n", "20000", "-d", "256", "SET", "mykey", "myval"]),
    });
    assert.equal(run.complete, true);
    assert.deepEqual(run.warnings, []);
    assert.equal(run.tests[0].dataSizeBytes, null);
    assert.equal(parseRedisBenchmark(text).tests[0].dataSizeBytes, null);
    // -d sizes only a custom command's __data__
    const data = parseRedisBenchmark(
      "SET k __data__: 41000.00 requests per second, p50=0.3 msec\n",
      { args: parseBenchmarkArgs(["-q", "-d", "256", "SET", "k", "__data__"]) },
    );
    assert.equal(data.tests[0].dataSizeBytes, 256);
  });
});
