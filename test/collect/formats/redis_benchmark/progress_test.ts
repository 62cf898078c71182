import assert from "node:assert/strict";
import {
  parseRedisBenchmark,
  progressEvent,
  ProgressReader,
} from "../../../../src/collect/formats/redis_benchmark/parse.ts";
import type { ProgressEvent } from "../../../../src/collect/formats/format.ts";

import { TESTDATA as DATA } from "../../../_support/testdata.ts";

Deno.test("progressEvent() reads each kind of live line", () => {
  assert.deepEqual(progressEvent("SET: 65975.77"), {
    kind: "progress",
    test: "SET",
    opsPerSec: 65975.77,
    overallOpsPerSec: 65975.77,
  });
  assert.deepEqual(
    progressEvent("LPUSH (needed to benchmark LRANGE): 41562.76 requests per second"),
    { kind: "done", test: "LPUSH_FOR_LRANGE", opsPerSec: 41562.76 },
  );
  assert.deepEqual(progressEvent('"GET","38491.14","0.711"'), {
    kind: "done",
    test: "GET",
    opsPerSec: 38491.14,
  });
  assert.equal(progressEvent('"test","rps","avg_latency_ms"'), undefined);
  assert.equal(
    progressEvent("Could not connect to Redis at 127.0.0.1:1: Connection refused"),
    undefined,
  );
});

Deno.test("progressEvent() reads valkey-benchmark 9.0 progress", () => {
  assert.deepEqual(
    progressEvent(
      "SET: rps=80876.0 (overall: 80876.0) avg_msec=0.568 (overall: 0.568) 20219 requests",
    ),
    { kind: "progress", test: "SET", opsPerSec: 80876, overallOpsPerSec: 80876 },
  );
  assert.deepEqual(
    progressEvent(
      "Warming up GET: rps=90312.0 (overall: 90011.3) avg_msec=0.490 (overall: 0.495) 0.2 seconds",
    ),
    { kind: "progress", test: "GET", opsPerSec: 90312, overallOpsPerSec: 90011.3 },
  );
});

Deno.test("ProgressReader reads the same events whatever the chunk size", () => {
  for (
    const f of [
      "corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt",
      "handmade/redis-benchmark-6.0.16_full-cut-during-get.txt",
      "real/redis-benchmark-7.0.15_csv-P8-d64-set-mset.txt",
    ]
  ) {
    const bytes = Deno.readFileSync(DATA + f);
    const text = new TextDecoder().decode(bytes);
    const want = text.split(/[\r\n]/).slice(0, -1).filter((s) => s.trim() !== "")
      .map(progressEvent).filter((e) => e !== undefined);
    // one "done" per finished test, as the parser reads them
    assert.deepEqual(
      want.filter((e) => e.kind === "done").map((e) => e.test),
      parseRedisBenchmark(text).tests.filter((x) => x.complete).map((x) => x.test),
      f,
    );
    for (const size of [1, 3, 64, bytes.length]) {
      const got: ProgressEvent[] = [];
      const reader = new ProgressReader((e) => got.push(e));
      for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
      assert.deepEqual(got, want, `${f} in chunks of ${size}`);
    }
  }
});
