/**
 * The requested and achieved rate of stored sweep steps, read back from a dataset: what a
 * latency sweep needs to apply its NS rule to the step it just ran, or to the steps of an
 * earlier session when a sweep is resumed. Private to `latency_sweep.ts`.
 *
 * @module
 */

import pl from "nodejs-polars";
import { runFacts, scanDatasetTable } from "../../../store/layout.ts";

/** One stored step. */
export interface StoredStep {
  runId: string;
  /** The run's label (the plan's server name). */
  label: string;
  requested: number;
  /** Null when the step produced no rate (a run cut short). */
  achieved: number | null;
}

/**
 * The step of one run: its `TOTALS` row with a requested rate, else its first row with one.
 *
 * @param data Dataset directory.
 * @param runId The run.
 * @returns The rates, or null when the run has no such row.
 */
export function stepOf(data: string, runId: string): Omit<StoredStep, "runId" | "label"> | null {
  return stepsOf(data, [runId]).get(runId) ?? null;
}

/** The steps of runs, read from the dataset's `results` in one scan. */
function stepsOf(
  data: string,
  runIds: readonly string[],
): Map<string, Omit<StoredStep, "runId" | "label">> {
  const out = new Map<string, Omit<StoredStep, "runId" | "label">>();
  if (runIds.length === 0) return out;
  const rows = scanDatasetTable(data, "results")
    .filter(pl.col("run_id").isIn([...runIds]).and(pl.col("requested_ops_per_sec").isNotNull()))
    .select("run_id", "test_index", "test", "requested_ops_per_sec", "ops_per_sec")
    .sort(["run_id", "test_index"]).collectSync().toRecords() as {
      run_id: string;
      test: string;
      requested_ops_per_sec: number;
      ops_per_sec: number | null;
    }[];
  for (const r of rows) {
    const prev = out.get(r.run_id);
    if (prev && r.test !== "TOTALS") continue;
    out.set(r.run_id, { requested: r.requested_ops_per_sec, achieved: r.ops_per_sec });
  }
  return out;
}

/**
 * The steps a plan already stored (runs that name the plan, not failed).
 *
 * @param data Dataset directory.
 * @param planName The plan's name.
 * @returns One entry per stored run with a step row.
 */
export function storedSteps(data: string, planName: string): StoredStep[] {
  const runs = runFacts(data, ["run_id", "plan_name", "label", "status"])
    .filter((m) => m.plan_name === planName && m.status !== "failed");
  const steps = stepsOf(data, runs.map((m) => String(m.run_id)));
  const out: StoredStep[] = [];
  for (const m of runs) {
    const step = steps.get(String(m.run_id));
    if (step) out.push({ runId: String(m.run_id), label: String(m.label ?? ""), ...step });
  }
  return out;
}
