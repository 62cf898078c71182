/**
 * The requested and achieved rate of stored sweep steps, read back from a dataset: what a
 * latency sweep needs to apply its NS rule to the step it just ran, or to the steps of an
 * earlier session when a sweep is resumed. Private to `latency_sweep.ts`.
 *
 * @module
 */

import pl from "nodejs-polars";

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
  let df: pl.DataFrame;
  try {
    df = pl.readParquet(`${data}/runs/${runId}/results.parquet`);
  } catch {
    return null;
  }
  const rows = (df.select("test", "requested_ops_per_sec", "ops_per_sec").toRecords() as {
    test: string;
    requested_ops_per_sec: number | null;
    ops_per_sec: number | null;
  }[]).filter((r) => r.requested_ops_per_sec !== null);
  const row = rows.find((r) => r.test === "TOTALS") ?? rows[0];
  return row ? { requested: row.requested_ops_per_sec!, achieved: row.ops_per_sec } : null;
}

/**
 * The steps a plan already stored (runs whose `run.json` names the plan).
 *
 * @param data Dataset directory.
 * @param planName The plan's name.
 * @returns One entry per stored run with a step row.
 */
export function storedSteps(data: string, planName: string): StoredStep[] {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(`${data}/runs`)];
  } catch {
    return [];
  }
  const out: StoredStep[] = [];
  for (const e of entries) {
    let m: { plan_name?: string; label?: string | null; status?: string };
    try {
      m = JSON.parse(Deno.readTextFileSync(`${data}/runs/${e.name}/run.json`));
    } catch {
      continue;
    }
    if (m.plan_name !== planName || m.status === "failed") continue;
    const step = stepOf(data, e.name);
    if (step) out.push({ runId: e.name, label: m.label ?? "", ...step });
  }
  return out;
}
