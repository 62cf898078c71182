/**
 * The sample-size advice against a simulation of the verdict rule it advises on: at the advised
 * runs per arm, `cellVerdict` tells the difference in about 80 % of simulated cells; the runs that
 * reach 80 % in simulation are within ±25 % of the advice (power below 80 % at 0.75 × n, at or
 * above it at 1.25 × n). Seeded.
 */
import assert from "node:assert/strict";
import { cellVerdict } from "../../../src/analyze/compare/verdict.ts";
import { cellAdvice, runsNeeded } from "../../../src/analyze/sequential/sample_size.ts";
import { normal, sample } from "./_simulate.ts";

/** The share of simulated cells `cellVerdict` calls better, n runs per arm. */
function power(seed: number, n: number, shift: number, cv: number, cells = 400): number {
  const z = normal(seed);
  let better = 0;
  for (let i = 0; i < cells; i++) {
    const a = sample(z, n, 100_000, cv), b = sample(z, n, 100_000 * (1 + shift), cv);
    if (cellVerdict(a, b, { direction: "higher" }).verdict === "better") better++;
  }
  return better / cells;
}

for (const [cv, effect] of [[0.03, 0.05], [0.05, 0.05], [0.1, 0.1]]) {
  Deno.test(`runsNeeded() matches a simulation within ±25 % (CV ${cv * 100} %, +${effect * 100} %)`, () => {
    const n = runsNeeded(cv, effect);
    const low = power(1, Math.floor(0.75 * n), effect, cv);
    const at = power(2, n, effect, cv);
    const high = power(3, Math.ceil(1.25 * n), effect, cv);
    const says = `n = ${n}: power ${low} at 0.75n, ${at} at n, ${high} at 1.25n`;
    assert.ok(low < 0.8, says);
    assert.ok(high >= 0.8, says);
    assert.ok(Math.abs(at - 0.8) < 0.1, says);
  });
}

Deno.test("cellAdvice() from a cell's runs: the spread of its runs, the observed difference", () => {
  const z = normal(9);
  const a = sample(z, 5, 100, 0.05), b = sample(z, 5, 115, 0.05);
  const advice = cellAdvice(a, b);
  assert.ok(advice.runsNeeded! >= 10, JSON.stringify(advice)); // ±5 % at CV 5 %: ~20
  assert.ok(advice.runsNeededObserved! < advice.runsNeeded!);
  // a larger min-effect needs fewer runs
  assert.ok(cellAdvice(a, b, { minEffect: 0.1 }).runsNeeded! < advice.runsNeeded!);
  assert.deepEqual(cellAdvice([1], [2]), { runsNeeded: null, runsNeededObserved: null });
});
