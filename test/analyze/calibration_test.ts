/**
 * Calibration of the verdict rule (`src/analyze/_verdict.ts`) on simulated data: A/A arms
 * drawn from one distribution must be called better or worse at most as often as the nominal
 * 5 % (plus its sampling slack) at every n from 2 to 20 per arm, and A/B arms must be told
 * apart with the power the README states. Seeded: the same numbers every run.
 */
import assert from "node:assert/strict";
import { seededRandom } from "../../src/random.ts";
import { cellVerdict } from "../../src/analyze/compare/verdict.ts";

/** A seeded standard normal (Box–Muller). */
function normal(seed: number): () => number {
  const u = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

/** `n` runs of a metric around `mean` with coefficient of variation `cv`. */
function sample(z: () => number, n: number, mean: number, cv: number): number[] {
  return Array.from({ length: n }, () => mean * (1 + cv * z()));
}

/** The share of `cells` simulated cells called better or worse. */
function calledRate(seed: number, n: number, shift: number, cv: number, cells: number) {
  const z = normal(seed);
  let called = 0, better = 0;
  for (let i = 0; i < cells; i++) {
    const v = cellVerdict(sample(z, n, 100_000, cv), sample(z, n, 100_000 * (1 + shift), cv), {
      direction: "higher",
    }).verdict;

    if (v === "better" || v === "worse") called++;
    if (v === "better") better++;
  }
  return { called: called / cells, better: better / cells };
}

Deno.test("cellVerdict() calibration: A/A at n = 2…20 per arm stays at or below 5 %", () => {
  const cells = 300;
  // nominal 5 % plus three binomial standard errors of the estimate
  const slack = 3 * Math.sqrt(0.05 * 0.95 / cells);
  const rates: Record<number, number> = {};
  for (let n = 2; n <= 20; n++) {
    rates[n] = calledRate(1000 + n, n, 0, 0.05, cells).called;
    assert.ok(rates[n] <= 0.05 + slack, `n = ${n}: ${(rates[n] * 100).toFixed(1)} % called`);
  }
  // below 4 runs per arm nothing is ever called
  assert.equal(rates[2] + rates[3], 0);
});

Deno.test("cellVerdict() power at n = 5, CV 3 % (the README's numbers)", () => {
  const power = (shift: number, n = 5) => calledRate(77, n, shift, 0.03, 1000).better;
  // the smallest shift (1 % steps) called better in 90 % of cells: 9 % (5 runs per arm) and
  // about 5–6 % (10 runs per arm: 89 % at +5 %)
  assert.ok(power(0.09) >= 0.9, `+9 %: ${power(0.09)}`);
  assert.ok(power(0.08) < 0.9, `+8 %: ${power(0.08)}`);
  assert.ok(power(0.10) >= 0.95);
  assert.ok(power(0.06, 10) >= 0.9, `+6 %, n = 10: ${power(0.06, 10)}`);
  assert.ok(power(0.04, 10) < 0.9, `+4 %, n = 10: ${power(0.04, 10)}`);
  // with 3 runs per arm even a large shift is not called
  assert.equal(calledRate(78, 3, 0.5, 0.03, 50).called, 0);
});
