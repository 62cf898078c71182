/**
 * The sustained rule of fixed-rate sweeps (seed 000's): a step is sustained when the achieved
 * rate is within 97–103 % of the target; below is `NS` (not sustained), above is `over`. Once a
 * server fails to sustain a step, its later (higher) steps are skipped. Pure, shared by the
 * collectors (which stop a server's sweep at its first NS) and the sweep tables.
 *
 * @module
 */

/** Lowest achieved ÷ target that counts as sustained. */
export const SUSTAINED_MIN_RATIO = 0.97;
/** Highest achieved ÷ target that counts as sustained; above it the step overshot. */
export const SUSTAINED_MAX_RATIO = 1.03;

/** How a step went against its target rate. */
export type SustainedVerdict = "sustained" | "NS" | "over";

/** A step's verdict, or `skipped` for a step after the server's first NS. */
export type SweepVerdict = SustainedVerdict | "skipped";

/**
 * The verdict of one step.
 *
 * @param targetPerSec The rate asked (> 0).
 * @param achievedPerSec The rate achieved; null or NaN (no result) is NS.
 * @returns `sustained` within 97–103 % of the target, `NS` below, `over` above.
 * @throws {RangeError} When the target is not a positive number.
 *
 * @example
 * ```ts
 * import { sustainedVerdict } from "./fixed_rate.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sustainedVerdict(100_000, 97_000), "sustained");
 * assert.equal(sustainedVerdict(100_000, 103_000), "sustained");
 * assert.equal(sustainedVerdict(100_000, 96_999), "NS");
 * assert.equal(sustainedVerdict(100_000, 103_001), "over");
 * assert.equal(sustainedVerdict(100_000, null), "NS");
 * ```
 */
export function sustainedVerdict(
  targetPerSec: number,
  achievedPerSec: number | null,
): SustainedVerdict {
  if (!(targetPerSec > 0) || !Number.isFinite(targetPerSec)) {
    throw new RangeError(`target rate must be a positive number: ${targetPerSec}`);
  }
  if (achievedPerSec === null || !Number.isFinite(achievedPerSec)) return "NS";
  const ratio = achievedPerSec / targetPerSec;
  // compared in integer basis points, so 97 % of a round target is not lost to rounding
  const bp = Math.round(ratio * 1e6) / 1e2;
  if (bp < SUSTAINED_MIN_RATIO * 1e4) return "NS";
  if (bp > SUSTAINED_MAX_RATIO * 1e4) return "over";
  return "sustained";
}

/**
 * The verdicts of one server's steps: each step's own, except that every step with a higher
 * target than the server's first NS is `skipped` (shown `-` in tables), whether or not it ran.
 *
 * @param steps One server's steps, in any order.
 * @returns A verdict per step, in the order given.
 *
 * @example
 * ```ts
 * import { sweepVerdicts } from "./fixed_rate.ts";
 * import assert from "node:assert/strict";
 * const steps = [
 *   { targetPerSec: 300, achievedPerSec: 231 },
 *   { targetPerSec: 100, achievedPerSec: 100 },
 *   { targetPerSec: 400, achievedPerSec: 400 },
 *   { targetPerSec: 200, achievedPerSec: 199 },
 * ];
 * assert.deepEqual(sweepVerdicts(steps), ["NS", "sustained", "skipped", "sustained"]);
 * ```
 */
export function sweepVerdicts(
  steps: readonly { targetPerSec: number; achievedPerSec: number | null }[],
): SweepVerdict[] {
  const verdicts = steps.map((s) => sustainedVerdict(s.targetPerSec, s.achievedPerSec));
  const firstNs = Math.min(
    ...steps.filter((_, i) => verdicts[i] === "NS").map((s) => s.targetPerSec),
  );
  return verdicts.map((v, i) => steps[i].targetPerSec > firstNs ? "skipped" : v);
}
