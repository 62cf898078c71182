/**
 * The order of a history and what differs along it: order values compared as numbers, times
 * or natural-order strings (`7.2.10` after `7.2.9`), a row's order value (a run column or
 * `tag:<key>`), the default order, and the run facts that differ between two runs.
 *
 * @module
 */

import pl from "nodejs-polars";

type Rec = Record<string, unknown>;

/**
 * Compares two order values: numbers and times as such, strings in natural order.
 *
 * @example
 * ```ts
 * import { compareOrder } from "./order.ts";
 * import assert from "node:assert/strict";
 * assert.ok(compareOrder("7.2.10", "7.2.9") > 0);
 * assert.ok(compareOrder("nightly/2026-01-09/a.csv", "nightly/2026-01-10/a.csv") < 0);
 * assert.ok(compareOrder(new Date(1), new Date(2)) < 0);
 * assert.ok(compareOrder(10, 9) > 0);
 * ```
 */
export function compareOrder(a: unknown, b: unknown): number {
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0;
  const pa = String(a).match(/\d+|\D+/g) ?? [];
  const pb = String(b).match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === y) continue;
    const dx = /^\d/.test(x);
    const dy = /^\d/.test(y);
    if (dx && dy) {
      const d = Number(x) - Number(y);
      if (d !== 0) return d;
      if (x.length !== y.length) return x.length - y.length;
      continue;
    }
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

/** A tag's value in a run's `tags` JSON, or null. */
function tagValue(tags: unknown, key: string): string | null {
  if (typeof tags !== "string") return null;
  try {
    const v = (JSON.parse(tags) as Record<string, unknown>)[key];
    return v === undefined || v === null ? null : String(v);
  } catch {
    return null;
  }
}

/** The order value of a row. */
export function orderValue(r: Rec, orderBy: string): unknown {
  return orderBy.startsWith("tag:") ? tagValue(r.tags, orderBy.slice(4)) : r[orderBy] ?? null;
}

/**
 * The order of a history when none is asked for: `started_at` (collected runs), else
 * `source_path` when no run has a start time (outputs ingested from files, such as a folder of
 * nightly outputs).
 *
 * @param df A results frame.
 * @returns The run column.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { defaultOrder } from "./order.ts";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ started_at: [null, null], source_path: ["n/1.csv", "n/2.csv"] });
 * assert.equal(defaultOrder(df), "source_path");
 * assert.equal(defaultOrder(pl.DataFrame({ started_at: [new Date(0)] })), "started_at");
 * ```
 */
export function defaultOrder(df: pl.DataFrame): string {
  const has = (c: string) =>
    df.columns.includes(c) && df.height > 0 && df.getColumn(c).nullCount() < df.height;
  return !has("started_at") && has("source_path") ? "source_path" : "started_at";
}

/**
 * The results a history leaves out for want of an order value: those whose run has no value of
 * the order column, or no tag `<key>` for `tag:<key>` (changes, its chart and the summary page
 * leave them out, and say how many).
 *
 * @param df A results frame.
 * @param orderBy A run column or `tag:<key>`.
 * @returns How many results and how many runs have no order value.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { missingOrder } from "./order.ts";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   run_id: ["a", "a", "b", "c"],
 *   tags: ['{"build":"7"}', '{"build":"7"}', "{}", null],
 *   started_at: [new Date(0), new Date(0), null, null],
 * });
 * assert.deepEqual(missingOrder(df, "tag:build"), { results: 2, runs: 2 });
 * assert.deepEqual(missingOrder(df, "started_at"), { results: 2, runs: 2 });
 * assert.deepEqual(missingOrder(df.head(2), "tag:build"), { results: 0, runs: 0 });
 * ```
 */
export function missingOrder(df: pl.DataFrame, orderBy: string): { results: number; runs: number } {
  let missing: pl.DataFrame;
  if (orderBy.startsWith("tag:")) {
    if (!df.columns.includes("tags")) missing = df;
    else {
      const key = orderBy.slice(4);
      const tags = df.getColumn("tags").unique().toArray() as (string | null)[];
      const without = tags.filter((t) => tagValue(t, key) === null);
      const noTags = without.includes(null);
      const texts = without.filter((t): t is string => t !== null);
      missing = df.filter(
        pl.col("tags").isIn(texts).or(noTags ? pl.col("tags").isNull() : pl.lit(false)),
      );
    }
  } else if (df.columns.includes(orderBy)) missing = df.filter(pl.col(orderBy).isNull());
  else missing = df.head(0);
  const runs = missing.columns.includes("run_id") ? missing.getColumn("run_id").nUnique() : 0;
  return { results: missing.height, runs };
}

/**
 * What {@link missingOrder} found, in words: `12 results of 6 runs with no tag:build`.
 *
 * @example
 * ```ts
 * import { leftOutText } from "./order.ts";
 * import assert from "node:assert/strict";
 * assert.equal(leftOutText({ results: 12, runs: 6 }, "tag:build"), "12 results of 6 runs with no tag:build");
 * assert.equal(leftOutText({ results: 1, runs: 1 }, "started_at"), "1 result of 1 run with no started_at");
 * ```
 */
export function leftOutText(missing: { results: number; runs: number }, orderBy: string): string {
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? "" : "s"}`;
  return `${n(missing.results, "result")} of ${n(missing.runs, "run")} with no ${orderBy}`;
}

/** An order value as text (times as ISO 8601). */
export function orderText(v: unknown): string {
  return v instanceof Date ? v.toISOString() : String(v);
}

/** Run facts that differ between two runs (environment, confounded parameters, tags). */
export function runDifferences(a: Rec, b: Rec, skip: Set<string>): string | null {
  const out: string[] = [];
  for (const c of Object.keys(a)) {
    if (skip.has(c) || c === "tags" || c.startsWith("__")) continue;
    const va = a[c] ?? null;
    const vb = b[c] ?? null;
    if (orderText(va) !== orderText(vb)) out.push(`${c} ${orderText(va)} vs ${orderText(vb)}`);
  }
  const ta = parseTags(a.tags);
  const tb = parseTags(b.tags);
  for (const k of [...new Set([...Object.keys(ta), ...Object.keys(tb)])].sort()) {
    if (skip.has(`tag:${k}`) || ta[k] === tb[k]) continue;
    out.push(`tag:${k} ${ta[k] ?? "null"} vs ${tb[k] ?? "null"}`);
  }
  return out.length ? out.join("; ") : null;
}

/** A run's `tags` JSON as strings (empty when it is not an object). */
function parseTags(tags: unknown): Record<string, string> {
  if (typeof tags !== "string") return {};
  try {
    const o = JSON.parse(tags) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));
  } catch {
    return {};
  }
}

/**
 * The folder (ending in `/`) every value starts with, or "".
 *
 * @example
 * ```ts
 * import { sharedFolder } from "./order.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sharedFolder(["ci/nightly/2026-01-01/a.csv", "ci/nightly/2026-01-02/a.csv"]), "ci/nightly/");
 * assert.equal(sharedFolder(["7.2.4", "7.2.5"]), "");
 * ```
 */
export function sharedFolder(values: string[]): string {
  if (values.length === 0) return "";
  let p = values[0].slice(0, values[0].lastIndexOf("/") + 1);
  for (const v of values) {
    while (p !== "" && !v.startsWith(p)) p = p.slice(0, p.slice(0, -1).lastIndexOf("/") + 1);
  }
  return p;
}
