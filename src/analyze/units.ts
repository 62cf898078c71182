/**
 * Units live in column names (`ops_per_sec`, `p99_latency_ms`, `data_size_bytes`): this module
 * is the one place that reads them. From a column name it derives the direction of "better",
 * the decimals a table shows, the table header and the chart axis title with the unit, and
 * whether the column holds fractional values (Float64) even when a frame's values are whole.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { rowsFrame } from "../frame.ts";

/** Whether a larger value of a metric is better. */
export type Direction = "higher" | "lower";

/** A unit, recognised by the last words of a column name (`…_<suffix>`). */
export interface Unit {
  /** The name's ending, without the separating `_`: `ms`, `per_sec`, `bytes_per_key`. */
  readonly suffix: string;
  /** The unit as a table header shows it: `ms`, `ops/s`, `%`. */
  readonly symbol: string;
  /** The unit as a chart axis shows it; without one, the axis shows the name as it is. */
  readonly axis?: string;
  /** The axis title of the bare name (the column is only the suffix). */
  readonly title?: string;
  /** What the bare name (the column is only the suffix) means: `throughput`. */
  readonly quantity?: string;
  /** Whether more is better, when the unit tells. */
  readonly direction?: Direction;
  /** Decimals in tables for people. */
  readonly decimals?: number;
  /** Values are fractional (rates, milliseconds, percentages): always Float64. */
  readonly fractional?: boolean;
  /**
   * The suffix also ends a name without `_` before it: `-q ops_per_sec` (a table pivoted by
   * mode) is a throughput in ops/s.
   */
  readonly loose?: boolean;
}

/** The units kvlab names columns with, the longest suffix of a family first. */
export const UNITS: readonly Unit[] = [
  {
    suffix: "ops_per_sec",
    symbol: "ops/s",
    title: "throughput (ops/s)",
    quantity: "throughput",
    direction: "higher",
    decimals: 2,
    fractional: true,
    loose: true,
  },
  {
    suffix: "per_sec",
    symbol: "/s",
    axis: "/s",
    direction: "higher",
    decimals: 2,
    fractional: true,
  },
  { suffix: "bytes_per_key", symbol: "bytes/key", decimals: 1 },
  { suffix: "ms", symbol: "ms", axis: "ms", direction: "lower", decimals: 3, fractional: true },
  { suffix: "pct", symbol: "%", decimals: 1, fractional: true },
  { suffix: "bytes", symbol: "bytes", direction: "lower", decimals: 0 },
  { suffix: "mib", symbol: "MiB", decimals: 2 },
  { suffix: "s", symbol: "s", direction: "lower", decimals: 2 },
];

/**
 * Statistics whose values are fractional whatever they summarise (a median of whole numbers
 * may be a half), with the decimals tables show them with when the unit gives none.
 */
const STATISTICS: readonly { word: RegExp; decimals?: number }[] = [
  { word: /^r_squared$/, decimals: 4 },
  { word: /^ratio|_ratio$|factor/, decimals: 2 },
  { word: /^nines$/, decimals: 2 },
  { word: /(^|_)[pq]_value$/, decimals: 3 },
];

/** Words that make a column fractional: statistics of measurements. */
const FRACTIONAL = /median|ratio|ci_|factor|(^|_)[pq]_value$/;

/**
 * The unit of a column, from the end of its name; undefined when the name has none.
 *
 * @example
 * ```ts
 * import { unitOf } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(unitOf("baseline_median_ops_per_sec")?.symbol, "ops/s");
 * assert.equal(unitOf("overhead_bytes_per_key")?.symbol, "bytes/key");
 * assert.equal(unitOf("clients"), undefined);
 * ```
 */
export function unitOf(column: string): Unit | undefined {
  return UNITS.find((u) =>
    column === u.suffix || column.endsWith(`_${u.suffix}`) ||
    (u.loose && column.endsWith(u.suffix))
  );
}

/** The name without its unit (`p99_latency_ms` → `p99_latency`); "" for a bare unit. */
function stem(column: string, unit: Unit): string {
  return column.slice(0, -unit.suffix.length).replace(/_$/, "").trim();
}

const spaced = (s: string) => s.replace(/_/g, " ");

/**
 * The direction of a metric from its unit, or null when the name does not tell: rates are
 * better higher; latencies, durations and sizes lower.
 *
 * @example
 * ```ts
 * import { directionOf } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(directionOf("keys_per_sec"), "higher");
 * assert.equal(directionOf("p50_latency_change_pct"), "lower");
 * assert.equal(directionOf("clients"), null);
 * ```
 */
export function directionOf(metric: string): Direction | null {
  return unitOf(metric)?.direction ?? (/latency/.test(metric) ? "lower" : null);
}

/**
 * The direction of a metric from its unit: per-second rates are better higher, latencies and
 * durations lower.
 *
 * @throws {TypeError} For a metric whose direction its name does not tell.
 *
 * @example
 * ```ts
 * import { metricDirection } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(metricDirection("ops_per_sec"), "higher");
 * assert.equal(metricDirection("p99_latency_ms"), "lower");
 * assert.throws(() => metricDirection("clients"), /invalid metric/);
 * ```
 */
export function metricDirection(metric: string): Direction {
  const d = directionOf(metric);
  if (d === null) {
    throw new TypeError(
      `invalid metric: ${metric} (cannot tell whether higher or lower is better)`,
    );
  }
  return d;
}

/**
 * The decimals a column is shown with, from its name; null for columns left as they are.
 *
 * @example
 * ```ts
 * import { decimalsFor } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(decimalsFor("baseline_median_ops_per_sec"), 2);
 * assert.equal(decimalsFor("p99_latency_ms"), 3);
 * assert.equal(decimalsFor("ratio_ci_low"), 2);
 * assert.equal(decimalsFor("clients"), null);
 * ```
 */
export function decimalsFor(column: string): number | null {
  return unitOf(column)?.decimals ??
    STATISTICS.find((s) => s.word.test(column))?.decimals ?? null;
}

/**
 * A header with its unit: `baseline_median_ops_per_sec` → `baseline median (ops/s)`.
 *
 * @example
 * ```ts
 * import { headerFor } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(headerFor("baseline_median_ops_per_sec"), "baseline median (ops/s)");
 * assert.equal(headerFor("ops_per_sec"), "throughput (ops/s)");
 * assert.equal(headerFor("p99_latency_ms"), "p99 latency (ms)");
 * assert.equal(headerFor("p50_latency_change_pct"), "p50 latency change (%)");
 * assert.equal(headerFor("data_size_bytes"), "data size (bytes)");
 * ```
 */
export function headerFor(column: string): string {
  const unit = unitOf(column);
  if (!unit || (column === unit.suffix && !unit.quantity)) return spaced(column);
  return `${spaced(stem(column, unit) || unit.quantity!)} (${unit.symbol})`;
}

/**
 * A chart axis title for a metric column, with its unit where charts show one.
 *
 * @example
 * ```ts
 * import { metricTitle } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(metricTitle("ops_per_sec"), "throughput (ops/s)");
 * assert.equal(metricTitle("p99_latency_ms"), "p99 latency (ms)");
 * assert.equal(metricTitle("clients"), "clients");
 * ```
 */
export function metricTitle(metric: string): string {
  const unit = unitOf(metric);
  if (unit?.title && metric === unit.suffix) return unit.title;
  // on axes, `requested_ops_per_sec` is "requested ops (/s)": the per-second rate of ops
  const rate = UNITS.find((u) => u.axis && metric.endsWith(`_${u.suffix}`));
  return rate ? `${spaced(stem(metric, rate))} (${rate.axis})` : spaced(metric);
}

/**
 * A metric's name without its unit, for chart titles: `ops_per_sec` → `throughput`.
 *
 * @example
 * ```ts
 * import { metricName } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(metricName("ops_per_sec"), "throughput");
 * assert.equal(metricName("p50_latency_ms"), "p50 latency");
 * ```
 */
export function metricName(metric: string): string {
  return metricTitle(metric).replace(/ \(.*\)$/, "");
}

/**
 * Whether a column holds fractional values by its name (a rate, milliseconds, a percentage, a
 * median, ratio, interval bound or factor), so a frame types it Float64 even when every value
 * it holds is whole.
 *
 * @example
 * ```ts
 * import { isFractional } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(isFractional("median_ops_per_sec"), true);
 * assert.equal(isFractional("ratio_ci_low"), true);
 * assert.equal(isFractional("baseline_n"), false);
 * ```
 */
export function isFractional(column: string): boolean {
  return unitOf(column)?.fractional === true || FRACTIONAL.test(column);
}

/**
 * A frame of analysis results from records: columns in the first record's order, whole
 * numbers Int64 unless the name says the column is fractional ({@link isFractional}).
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { resultsFrame } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = resultsFrame([{ test: "SET", n: 2, median_ops_per_sec: 100 }]);
 * assert.deepEqual(df.dtypes, [pl.String, pl.Int64, pl.Float64]);
 * ```
 */
export function resultsFrame(rows: readonly Record<string, unknown>[]): pl.DataFrame {
  return rowsFrame(rows, { fractional: isFractional });
}
