/**
 * Attempts of a plan cell: which runs a view counts. A plan cell (`runs.plan_name` ×
 * `runs.plan_cell`: server × parameters × repetition) is run again when its run was interrupted,
 * cut or failed; every attempt stays in the dataset as the record of what happened. A cell counts
 * the run of its latest complete attempt only (latest by `started_at`, then run id): its other
 * runs are superseded, and every view (compare, delta, sweep, changes, the charts and the summary
 * page) leaves them out, because the loading layer (`load.ts`) does, by this one rule. A cell with
 * no complete attempt keeps its runs (their finished tests are all it has); runs of no plan
 * (ingested outputs, `kvlab load`, `kvlab sample`) are never superseded. `kvlab table` shows every
 * run.
 *
 * @module
 */

import pl from "nodejs-polars";

/** The run columns {@link supersededRuns} reads. */
export const ATTEMPT_COLUMNS = ["run_id", "plan_name", "plan_cell", "status", "started_at"];

/**
 * The runs of plan cells superseded by the cell's latest complete attempt (see the module doc).
 *
 * @param runs Runs with `run_id`, `plan_name`, `plan_cell`, `status` and (to order attempts)
 * `started_at`; other columns are ignored.
 * @returns The superseded runs' ids, sorted; none when a column the rule needs is missing.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { supersededRuns } from "./attempts.ts";
 * import assert from "node:assert/strict";
 * const at = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m));
 * const runs = pl.DataFrame({
 *   run_id: ["r1", "r2", "r3", "r4", "r5", "r6"],
 *   plan_name: ["p", "p", "p", "p", "p", null],
 *   // cell a: interrupted, then redone; cell b: failed twice; cell c: complete once
 *   plan_cell: ["a", "b", "a", "b", "c", null],
 *   status: ["incomplete", "failed", "complete", "failed", "complete", "incomplete"],
 *   started_at: [at(1), at(2), at(3), at(4), at(5), at(6)],
 * });
 * assert.deepEqual(supersededRuns(runs), ["r1"]);
 * assert.deepEqual(supersededRuns(runs.drop("plan_cell")), []);
 * ```
 */
export function supersededRuns(runs: pl.DataFrame): string[] {
  if (!["run_id", "plan_name", "plan_cell", "status"].every((c) => runs.columns.includes(c))) {
    return [];
  }
  const time = runs.columns.includes("started_at")
    ? pl.col("started_at")
    : pl.lit(null).alias("started_at");
  const cells = runs.lazy()
    .filter(pl.col("plan_name").isNotNull().and(pl.col("plan_cell").isNotNull()))
    .select(
      pl.col("run_id"),
      pl.col("plan_name"),
      pl.col("plan_cell"),
      pl.col("status").eq(pl.lit("complete")).fillNull(false).alias("complete"),
      time,
    )
    .collectSync();
  if (cells.height === 0 || !cells.getColumn("complete").any()) return [];
  // a run with no start time counts as the earliest attempt
  const kept = cells.filter(pl.col("complete"))
    .sort(["started_at", "run_id"], false, false)
    .groupBy(["plan_name", "plan_cell"]).agg(pl.col("run_id").last().alias("kept"));
  return (cells.join(kept, { on: ["plan_name", "plan_cell"], how: "inner" })
    .filter(pl.col("run_id").neq(pl.col("kept")))
    .getColumn("run_id").toArray() as string[]).sort();
}

/**
 * The runs without the superseded attempts of their plan cells ({@link supersededRuns}).
 *
 * @param runs Runs (any columns; without those the rule needs, all are kept).
 * @returns The runs kept, in their order, and the ids of those left out.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { currentAttempts } from "./attempts.ts";
 * import assert from "node:assert/strict";
 * const runs = pl.DataFrame({
 *   run_id: ["r1", "r2"], plan_name: ["p", "p"], plan_cell: ["a", "a"],
 *   status: ["incomplete", "complete"],
 * });
 * const { kept, leftOut } = currentAttempts(runs);
 * assert.deepEqual(kept.getColumn("run_id").toArray(), ["r2"]);
 * assert.deepEqual(leftOut, ["r1"]);
 * ```
 */
export function currentAttempts(runs: pl.DataFrame): { kept: pl.DataFrame; leftOut: string[] } {
  const leftOut = supersededRuns(runs);
  if (leftOut.length === 0) return { kept: runs, leftOut };
  return { kept: runs.filter(pl.col("run_id").isIn(leftOut).not()), leftOut };
}

/**
 * What a command says on stderr when it left superseded attempts out.
 *
 * @param leftOut The runs left out.
 * @returns The line (without a newline), or null when none was.
 *
 * @example
 * ```ts
 * import { leftOutAttempts } from "./attempts.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   leftOutAttempts(["r1"]),
 *   "left out 1 run of a plan cell done again: each cell counts its latest complete attempt " +
 *     "(kvlab table runs lists every run)",
 * );
 * assert.equal(leftOutAttempts([]), null);
 * ```
 */
export function leftOutAttempts(leftOut: readonly string[]): string | null {
  if (leftOut.length === 0) return null;
  const n = leftOut.length;
  return `left out ${n} run${n === 1 ? " of a plan cell" : "s of plan cells"} done again: ` +
    "each cell counts its latest complete attempt (kvlab table runs lists every run)";
}
