/**
 * What a redis-benchmark test record holds and which printed column fills which field: the one
 * column→field mapping for the 6.2+ `latency summary (msec):` table, Valkey's
 * `RPS distribution (reqs/sec):` table, the `--csv` header and `-q` lines.
 *
 * @module
 */

import type { RedisBenchmarkTest } from "./_types.ts";

/**
 * A number as C's `printf` may print it (`%d`, `%f`, `%g`: `-0.559`, `1e+44`, `nan`, `-nan`,
 * `inf`), for the regular expressions of printed lines. Reading every form, impossible ones
 * included, lets the checks (`_checks.ts`) reject them instead of skipping the line.
 */
export const NUMBER = String
  .raw`[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf(?:inity)?)`;

/**
 * A live-progress number as printed, or `null` for `nan`, `-nan`, `inf` and a missing value.
 *
 * @param s The printed number.
 * @returns Its value, or `null`.
 */
export function num(s: string | undefined): number | null {
  if (s === undefined) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/**
 * A result number as printed: `nan` / `-nan` become `NaN` and `inf` / `-inf` become ±`Infinity`,
 * so that the checks see them and reject the test; `null` for a missing value.
 *
 * @param s The printed number.
 * @returns Its value, not necessarily finite.
 *
 * @example
 * ```ts
 * import { readNumber } from "./_fields.ts";
 * import assert from "node:assert/strict";
 * assert.equal(readNumber("52219.32"), 52219.32);
 * assert.equal(readNumber("1e+44"), 1e44);
 * assert.ok(Number.isNaN(readNumber("-nan")));
 * assert.equal(readNumber("inf"), Infinity);
 * assert.equal(readNumber(undefined), null);
 * ```
 */
export function readNumber(s: string | undefined): number | null {
  if (s === undefined) return null;
  // the common case, a plain decimal (every distribution row has three), without a regex
  const n = Number(s);
  if (s !== "" && Number.isFinite(n) && s.charCodeAt(0) > 32) return n;
  const t = s.trim().toLowerCase();
  if (/^[-+]?nan$/.test(t)) return NaN;
  const inf = /^([-+]?)inf(inity)?$/.exec(t);
  if (inf) return inf[1] === "-" ? -Infinity : Infinity;
  return t === "" ? NaN : Number(t);
}

/** The titles of the tool's own tests (`-t`), every version; anything else is a custom command. */
const RE_BUILTIN_TITLE =
  /^(PING_INLINE|PING_BULK|PING_MBULK|SET|GET|INCR|LPUSH|RPUSH|LPOP|RPOP|SADD|HSET|SPOP|ZADD|ZPOPMIN|XADD|FCALL|FUNCTION LOAD|MSET \(10 keys\)|MGET \(10 keys\)|LPUSH \(needed to benchmark LRANGE\)|LRANGE_\d+ \(first \d+ elements\)|PING \(inline\)|PING|LPUSH \(again, in order to bench LRANGE\)|LRANGE \(first \d+ elements\))$/;

/**
 * Whether a title is one of the tool's own tests rather than a custom command (whose title is
 * its arguments joined: `SET mykey myval`). A custom command spelt like a built-in title (a bare
 * `GET`) can only be told apart from the command line.
 *
 * @param title The title as printed.
 * @returns `true` for `SET`, `LRANGE_100 (first 100 elements)`, `FUNCTION LOAD`, …
 *
 * @example
 * ```ts
 * import { isBuiltinTitle } from "./_fields.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isBuiltinTitle("LRANGE_500 (first 500 elements)"));
 * assert.ok(!isBuiltinTitle("SET mykey myval"));
 * assert.ok(isBuiltinTitle("LRANGE (first 100 elements)")); // Redis ≤2.4
 * ```
 */
export function isBuiltinTitle(title: string): boolean {
  return RE_BUILTIN_TITLE.test(title);
}

/**
 * The normalized name of a printed test title.
 *
 * @param title The title as printed: `LRANGE_100 (first 100 elements)`, `set foo bar`, …
 * @returns An upper-case name: `LRANGE_100`, `SET_FOO_BAR`; `UNKNOWN` for an empty title.
 *
 * @example
 * ```ts
 * import { normalizeTestName } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(normalizeTestName("LRANGE_100 (first 100 elements)"), "LRANGE_100");
 * assert.equal(normalizeTestName("LPUSH (needed to benchmark LRANGE)"), "LPUSH_FOR_LRANGE");
 * assert.equal(normalizeTestName("MSET (10 keys)"), "MSET");
 * assert.equal(normalizeTestName("LRANGE (first 450 elements)"), "LRANGE_500");
 * assert.equal(normalizeTestName("PING (inline)"), "PING_INLINE");
 * assert.equal(normalizeTestName("PING_BULK"), "PING_MBULK");
 * assert.equal(normalizeTestName("set foo bar"), "SET_FOO_BAR");
 * ```
 */
export function normalizeTestName(title: string): string {
  const t = title.trim();
  if (/^LPUSH \((needed to benchmark|again, in order to bench) LRANGE\)$/i.test(t)) {
    return "LPUSH_FOR_LRANGE";
  }
  // Redis ≤2.4 titles: `PING (inline)` and `LRANGE (first 100 elements)` are today's
  // PING_INLINE and LRANGE_100 (its 450 elements are LRANGE_500's, as 6.x prints them)
  if (/^PING \(inline\)$/i.test(t)) return "PING_INLINE";
  const lrange = /^LRANGE \(first (\d+) elements\)$/i.exec(t);
  if (lrange) return `LRANGE_${lrange[1] === "450" ? "500" : lrange[1]}`;
  const base = t.replace(/\s*\([^)]*\)\s*$/, "").trim();
  const name = base.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  if (name === "PING_BULK") return "PING_MBULK"; // renamed in Redis 6.0
  return name === "" ? "UNKNOWN" : name;
}

/** A test with nothing read yet: every value `null`, not complete, no distribution rows. */
export function emptyTest(title: string, sourceLine: number): RedisBenchmarkTest {
  return {
    test: normalizeTestName(title),
    testTitle: title,
    clients: null,
    threads: null,
    pipeline: null,
    dataSizeBytes: null,
    requests: null,
    keyspace: null,
    durationS: null,
    opsPerSec: null,
    avgLatencyMs: null,
    minLatencyMs: null,
    p50LatencyMs: null,
    p95LatencyMs: null,
    p99LatencyMs: null,
    maxLatencyMs: null,
    keepAlive: null,
    hostConfigSave: null,
    hostConfigAppendonly: null,
    clusterNodes: null,
    requestedOpsPerSec: null,
    rpsAvg: null,
    rpsMin: null,
    rpsP50: null,
    rpsP95: null,
    rpsP99: null,
    rpsMax: null,
    lastProgressOpsPerSec: null,
    complete: false,
    sourceLine,
    distribution: [],
  };
}

/** The fields of a test that hold a printed number (`number | null`). */
type NumberField = {
  [K in keyof RedisBenchmarkTest]-?: [RedisBenchmarkTest[K]] extends [number | null]
    ? null extends RedisBenchmarkTest[K] ? K : never
    : never;
}[keyof RedisBenchmarkTest];

/**
 * The mapping, written once. Each statistic redis-benchmark prints, and the field it fills when
 * printed in a latency table (6.2+ summary, `--csv` as `<stat>_latency_ms`, `-q` as `p50=`) or
 * in Valkey's RPS table (`--rps`).
 */
const STATISTICS = {
  avg: { latency: "avgLatencyMs", rps: "rpsAvg" },
  min: { latency: "minLatencyMs", rps: "rpsMin" },
  p50: { latency: "p50LatencyMs", rps: "rpsP50" },
  p95: { latency: "p95LatencyMs", rps: "rpsP95" },
  p99: { latency: "p99LatencyMs", rps: "rpsP99" },
  max: { latency: "maxLatencyMs", rps: "rpsMax" },
} as const satisfies Record<string, { latency: NumberField; rps: NumberField }>;

/** The throughput column of `--csv` and `-q` (`N requests per second`). */
const THROUGHPUT: readonly [string, NumberField] = ["rps", "opsPerSec"];

const stats = Object.entries(STATISTICS);

/** Where a row of columns was printed. */
export type ColumnTable =
  /** `latency summary (msec):` of a 6.2+ report: `avg min p50 p95 p99 max`. */
  | "summary"
  /** Valkey's `RPS distribution (reqs/sec):` (with `--rps`): the same column names. */
  | "rps"
  /** The `--csv` header: `test,rps,avg_latency_ms,…,max_latency_ms`. */
  | "csv"
  /** A `-q` line: `TEST: <rps> requests per second, p50=<p50> msec`. */
  | "quiet";

const COLUMNS: Record<ColumnTable, ReadonlyMap<string, NumberField>> = {
  summary: new Map(stats.map(([stat, f]) => [stat, f.latency])),
  rps: new Map(stats.map(([stat, f]) => [stat, f.rps])),
  csv: new Map([
    THROUGHPUT,
    ...stats.map(([stat, f]) => [`${stat}_latency_ms`, f.latency] as const),
  ]),
  quiet: new Map([THROUGHPUT, ["p50", STATISTICS.p50.latency]]),
};

/**
 * Sets the fields that a row of printed values fills; columns the table does not map are
 * ignored. A missing value becomes `null`; `nan` and `inf` are kept as `NaN` and `Infinity`
 * for the checks to reject (see {@link readNumber}).
 *
 * @param test The test to fill.
 * @param table Where the row was printed.
 * @param row `columns`, the column names as printed; `values`, the values in their order.
 * @returns The fields set.
 */
export function setColumns(
  test: RedisBenchmarkTest,
  table: ColumnTable,
  { columns, values }: { columns: readonly string[]; values: readonly (string | undefined)[] },
): string[] {
  const fields = COLUMNS[table];
  const set: string[] = [];
  columns.forEach((c, i) => {
    const field = fields.get(c);
    if (field === undefined) return;
    test[field] = readNumber(values[i]);
    set.push(field);
  });
  return set;
}
