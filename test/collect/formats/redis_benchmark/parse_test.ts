import assert from "node:assert/strict";
import fc from "fast-check";
import {
  normalizeTestName,
  parseBenchmarkArgs,
  parseRedisBenchmark,
  type RedisBenchmarkRun,
} from "../../../../src/collect/mod.ts";
import { ParseError } from "../../../../src/errors.ts";

import { readTestdata as read, testdataFiles } from "../../../_support/testdata.ts";
import { latencySummary } from "../../../_support/redis_benchmark.ts";

/** Every `throughput summary` and summary-table row of a 6.2+ report, read naively. */
function naiveSummaries(text: string): { rps: number; values: number[] }[] {
  const out: { rps: number; values: number[] }[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = /throughput summary: ([\d.]+) requests per second/.exec(lines[i]);
    if (m) out.push({ rps: Number(m[1]), values: lines[i + 3].trim().split(/\s+/).map(Number) });
  }
  return out;
}

Deno.test("parseRedisBenchmark() reads the 6.2+ report of redis-benchmark 7.0.15 and valkey-benchmark 8.0.1", async (t) => {
  // every full report of the corpus (its .txt but -q's), and a real one
  const files = [
    ...testdataFiles(["corpus"], /-benchmark_.*\.txt$/).filter((p) => !p.endsWith("_quiet.txt")),
    "real/redis-benchmark-7.0.15_lrange100-full.txt",
  ];
  assert.ok(files.length >= 6, files.join());
  for (const f of files) {
    await t.step(`every summary number of ${f}`, () => {
      const text = read(f);
      const run = parseRedisBenchmark(text, { file: f });
      assert.equal(run.format, "full");
      assert.equal(run.complete, true);
      assert.deepEqual(run.warnings, []);
      const naive = naiveSummaries(text);
      assert.equal(run.tests.length, naive.length);
      run.tests.forEach((r, i) => {
        assert.equal(r.opsPerSec, naive[i].rps);
        assert.deepEqual(latencySummary(r), naive[i].values);
        assert.ok(r.complete);
      });
      // every distribution line became a row, in both blocks
      const distLines = text.split("\n").filter((l) =>
        / milliseconds \(cumulative count \d+\)/.test(l)
      ).length;
      assert.equal(run.tests.reduce((n, r) => n + r.distribution.length, 0), distLines);
    });
  }

  await t.step("header facts and the first test of the full output", () => {
    const run = parseRedisBenchmark(read("corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt"));
    const set = run.tests[0];
    assert.equal(set.test, "SET");
    assert.equal(set.requests, 20000);
    assert.equal(set.durationS, 0.38);
    assert.equal(set.clients, 50);
    assert.equal(set.dataSizeBytes, 3);
    assert.equal(set.keepAlive, true);
    assert.equal(set.hostConfigSave, "");
    assert.equal(set.hostConfigAppendonly, "no");
    assert.equal(set.threads, 1);
    assert.equal(set.opsPerSec, 52219.32);
    assert.equal(set.p99LatencyMs, 1.359);
    assert.equal(set.sourceLine, 1);
    assert.deepEqual(set.distribution[1], {
      distribution: "percentile",
      percentile: 50,
      latencyMs: 0.519,
      count: 10149,
      sourceLine: 12,
    });
    const cum = set.distribution.find((d) => d.distribution === "cumulative")!;
    assert.deepEqual(cum, {
      distribution: "cumulative",
      percentile: 0,
      latencyMs: 0.103,
      count: 0,
      sourceLine: 30,
    });
    assert.deepEqual(run.tests.map((r) => r.test), [
      "SET",
      "GET",
      "INCR",
      "LPUSH",
      "LPUSH_FOR_LRANGE",
      "LRANGE_100",
    ]);
    assert.equal(run.tests[5].testTitle, "LRANGE_100 (first 100 elements)");
  });

  await t.step("threads and payload from the header", () => {
    const th = parseRedisBenchmark(read("corpus/redis-benchmark_7.0.15_redis-7.0.15_threads2.txt"));
    assert.ok(th.tests.every((r) => r.threads === 2));
    const d = parseRedisBenchmark(
      read("corpus/redis-benchmark_7.0.15_redis-7.0.15_d256-r100000.txt"),
    );
    assert.ok(d.tests.every((r) => r.dataSizeBytes === 256));
    // -r and -P are not printed: null unless the command is known
    assert.ok(d.tests.every((r) => r.keyspace === null && r.pipeline === null));
    const withArgs = parseRedisBenchmark(
      read("corpus/redis-benchmark_7.0.15_redis-7.0.15_d256-r100000.txt"),
      {
        args: parseBenchmarkArgs(
          "-h 127.0.0.1 -p 6379 -n 20000 -t set,get,incr,lpush,lrange_100 -d 256 -r 100000".split(
            " ",
          ),
        ),
      },
    );
    assert.ok(withArgs.tests.every((r) => r.keyspace === 100000 && r.pipeline === 1));
    const p16 = parseRedisBenchmark(
      read("corpus/redis-benchmark_7.0.15_redis-7.0.15_pipeline16.txt"),
      {
        args: parseBenchmarkArgs(["-n", "100000", "-P", "16"]),
      },
    );
    assert.ok(p16.tests.every((r) => r.pipeline === 16 && r.requests === 100000));
  });
});

Deno.test("parseRedisBenchmark() reads -q and --csv outputs", async (t) => {
  await t.step("-q of redis-benchmark 7.0.15 (progress on the same line)", () => {
    const run = parseRedisBenchmark(read("corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt"));
    assert.equal(run.format, "quiet");
    assert.deepEqual(
      run.tests.map((r) => [r.test, r.opsPerSec, r.p50LatencyMs]),
      [
        ["SET", 51020.41, 0.503],
        ["GET", 82644.62, 0.327],
        ["INCR", 79681.28, 0.335],
        ["LPUSH", 70671.38, 0.367],
        ["LPUSH_FOR_LRANGE", 69686.41, 0.383],
        ["LRANGE_100", 44543.43, 0.727],
      ],
    );
    assert.equal(run.progressUpdates, 8);
    assert.equal(run.complete, true);
  });

  await t.step("--csv of valkey-benchmark 8.0.1 with its header", () => {
    const run = parseRedisBenchmark(read("corpus/valkey-benchmark_8.0.1_valkey-8.0.1_csv.csv"));
    assert.equal(run.format, "csv");
    assert.equal(run.tests[0].opsPerSec, 50000);
    const raw = read("corpus/valkey-benchmark_8.0.1_valkey-8.0.1_csv.csv").split("\n");
    run.tests.forEach((r, i) => {
      const f = raw[i + 1].split(",").map((x) => x.replace(/"/g, ""));
      assert.equal(r.testTitle, f[0]);
      assert.deepEqual([r.opsPerSec, ...latencySummary(r)], f.slice(1).map(Number));
      assert.equal(r.sourceLine, i + 2);
    });
    assert.equal(run.tests[5].test, "LRANGE_100");
  });

  await t.step("--csv with -P 8 and an MSET title", () => {
    const run = parseRedisBenchmark(read("real/redis-benchmark-7.0.15_csv-P8-d64-set-mset.txt"), {
      args: parseBenchmarkArgs(["-n", "2000", "-P", "8", "-d", "64", "--csv", "-t", "set,mset"]),
    });
    assert.deepEqual(
      run.tests.map((r) => [r.test, r.testTitle, r.opsPerSec, r.pipeline, r.dataSizeBytes]),
      [
        ["SET", "SET", 124999.99, 8, 64],
        ["MSET", "MSET (10 keys)", 55555.56, 8, 64],
      ],
    );
  });

  await t.step("a custom command title", () => {
    const run = parseRedisBenchmark(read("real/redis-benchmark-7.0.15_custom-command-q.txt"));
    assert.equal(run.tests[0].test, "SET_MYKEY_MYVAL");
    assert.equal(run.tests[0].testTitle, "SET mykey myval");
    assert.equal(run.tests[0].opsPerSec, 42553.19);
  });

  await t.step("-l loop output keeps every repetition", () => {
    const run = parseRedisBenchmark(read("real/redis-benchmark-7.0.15_loop-q-sigint.txt"));
    const done = run.tests.filter((r) => r.complete);
    assert.ok(done.length >= 2);
    assert.ok(done.every((r) => r.test === "GET" && r.opsPerSec! > 0));
    // stopped with Ctrl-C during a repetition: the last one is cut
    assert.equal(run.complete, false);
    assert.equal(run.tests.at(-1)!.complete, false);
  });
});

Deno.test("parseRedisBenchmark() reads ≤6.0 outputs", async (t) => {
  await t.step("a ≤6.0 report cut during GET: GET: 65975.77 is progress, not a result", () => {
    const run = parseRedisBenchmark(
      read("handmade/redis-benchmark-6.0.16_full-cut-during-get.txt"),
    );
    assert.equal(run.format, "full-legacy");
    assert.equal(run.complete, false);
    assert.deepEqual(run.tests.map((r) => [r.test, r.opsPerSec, r.complete]), [
      ["PING_INLINE", 76335.88, true],
      ["SET", 76923.08, true],
      ["GET", null, false],
    ]);
    assert.equal(run.tests[2].lastProgressOpsPerSec, 65975.77);
    assert.deepEqual(run.tests[1].distribution.map((d) => [d.percentile, d.latencyMs, d.count]), [
      [0.01, 0.2, null],
      [99.84, 1, null],
      [100, 1, null],
    ]);
    assert.equal(run.tests[0].hostConfigSave, "900 1 300 10 60 10000");
  });

  await t.step("headerless --csv and -q without p50 (seed 004)", () => {
    const csv = parseRedisBenchmark('"SET","41562.76"\n"GET","38491.14"\n');
    assert.equal(csv.format, "csv-legacy");
    assert.deepEqual(csv.tests.map((r) => [r.test, r.opsPerSec]), [["SET", 41562.76], [
      "GET",
      38491.14,
    ]]);
    const q = parseRedisBenchmark(
      "SET: 45766.59 requests per second\nGET: 42789.90 requests per second\n",
    );
    assert.equal(q.format, "quiet-legacy");
    assert.deepEqual(q.tests.map((r) => [r.test, r.opsPerSec, r.p50LatencyMs]), [
      ["SET", 45766.59, null],
      ["GET", 42789.9, null],
    ]);
  });
});

Deno.test("parseRedisBenchmark() reads Valkey's RPS summary and cluster headers", () => {
  const rps = parseRedisBenchmark(read("handmade/valkey-benchmark-8.1.1_full-rps10000.txt"));
  const t = rps.tests[0];
  assert.equal(rps.complete, true);
  assert.equal(t.requestedOpsPerSec, 10000);
  assert.deepEqual([t.rpsAvg, t.rpsMin, t.rpsP50, t.rpsP95, t.rpsP99, t.rpsMax], [
    9998.211,
    9216,
    9999,
    10047,
    10111,
    10175,
  ]);
  assert.equal(t.opsPerSec, 9998.2);
  assert.equal(t.distribution.length, 5);
  const cl = parseRedisBenchmark(read("handmade/valkey-benchmark-8.0.1_cluster-threads3.txt"));
  assert.equal(cl.tests[0].clusterNodes, 3);
  assert.equal(cl.tests[0].threads, 3);
  assert.equal(cl.tests[0].opsPerSec, 192307.69);
  assert.deepEqual(cl.warnings, []);
});

Deno.test("parseRedisBenchmark() reads terminal captures and CRLF copies", async (t) => {
  await t.step("script(1) capture with banner and CRLF", () => {
    const run = parseRedisBenchmark(read("real/redis-benchmark-7.0.15_script-full-c10.txt"));
    assert.equal(run.complete, true);
    assert.deepEqual(run.warnings, []);
    assert.deepEqual(run.tests.map((r) => [r.test, r.clients, r.requests]), [["SET", 10, 5000], [
      "GET",
      10,
      5000,
    ]]);
    const q = parseRedisBenchmark(read("real/redis-benchmark-7.0.15_script-q-requirepass.txt"));
    assert.deepEqual(q.tests.map((r) => r.test), ["SET", "GET"]);
    assert.ok(q.tests.every((r) => r.complete && r.p50LatencyMs! > 0));
  });

  await t.step("a CRLF copy parses to the same numbers as the LF file", () => {
    for (
      const f of [
        "corpus/valkey-benchmark_8.0.1_valkey-8.0.1_full.txt",
        "corpus/redis-benchmark_7.0.15_redis-7.0.15_csv.csv",
        "corpus/valkey-benchmark_8.0.1_valkey-8.0.1_quiet.txt",
      ]
    ) {
      const lf = parseRedisBenchmark(read(f));
      const crlf = parseRedisBenchmark(read(f).replace(/\n/g, "\r\n"));
      assert.deepEqual(crlf, lf);
    }
  });
});

Deno.test("parseRedisBenchmark() marks cut and interrupted outputs incomplete", async (t) => {
  await t.step("real SIGINT during the first test: no result, one incomplete test", () => {
    for (
      const f of [
        "real/redis-benchmark-7.0.15_sigint-full.txt",
        "real/redis-benchmark-7.0.15_sigint-q.txt",
      ]
    ) {
      const run = parseRedisBenchmark(read(f));
      assert.equal(run.complete, false, f);
      assert.equal(run.tests.length, 1);
      assert.equal(run.tests[0].test, "SET");
      assert.equal(run.tests[0].complete, false);
      assert.equal(run.tests[0].opsPerSec, null);
      assert.ok(run.tests[0].lastProgressOpsPerSec! > 0);
    }
  });

  const whole = read("corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt");
  // The command of that file (MANIFEST.md): with its -t list, a cut between two tests shows.
  const args = parseBenchmarkArgs(
    "-h 127.0.0.1 -p 6379 -n 20000 -t set,get,incr,lpush,lrange_100".split(" "),
  );
  const full = parseRedisBenchmark(whole, { args });
  await t.step("cut at every line boundary of a 6.2+ report", () => {
    let pos = 0;
    const ends: number[] = [];
    while ((pos = whole.indexOf("\n", pos) + 1) > 0 && pos < whole.length - 1) ends.push(pos);
    for (const end of ends) {
      const text = whole.slice(0, end);
      let run: RedisBenchmarkRun;
      try {
        run = parseRedisBenchmark(text, { args });
      } catch (e) {
        assert.ok(e instanceof ParseError);
        continue;
      }
      assert.equal(run.complete, false, `cut at ${end} must be incomplete`);
      const done = run.tests.filter((r) => r.complete);
      // finished tests keep their exact numbers
      done.forEach((r, i) => assert.deepEqual(r, full.tests[i]));
      // at most one test is left unfinished, and it has no result
      assert.ok(run.tests.length - done.length <= 1, `one cut test at ${end}`);
      if (run.tests.length > done.length) assert.equal(run.tests.at(-1)!.complete, false);
    }
  });

  await t.step("cut anywhere inside a line (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: whole.length - 3 }), (end) => {
        let run: RedisBenchmarkRun;
        try {
          run = parseRedisBenchmark(whole.slice(0, end), { args });
        } catch (e) {
          return e instanceof ParseError;
        }
        const done = run.tests.filter((r) => r.complete);
        return !run.complete &&
          done.every((r, i) =>
            r.opsPerSec === full.tests[i].opsPerSec && r.p99LatencyMs === full.tests[i].p99LatencyMs
          );
      }),
      { numRuns: 300 },
    );
  });

  await t.step("without the command, a cut between two tests cannot show; with -t it does", () => {
    const two = "SET: 51020.41 requests per second, p50=0.503 msec\n";
    assert.equal(parseRedisBenchmark(two).complete, true);
    const r = parseRedisBenchmark(two, { args: parseBenchmarkArgs(["-q", "-t", "set,get"]) });
    assert.equal(r.complete, false);
    assert.match(r.warnings.at(-1)!.message, /not in the output: GET/);
  });

  await t.step("cut -q and --csv lines are not results", () => {
    const q = parseRedisBenchmark("SET: 51020.41 requests per second, p50=0.503 msec\nGET: 8264");
    assert.equal(q.complete, false);
    assert.deepEqual(q.tests.map((r) => r.complete), [true, false]);
    const q2 = parseRedisBenchmark("SET: 51020.41 requests per second, p50=0.5");
    assert.equal(q2.complete, false);
    assert.deepEqual(q2.tests.map((r) => [r.test, r.complete, r.opsPerSec]), [[
      "SET",
      false,
      null,
    ]]);
    const csv = parseRedisBenchmark('"SET","41562.76"\n"GET","384');
    assert.equal(csv.complete, false);
    assert.deepEqual(csv.tests.map((r) => r.test), ["SET"]);
    const csv2 = parseRedisBenchmark('"test","rps","avg_latency_ms"\n"SET","1.00","0.5');
    assert.equal(csv2.complete, false);
    assert.equal(csv2.tests.length, 0);
  });
});

Deno.test("parseRedisBenchmark() rejects what is not redis-benchmark output", async (t) => {
  await t.step("empty input", () => {
    assert.throws(() => parseRedisBenchmark("", { file: "e.txt" }), (e: unknown) => {
      assert.ok(e instanceof ParseError);
      assert.match(e.message, /^e\.txt:1:1: .*empty input/);
      return true;
    });
  });
  await t.step("binary junk", () => {
    const junk = String.fromCharCode(...Array.from({ length: 400 }, (_, i) => (i * 7919) % 256));
    assert.throws(() => parseRedisBenchmark(junk, { file: "junk.bin" }), ParseError);
  });
  await t.step("a memtier_benchmark file", () => {
    assert.throws(
      () =>
        parseRedisBenchmark(
          read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s.txt"),
          { file: "m.txt" },
        ),
      /^ParseError: m\.txt:\d+:1: expected redis-benchmark or valkey-benchmark output/,
    );
  });
  await t.step("tool errors make a run with no tests", () => {
    const run = parseRedisBenchmark(read("real/redis-benchmark-7.0.15_connection-refused.txt"));
    assert.equal(run.tests.length, 0);
    assert.equal(run.complete, false);
    assert.match(
      run.errors[0].text,
      /^Could not connect to Redis at 127\.0\.0\.1:16398: Connection refused/,
    );
    const auth = parseRedisBenchmark(read("real/redis-benchmark-7.0.15_wrongpass-q.txt"));
    assert.equal(auth.tests.length, 0);
    assert.match(auth.errors.map((e) => e.text).join("\n"), /WRONGPASS/);
  });
});

Deno.test("normalizeTestName() keeps LPUSH and the LRANGE fill apart", () => {
  assert.equal(normalizeTestName("LPUSH"), "LPUSH");
  assert.equal(normalizeTestName("LPUSH (needed to benchmark LRANGE)"), "LPUSH_FOR_LRANGE");
  assert.equal(normalizeTestName("LRANGE_500 (first 450 elements)"), "LRANGE_500");
  assert.equal(normalizeTestName("PING_INLINE"), "PING_INLINE");
});

Deno.test("parseRedisBenchmark() maps printed columns by name, not by position", async (t) => {
  await t.step("a --csv header in another order, with a column it does not know", () => {
    const run = parseRedisBenchmark(
      '"test","rps","p99_latency_ms","p99.9_latency_ms","avg_latency_ms"\n' +
        '"SET","41562.76","0.911","1.203","0.640"\n',
    );
    const s = run.tests[0];
    assert.deepEqual([s.opsPerSec, s.p99LatencyMs, s.avgLatencyMs], [41562.76, 0.911, 0.64]);
    assert.deepEqual([s.minLatencyMs, s.p50LatencyMs, s.maxLatencyMs], [null, null, null]);
  });
  await t.step("a summary table with fewer columns fills only those", () => {
    const report = read("corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt")
      .replace(
        /(\s+)avg(\s+)min(\s+)p50(\s+)p95(\s+)p99(\s+)max\n(\s+\S+\s+\S+\s+\S+\s+\S+)\s+\S+\s+\S+\n/,
        "$1max$2p50$3p95$4avg\n$7\n",
      );
    const s = parseRedisBenchmark(report).tests[0];
    const naive = naiveSummaries(read("corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt"))[0];
    assert.deepEqual(
      [s.maxLatencyMs, s.p50LatencyMs, s.p95LatencyMs, s.avgLatencyMs],
      naive.values.slice(0, 4),
    );
    assert.deepEqual([s.minLatencyMs, s.p99LatencyMs], [null, null]);
    assert.equal(s.complete, true);
  });
});
