import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { changes, changeSeries, hasHistory } from "../../../src/analyze/changes/changes.ts";
import { seededRandom } from "../../../src/random.ts";
import { changesChart, MAX_CHANGE_PANELS } from "../../../src/analyze/charts/changes.ts";
import { svgSize, toSvg } from "../../../src/analyze/export.ts";
import { wideHistory } from "../../_support/history.ts";

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

/** A results frame of a wide history: `tests` series of 30 nights (see `wideHistory`). */
function wide(tests: number, changed: number): pl.DataFrame {
  const h = wideHistory(5, { tests, changed });
  const n = h[0].opsPerSec.length;
  return pl.DataFrame({
    run_id: h.flatMap(() => Array.from({ length: n }, (_, i) => `night-${i}`)),
    test: h.flatMap((t) => Array(n).fill(t.title)),
    source_path: h.flatMap(() => Array.from({ length: n }, (_, i) => `ci/${1000 + i}.csv`)),
    ops_per_sec: h.flatMap((t) => t.opsPerSec),
  });
}

Deno.test("changesChart() of a wide history draws the series that changed most and counts the rest", async () => {
  const df = wide(120, 0.25);
  const series = changeSeries(df, { orderBy: "source_path" });
  const c = changes(df, { orderBy: "source_path" });
  const changed = [...new Set(c.getColumn("test").toArray())] as string[];
  assert.ok(changed.length > MAX_CHANGE_PANELS, `${changed.length} series changed`);
  for (const changedOnly of [false, true]) {
    const spec = changesChart(series, { orderBy: "source_path", changedOnly });
    const drawn = (spec.facet as { row: { sort: string[] } }).row.sort;
    assert.equal(drawn.length, MAX_CHANGE_PANELS);
    assert.ok(drawn.every((s) => changed.includes(s)), "only series that changed");
    // the largest changes, in the table's order
    const size = new Map(
      (c.toRecords() as { test: string; change_pct: number }[]).map((r) => [r.test, 0]),
    );
    for (const r of c.toRecords() as { test: string; change_pct: number }[]) {
      size.set(r.test, Math.max(size.get(r.test)!, Math.abs(r.change_pct)));
    }
    const smallestDrawn = Math.min(...drawn.map((s) => size.get(s)!));
    assert.ok(
      changed.filter((s) => !drawn.includes(s)).every((s) => size.get(s)! <= smallestDrawn),
    );
    assert.deepEqual(drawn, [...drawn].sort());
    const subtitle = (spec.title as { subtitle: string[] }).subtitle;
    assert.equal(
      subtitle.at(-1),
      `${MAX_CHANGE_PANELS} of the ${changed.length} series that changed (the largest changes); ` +
        `${changed.length - MAX_CHANGE_PANELS} more changed, not drawn; ` +
        `${120 - changed.length} without a change point, not drawn`,
    );
    const values = (spec.data as { values: { series: string }[] }).values;
    assert.deepEqual([...new Set(values.map((v) => v.series))], drawn);
  }
  // drawn, which 2,000 facets were not ("Maximum call stack size exceeded")
  const svg = await toSvg(changesChart(series, { orderBy: "source_path" }));
  assert.ok(svgSize(svg).height < 25 * 160, `${svgSize(svg).height} px`);
});

Deno.test("changesChart() of a wide history with no change draws its first series and says so", () => {
  const df = wide(40, 0);
  const series = changeSeries(df, { orderBy: "source_path" });
  assert.equal(series.filter(pl.col("change")).height, 0);
  const spec = changesChart(series, { orderBy: "source_path", changedOnly: true });
  const drawn = (spec.facet as { row: { sort: string[] } }).row.sort;
  assert.deepEqual(
    drawn,
    Array.from({ length: MAX_CHANGE_PANELS }, (_, i) => `T${String(i).padStart(5, "0")}`),
  );
  assert.equal(
    (spec.title as { subtitle: string[] }).subtitle.at(-1),
    `the first ${MAX_CHANGE_PANELS} of 40 series; none changed, 20 not drawn`,
  );
  // a history that fits is drawn whole, with the subtitle it always had
  const few = changesChart(changeSeries(wide(6, 0.5), { orderBy: "source_path" }), {});
  assert.equal((few.facet as { row: { sort: string[] } }).row.sort.length, 6);
  assert.equal((few.title as { subtitle: string[] }).subtitle.length, 2);
});

Deno.test("changesChart() counts runs, not results, in its subtitle (issue 31)", () => {
  // 60 runs, each with a SET and a GET result: 2 series of 60 runs, 120 results
  const n = 60;
  const one = nights().head(n);
  const df = pl.concat([one, one.withColumns(pl.lit("GET").alias("test"))]);
  const spec = changesChart(changeSeries(df, { orderBy: "source_path" }), {
    orderBy: "source_path",
  });
  const subtitle = (spec.title as { subtitle: string[] }).subtitle;
  assert.equal(subtitle[0], "throughput (ops/s): 2 series, 60 runs in order of source_path");
});
