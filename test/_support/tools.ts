/**
 * Test support: the programs a test needs (redis-server, redis-benchmark, memtier_benchmark,
 * valkey-server, taskset…), found as kvlab finds them (PATH, then the kvlab tools cache). A test
 * whose program is missing is skipped, saying so, except under `CI=true`, where the CI has
 * installed every tool and a missing one is a failure.
 *
 * @module
 */

import { findTool } from "../../src/collect/tools/find.ts";

const CI = () => Deno.env.get("CI") === "true";

/**
 * For `Deno.test`'s `ignore`: whether one of the programs is missing outside CI. Under `CI=true`
 * it is false, so the test runs and fails on the missing program.
 *
 * @param names The programs the test runs.
 * @returns True to skip the test.
 */
export function missingOutsideCi(...names: string[]): boolean {
  return !CI() && names.some((name) => findTool(name) === null);
}

/**
 * A program's path, or null when it is missing, with one line `skipped: <what>: …` saying so.
 *
 * @param name The program.
 * @param what What the test skips without it, in the skip line.
 * @returns Its path, or null.
 * @throws {Error} Under `CI=true`, when it is missing.
 */
export function toolOrSkip(name: string, what: string): string | null {
  const path = findTool(name);
  if (path) return path;
  const why = `${name} not found on PATH or in the kvlab tools cache (.ci/install builds it)`;
  if (CI()) throw new Error(`${what}: ${why}`);
  // deno-lint-ignore no-console -- one line saying what was skipped and why
  console.log(`skipped: ${what}: ${why}`);
  return null;
}
