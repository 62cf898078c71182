/**
 * The change points and outliers of a history as people read them (Markdown, aligned text): the
 * columns a reader needs, order values without the folder they all share, p-values with two
 * significant digits. CSV and JSON keep every column.
 *
 * @module
 */

import pl from "nodejs-polars";
import { sharedFolder } from "./order.ts";

/**
 * The columns of a `changes` frame people read: without the medians, run ids, the order
 * column's name and an all-empty `also_differs`; order values without the folder they all
 * share; `p_value` as text with two significant digits (`3.4e-21`).
 *
 * @param c A frame from `changes`.
 * @returns The narrower frame.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { changesForPeople } from "./people.ts";
 * import assert from "node:assert/strict";
 * const c = pl.DataFrame({
 *   test: ["SET"], index: [40], order_by: ["source_path"],
 *   order_before: ["ci/nightly/2026-02-09/a.csv"], order_after: ["ci/nightly/2026-02-10/a.csv"],
 *   run_before: ["r1"], p_value: [3.4567e-21], also_differs: [null],
 * });
 * const p = changesForPeople(c).toRecords()[0];
 * assert.deepEqual(p, {
 *   test: "SET", index: 40, order_before: "2026-02-09/a.csv", order_after: "2026-02-10/a.csv",
 *   p_value: "3.5e-21",
 * });
 * ```
 */
export function changesForPeople(c: pl.DataFrame): pl.DataFrame {
  const keep = c.columns.filter((col) =>
    col !== "order_by" && !/^median_|^run_/.test(col) &&
    !(col === "also_differs" && c.getColumn(col).nullCount() === c.height)
  );
  const shared = c.height === 0 ? "" : sharedFolder([
    ...c.getColumn("order_before").toArray(),
    ...c.getColumn("order_after").toArray(),
  ].map(String));
  const out = c.select(...keep);
  const strip = (col: string) =>
    pl.col(col).str.slice(shared.length, Number.MAX_SAFE_INTEGER).alias(col);
  return pText(
    shared === "" ? out : out.withColumns(strip("order_before"), strip("order_after")),
    ["p_value"],
  );
}

/** `p_value` (and `p_adjusted`) as text with two significant digits. */
function pText(df: pl.DataFrame, cols: string[]): pl.DataFrame {
  return df.withColumns(
    ...cols.filter((c) => df.columns.includes(c)).map((c) =>
      pl.Series(
        c,
        (df.getColumn(c).toArray() as (number | null)[]).map((v) =>
          v === null ? null : v.toPrecision(2)
        ),
        pl.Utf8,
      )
    ),
  );
}

/**
 * The columns of an `outliers` frame people read: without the order column's name, the full
 * order value (its label, as the changes chart's axis shows it, stays), the run id and the count
 * of runs tested (said once, under the table); p-values as text with two significant digits.
 *
 * @param o A frame from `outliers` (or `changeHistory`'s `outliers`).
 * @returns The narrower frame.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { outliersForPeople } from "./people.ts";
 * import assert from "node:assert/strict";
 * const o = pl.DataFrame({
 *   test: ["GET"], index: [12], order_by: ["source_path"], order_value: ["ci/2026-01-13/a.csv"],
 *   order_label: ["2026-01-13"], run_id: ["r12"], p_value: [1.234e-12], p_adjusted: [3.7e-11],
 *   runs_tested: [30],
 * });
 * assert.deepEqual(outliersForPeople(o).toRecords()[0], {
 *   test: "GET", index: 12, order_label: "2026-01-13", p_value: "1.2e-12", p_adjusted: "3.7e-11",
 * });
 * ```
 */
export function outliersForPeople(o: pl.DataFrame): pl.DataFrame {
  const drop = ["order_by", "order_value", "run_id", "runs_tested"];
  return pText(o.select(...o.columns.filter((c) => !drop.includes(c))), ["p_value", "p_adjusted"]);
}
