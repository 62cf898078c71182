/**
 * The sample-size advice of a comparison table (issue 36): per inconclusive cell, how many runs
 * per arm would tell ±`minEffect` (and the observed difference, when it is larger) at the
 * verdict's level with 80 % power (`../sequential/sample_size.ts`), and one short line on the
 * table as a whole.
 *
 * @module
 */

import { cellAdvice } from "../sequential/sample_size.ts";
import type pl from "nodejs-polars";

/** A plain record (a summary row of one arm). */
type Rec = Record<string, unknown>;

/**
 * The advice columns of one cell: `runs_needed` and `runs_needed_observed` (null unless the
 * verdict is inconclusive and the spread is known).
 *
 * @param verdict The cell's verdict.
 * @param values The baseline's and the candidate's values.
 * @param o The smallest difference worth telling, the level.
 * @returns The two columns.
 *
 * @example
 * ```ts
 * import { adviceColumns } from "./advice.ts";
 * import assert from "node:assert/strict";
 * const a = [100, 90, 110, 95, 105];
 * assert.deepEqual(adviceColumns("better", [a, a], {}), { runs_needed: null, runs_needed_observed: null });
 * assert.ok((adviceColumns("inconclusive", [a, a], {}).runs_needed as number) > 5);
 * ```
 */
export function adviceColumns(
  verdict: string,
  values: [readonly number[], readonly number[]],
  o: { minEffect?: number; alpha?: number },
): Rec {
  if (verdict !== "inconclusive") return { runs_needed: null, runs_needed_observed: null };
  const a = cellAdvice(values[0], values[1], { minEffect: o.minEffect, alpha: o.alpha });
  return { runs_needed: a.runsNeeded, runs_needed_observed: a.runsNeededObserved };
}

/**
 * One short line on a table's inconclusive cells: the runs per arm they would need, or null
 * when no cell has advice. Reads the columns `runs_needed`, `runs_needed_observed` (or those of
 * a prefix, `throughput_runs_needed`), and the runs per arm now (`baseline_n`/`candidate_n` or
 * `from_n`/`to_n`).
 *
 * @param c A table from `compare()` or `delta()`.
 * @param o The smallest difference the advice tells (for the text), the prefix of the columns.
 * @returns The line (no trailing newline), or null.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { adviceSummary } from "./advice.ts";
 * import assert from "node:assert/strict";
 * const c = pl.DataFrame({
 *   baseline_n: [5, 5, 5], candidate_n: [5, 5, 5],
 *   runs_needed: [12, 40, null], runs_needed_observed: [null, 9, null],
 * });
 * assert.equal(
 *   adviceSummary(c),
 *   "Runs needed: the 2 inconclusive cells would need 12–40 runs per arm (now 5) to tell ±5 % " +
 *     "at 5 % with 80 % power; to tell the difference seen, 9 (1 cell). Column runs_needed.",
 * );
 * assert.equal(adviceSummary(c.head(0)), null);
 * ```
 */
export function adviceSummary(
  c: pl.DataFrame,
  o: { minEffect?: number; prefix?: string } = {},
): string | null {
  const col = `${o.prefix ?? ""}runs_needed`;
  if (!c.columns.includes(col)) return null;
  const need = c.getColumn(col).toArray() as (number | null)[];
  const seen = c.columns.includes(`${col}_observed`)
    ? c.getColumn(`${col}_observed`).toArray() as (number | null)[]
    : need.map(() => null);
  const nCols = c.columns.includes("baseline_n")
    ? ["baseline_n", "candidate_n"]
    : ["from_n", "to_n"];
  const now = nCols.every((n) => c.columns.includes(n))
    ? nCols.map((n) => c.getColumn(n).toArray() as number[])
    : null;
  const cells = need.flatMap((v, i) => v === null ? [] : [i]);
  if (cells.length === 0) return null;
  const range = (xs: number[]) => {
    const lo = Math.min(...xs), hi = Math.max(...xs);
    return lo === hi ? String(lo) : `${lo}–${hi}`;
  };
  const per = now ? range(cells.map((i) => Math.min(now[0][i], now[1][i]))) : null;
  const observed = cells.flatMap((i) => seen[i] === null ? [] : [seen[i]!]);
  const effect = +((o.minEffect ?? 0.05) * 100).toFixed(1);
  const many = cells.length === 1
    ? "the inconclusive cell"
    : `the ${cells.length} inconclusive cells`;
  return `Runs needed: ${many} would need ${range(cells.map((i) => need[i]!))} runs per arm` +
    `${per ? ` (now ${per})` : ""} to tell ±${effect} % at 5 % with 80 % power` +
    (observed.length
      ? `; to tell the difference seen, ${range(observed)} (${observed.length} cell${
        observed.length > 1 ? "s" : ""
      })`
      : "") +
    `. Column ${col}.`;
}
