/**
 * Types shared by the memtier_benchmark parsers (JSON, stdout report, HDR files, progress),
 * and the small rules they share: block titles, command-type names, percentile labels.
 *
 * @module
 */

/**
 * Which summary a block is. `null` for one run's own block (`ALL STATS` of a single run,
 * `RUN #n RESULTS`); the others summarize `--run-count` repetitions.
 */
export type MemtierAggregate = "best" | "worst" | "average" | null;

/** What a block title (`ALL STATS`, `RUN #2 RESULTS`, …) says. */
export interface MemtierBlockTitle {
  /** The title as printed. */
  title: string;
  aggregate: MemtierAggregate;
  /** 1-based run the block describes; `null` when the title does not say. */
  runIndex: number | null;
  /** `N` of `AGGREGATED AVERAGE RESULTS (N runs)`. */
  runCount: number | null;
}

/**
 * Reads a block title memtier prints (stdout) or uses as JSON key.
 *
 * @param title The title.
 * @returns What it says, or `null` when it is not a block title.
 *
 * @example
 * ```ts
 * import { memtierBlockTitle } from "./types.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(memtierBlockTitle("AGGREGATED AVERAGE RESULTS (3 runs)"), {
 *   title: "AGGREGATED AVERAGE RESULTS (3 runs)", aggregate: "average", runIndex: null, runCount: 3,
 * });
 * assert.equal(memtierBlockTitle("RUN #2 RESULTS")?.runIndex, 2);
 * assert.equal(memtierBlockTitle("ALL STATS")?.runIndex, 1);
 * assert.equal(memtierBlockTitle("configuration"), null);
 * ```
 */
export function memtierBlockTitle(title: string): MemtierBlockTitle | null {
  const t = title.trim();
  const base = { title: t, aggregate: null, runIndex: null, runCount: null };
  if (t === "ALL STATS") return { ...base, runIndex: 1 };
  if (t === "BEST RUN RESULTS") return { ...base, aggregate: "best" };
  if (t === "WORST RUN RESULTS") return { ...base, aggregate: "worst" };
  const avg = /^AGGREGATED AVERAGE RESULTS \((\d+) runs\)$/.exec(t);
  if (avg) return { ...base, aggregate: "average", runCount: +avg[1] };
  const run = /^RUN #(\d+) RESULTS$/.exec(t);
  if (run) return { ...base, runIndex: +run[1] };
  return null;
}

/**
 * The normalized test of a memtier type label: `Sets` → `SET`, `Gets` → `GET`, `Waits` →
 * `WAIT`, `Totals` → `TOTALS`; an arbitrary command's label (`Incrs`, from `--command`) loses
 * its plural `s`; a distribution label (`SET`, `INCR`) stays.
 *
 * @param label The label as printed.
 * @returns The test name.
 *
 * @example
 * ```ts
 * import { memtierTest } from "./types.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(["Sets", "Totals", "Incrs", "INCR"].map(memtierTest), ["SET", "TOTALS", "INCR", "INCR"]);
 * ```
 */
export function memtierTest(label: string): string {
  if (label === "Totals") return "TOTALS";
  if (label === label.toUpperCase()) return label;
  const upper = label.toUpperCase();
  return upper.endsWith("S") ? upper.slice(0, -1) : upper;
}

/** One latency percentile. */
export interface MemtierPercentile {
  /** Percent, 0–100 (from the label: `p99.90` → 99.9). */
  percentile: number;
  /** Latency at it, ms. */
  latencyMs: number;
}

/**
 * The percentile a label names: JSON keys `p50.00`, `p99.90` (memtier cuts them to six
 * characters) and table headers `p99.9 Latency`.
 *
 * @param label The label.
 * @returns The percent, or `null` when the label is not a percentile.
 *
 * @example
 * ```ts
 * import { percentileOfLabel } from "./types.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(["p50.00", "p99.90", "p99.9 Latency", "Count"].map(percentileOfLabel), [50, 99.9, 99.9, null]);
 * ```
 */
export function percentileOfLabel(label: string): number | null {
  // every second of a long series repeats the same few labels
  const known = PERCENTILE_LABELS.get(label);
  if (known !== undefined) return known;
  const m = /^p(\d+(?:\.\d+)?)(?: Latency)?$/.exec(label);
  const p = m ? +m[1] : null;
  if (PERCENTILE_LABELS.size < 1000) PERCENTILE_LABELS.set(label, p);
  return p;
}

const PERCENTILE_LABELS = new Map<string, number | null>();

/** The usual three percentiles picked out of a list, in ms. */
export interface MemtierCommonPercentiles {
  p50LatencyMs: number | null;
  p99LatencyMs: number | null;
  p999LatencyMs: number | null;
}

/**
 * Picks p50, p99 and p99.9 out of a percentile list.
 *
 * @param list Percentiles as parsed.
 * @returns The three, `null` where not printed.
 *
 * @example
 * ```ts
 * import { commonPercentiles } from "./types.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(commonPercentiles([{ percentile: 99.9, latencyMs: 2 }]), {
 *   p50LatencyMs: null, p99LatencyMs: null, p999LatencyMs: 2,
 * });
 * ```
 */
export function commonPercentiles(list: readonly MemtierPercentile[]): MemtierCommonPercentiles {
  const at = (p: number) => list.find((x) => x.percentile === p)?.latencyMs ?? null;
  return { p50LatencyMs: at(50), p99LatencyMs: at(99), p999LatencyMs: at(99.9) };
}

/** One row of a `Request Latency Distribution` (stdout) or a JSON `SET`/`GET`/… array. */
export interface MemtierDistributionRow {
  /** Normalized test: `SET`, `GET`, `WAIT`, or an arbitrary command. */
  test: string;
  /** Latency bound, ms (`<= msec`). */
  latencyMs: number;
  /** Percent of requests at or below it (0–100). */
  percent: number;
  /** Line of the raw file. */
  sourceLine: number;
}

/**
 * One row of a stdout `Request Latency Distribution` (`SET 0.423 50.000`), as memtier 1.x and
 * 2.x print it: label, latency bound with decimals, percent with three decimals. A last line
 * with no newline after it is whole only when its percent shows all three decimals.
 *
 * @param text The line.
 * @param line Its number, and whether a newline ended it.
 * @returns The row, or `null` when the line is no whole distribution row.
 *
 * @example
 * ```ts
 * import { distributionRow } from "./types.ts";
 * import assert from "node:assert/strict";
 * const row = distributionRow("GET 0.423 99.900", { line: 7, terminated: false });
 * assert.deepEqual(row, { test: "GET", latencyMs: 0.423, percent: 99.9, sourceLine: 7 });
 * assert.equal(distributionRow("GET 0.423 99.9", { line: 7, terminated: false }), null);
 * ```
 */
export function distributionRow(
  text: string,
  line: { line: number; terminated: boolean },
): MemtierDistributionRow | null {
  const d = /^(\S+)\s+(-?\d+\.\d+)\s+(\d+\.\d+)$/.exec(text);
  if (!d || (!line.terminated && !/\.\d{3}$/.test(d[3]))) return null;
  return { test: memtierTest(d[1]), latencyMs: +d[2], percent: +d[3], sourceLine: line.line };
}

/** `run information`: the first lines of the report. */
export interface MemtierRunInformation {
  threads: number | null;
  connectionsPerThread: number | null;
  /** `Seconds` (with `--test-time`). */
  testTimeS: number | null;
  /** `Requests per client` (with `--requests`). */
  requestsPerClient: number | null;
  /** JSON `Format version` (2 in memtier 2.x); `null` in stdout. */
  formatVersion: number | null;
}
