/**
 * The plan field `until_decided:` (issue 36): run the plan in rounds until each cell is decided
 * (`kvlab run --until-decided`, which the field turns on). `true`, or `{ budget: 2m, max_runs: 30,
 * min_effect: 5 }` (each optional). Read here; the rounds are run by `kvlab run`.
 *
 * @module
 */

import type { PlanReader, PlanWhere } from "./reader.ts";

/** A plan's `until_decided:`. */
export interface PlanUntilDecided {
  /** Start no round after this many seconds (null: none). */
  budgetS: number | null;
  /** The most runs per arm of a cell. */
  maxRuns: number;
  /** "No difference" within ± this (0.05 = 5 %). */
  minEffect: number;
  /** The field, for errors. */
  at: PlanWhere;
}

/** The fields of `until_decided:`. */
const FIELDS = ["budget", "max_runs", "min_effect"];

/**
 * Reads a time budget: seconds (`90`), or with a unit (`90s`, `2m`, `1h`).
 *
 * @param text The budget.
 * @returns Seconds.
 * @throws {TypeError} For anything else.
 *
 * @example
 * ```ts
 * import { budgetSeconds } from "./until.ts";
 * import assert from "node:assert/strict";
 * assert.equal(budgetSeconds("2m"), 120);
 * assert.equal(budgetSeconds("90"), 90);
 * assert.throws(() => budgetSeconds("soon"), /expected/);
 * ```
 */
export function budgetSeconds(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$/.exec(text);
  const unit: Record<string, number> = { s: 1, m: 60, h: 3600 };
  const s = m ? Number(m[1]) * unit[m[2] ?? "s"] : NaN;
  if (!(s > 0)) throw new TypeError(`invalid budget: ${text} (expected 90s, 2m or 1h)`);
  return s;
}

/**
 * Reads `until_decided:` of a plan, or undefined when absent or `false`.
 *
 * @param read The plan's reader.
 * @returns The settings.
 * @throws {PlanError} For a bad field, at its line.
 *
 * @example
 * ```ts
 * import { parsePlan } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan(
 *   "name: p\nservers: [{name: a, url: 'redis://h'}]\ntests: [set]\n" +
 *     "until_decided: { budget: 2m, max_runs: 12 }\n",
 *   "p.yaml",
 * );
 * assert.deepEqual({ ...plan.untilDecided, at: undefined },
 *   { budgetS: 120, maxRuns: 12, minEffect: 0.05, at: undefined });
 * assert.throws(() => parsePlan("name: p\nservers: [{name: a, url: 'redis://h'}]\nuntil_decided: { budget: x }\n", "p.yaml"),
 *   /p\.yaml:3:\d+: until_decided\.budget: expected/);
 * ```
 */
export function readUntilDecided(read: PlanReader): PlanUntilDecided | undefined {
  const v = read.value(["until_decided"]);
  if (v === undefined || v === false) return undefined;
  const at = read.where(["until_decided"]);
  const none = { budgetS: null, maxRuns: 30, minEffect: 0.05, at };
  if (v === true) return none;
  const fields = read.mapping(
    ["until_decided"],
    "expected true or { budget: 2m, max_runs: 30, min_effect: 5 }",
  );
  for (const k of Object.keys(fields)) {
    if (!FIELDS.includes(k)) {
      read.fail(["until_decided", k], `unknown field (known: ${FIELDS.join(", ")})`);
    }
  }
  let budgetS: number | null = null;
  const budget = read.value(["until_decided", "budget"]);
  if (budget !== undefined) {
    try {
      budgetS = budgetSeconds(String(budget));
    } catch {
      read.fail(["until_decided", "budget"], "expected a time: 90s, 2m or 1h");
    }
  }
  const pct = read.number(["until_decided", "min_effect"], 5, { max: 99, positive: true });
  return {
    budgetS,
    maxRuns: read.integer(["until_decided", "max_runs"], 30, 2),
    minEffect: pct / 100,
    at,
  };
}
