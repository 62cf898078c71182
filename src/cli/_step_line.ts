/**
 * The line `kvlab run` prints after a fixed-rate step (latency-sweep, pubsub): what it
 * achieved against what was asked, the sustained rule's verdict, p50 and p99, as `kvlab load`
 * and `kvlab pubsub` print them. Private to `src/cli/`.
 *
 * @module
 */

import type { DatasetRef } from "../store/dataset.ts";
import pl from "nodejs-polars";
import { DEFAULT_SUSTAINED_RULE, type SustainedRule, sustainedVerdict } from "../fixed_rate.ts";
import { loadTable } from "../analyze/load.ts";

const rate = (v: unknown) => typeof v === "number" ? Math.round(v).toLocaleString("en-US") : "-";
const ms = (v: unknown) => (typeof v === "number" ? v.toFixed(3) : "-");

/**
 * The step lines of a stored run: one per results row with a requested rate.
 *
 * @param data The dataset.
 * @param runId The run.
 * @param rule The plan's sustained rule (a latency-sweep plan's `sustained:`).
 * @returns `  GET: 1,998/s of 2,000/s (sustained); p50 0.131 ms, p99 0.402 ms\n` lines, or ""
 * for a run without fixed-rate steps.
 */
export function stepLines(
  data: DatasetRef,
  runId: string,
  rule: SustainedRule = DEFAULT_SUSTAINED_RULE,
): string {
  const results = loadTable(data, "results");
  if (!results.columns.includes("requested_ops_per_sec")) return "";
  const rows = results.filter(
    pl.col("run_id").eq(pl.lit(runId)).and(pl.col("requested_ops_per_sec").isNotNull()),
  ).toRecords() as Record<string, unknown>[];
  return rows.map((r) => {
    const requested = r.requested_ops_per_sec as number;
    const achieved = typeof r.ops_per_sec === "number" ? r.ops_per_sec : null;
    const verdict = requested > 0
      ? sustainedVerdict({ requestedOpsPerSec: requested, achievedOpsPerSec: achieved }, rule)
      : "-";
    return `  ${r.test}: ${rate(achieved)}/s of ${rate(requested)}/s (${verdict}); ` +
      `p50 ${ms(r.p50_latency_ms)} ms, p99 ${ms(r.p99_latency_ms)} ms\n`;
  }).join("");
}
