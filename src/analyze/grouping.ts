/**
 * The grouping every comparison and chart shares: `test` plus each run parameter that varies
 * *within* an arm. A chart that took any other grouping would pool or stack what `compare`
 * keeps apart.
 *
 * @module
 */

import pl from "nodejs-polars";

/** Run parameters that split comparisons when they vary in the data. */
export const PARAMETER_COLUMNS = [
  "clients",
  "threads",
  "pipeline",
  "data_size_bytes",
  "keyspace",
  "transport",
  // fixed-rate and pub/sub steps: each requested rate is its own group
  "requested_ops_per_sec",
  // memtier --run-count: best, worst and average rows are never pooled with the runs' own
  "aggregate",
] as const;

/** The grouping of a frame by arms: the keys that split groups, and the confounded columns. */
export interface Grouping {
  /** `test`, then each parameter that varies within at least one arm. */
  keys: string[];
  /** Parameters that vary only between arms (confounded with them; they split nothing). */
  confounded: string[];
}

/**
 * The grouping `compare` and `delta` use for arms of `by`: `test` plus each of
 * {@link PARAMETER_COLUMNS} that takes more than one value inside some arm. A parameter that
 * differs only between arms is confounded with them and does not split groups.
 *
 * @param df A results frame (results ⋈ runs).
 * @param by The column whose values are the arms (never a key itself).
 * @returns The keys and the confounded columns.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { comparisonKeys } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   test: ["SET", "SET", "SET", "SET"], server: ["a", "a", "b", "b"],
 *   clients: [10, 50, 10, 50], keyspace: [1, 1, 2, 2],
 * });
 * assert.deepEqual(comparisonKeys(df, "server"), { keys: ["test", "clients"], confounded: ["keyspace"] });
 * assert.deepEqual(comparisonKeys(df, "clients").keys, ["test", "keyspace"]);
 * ```
 */
export function comparisonKeys(df: pl.DataFrame, by: string): Grouping {
  const varying = PARAMETER_COLUMNS.filter((c) =>
    c !== by && df.columns.includes(c) && df.getColumn(c).nUnique() > 1
  );
  if (varying.length === 0 || !df.columns.includes(by)) {
    return { keys: ["test"], confounded: [...varying] };
  }
  const perArm = df.lazy().groupBy(by, true)
    .agg(...varying.map((c) => pl.col(c).nUnique().alias(c)))
    .select(...varying.map((c) => pl.col(c).max().alias(c)))
    .collectSync().toRecords()[0] as Record<string, number>;
  return {
    keys: ["test", ...varying.filter((c) => perArm[c] > 1)],
    confounded: varying.filter((c) => perArm[c] <= 1),
  };
}
