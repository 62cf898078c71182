/**
 * A redis-benchmark test printed at `0.00 requests per second` (issue 30): a finished test
 * that completed nothing is no result. It was stored complete at 0 ops/s, and `changes` then
 * divided by it (`Infinity` in csv, text and Markdown, `null` in JSON): its rate is stored null,
 * the test not complete, with a warning naming the line.
 */

import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/mod.ts";
import { parseRedisBenchmark } from "../../src/collect/formats/redis_benchmark/parse.ts";
import { readTestdata, TESTDATA } from "../_support/testdata.ts";
import { kvlab } from "./_cli.ts";

const FILE = "hostile-parser/redis-benchmark-7.0.15_q-rps-zero.txt";

Deno.test("hostile: a test at 0.00 requests per second is not stored as a result", async () => {
  const run = parseRedisBenchmark(readTestdata(FILE));
  assert.deepEqual(run.tests.map((x) => [x.test, x.opsPerSec, x.complete]), [
    ["SET", null, false],
    ["GET", 100000, true],
  ]);
  assert.deepEqual(run.warnings.map((w) => `${w.line}: ${w.message}`), [
    "1: impossible value in SET: opsPerSec = 0 (a finished test at 0 requests per second: " +
    "nothing completed); not kept",
  ]);
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-rps0-" });
  try {
    const r = await kvlab(["ingest", TESTDATA + FILE, "--data", `${dir}/d`]);
    assert.equal(r.code, 0, r.printed);
    const rows = loadTable(`${dir}/d`, "results").select("test", "ops_per_sec", "complete")
      .toRecords();
    assert.deepEqual(rows, [
      { test: "SET", ops_per_sec: null, complete: false },
      { test: "GET", ops_per_sec: 100000, complete: true },
    ]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
