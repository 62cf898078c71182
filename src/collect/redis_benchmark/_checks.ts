/**
 * Numbers that cannot be true. A test read from redis-benchmark / valkey-benchmark output is
 * checked before it leaves the parser; a value that no run of the tool can print is never kept
 * as a result: the value becomes `null`, the test is marked not complete, and a warning names
 * the line and the value.
 *
 * What counts as impossible (and why):
 * - **Not a finite number**: `nan`, `-nan`, `inf` in a result. The tool prints them when it
 *   divides by zero (no request finished, or a test shorter than its 1 ms clock); they are not
 *   measurements. (`-nan` in a live-progress line is normal and only means "no rate yet".)
 * - **Negative**: no count, duration, rate, latency, percentile or payload is below zero.
 * - **A rate above {@link MAX_OPS_PER_SEC}** (10⁹ operations per second): about a hundred times
 *   the fastest published single-server results with deep pipelines, and far below what a
 *   corrupted or invented number such as `1e+44` says. Applies to the throughput, Valkey's RPS
 *   statistics, the requested rate and the last live-progress rate.
 * - **Percentiles out of order**: the tool computes them from one HdrHistogram, so
 *   `min ≤ p50 ≤ p95 ≤ p99 ≤ max` always holds (also after its `%.3f` rounding, which keeps
 *   order). The same holds for Valkey's RPS table. Every statistic of a table out of order is
 *   dropped: which one is wrong cannot be told. (The average is not compared with them.)
 * - **A distribution block that is not cumulative**: percentiles outside 0–100, or percentile,
 *   latency or count going down from one row to the next. The block's rows are dropped.
 *
 * Latencies have no upper bound: a client can stall for minutes.
 *
 * @module
 */

import type { DistributionRow, RedisBenchmarkTest } from "./_types.ts";

/** Highest believable rate, operations per second (see the module doc). */
export const MAX_OPS_PER_SEC = 1e9;

/** Where a field's value was printed: its line and that line's text. */
export interface Origin {
  /** 1-based line number. */
  line: number;
  /** The printed line (or a rendering of the value when the line is not kept). */
  text: string;
}

/** Fields holding a count or size: finite and not negative. */
const COUNTS = [
  "requests",
  "clients",
  "threads",
  "pipeline",
  "dataSizeBytes",
  "keyspace",
  "clusterNodes",
  "durationS",
] as const;
/** Fields holding a rate: finite, not negative, at most {@link MAX_OPS_PER_SEC}. */
const RATES = [
  "opsPerSec",
  "requestedOpsPerSec",
  "rpsAvg",
  "rpsMin",
  "rpsP50",
  "rpsP95",
  "rpsP99",
  "rpsMax",
  "lastProgressOpsPerSec",
] as const;
/** Latency statistics: finite and not negative. */
const LATENCIES = [
  "avgLatencyMs",
  "minLatencyMs",
  "p50LatencyMs",
  "p95LatencyMs",
  "p99LatencyMs",
  "maxLatencyMs",
] as const;
/** Tables whose statistics come from one histogram: `[avg, min, p50, p95, p99, max]`. */
const TABLES = [
  LATENCIES,
  ["rpsAvg", "rpsMin", "rpsP50", "rpsP95", "rpsP99", "rpsMax"],
] as const;

type CheckedField = (typeof COUNTS)[number] | (typeof RATES)[number] | (typeof LATENCIES)[number];

/** One impossible finding: the fields to clear and what to say. */
interface Finding {
  fields: readonly CheckedField[];
  origin: Origin;
  message: string;
}

/** Why a single value cannot be true, or `undefined` when it can. */
function valueProblem(v: number, rate: boolean): string | undefined {
  if (!Number.isFinite(v)) return "not a finite number";
  if (v < 0) return "negative";
  if (rate && v > MAX_OPS_PER_SEC) return `above ${MAX_OPS_PER_SEC} operations per second`;
  return undefined;
}

function singleValues(t: RedisBenchmarkTest, originOf: (f: string) => Origin): Finding[] {
  const out: Finding[] = [];
  const check = (fields: readonly CheckedField[], rate: boolean) => {
    for (const f of fields) {
      const v = t[f];
      if (v === null) continue;
      const why = valueProblem(v, rate);
      if (why) out.push({ fields: [f], origin: originOf(f), message: `${f} = ${v} (${why})` });
    }
  };
  check(COUNTS, false);
  check(RATES, true);
  check(LATENCIES, false);
  return out;
}

/** `min ≤ p50 ≤ p95 ≤ p99 ≤ max` in each table. */
function outOfOrder(t: RedisBenchmarkTest, originOf: (f: string) => Origin): Finding[] {
  const out: Finding[] = [];
  for (const table of TABLES) {
    const [, min, p50, p95, p99, max] = table;
    const pairs: [CheckedField, CheckedField][] = [
      [min, p50],
      [p50, p95],
      [p95, p99],
      [p99, max],
      [min, max],
    ];
    for (const [lo, hi] of pairs) {
      const a = t[lo], b = t[hi];
      if (a === null || b === null || a <= b) continue;
      out.push({
        fields: table,
        origin: originOf(hi),
        message: `${lo} = ${a} is above ${hi} = ${b} (statistics out of order)`,
      });
      break;
    }
  }
  return out;
}

/** The first row of a distribution block that breaks it, with the reason. */
function badRow(rows: readonly DistributionRow[]): [DistributionRow, string] | undefined {
  let prev: DistributionRow | undefined;
  for (const r of rows) {
    const values = [r.percentile, r.latencyMs, r.count ?? 0];
    if (!values.every(Number.isFinite)) return [r, "not a finite number"];
    if (values.some((v) => v < 0)) return [r, "negative"];
    if (r.percentile > 100) return [r, "percentile above 100"];
    if (
      prev &&
      (r.percentile < prev.percentile || r.latencyMs < prev.latencyMs ||
        (r.count ?? 0) < (prev.count ?? 0))
    ) return [r, "a cumulative distribution going down"];
    prev = r;
  }
  return undefined;
}

/**
 * Clears every impossible value of a test (see the module doc for the rules).
 *
 * @param t The test, changed in place: impossible values become `null`, broken distribution
 * blocks are dropped, and `complete` becomes `false` when anything was impossible.
 * @param originOf Where a field's value was printed.
 * @param warn Receives one warning per finding.
 * @returns Whether anything was impossible.
 *
 * @example
 * ```ts
 * import { dropImpossible } from "./_checks.ts";
 * import { emptyTest } from "./_fields.ts";
 * import assert from "node:assert/strict";
 * const t = emptyTest("GET", 3);
 * Object.assign(t, { opsPerSec: -5, p50LatencyMs: 0.3, complete: true });
 * const warnings: string[] = [];
 * const origin = () => ({ line: 3, text: '"GET","-5","0.3"' });
 * assert.equal(dropImpossible(t, origin, (line, m) => warnings.push(`${line}: ${m}`)), true);
 * assert.deepEqual([t.opsPerSec, t.p50LatencyMs, t.complete], [null, 0.3, false]);
 * assert.deepEqual(warnings, ["3: impossible value in GET: opsPerSec = -5 (negative); not kept"]);
 * ```
 */
export function dropImpossible(
  t: RedisBenchmarkTest,
  originOf: (field: string) => Origin,
  warn: (line: number, message: string, text: string) => void,
): boolean {
  let bad = false;
  // Single values first: an order check then only compares believable numbers.
  for (const find of [singleValues, outOfOrder]) {
    for (const f of find(t, originOf)) {
      warn(f.origin.line, `impossible value in ${t.test}: ${f.message}; not kept`, f.origin.text);
      for (const field of f.fields) t[field] = null;
      bad = true;
    }
  }
  for (const kind of new Set(t.distribution.map((d) => d.distribution))) {
    const rows = t.distribution.filter((d) => d.distribution === kind);
    const found = badRow(rows);
    if (!found) continue;
    const [r, why] = found;
    warn(
      r.sourceLine,
      `impossible value in ${t.test}: ${kind} distribution row (${why}); block not kept`,
      `${r.percentile}% <= ${r.latencyMs} milliseconds (cumulative count ${r.count})`,
    );
    t.distribution = t.distribution.filter((d) => d.distribution !== kind);
    bad = true;
  }
  if (bad) t.complete = false;
  return bad;
}
