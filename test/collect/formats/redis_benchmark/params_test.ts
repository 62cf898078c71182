import assert from "node:assert/strict";
import { parseBenchmarkArgs } from "../../../../src/collect/formats/redis_benchmark/flags.ts";
import {
  applyBenchmarkArgs,
  missingTests,
  parseRedisBenchmark,
  type ParseWarning,
} from "../../../../src/collect/formats/redis_benchmark/parse.ts";

import { readTestdata as read } from "../../../_support/testdata.ts";

Deno.test("missingTests() expands -t names as the tool selects tests", async (t) => {
  await t.step("ping and lrange stand for several tests", () => {
    const args = parseBenchmarkArgs(["-t", "ping,lrange"]);
    assert.deepEqual(missingTests(args, ["PING_INLINE", "LPUSH_FOR_LRANGE", "LRANGE_300"]), [
      "PING_MBULK",
      "LRANGE_100",
      "LRANGE_500",
      "LRANGE_600",
    ]);
  });
  await t.step("unknown names, -l loops and custom commands expect nothing", () => {
    assert.deepEqual(missingTests(parseBenchmarkArgs(["-t", "nosuch,get"]), []), ["GET"]);
    assert.deepEqual(missingTests(parseBenchmarkArgs(["-l", "-t", "get"]), []), []);
    assert.deepEqual(missingTests(parseBenchmarkArgs(["-t", "get", "SET", "k", "v"]), []), []);
    assert.deepEqual(missingTests(parseBenchmarkArgs([]), []), []);
  });
  await t.step("valkey's mget, function_load and fcall tests", () => {
    const args = parseBenchmarkArgs(["-t", "mget,function_load,fcall"]);
    assert.deepEqual(missingTests(args, []), ["MGET", "FUNCTION_LOAD", "FCALL"]);
    const run = parseRedisBenchmark(
      "MGET (10 keys): 50000.00 requests per second, p50=0.5 msec\n" +
        "FUNCTION LOAD: 900.00 requests per second, p50=27.1 msec\n" +
        "FCALL: 80000.00 requests per second, p50=0.3 msec\n",
      { args },
    );
    assert.equal(run.complete, true);
    assert.deepEqual(run.warnings, []);
  });
  await t.step("names of Object.prototype are unknown names, not a crash", () => {
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      assert.deepEqual(missingTests(parseBenchmarkArgs(["-t", `${name},get`]), []), ["GET"]);
    }
  });
});

Deno.test("applyBenchmarkArgs() fills what the output does not print", async (t) => {
  await t.step("-q prints no parameters: flags, then the tool's defaults", () => {
    const [q] = parseRedisBenchmark("SET: 109769.48 requests per second, p50=0.231 msec\n").tests;
    const warnings: ParseWarning[] = [];
    applyBenchmarkArgs(
      q,
      parseBenchmarkArgs(["-q", "-c", "30", "-P", "16", "-r", "1000", "--rps", "500"]),
      warnings,
    );
    assert.deepEqual(
      [q.clients, q.pipeline, q.keyspace, q.requestedOpsPerSec, q.dataSizeBytes, q.requests],
      [30, 16, 1000, 500, 3, 100000],
    );
    assert.equal(q.threads, 1);
    assert.equal(q.keepAlive, null);
    assert.deepEqual(warnings, []);
  });
  await t.step("printed values win; a disagreeing flag is noted, but not -n", () => {
    const text = read("corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt");
    const [full] = parseRedisBenchmark(text).tests;
    assert.equal(full.clients, 50);
    const warnings: ParseWarning[] = [];
    applyBenchmarkArgs(full, parseBenchmarkArgs(["-c", "30", "-n", "7"]), warnings);
    assert.equal(full.clients, 50);
    assert.equal(full.requests, 20000);
    assert.deepEqual(warnings.map((w) => w.message), [
      "output says clients=50 but the command says 30",
    ]);
    assert.equal(warnings[0].line, full.sourceLine);
  });
  await t.step("a test that did not finish is filled but not checked", () => {
    const run = parseRedisBenchmark(
      read("handmade/redis-benchmark-6.0.16_full-cut-during-get.txt"),
    );
    const cut = run.tests.find((x) => !x.complete)!;
    const warnings: ParseWarning[] = [];
    applyBenchmarkArgs(cut, parseBenchmarkArgs(["-c", "7", "-P", "2"]), warnings);
    assert.equal(cut.pipeline, 2);
    assert.deepEqual(warnings, []);
  });
});
