/**
 * Numbers that cannot be true: one rule for every parser and collector (redis-benchmark /
 * valkey-benchmark, memtier_benchmark JSON and stdout). A value no run of a tool can print is
 * never kept as a result: the caller sets it to `null`, marks the test not complete, and warns
 * with the file and line (or field) and the value.
 *
 * What counts as impossible (and why):
 * - **Not a finite number**: `nan`, `-nan`, `inf`, or a JSON string where a number belongs (the
 *   reader hands it over as `NaN`). Tools print them when they divide by zero; they are not
 *   measurements.
 * - **Negative**: no count, duration, rate, latency, percentile or payload is below zero.
 * - **A rate above {@link MAX_OPS_PER_SEC}** (10⁹ operations per second): about a hundred times
 *   the fastest published single-server results with deep pipelines, and far below what a
 *   corrupted or invented number such as `1e+44` says (also a requested rate that overflowed).
 * - **A latency above {@link MAX_LATENCY_MS}** (a year) or **a count above
 *   {@link MAX_COUNT}** (2⁵³, beyond which a count is no longer an exact number).
 * - **Statistics out of order**: the tools compute them from one HdrHistogram, so
 *   `min ≤ p50 ≤ p95 ≤ p99 ≤ p99.9 ≤ max` always holds (also after rounding, which keeps
 *   order). Every statistic of a chain out of order is dropped: which one is wrong cannot be
 *   told. (The average is not compared with them.)
 * - **A distribution that is not cumulative**: percentiles outside 0–100, or percentile,
 *   latency or count going down from one row to the next.
 * - **Counts that do not add up**: a total that is not the sum of its parts (memtier's `Totals`
 *   against its types), checked by the caller with {@link sumProblem}.
 *
 * @module
 */

/** Highest believable rate, operations per second (see the module doc). */
export const MAX_OPS_PER_SEC = 1e9;
/** Highest believable latency, milliseconds: a year. */
export const MAX_LATENCY_MS = 365 * 86_400_000;
/** Highest believable count or size: 2⁵³. */
export const MAX_COUNT = 2 ** 53;

/** What a value measures, which sets its bounds. */
export type ValueKind = "count" | "rate" | "latency";

/**
 * Why a single value cannot be true, or `undefined` when it can.
 *
 * @param v The value.
 * @param kind What it measures.
 * @returns The reason in words, or undefined.
 *
 * @example
 * ```ts
 * import { valueProblem } from "./impossible.ts";
 * import assert from "node:assert/strict";
 * assert.equal(valueProblem(-5, "rate"), "negative");
 * assert.equal(valueProblem(1e300, "rate"), "above 1000000000 operations per second");
 * assert.equal(valueProblem(NaN, "latency"), "not a finite number");
 * assert.equal(valueProblem(0.3, "latency"), undefined);
 * ```
 */
export function valueProblem(v: number, kind: ValueKind): string | undefined {
  if (!Number.isFinite(v)) return "not a finite number";
  if (v < 0) return "negative";
  if (kind === "rate" && v > MAX_OPS_PER_SEC) {
    return `above ${MAX_OPS_PER_SEC} operations per second`;
  }
  if (kind === "latency" && v > MAX_LATENCY_MS) return `above ${MAX_LATENCY_MS} ms (a year)`;
  if (kind === "count" && v > MAX_COUNT) return `above ${MAX_COUNT}`;
  return undefined;
}

/** Which fields of a record hold what, for {@link findImpossible}. */
export interface ImpossibleRule<F extends string> {
  /** Counts, sizes and durations: finite, not negative, at most {@link MAX_COUNT}. */
  counts: readonly F[];
  /** Rates: finite, not negative, at most {@link MAX_OPS_PER_SEC}. */
  rates: readonly F[];
  /** Latencies: finite, not negative, at most {@link MAX_LATENCY_MS}. */
  latencies: readonly F[];
  /** Chains that never go down, lowest first (`[min, p50, p95, p99, max]`). */
  ordered: readonly (readonly F[])[];
}

/** One impossible finding: the fields to clear, the one to point at, and what to say. */
export interface Impossible<F extends string> {
  /** Every field whose value is not kept. */
  fields: F[];
  /** The field whose value shows the problem (for its line). */
  at: F;
  /** What is wrong, e.g. `opsPerSec = -5 (negative)`. */
  message: string;
}

/**
 * Every impossible value of a record (single values first; the order checks then only compare
 * believable numbers).
 *
 * @param values The record (null: not given).
 * @param rule Which fields hold what.
 * @returns The findings, empty when every value can be true.
 *
 * @example
 * ```ts
 * import { findImpossible } from "./impossible.ts";
 * import assert from "node:assert/strict";
 * const rule = { counts: [], rates: ["ops"], latencies: ["p50", "p99"], ordered: [["p50", "p99"]] } as const;
 * assert.deepEqual(findImpossible({ ops: -1, p50: 5, p99: 0.5 }, rule).map((f) => f.message), [
 *   "ops = -1 (negative)",
 *   "p50 = 5 is above p99 = 0.5 (statistics out of order)",
 * ]);
 * ```
 */
export function findImpossible<F extends string>(
  values: Partial<Record<F, number | null | undefined>>,
  rule: ImpossibleRule<F>,
): Impossible<F>[] {
  const out: Impossible<F>[] = [];
  const bad = new Set<F>();
  const check = (fields: readonly F[], kind: ValueKind) => {
    for (const f of fields) {
      const v = values[f];
      if (v === null || v === undefined) continue;
      const why = valueProblem(v, kind);
      if (why) {
        bad.add(f);
        out.push({ fields: [f], at: f, message: `${f} = ${v} (${why})` });
      }
    }
  };
  check(rule.counts, "count");
  check(rule.rates, "rate");
  check(rule.latencies, "latency");
  for (const chain of rule.ordered) {
    const known = chain.filter((f) => values[f] != null && !bad.has(f));
    for (let i = 1; i < known.length; i++) {
      const lo = known[i - 1], hi = known[i];
      const a = values[lo]!, b = values[hi]!;
      if (a <= b) continue;
      out.push({
        fields: [...chain],
        at: hi,
        message: `${lo} = ${a} is above ${hi} = ${b} (statistics out of order)`,
      });
      break;
    }
  }
  return out;
}

/** One row of a cumulative latency distribution. */
export interface CumulativeRow {
  /** 0–100. */
  percentile: number;
  latencyMs: number;
  /** Cumulative count, when the tool prints one. */
  count?: number | null;
}

/**
 * The first row of a cumulative distribution that breaks it, and why.
 *
 * @param rows The block's rows, in printed order.
 * @returns The row's index and the reason, or undefined when the block can be true.
 *
 * @example
 * ```ts
 * import { cumulativeProblem } from "./impossible.ts";
 * import assert from "node:assert/strict";
 * const ok = [{ percentile: 50, latencyMs: 0.2 }, { percentile: 99, latencyMs: 0.4 }];
 * assert.equal(cumulativeProblem(ok), undefined);
 * assert.deepEqual(cumulativeProblem([...ok, { percentile: 99.9, latencyMs: 0.1 }]), [2, "a cumulative distribution going down"]);
 * ```
 */
export function cumulativeProblem(rows: readonly CumulativeRow[]): [number, string] | undefined {
  let prev: CumulativeRow | undefined;
  for (const [i, r] of rows.entries()) {
    const values = [r.percentile, r.latencyMs, r.count ?? 0];
    if (!values.every(Number.isFinite)) return [i, "not a finite number"];
    if (values.some((v) => v < 0)) return [i, "negative"];
    if (r.percentile > 100) return [i, "percentile above 100"];
    if (
      prev &&
      (r.percentile < prev.percentile || r.latencyMs < prev.latencyMs ||
        (r.count ?? 0) < (prev.count ?? 0))
    ) return [i, "a cumulative distribution going down"];
    prev = r;
  }
  return undefined;
}

/**
 * Whether a printed total is not the sum of its printed parts, beyond the rounding of
 * `decimals` digits each.
 *
 * @param total The printed total.
 * @param parts The printed parts.
 * @param decimals Digits after the point the tool prints.
 * @returns The reason in words, or undefined when they add up.
 *
 * @example
 * ```ts
 * import { sumProblem } from "./impossible.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sumProblem(391.18, [78.5, 312.68], 2), undefined);
 * assert.equal(sumProblem(391.18, [-78.5, 312.68], 2), "391.18 is not the sum of its parts (234.18)");
 * ```
 */
export function sumProblem(
  total: number,
  parts: readonly number[],
  decimals: number,
): string | undefined {
  const sum = parts.reduce((a, b) => a + b, 0);
  const slack = (parts.length + 1) * 0.5 * 10 ** -decimals + Math.abs(total) * 1e-9;
  if (Math.abs(total - sum) <= slack) return undefined;
  return `${total} is not the sum of its parts (${Number(sum.toFixed(decimals))})`;
}
