/**
 * Calibration of the sequential verdict (`src/analyze/sequential/sequential.ts`) as
 * `kvlab run --until-decided` uses it, on simulated runs: looks after every round of 1–3 runs
 * per arm, up to 20 looks, stopping at the first verdict. A/A cells (CV 3, 10 and 30 %) are called
 * better or worse at most 5 % of the time, where compare's fixed-n rank test re-tested after
 * every round (the naive rule) is called far more often; with a true +10 % shift at CV 3 % the
 * median runs per arm to "better" are at most 1.5× the fixed-n design's with the same power,
 * and with +30 % fewer than it. Seeded: the same numbers every run (printed with `--filter
 * figures`, for the README).
 */
import assert from "node:assert/strict";
import { cellVerdict } from "../../../src/analyze/compare/verdict.ts";
import { sequentialVerdict } from "../../../src/analyze/sequential/sequential.ts";
import { normal, sample } from "./_simulate.ts";

type Rule = (a: number[], b: number[]) => string;

/** The sequential rule, and compare's fixed-n rule applied at every look. */
const SEQUENTIAL: Rule = (a, b) => sequentialVerdict(a, b, { direction: "higher" }).verdict;
const NAIVE: Rule = (a, b) => cellVerdict(a, b, { direction: "higher" }).verdict;

/** Simulated cells looked at after rounds of 1, 2, 3, 1, … runs per arm (up to 20 looks). */
function simulate(o: { seed: number; cells: number; shift: number; cv: number; rule: Rule }) {
  const z = normal(o.seed);
  let called = 0, better = 0;
  const runs: number[] = [];
  for (let c = 0; c < o.cells; c++) {
    const a: number[] = [], b: number[] = [];
    for (let look = 0; look < 20; look++) {
      const k = 1 + (c + look) % 3;
      a.push(...sample(z, k, 100_000, o.cv));
      b.push(...sample(z, k, 100_000 * (1 + o.shift), o.cv));
      const v = o.rule(a, b);
      if (v === "better" || v === "worse") {
        called++;
        if (v === "better") better++, runs.push(a.length);
        break;
      }
      if (v === "no difference") break;
    }
  }
  runs.sort((x, y) => x - y);
  return { called: called / o.cells, better: better / o.cells, median: runs[runs.length >> 1] };
}

/** The fewest runs per arm with which compare's fixed-n rule calls `shift` better as often. */
function fixedN(shift: number, cv: number, power: number): number {
  const z = normal(99);
  for (let n = 4;; n++) {
    let better = 0;
    for (let i = 0; i < 400; i++) {
      const v = cellVerdict(sample(z, n, 100_000, cv), sample(z, n, 100_000 * (1 + shift), cv), {
        direction: "higher",
      });
      if (v.verdict === "better") better++;
    }
    if (better / 400 >= power) return n;
  }
}

const CELLS = 400;
/** Nominal 5 % plus three binomial standard errors of the estimate. */
const SLACK = 3 * Math.sqrt(0.05 * 0.95 / CELLS);

for (const cv of [0.03, 0.1, 0.3]) {
  Deno.test(`sequentialVerdict() A/A at CV ${cv * 100} %, up to 20 looks: at most 5 % called`, () => {
    const r = simulate({ seed: 100 + cv * 100, cells: CELLS, shift: 0, cv, rule: SEQUENTIAL });
    // deno-lint-ignore no-console -- the figures the README quotes
    console.log(`A/A CV ${cv * 100} %: ${(r.called * 100).toFixed(1)} % called better or worse`);
    assert.ok(r.called <= 0.05 + SLACK, `${(r.called * 100).toFixed(1)} % called`);
  });
}

Deno.test("the naive rule (compare's fixed-n test after every round) exceeds 5 % on A/A", () => {
  const r = simulate({ seed: 7, cells: 150, shift: 0, cv: 0.1, rule: NAIVE });
  // deno-lint-ignore no-console -- the figures the README quotes
  console.log(`naive rule, A/A CV 10 %: ${(r.called * 100).toFixed(1)} % called better or worse`);
  assert.ok(r.called > 0.1, `${(r.called * 100).toFixed(1)} % called`);
});

Deno.test("sequentialVerdict() stops early: +10 % at CV 3 % within 1.5× fixed-n, +30 % before it", () => {
  const ten = simulate({ seed: 11, cells: CELLS, shift: 0.1, cv: 0.03, rule: SEQUENTIAL });
  const fixed = fixedN(0.1, 0.03, Math.min(ten.better, 0.99));
  const thirty = simulate({ seed: 13, cells: CELLS, shift: 0.3, cv: 0.03, rule: SEQUENTIAL });
  const says = `+10 %: ${(ten.better * 100).toFixed(1)} % better, median ${ten.median} runs per ` +
    `arm; fixed-n with that power: ${fixed} (with 80 %: ${fixedN(0.1, 0.03, 0.8)}); +30 %: ` +
    `median ${thirty.median}`;
  // deno-lint-ignore no-console -- the figures the README quotes
  console.log(says);
  assert.ok(ten.median <= 1.5 * fixed, says);
  assert.ok(thirty.median < fixed, says);
  assert.ok(thirty.median < fixedN(0.3, 0.03, Math.min(thirty.better, 0.99)) || thirty.median < 4);
});
