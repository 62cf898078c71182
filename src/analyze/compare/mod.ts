/**
 * Comparisons with the uncertainty that repetitions give: an arm against a baseline
 * ({@link compare}), a change along one dimension ({@link delta}), and the calibrated verdict
 * rule they share (`verdict.ts`; fixed-rate steps are compared by `sweep/compare.ts`).
 *
 * @module
 */

export * from "./compare.ts";
export * from "./verdict.ts";
export * from "./advice.ts";
