/**
 * Numbers that cannot be true in redis-benchmark / valkey-benchmark output: kvlab's one rule
 * (`../../impossible.ts`) applied to a parsed test. The value becomes `null`, the test is marked
 * not complete, and a warning names the line and the value. A distribution block that is not
 * cumulative is dropped. (`-nan` in a live-progress line is normal and only means "no rate yet".)
 *
 * @module
 */

import {
  cumulativeProblem,
  findImpossible,
  type ImpossibleRule,
  MAX_OPS_PER_SEC,
} from "../../impossible.ts";
import type { RedisBenchmarkTest } from "./_types.ts";

export { MAX_OPS_PER_SEC };

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

/** The shared rule's fields for a redis-benchmark test. */
const RULE: ImpossibleRule<CheckedField> = {
  counts: COUNTS,
  rates: RATES,
  latencies: LATENCIES,
  // `[avg, min, p50, p95, p99, max]`: the average is not compared
  ordered: TABLES.map((t) => t.slice(1) as CheckedField[]),
};

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
 * const zero = Object.assign(emptyTest("SET", 4), { opsPerSec: 0, complete: true });
 * assert.equal(dropImpossible(zero, origin, () => {}), true);
 * assert.deepEqual([zero.opsPerSec, zero.complete], [null, false]);
 * ```
 */
export function dropImpossible(
  t: RedisBenchmarkTest,
  originOf: (field: string) => Origin,
  warn: (line: number, message: string, text: string) => void,
): boolean {
  let bad = false;
  for (const f of findImpossible(t, RULE)) {
    const origin = originOf(f.at);
    warn(origin.line, `impossible value in ${t.test}: ${f.message}; not kept`, origin.text);
    // out of order: the whole table goes, its average included
    const table = f.fields.length > 1 ? TABLES.find((x) => x.includes(f.at as never)) : undefined;
    for (const field of table ?? f.fields) t[field as CheckedField] = null;
    bad = true;
  }
  if (t.opsPerSec === 0) {
    // a finished test that completed nothing (`SET: 0.00 requests per second`): no rate to
    // keep, and one that a change would divide by (issue 30: `changes` printed Infinity)
    const origin = originOf("opsPerSec");
    warn(
      origin.line,
      `impossible value in ${t.test}: opsPerSec = 0 (a finished test at 0 requests per ` +
        "second: nothing completed); not kept",
      origin.text,
    );
    t.opsPerSec = null;
    bad = true;
  }
  for (const kind of new Set(t.distribution.map((d) => d.distribution))) {
    const rows = t.distribution.filter((d) => d.distribution === kind);
    const found = cumulativeProblem(rows);
    if (!found) continue;
    const [i, why] = found;
    const r = rows[i];
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
