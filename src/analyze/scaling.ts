/**
 * Scaling curves: a metric against clients or threads per arm, and the points where one arm
 * overtakes another (seed 002: "Dragonfly overtakes Redis from 128 clients").
 *
 * @module
 */

import pl from "nodejs-polars";
import { finiteRows, summarize } from "./summary.ts";
import { directionOf, resultsFrame } from "./units.ts";

/** Options of {@link scaling}. */
export interface ScalingOptions {
  /** The x column: `clients`, `threads`, `pipeline`, `data_size_bytes`, … */
  x: string;
  /** The arms: `server`, `label`, … */
  by: string;
  /** @default {"ops_per_sec"} */
  metric?: string;
}

type Rec = Record<string, unknown>;

/**
 * Median of the metric per test, arm and x, with the min and max over repetitions.
 *
 * @returns Columns `test`, `<by>`, `<x>`, `n`, `median_<metric>`, `min_<metric>`,
 * `max_<metric>`, sorted by test (first appearance), arm, x.
 */
export function scaling(df: pl.DataFrame, options: ScalingOptions): pl.DataFrame {
  const metric = options.metric ?? "ops_per_sec";
  for (const c of ["test", options.x, options.by, metric]) {
    if (!df.columns.includes(c)) throw new TypeError(`invalid column: ${c} (not in the frame)`);
  }
  const { x, by } = options;
  const rows = df.getColumn(x).isNumeric()
    ? finiteRows(df.select("test", by, x, metric), metric).filter(pl.col(x).isNotNull())
    : df.head(0);
  const stats = summarize(rows, { keys: ["test", by, x], metrics: [metric] }).toRecords() as Rec[];
  const order = new Map<unknown, number>();
  for (const r of stats) if (!order.has(r.test)) order.set(r.test, order.size);
  const sorted = stats.sort((a, b) =>
    order.get(a.test)! - order.get(b.test)! || String(a[by]).localeCompare(String(b[by])) ||
    (a[x] as number) - (b[x] as number)
  );
  return resultsFrame(sorted.map((r) => ({
    test: r.test,
    [by]: r[by],
    [x]: r[x],
    n: r.n,
    [`median_${metric}`]: r[`median_${metric}`],
    [`min_${metric}`]: r[`min_${metric}`],
    [`max_${metric}`]: r[`max_${metric}`],
  })));
}

/** Options of {@link crossovers}. */
export interface CrossoverOptions extends ScalingOptions {
  /** The arm that leads at small x. */
  baseline: string;
  /** The arm that may overtake it. */
  candidate: string;
}

/**
 * Where `candidate` overtakes `baseline` on a scaling curve (medians): per test, the first x at
 * which the candidate is ahead after being behind at the previous x common to both (equal
 * medians are neither: a tie is no overtaking), and the values on both sides. Tests without a crossover are listed with `crossover_x = null`.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { crossovers } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({
 *   test: Array(8).fill("SET"),
 *   server: ["redis", "redis", "redis", "redis", "dragonfly", "dragonfly", "dragonfly", "dragonfly"],
 *   clients: [16, 32, 64, 128, 16, 32, 64, 128],
 *   ops_per_sec: [29695.61, 44350.43, 53059.89, 55254.5, 26968.31, 39939.89, 52767, 57385.52],
 * });
 * const c = crossovers(df, { x: "clients", by: "server", baseline: "redis", candidate: "dragonfly" });
 * assert.equal(c.getColumn("crossover_x").get(0), 128);
 * ```
 */
export function crossovers(df: pl.DataFrame, options: CrossoverOptions): pl.DataFrame {
  const metric = options.metric ?? "ops_per_sec";
  const curve = scaling(df, options).toRecords() as Rec[];
  const med = `median_${metric}`;
  const higher = directionOf(metric) === "higher";
  const tests = [...new Set(curve.map((r) => r.test))];
  const rows: Rec[] = [];
  for (const test of tests) {
    const pts = (arm: string) =>
      new Map(
        curve.filter((r) => r.test === test && String(r[options.by]) === arm).map((
          r,
        ) => [r[options.x] as number, r[med] as number]),
      );
    const a = pts(options.baseline);
    const b = pts(options.candidate);
    const xs = [...a.keys()].filter((x) => b.has(x)).sort((p, q) => p - q);
    const ahead = (x: number) => (higher ? b.get(x)! > a.get(x)! : b.get(x)! < a.get(x)!);
    const behind = (x: number) => (higher ? b.get(x)! < a.get(x)! : b.get(x)! > a.get(x)!);
    let cross: number | null = null;
    for (let i = 1; i < xs.length; i++) {
      // an overtaking: behind, then ahead (a tie is neither)
      if (behind(xs[i - 1]) && ahead(xs[i])) {
        cross = xs[i];
        break;
      }
    }
    rows.push({
      test,
      baseline: options.baseline,
      candidate: options.candidate,
      crossover_x: cross,
      [`baseline_${med}`]: cross === null ? null : a.get(cross)!,
      [`candidate_${med}`]: cross === null ? null : b.get(cross)!,
      points: xs.length,
    });
  }
  return resultsFrame(rows);
}

/**
 * Scaling curves per group of `extra` columns: {@link scaling} of each group's rows, with the
 * group's values as columns (so the chart draws each group apart instead of pooling them).
 *
 * @param results A results frame.
 * @param options The curve's axes.
 * @param extra Columns that split groups besides `test`, the arm and x.
 * @returns `scaling`'s columns, then the `extra` columns.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { scalingBy } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET", "SET", "SET", "SET"], server: ["a", "a", "a", "a"],
 *   clients: [1, 8, 1, 8], pipeline: [1, 1, 16, 16], ops_per_sec: [1, 8, 16, 128] });
 * const curve = scalingBy(df, { x: "clients", by: "server" }, ["pipeline"]);
 * assert.deepEqual(curve.getColumn("median_ops_per_sec").toArray(), [1, 8, 16, 128]);
 * assert.deepEqual(curve.getColumn("pipeline").toArray(), [1, 1, 16, 16]);
 * ```
 */
export function scalingBy(
  results: pl.DataFrame,
  options: ScalingOptions,
  extra: readonly string[],
): pl.DataFrame {
  if (extra.length === 0 || results.height === 0) return scaling(results, options);
  const parts = results.sort([...extra]).partitionBy([...extra], true, true);
  const curves = parts.flatMap((part) => {
    const curve = scaling(part, options);
    if (curve.height === 0) return []; // a group with no point on the x axis draws nothing
    const first = part.head(1).toRecords()[0];
    // a group's value may be null (a parameter one plan did not set): lit, not repeat
    return [curve.withColumns(...extra.map((c) => pl.lit(first[c] ?? null).alias(c)))];
  });
  if (curves.length === 0) return scaling(results.head(0), options);
  return pl.concat(curves, { how: "diagonalRelaxed" } as never);
}
