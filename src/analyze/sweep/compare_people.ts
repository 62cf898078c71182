/**
 * A fixed-rate comparison (`compareSteps`) as people read it: the columns of its table, the
 * method in two sentences and one line on the whole.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { resultsFrame } from "../units.ts";
import { VERDICT_DEFAULTS } from "../compare/verdict.ts";

type Rec = Record<string, unknown>;

/** A ratio's interval as people read it: `0.82–0.97`, or null without one. */
function interval(low: unknown, high: unknown): string | null {
  return typeof low === "number" && typeof high === "number"
    ? `${low.toFixed(2)}–${high.toFixed(2)}`
    : null;
}

/**
 * The columns of a `compareSteps` frame people read: the step, each arm's achieved rate,
 * p99 and p50, the ratios with the p99 interval as one cell, the verdicts and the p99's note
 * (or why the step is not compared). CSV and JSON keep every column.
 *
 * @param c A frame from `compareSteps`.
 * @param by The arm column.
 * @returns The narrower frame.
 */
export function stepsForPeople(c: pl.DataFrame, by: string): pl.DataFrame {
  const recs = c.toRecords() as Rec[];
  return resultsFrame(recs.map((r) => ({
    test: r.test,
    clients: r.clients,
    [by]: r[by],
    requested_ops_per_sec: r.requested_ops_per_sec,
    baseline_achieved_ops_per_sec: r.baseline_achieved_ops_per_sec,
    candidate_achieved_ops_per_sec: r.candidate_achieved_ops_per_sec,
    baseline_p99_latency_ms: r.baseline_p99_latency_ms,
    candidate_p99_latency_ms: r.candidate_p99_latency_ms,
    p99_ratio: r.p99_ratio,
    p99_ratio_interval: interval(r.p99_ratio_ci_low, r.p99_ratio_ci_high),
    p99_verdict: r.p99_verdict,
    baseline_p50_latency_ms: r.baseline_p50_latency_ms,
    candidate_p50_latency_ms: r.candidate_p50_latency_ms,
    p50_ratio: r.p50_ratio,
    p50_verdict: r.p50_verdict,
    note: r.p99_verdict_note,
  })));
}

/** How fixed-rate steps are compared, in two sentences, for the tables for people. */
export const STEP_COMPARE_METHOD =
  "Each requested rate: the arms' achieved rates and p50 / p99 as " +
  "`kvlab sweep` merges the repetitions; ratio = candidate / baseline; the interval is Moses' " +
  "95 % interval of the Hodges–Lehmann ratio of the repetitions' own p99s. Better or worse: an " +
  "exact rank-sum test at 5 % with at least 4 repetitions per arm and a difference above the " +
  "histogram's or the printed table's resolution (lower latency is better); no difference: the " +
  "interval within ±5 % or that resolution; not compared: a step either arm did not sustain " +
  "(NS, over, not run after a first NS) or that two load generators measured.";

/**
 * One line on a step comparison as a whole: per latency, how many steps differ (and after
 * Benjamini–Hochberg), how many show no difference, how many are inconclusive and how many
 * are not compared.
 *
 * @param c A frame from `compareSteps`.
 * @param alpha The level. @default {0.05}
 * @returns The line (no trailing newline).
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { stepVerdictSummary } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const c = pl.DataFrame({
 *   p99_verdict: ["worse", "not compared"], p99_q_value: [0.01, null],
 *   p50_verdict: ["no difference", "not compared"], p50_q_value: [0.4, null],
 * });
 * assert.equal(
 *   stepVerdictSummary(c),
 *   "fixed-rate steps: p99 differs in 1 of 1 steps compared (1 after Benjamini–Hochberg, " +
 *     "q < 0.05), 0 no difference, 0 inconclusive; p50 differs in 0 of 1 (0 after " +
 *     "Benjamini–Hochberg), 1 no difference, 0 inconclusive; 1 step not compared (NS, not run, " +
 *     "or another load generator).",
 * );
 * ```
 */
export function stepVerdictSummary(c: pl.DataFrame, alpha = VERDICT_DEFAULTS.alpha): string {
  const count = (m: string) => {
    const v = c.getColumn(`${m}_verdict`).toArray() as string[];
    const q = c.getColumn(`${m}_q_value`).toArray() as (number | null)[];
    const differ = (x: string) => x === "better" || x === "worse";
    return {
      compared: v.filter((x) => x !== "not compared").length,
      differ: v.filter(differ).length,
      adjusted: v.filter((x, i) => differ(x) && q[i] !== null && q[i]! < alpha).length,
      none: v.filter((x) => x === "no difference").length,
      open: v.filter((x) => x === "inconclusive").length,
      not: v.filter((x) => x === "not compared").length,
    };
  };
  const p99 = count("p99"), p50 = count("p50");
  return `fixed-rate steps: p99 differs in ${p99.differ} of ${p99.compared} steps compared ` +
    `(${p99.adjusted} after Benjamini–Hochberg, q < ${alpha}), ${p99.none} no difference, ` +
    `${p99.open} inconclusive; p50 differs in ${p50.differ} of ${p50.compared} (${p50.adjusted} ` +
    `after Benjamini–Hochberg), ${p50.none} no difference, ${p50.open} inconclusive; ` +
    `${p99.not} step${p99.not === 1 ? "" : "s"} not compared (NS, not run, or another load ` +
    "generator).";
}
