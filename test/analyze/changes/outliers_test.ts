/**
 * Single-run outliers (`src/analyze/changes/outliers.ts`) on simulated histories: on A/A noise
 * (no outlier, with or without a change point) the share of histories with any outlier listed
 * stays at or below the level asked (plus the sampling slack), over every run and series looked
 * at; a one-night dip is listed and is no change point; the chart marks what the table lists.
 * Seeded: the same numbers every run.
 */
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { seededRandom } from "../../../src/random.ts";
import { changeHistory } from "../../../src/analyze/changes/changes.ts";
import { changesChart } from "../../../src/analyze/charts/changes.ts";

/** A seeded standard normal (Box–Muller). */
function normal(seed: number): () => number {
  const u = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

/**
 * A results frame of `tests` series of `nights` runs (one run per night holds every test), CV 2 %,
 * each series `step` lower from night `at` on (no step: 0).
 */
function history(
  z: () => number,
  o: { tests: number; nights: number; at?: number; step?: number },
): { df: pl.DataFrame; ops: number[][] } {
  const ops = Array.from({ length: o.tests }, (_, t) =>
    Array.from({ length: o.nights }, (_, i) => {
      const level = (50_000 + 1000 * t) * (o.at !== undefined && i >= o.at ? 1 - o.step! : 1);
      return level * (1 + 0.02 * z());
    }));
  const night = (i: number) => new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10);
  const df = pl.DataFrame({
    run_id: ops.flatMap(() => ops[0].map((_, i) => `run-${i}`)),
    test: ops.flatMap((_, t) => ops[0].map(() => `T${t}`)),
    source_path: ops.flatMap(() => ops[0].map((_, i) => `nightly/${night(i)}/bench.csv`)),
    ops_per_sec: ops.flat(),
  });
  return { df, ops };
}

/** The share of `n` simulated histories with any outlier listed at `maxPValue`. */
function falseAlarms(seed: number, n: number, maxPValue: number, at?: number): number {
  const z = normal(seed);
  let alarmed = 0;
  for (let i = 0; i < n; i++) {
    const { df } = history(z, { tests: 6, nights: 30, at, step: 0.1 });
    const h = changeHistory(df, { orderBy: "source_path", maxPValue });
    if (h.outliers.height > 0) alarmed++;
  }
  return alarmed / n;
}

Deno.test("outliers: A/A histories list an outlier at most at the level asked, over every run and series", () => {
  // measured (n = 250): 4.8 % at 5 %, 18.8 % at 20 %; with a step 2.4 % at 5 %; 0 at 0.1 %
  const n = 200;
  const slack = (level: number) => 3 * Math.sqrt(level * (1 - level) / n);
  for (const level of [0.05, 0.2]) {
    const plain = falseAlarms(31, n, level);
    assert.ok(plain <= level + slack(level), `level ${level}: ${plain} of histories`);
  }
  // with a lasting 10 % step in every series, each run is tested against its own segment
  const stepped = falseAlarms(32, n, 0.05, 15);
  assert.ok(stepped <= 0.05 + slack(0.05), `a step: ${stepped} of histories`);
  assert.ok(falseAlarms(33, n, 0.001) <= 0.01);
});

Deno.test("outliers: a one-night dip of 50 % is an outlier, not a change point, and the chart rings it", () => {
  const z = normal(7);
  const { df, ops } = history(z, { tests: 2, nights: 20 });
  const dipped = df.withColumns(
    pl.when(pl.col("test").eq(pl.lit("T1")).and(pl.col("run_id").eq(pl.lit("run-11"))))
      .then(pl.col("ops_per_sec").mul(0.5)).otherwise(pl.col("ops_per_sec")).alias("ops_per_sec"),
  );
  const h = changeHistory(dipped, { orderBy: "source_path" });
  assert.equal(h.changes.height, 0);
  const o = h.outliers.toRecords();
  assert.deepEqual(o.map((r) => [r.test, r.index, r.order_label, r.verdict]), [
    ["T1", 11, "2026-01-12", "worse"],
  ]);
  assert.equal(o[0].runs_tested, 40);
  assert.ok(Math.abs((o[0].change_pct as number) + 50) < 3);
  const others = ops[1].filter((_, i) => i !== 11);
  assert.ok(
    Math.abs((o[0].segment_mean_ops_per_sec as number) - others.reduce((a, b) => a + b) / 19) <
      1e-6,
  );
  const spec = changesChart(h.series, { orderBy: "source_path" });
  const values = (spec.data as { values: { outlier: boolean; series: string; label: string }[] })
    .values;
  assert.deepEqual(values.filter((v) => v.outlier).map((v) => [v.series, v.label]), [[
    "T1",
    "2026-01-12",
  ]]);
  const subtitle = (spec.title as { subtitle: string[] }).subtitle;
  assert.equal(subtitle[0], "throughput (ops/s): 2 series, 20 runs in order of source_path");
  assert.equal(
    subtitle[1],
    "0 change points (red), 1 single-run outlier (orange rings), segment means (black lines)",
  );
  // the nights are dates on the x axis
  const x = (spec.spec as { layer: { encoding: { x: { type: string } } }[] }).layer[0].encoding.x;
  assert.equal(x.type, "temporal");
});
