// deno-lint-ignore-file no-console
/**
 * Change-point accuracy: `deno run -A bench/changes.ts [seeds]` (default 20). For each seed, a
 * generated 150-night history of 20 tests (27 shifts of 4–12 %, 2 % noise; see
 * `test/_support/history.ts`) goes through `changePoints` with kvlab's defaults (window 50,
 * p 0.001), values rounded as `redis-benchmark --csv` prints them; prints the shifts found within
 * ±2 nights and the false change points per history, then the share of 1,000 pure-noise series
 * of 150 runs with any change point. (`test/cli/changes_test.ts` runs seeds 1–3 end to end:
 * files, ingest, `kvlab changes`.)
 *
 * @module
 */

import { changePoints } from "../src/analyze/changes/_edivisive.ts";
import { seededRandom } from "../src/random.ts";
import { nightlyHistory } from "../test/_support/history.ts";

const seeds = Number(Deno.args[0] ?? 20);
for (let seed = 1; seed <= seeds; seed++) {
  let truth = 0;
  let found = 0;
  let falsePoints = 0;
  for (const h of nightlyHistory(seed)) {
    const got = changePoints(h.opsPerSec.map((v) => Number(v.toFixed(2)))).map((c) => c.index);
    truth += h.shifts.length;
    found += h.shifts.filter((s) => got.some((g) => Math.abs(g - s) <= 2)).length;
    falsePoints += got.filter((g) => !h.shifts.some((s) => Math.abs(g - s) <= 2)).length;
  }
  console.log(`seed ${seed}: ${found} of ${truth} shifts found, ${falsePoints} false`);
}
const rand = seededRandom(2301);
const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
let hit = 0;
for (let i = 0; i < 1000; i++) {
  if (changePoints(Array.from({ length: 150 }, () => 1000 * (1 + 0.02 * gauss()))).length) hit++;
}
console.log(`pure noise: ${hit} of 1000 series of 150 runs have a change point`);
