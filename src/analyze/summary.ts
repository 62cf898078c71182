/**
 * One summary of repetitions, computed in polars: group by key columns (groups in order of
 * first appearance) → row count, and per metric the median, min and max of its finite values,
 * optionally the values themselves (in row order, for a bootstrap) and the distinct values of
 * other columns. Comparisons, scaling curves and charts all summarise through it, so a chart
 * groups exactly as its table does.
 *
 * The median of an even count is the mean of the two middle values, as `_stats.ts`'s `median`
 * computes it (polars' `quantile(0.5, "midpoint")`; its `median()` interpolates and can differ
 * in the last bit).
 *
 * @module
 */

import pl from "nodejs-polars";

/** Options of {@link summarize}. */
export interface SummaryOptions {
  /** Grouping columns. */
  keys: readonly string[];
  /** Metric columns: each gets `median_<m>`, `min_<m>`, `max_<m>` over its finite values. */
  metrics: readonly string[];
  /**
   * Also `values_<m>`: the finite values of each metric, in row order.
   * @default {false}
   */
  values?: boolean;
  /**
   * Columns whose distinct values (in order of first appearance) each group lists as
   * `distinct_<c>`.
   * @default {[]}
   */
  distinct?: readonly string[];
}

/** Whether a column holds numbers that polars can test for finiteness. */
function numeric(df: pl.DataFrame, column: string): boolean {
  return df.getColumn(column).isNumeric();
}

/** The finite values of a column as an expression (none for a column that is not numeric). */
function finite(df: pl.DataFrame, column: string): pl.Expr {
  const c = pl.col(column);
  return numeric(df, column) ? c.filter(c.cast(pl.Float64).isFinite()) : c.filter(pl.lit(false));
}

/**
 * The rows whose `column` holds a finite number (no null, NaN or infinity; none when the column
 * is not numeric).
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { finiteRows } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ x: [1, null, NaN, 4] });
 * assert.deepEqual(finiteRows(df, "x").getColumn("x").toArray(), [1, 4]);
 * ```
 */
export function finiteRows(df: pl.DataFrame, column: string): pl.DataFrame {
  if (!numeric(df, column)) return df.head(0);
  return df.filter(pl.col(column).cast(pl.Float64).isFinite().fillNull(false));
}

/**
 * Summarises a frame per group of `keys`.
 *
 * @param df The rows (repetitions); rows whose metric is not finite count in `n` but not in
 * the metric's statistics (filter them first with {@link finiteRows} to leave them out).
 * @param options Keys, metrics and what else to keep.
 * @returns One row per group, in order of first appearance: the keys, `n` (rows), then per
 * metric `median_<m>`, `min_<m>`, `max_<m>` (null without finite values) and, when asked,
 * `values_<m>` and `distinct_<c>` lists.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { summarize } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET", "GET", "SET", "SET", "SET"], ops: [4, 9, 1, 3, 2] });
 * const s = summarize(df, { keys: ["test"], metrics: ["ops"], values: true }).toRecords();
 * assert.deepEqual(s[0], {
 *   test: "SET", n: 4, median_ops: 2.5, min_ops: 1, max_ops: 4, values_ops: [4, 1, 3, 2],
 * });
 * assert.equal(s[1].median_ops, 9);
 * ```
 */
export function summarize(df: pl.DataFrame, options: SummaryOptions): pl.DataFrame {
  const aggs: pl.Expr[] = [pl.len().alias("n")];
  for (const m of options.metrics) {
    const v = finite(df, m);
    aggs.push(
      v.quantile(0.5, "midpoint").alias(`median_${m}`),
      v.min().alias(`min_${m}`),
      v.max().alias(`max_${m}`),
    );
    if (options.values) aggs.push(v.alias(`values_${m}`));
  }
  for (const c of options.distinct ?? []) {
    aggs.push(pl.col(c).unique(true).alias(`distinct_${c}`));
  }
  return df.lazy().groupBy([...new Set(options.keys)], true).agg(...aggs).collectSync();
}
