import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { changes, changeSeries, hasHistory } from "../../../src/analyze/changes/changes.ts";
import { seededRandom } from "../../../src/random.ts";

/** 80 nights of SET: a 10 % drop at night 30, version 7.2.4 until night 59, then 7.2.5. */
function nights(): pl.DataFrame {
  const rand = seededRandom(11);
  const n = 80;
  const ids = Array.from(
    { length: n },
    (_, i) => `20260101T000000Z-${(i * 7919 % 997).toString(16).padStart(12, "0")}`,
  );
  return pl.DataFrame({
    run_id: ids, // same second, random-looking: they say nothing of the order
    test: Array(n).fill("SET"),
    started_at: Array(n).fill(null),
    source_path: Array.from({ length: n }, (_, i) => `ci/night-${i}.csv`),
    source_line_start: Array(n).fill(1),
    server_version: Array.from({ length: n }, (_, i) => (i < 60 ? "7.2.4" : "7.2.5")),
    host: Array.from({ length: n }, () => "bench-a"),
    ops_per_sec: Array.from(
      { length: n },
      (_, i) => (i < 30 ? 100_000 : 90_000) * (1 + 0.01 * (rand() - 0.5)),
    ),
  });
}

Deno.test("changes() keeps the source order of runs that tie on the order column", () => {
  const c = changes(nights(), { orderBy: "server_version" }).toRecords();
  assert.deepEqual(c.map((r) => [r.index, r.order_before, r.order_after]), [[
    30,
    "7.2.4",
    "7.2.4",
  ]]);
  assert.equal(c[0].also_differs, null);
});

Deno.test("changes() by default orders by source_path when no run has a start time", () => {
  const c = changes(nights()).toRecords();
  assert.deepEqual(c.map((r) => [r.index, r.order_after]), [[30, "ci/night-30.csv"]]);
  assert.equal(c[0].order_by, "source_path");
});

Deno.test("changeSeries() marks each change once and each segment's mean", () => {
  const s = changeSeries(nights(), { orderBy: "source_path" });
  assert.equal(s.height, 80);
  assert.deepEqual(s.filter(pl.col("change")).getColumn("position").toArray(), [30]);
  const means = s.groupBy("segment").agg(pl.col("segment_mean_ops_per_sec").first()).sort("segment")
    .getColumn("segment_mean_ops_per_sec").toArray() as number[];
  assert.ok(Math.abs(means[0] - 100_000) < 500 && Math.abs(means[1] - 90_000) < 500);
});

Deno.test("hasHistory() needs a series of 20 runs, per label when labels split the data", () => {
  const df = nights();
  assert.equal(hasHistory(df), true);
  const labelled = df.withColumns(
    pl.Series("label", Array.from({ length: 80 }, (_, i) => `arm-${i % 5}`)),
  );
  assert.equal(hasHistory(labelled), false); // 16 runs per arm
});

Deno.test("changes() errors name what is wrong", () => {
  assert.throws(() => changes(nights(), { orderBy: "nope" }), /invalid order: nope/);
  assert.throws(
    () => changes(nights(), { orderBy: "started_at" }),
    /no run has started_at.*source_path/,
  );
  assert.throws(
    () => changes(nights(), { test: "GET" }),
    /invalid test: GET \(tests with ops_per_sec: SET\)/,
  );
  assert.throws(() => changes(nights(), { metric: "run_id" }), /invalid metric/);
});
