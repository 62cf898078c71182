/** Seeded simulated runs for the sequential tests (as calibration_test.ts draws them). */
import { seededRandom } from "../../../src/random.ts";

/** A seeded standard normal (Box–Muller). */
export function normal(seed: number): () => number {
  const u = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

/** `n` runs of a metric around `mean` with coefficient of variation `cv`. */
export function sample(z: () => number, n: number, mean: number, cv: number): number[] {
  return Array.from({ length: n }, () => mean * (1 + cv * z()));
}
