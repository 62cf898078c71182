/**
 * The command-flag merge: what a redis-benchmark / valkey-benchmark command line says about its
 * runs, applied to the tests read from its output. The output does not print every run
 * parameter (pipeline and keyspace never; `-q` and `--csv` print none), so they come from the
 * command's flags and, for flags not given, the tool's defaults.
 *
 * @module
 */

import { BENCHMARK_DEFAULTS, type BenchmarkArgs } from "./flags.ts";
import { isBuiltinTitle } from "./_fields.ts";
import type { ParseWarning, RedisBenchmarkTest } from "./_types.ts";

// What each -t name runs, as redis-benchmark / valkey-benchmark select tests (test_is_selected):
// a Map, so that a name such as `constructor` or `toString` is just unknown.
const T_FLAG_TESTS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ["ping", ["PING_INLINE", "PING_MBULK"]],
  ["ping_inline", ["PING_INLINE"]],
  ["ping_mbulk", ["PING_MBULK"]],
  ["lrange", ["LPUSH_FOR_LRANGE", "LRANGE_100", "LRANGE_300", "LRANGE_500", "LRANGE_600"]],
  ["lrange_100", ["LPUSH_FOR_LRANGE", "LRANGE_100"]],
  ["lrange_300", ["LPUSH_FOR_LRANGE", "LRANGE_300"]],
  ["lrange_500", ["LPUSH_FOR_LRANGE", "LRANGE_500"]],
  ["lrange_600", ["LPUSH_FOR_LRANGE", "LRANGE_600"]],
  // valkey-benchmark 8.1+: `FUNCTION LOAD` and `FCALL` tests.
  ["function_load", ["FUNCTION_LOAD"]],
  ...[
    "set",
    "get",
    "incr",
    "lpush",
    "rpush",
    "lpop",
    "rpop",
    "sadd",
    "hset",
    "spop",
    "zadd",
    "zpopmin",
    "mset",
    "mget",
    "xadd",
    "fcall",
  ].map((name) => [name, [name.toUpperCase()]] as const),
]);

/**
 * The names `-t` accepts (redis-benchmark / valkey-benchmark), lowercase.
 *
 * @example
 * ```ts
 * import { BENCHMARK_TEST_NAMES } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.ok(BENCHMARK_TEST_NAMES.includes("lrange_100"));
 * assert.ok(!BENCHMARK_TEST_NAMES.includes("constructor"));
 * ```
 */
export const BENCHMARK_TEST_NAMES: readonly string[] = [...T_FLAG_TESTS.keys()];

/**
 * The tests a `-t` list asks for that are not in the output (in loop mode, or with a custom
 * command, nothing is expected).
 *
 * @param args The command's flags.
 * @param found The normalized names of the tests in the output.
 * @returns The normalized names of the tests asked for and not found, in `-t` order.
 *
 * @example
 * ```ts
 * import { missingTests, parseBenchmarkArgs } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const args = parseBenchmarkArgs(["-t", "set,get,lrange_100"]);
 * assert.deepEqual(missingTests(args, ["SET", "GET", "LPUSH_FOR_LRANGE"]), ["LRANGE_100"]);
 * ```
 */
export function missingTests(args: BenchmarkArgs, found: readonly string[]): string[] {
  if (!args.tests || args.loop || args.customCommand) return [];
  const want = new Set<string>();
  for (const name of args.tests) T_FLAG_TESTS.get(name)?.forEach((t) => want.add(t));
  const have = new Set(found);
  return [...want].filter((t) => !have.has(t));
}

/**
 * Fills a test's run parameters from the command's flags where the output did not print them,
 * and notes where the two disagree. Tool defaults apply to flags that were not given.
 *
 * @param t The test, changed in place.
 * @param args The command's flags.
 * @param warnings Where a disagreement between output and flags is noted.
 *
 * @example
 * ```ts
 * import { applyBenchmarkArgs, parseBenchmarkArgs, parseRedisBenchmark } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const [t] = parseRedisBenchmark("SET: 109769.48 requests per second, p50=0.231 msec\n").tests;
 * applyBenchmarkArgs(t, parseBenchmarkArgs(["-q", "-P", "16", "-r", "1000"]));
 * assert.equal(t.pipeline, 16); // from the flags
 * assert.equal(t.keyspace, 1000);
 * assert.equal(t.clients, 50); // the tool's default
 * ```
 */
export function applyBenchmarkArgs(
  t: RedisBenchmarkTest,
  args: BenchmarkArgs,
  warnings: ParseWarning[] = [],
): void {
  const fill = (
    key: "clients" | "requests" | "dataSizeBytes" | "pipeline" | "threads",
    given: number | undefined,
  ) => {
    const value = given ?? BENCHMARK_DEFAULTS[key];
    if (t[key] === null) t[key] = value;
    else if (given !== undefined && t[key] !== given && t.complete && key !== "requests") {
      warnings.push({
        line: t.sourceLine,
        message: `output says ${key}=${t[key]} but the command says ${given}`,
        text: t.testTitle,
      });
    }
  };
  fill("clients", args.clients);
  if (args.customCommand || !isBuiltinTitle(t.testTitle)) customDataSize(t, args);
  else fill("dataSizeBytes", args.dataSizeBytes);
  fill("pipeline", args.pipeline);
  fill("threads", args.threads);
  fill("requests", args.requests);
  if (t.keyspace === null && args.keyspace !== undefined) t.keyspace = args.keyspace;
  if (t.keepAlive === null && args.keepAlive !== undefined) t.keepAlive = args.keepAlive;
  if (t.requestedOpsPerSec === null && args.requestedOpsPerSec !== undefined) {
    t.requestedOpsPerSec = args.requestedOpsPerSec;
  }
}

/**
 * The data size of a custom command: `-d` sizes only its `__data__` arguments (valkey-benchmark;
 * older tools ignore `-d`), and the report's `N bytes payload` is the length of the encoded command, not a data
 * size. So: `-d` (or its default) when the command holds `__data__`, otherwise unknown.
 */
function customDataSize(t: RedisBenchmarkTest, args: BenchmarkArgs): void {
  const usesData = args.customCommand?.some((a) => a.includes("__data__")) ?? false;
  t.dataSizeBytes = usesData ? args.dataSizeBytes ?? BENCHMARK_DEFAULTS.dataSizeBytes : null;
}
