/**
 * The step rows of a results frame (what a sweep is made of). Private to `sweep.ts` and
 * `spectrum.ts`.
 *
 * @module
 */

import type pl from "nodejs-polars";
import type { FixedRateStep } from "../../fixed_rate.ts";

/** A record of a frame. */
export type Rec = Record<string, unknown>;

/** A step row with what the table needs: a fixed-rate step and its latency. */
export interface StepRow extends FixedRateStep {
  runId: string;
  testIndex: number;
  workload: string;
  clients: number | null;
  arm: string;
  p50: number | null;
  p99: number | null;
  basis: string;
  /** Every rate of the sweep the run belongs to (its `sweep_rates` tag), when known. */
  planned: number[];
}

/** The `sweep_rates` tag of a run's tags (JSON), as numbers. */
function plannedRates(tags: unknown): number[] {
  try {
    const t = JSON.parse(String(tags ?? "{}"));
    return typeof t.sweep_rates === "string" ? t.sweep_rates.split(",").map(Number) : [];
  } catch {
    return [];
  }
}

/**
 * The step rows of the results: per run, its `TOTALS` rows with a requested rate when it has
 * one (named after the run's other tests: `GET`, `SET+GET`), else every row with one.
 */
export function stepRows(results: pl.DataFrame, by: string): StepRow[] {
  for (const c of ["run_id", "test_index", "test", "requested_ops_per_sec", "ops_per_sec", by]) {
    if (!results.columns.includes(c)) {
      throw new TypeError(`invalid column: ${c} (not in the frame)`);
    }
  }
  const recs = results.toRecords() as Rec[];
  const byRun = new Map<string, Rec[]>();
  for (const r of recs) byRun.set(String(r.run_id), [...(byRun.get(String(r.run_id)) ?? []), r]);
  const out: StepRow[] = [];
  for (const [runId, rows] of byRun) {
    // a requested rate of 0 or less is no fixed rate (memtier's `--rate-limiting=0`: unlimited)
    const steps = rows.filter((r) =>
      typeof r.requested_ops_per_sec === "number" && r.requested_ops_per_sec > 0 &&
      r.complete !== false
    );
    const totals = steps.filter((r) => r.test === "TOTALS");
    const others = rows.filter((r) => r.test !== "TOTALS").map((r) => String(r.test));
    for (const r of totals.length > 0 ? totals : steps) {
      const num = (k: string) => (typeof r[k] === "number" ? r[k] as number : null);
      out.push({
        runId,
        testIndex: Number(r.test_index),
        workload: r.test === "TOTALS" && others.length
          ? [...new Set(others)].join("+")
          : String(r.test),
        clients: num("clients"),
        arm: r[by] === null || r[by] === undefined ? "(no label)" : String(r[by]),
        requestedOpsPerSec: r.requested_ops_per_sec as number,
        achievedOpsPerSec: num("ops_per_sec"),
        p50: num("p50_latency_ms"),
        p99: num("p99_latency_ms"),
        basis: typeof r.latency_basis === "string" ? r.latency_basis : "send",
        planned: plannedRates(r.tags),
      });
    }
  }
  return out;
}

/** The frames {@link sweepTable} reads, when not given a dataset directory. */
export interface SweepFrames {
  /** `results` joined with `runs` ({@link loadResults}). */
  results: pl.DataFrame;
  /** `hdr_histograms`; without it, repetitions are merged by their median. */
  hdr?: pl.DataFrame;
}
