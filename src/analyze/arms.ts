/**
 * The arms of a comparison: which column splits a dataset into the things compared (a plan's
 * `label` first, else the run column that differs: server, version, tool, transport, …), and
 * errors that say what the data holds when a comparison has fewer than two arms.
 *
 * @module
 */

import pl from "nodejs-polars";

/** Run columns that can name arms, in the order a default is looked for. */
export const ARM_COLUMNS = [
  "label",
  "server",
  "server_version",
  "tool",
  "tool_version",
  "transport",
  "server_io_threads",
] as const;

/**
 * The values of a column as strings, each once, in order of first appearance, nulls left out.
 *
 * @param df A results frame (results joined with runs).
 * @param column The column.
 * @returns Its distinct values; none when the column is absent.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { armValues } from "./arms.ts";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ label: ["b", null, "a", "b"] });
 * assert.deepEqual(armValues(df, "label"), ["b", "a"]);
 * assert.deepEqual(armValues(df, "server"), []);
 * ```
 */
export function armValues(df: pl.DataFrame, column: string): string[] {
  if (!df.columns.includes(column)) return [];
  const values = (df.getColumn(column).toArray() as unknown[])
    .filter((v) => v !== null && v !== undefined).map(String);
  return [...new Set(values)];
}

/** Whether a column splits every row into at least two arms (two values, no nulls). */
function splits(df: pl.DataFrame, column: string): boolean {
  return df.columns.includes(column) && df.getColumn(column).nullCount() === 0 &&
    armValues(df, column).length >= 2;
}

/**
 * The column whose values are the arms by default: `label` when the runs' labels split the
 * data, else the first of {@link ARM_COLUMNS} that does.
 *
 * @param df A results frame.
 * @returns The column, or null when no column splits the data.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { defaultArmColumn } from "./arms.ts";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ label: ["a", "b"], server: ["redis", "redis"] });
 * assert.equal(defaultArmColumn(df), "label");
 * assert.equal(defaultArmColumn(df.drop("label")), null);
 * ```
 */
export function defaultArmColumn(df: pl.DataFrame): string | null {
  return ARM_COLUMNS.find((c) => splits(df, c)) ?? null;
}

/** A column's values as words: `one value (redis)`, `2 values (a, b)`, `no values`. */
function valuesPhrase(values: string[]): string {
  if (values.length === 0) return "no values";
  return `${values.length === 1 ? "one value" : `${values.length} values`} (${values.join(", ")})`;
}

/** What the arm columns hold, for an error message: `label has no values, server has …`. */
function armsFound(df: pl.DataFrame): string {
  if (df.height === 0) return "the data has no results";
  return ARM_COLUMNS.filter((c) => df.columns.includes(c))
    .map((c) => `${c} has ${valuesPhrase(armValues(df, c))}`).join(", ");
}

/**
 * The arms in the order they were measured: by each arm's earliest run (`started_at`, else
 * `ingested_at`), ties by name; frames without times in order of first appearance.
 */
export function measuredOrder(df: pl.DataFrame, by: string, values: string[]): string[] {
  const times = ["started_at", "ingested_at"].filter((c) => df.columns.includes(c));
  if (times.length === 0) return values;
  const first = df.lazy()
    .filter(pl.col(by).isNotNull())
    .select(
      pl.col(by).cast(pl.String).alias("arm"),
      times.slice(1).reduce((t, c) => t.fillNull(pl.col(c)), pl.col(times[0])).alias("t"),
    )
    .groupBy("arm", true).agg(pl.col("t").min().alias("t"))
    .collectSync();
  const at = new Map(
    (first.toRecords() as { arm: string; t: Date | null }[])
      .map((r) => [r.arm, r.t?.getTime() ?? Infinity]),
  );
  return values.map((v, i) => ({ v, i, t: at.get(v) ?? Infinity }))
    // ties (arms ingested in the same millisecond, or with no time): by name, never by the
    // order rows happen to be stored in
    .sort((a, b) => (a.t - b.t) || (a.v < b.v ? -1 : a.v > b.v ? 1 : 0)).map((x) => x.v);
}

/** Options of {@link resolveArms}. */
export interface ArmsOptions {
  /** The column whose values are the arms. @default {defaultArmColumn(df)} */
  by?: string;
  /** The baseline arm. @default {the arm measured first} */
  baseline?: string;
}

/** The arms a comparison runs over. */
export interface Arms {
  /** The column whose values are the arms. */
  by: string;
  /** The arms, in the order they were measured (earliest run first). */
  values: string[];
  /** The baseline arm. */
  baseline: string;
  /** `by` was chosen by {@link defaultArmColumn}, not given. */
  defaulted: boolean;
}

/**
 * Resolves the arms of a comparison: the given column or the default one, and the given
 * baseline or the arm measured first (earliest `started_at`, else `ingested_at`).
 *
 * @param df A results frame.
 * @param options The column and baseline, when given.
 * @returns The column, its arms and the baseline.
 * @throws {TypeError} For a column not in the data; for fewer than two arms, naming the values
 * found and, when another column splits the data, suggesting it; for a baseline that is not an
 * arm.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { resolveArms } from "./arms.ts";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ label: ["io1", "io4"], server: ["redis", "redis"] });
 * assert.deepEqual(resolveArms(df), { by: "label", values: ["io1", "io4"], baseline: "io1", defaulted: true });
 * assert.throws(
 *   () => resolveArms(df, { by: "server", baseline: "redis" }),
 *   /fewer than two arms: server has one value \(redis\); try --by label \(values: io1, io4\)/,
 * );
 * assert.throws(() => resolveArms(df, { baseline: "io2" }), /invalid baseline: io2 \(values of label: io1, io4\)/);
 * ```
 */
export function resolveArms(df: pl.DataFrame, options: ArmsOptions = {}): Arms {
  const by = options.by ?? defaultArmColumn(df);
  if (by === null) throw new TypeError(`fewer than two arms: ${armsFound(df)}`);
  if (!df.columns.includes(by)) {
    throw new TypeError(
      `invalid column: ${by} (arm columns: ${
        ARM_COLUMNS.filter((c) => df.columns.includes(c))
          .join(", ")
      })`,
    );
  }
  const values = armValues(df, by);
  if (values.length < 2) {
    const other = defaultArmColumn(df);
    throw new TypeError(
      `fewer than two arms: ${by} has ${valuesPhrase(values)}` +
        (other
          ? `; try --by ${other} (values: ${
            measuredOrder(df, other, armValues(df, other)).join(", ")
          })`
          : ""),
    );
  }
  const ordered = measuredOrder(df, by, values);
  const baseline = options.baseline ?? ordered[0];
  if (!ordered.includes(baseline)) {
    throw new TypeError(`invalid baseline: ${baseline} (values of ${by}: ${ordered.join(", ")})`);
  }
  return { by, values: ordered, baseline, defaulted: options.by === undefined };
}

/**
 * Checks the two sides of a delta: the dimension has at least two values and `from` and `to`
 * are two of them.
 *
 * @param df A results frame.
 * @param sides The dimension and its two values.
 * @returns The dimension's values.
 * @throws {TypeError} For fewer than two values (naming them), a value not in the data, or
 * `from` equal to `to`.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { deltaSides } from "./arms.ts";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ transport: ["tcp", "rdma"] });
 * assert.deepEqual(deltaSides(df, { dimension: "transport", from: "tcp", to: "rdma" }), ["tcp", "rdma"]);
 * assert.throws(
 *   () => deltaSides(df.head(1), { dimension: "transport", from: "tcp", to: "rdma" }),
 *   /fewer than two values: transport has one value \(tcp\)/,
 * );
 * assert.throws(() => deltaSides(df, { dimension: "transport", from: "tcp", to: "tcp" }), /the same value/);
 * ```
 */
export function deltaSides(
  df: pl.DataFrame,
  sides: { dimension: string; from: string; to: string },
): string[] {
  if (!df.columns.includes(sides.dimension)) {
    throw new TypeError(`invalid column: ${sides.dimension} (not in the data)`);
  }
  const values = armValues(df, sides.dimension);
  if (values.length < 2) {
    throw new TypeError(
      `fewer than two values: ${sides.dimension} has ${valuesPhrase(values)}`,
    );
  }
  for (const v of [sides.from, sides.to]) {
    if (!values.includes(v)) {
      throw new TypeError(
        `invalid value: ${v} (values of ${sides.dimension}: ${values.join(", ")})`,
      );
    }
  }
  if (sides.from === sides.to) {
    throw new TypeError(`invalid delta: --from and --to are the same value (${sides.from})`);
  }
  return values;
}
