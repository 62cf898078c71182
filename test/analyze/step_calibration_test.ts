/**
 * Calibration of the fixed-rate verdict (`compareSteps`, `src/analyze/sweep/compare.ts`) on
 * simulated steps: per step, each arm's repetitions' p99 (and p50) drawn from one distribution
 * (A/A) must be called better or worse at most at the nominal 5 % (plus its sampling slack) at
 * every n, never below 4 repetitions per arm; latencies a coarse histogram rounds to the same
 * bucket are "no difference", not a verdict; a true difference is found and never called "no
 * difference". The latencies are quantized to memtier_benchmark's histogram buckets, as stored.
 * Seeded: the same numbers every run.
 */
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { seededRandom } from "../../src/random.ts";
import { compareSteps } from "../../src/analyze/sweep/compare.ts";
import { latencyResolutionMs } from "../../src/analyze/compare/verdict.ts";

/** A seeded standard normal (Box–Muller). */
function normal(seed: number): () => number {
  const u = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

/** A latency as memtier's histogram stores it: the lower edge of its bucket. */
const bucket = (ms: number) => {
  const w = latencyResolutionMs("memtier_benchmark", ms);
  return Math.floor(ms / w + 1e-9) * w;
};

/** What a simulated study looks like: steps, repetitions, p99 level, spread, B's shift. */
interface Study {
  steps: number;
  n: number;
  p99Ms: number;
  cv: number;
  shift: number;
}

/**
 * The verdicts of `steps` simulated steps (one table each), `n` repetitions per arm: p99 around
 * `p99Ms` (log-normal, CV `cv`), arm B's `shift` times A's; every step sustained.
 */
function verdicts(seed: number, s: Study): string[] {
  const z = normal(seed);
  const rows = [];
  for (let t = 0; t < s.steps; t++) {
    for (const [label, k] of [["A", 1], ["B", s.shift]] as const) {
      for (let i = 0; i < s.n; i++) {
        const p99 = bucket(s.p99Ms * k * Math.exp(s.cv * z()));
        rows.push({
          run_id: `${t}-${label}-${i}`,
          test_index: 0,
          test: `T${t}`,
          clients: 48,
          label,
          requested_ops_per_sec: 20_000,
          ops_per_sec: 20_000,
          p50_latency_ms: bucket(p99 / 3),
          p99_latency_ms: p99,
          tool: "memtier_benchmark",
          complete: true,
        });
      }
    }
  }
  const c = compareSteps({ results: pl.DataFrame(rows) }, { baseline: "A" });
  assert.equal(c.height, s.steps);
  return c.getColumn("p99_verdict").toArray() as string[];
}

const share = (v: string[], ...of: string[]) => v.filter((x) => of.includes(x)).length / v.length;

// measured (300 steps each): A/A called better or worse in 0 % at n = 2–3, 2.7 % at 4, 5.0 % at
// 5, 4.4 % at 8, 5.0 % at 12; p99 near 0.1 ms (8 µs buckets), CV 3 %: 97.7 % no difference;
// +30 % at CV 10 %, n = 5: 88 % worse; +15 %: 39 % worse (n = 5), 75 % (n = 10), never no difference
Deno.test("compareSteps() calibration: A/A at n = 2…12 repetitions per arm stays at or below 5 %", () => {
  const steps = 300;
  const slack = 3 * Math.sqrt(0.05 * 0.95 / steps);
  for (const n of [2, 3, 4, 5, 8, 12]) {
    const v = verdicts(100 + n, { steps, n, p99Ms: 2, cv: 0.1, shift: 1 });
    const called = share(v, "better", "worse");
    assert.ok(called <= 0.05 + slack, `n = ${n}: ${(called * 100).toFixed(1)} % called`);
    if (n < 4) assert.deepEqual([...new Set(v)], ["inconclusive"], `n = ${n}`);
  }
});

Deno.test("compareSteps() calibration: a tie within the histogram's bucket is no difference, not a verdict", () => {
  // p99 near 0.1 ms: memtier's buckets are 8 µs (8 %) there; a 3 % spread mostly falls in one
  const v = verdicts(7, { steps: 300, n: 5, p99Ms: 0.1, cv: 0.03, shift: 1 });
  assert.ok(share(v, "better", "worse") <= 0.05, `${share(v, "better", "worse")} called`);
  assert.ok(share(v, "no difference") >= 0.9, `${share(v, "no difference")} no difference`);
});

Deno.test("compareSteps() calibration: a true difference is found, and never called no difference", () => {
  // B's p99 30 % higher, CV 10 %, 5 repetitions per arm
  const worse = verdicts(11, { steps: 300, n: 5, p99Ms: 2, cv: 0.1, shift: 1.3 });
  assert.ok(share(worse, "worse") >= 0.8, `${share(worse, "worse")} worse`);
  assert.equal(share(worse, "better"), 0);
  // 15 % higher at CV 10 %: often inconclusive, never "no difference"
  const close = verdicts(12, { steps: 300, n: 5, p99Ms: 2, cv: 0.1, shift: 1.15 });
  assert.ok(share(close, "no difference") <= 0.01, `${share(close, "no difference")}`);
});
