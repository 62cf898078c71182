/**
 * What the fixed-rate kinds (`latency-sweep`, `pubsub`) share besides `fixed_rate.ts`: the one
 * form of a skipped step (not stored), and the steps a latency sweep already stored, read back
 * when a sweep is resumed (a step this session runs is judged from what its runner returned,
 * never read back). Private to `plan/kinds/`.
 *
 * @module
 */

import pl from "nodejs-polars";
import type { FixedRateStep } from "../../../fixed_rate.ts";
import { Dataset } from "../../../store/dataset.ts";
import type { CollectedRun } from "../../collector.ts";

/**
 * A step not run, after its sweep's first NS: nothing is stored (no run id); the plan reports
 * it as complete with its reason (`skipped: … did not sustain …`).
 *
 * @param reason Why, from `SkipAfterNs.skipReason`.
 * @returns The cell's outcome.
 */
export function skippedStep(reason: string): CollectedRun {
  return {
    runId: "",
    status: "complete",
    tests: 0,
    reason,
    command: "",
    interrupted: false,
    results: [],
  };
}

/** One stored step. */
export interface StoredStep extends FixedRateStep {
  runId: string;
  /** The run's label (the plan's server name). */
  label: string;
}

/**
 * The steps a plan already stored (complete runs that name the plan: an incomplete or failed
 * step is run again, and its redo judged, so a step cut short by Ctrl-C never stops the sweep
 * after it, issue 30): per run, its `TOTALS`
 * row with a requested rate, else its first row with one; its achieved rate is null when the
 * step produced none (a run cut short).
 *
 * @param data Dataset directory.
 * @param planName The plan's name.
 * @returns One entry per stored run with a step row.
 */
export function storedSteps(data: string, planName: string): StoredStep[] {
  const ds = Dataset.of(data);
  const runs = ds.runFacts(["run_id", "plan_name", "label", "status"], {
    where: pl.col("plan_name").eq(pl.lit(planName)),
  }).filter((m) => m.plan_name === planName && m.status === "complete");
  const runIds = runs.map((m) => String(m.run_id));
  if (runIds.length === 0) return [];
  const steps = new Map<string, FixedRateStep>();
  const rows = ds.read("results", {
    runIds,
    where: pl.col("requested_ops_per_sec").isNotNull(),
    columns: ["run_id", "test_index", "test", "requested_ops_per_sec", "ops_per_sec"],
  }).sort(["run_id", "test_index"]).toRecords() as {
    run_id: string;
    test: string;
    requested_ops_per_sec: number;
    ops_per_sec: number | null;
  }[];
  for (const r of rows) {
    if (steps.has(r.run_id) && r.test !== "TOTALS") continue;
    steps.set(r.run_id, {
      requestedOpsPerSec: r.requested_ops_per_sec,
      achievedOpsPerSec: r.ops_per_sec,
    });
  }
  const out: StoredStep[] = [];
  for (const m of runs) {
    const step = steps.get(String(m.run_id));
    if (step) out.push({ runId: String(m.run_id), label: String(m.label ?? ""), ...step });
  }
  return out;
}
