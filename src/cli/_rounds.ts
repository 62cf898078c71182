/**
 * `kvlab run`'s options of issue 36: `--until-decided` with `--budget`, `--max-runs`,
 * `--min-effect` (merged with the plan's `until_decided:`), and `--redo-disturbed N`'s hook.
 *
 * @module
 */

import type { OptionValues } from "commander";
import type { CollectedRun } from "../collect/collector.ts";
import type { PlanCell, StudyPlan } from "../collect/plan/plan.ts";
import { Dataset, type DatasetRef } from "../store/dataset.ts";
import { budgetSeconds, UNTIL_DECIDED_DEFAULTS, type UntilDecided } from "./_until_decided.ts";
import { minEffectOption } from "./compare.ts";

/** The command line's `--until-decided` settings and `--redo-disturbed`. */
export interface RoundOptions {
  untilDecided?: Partial<UntilDecided> & { on: boolean };
  redoDisturbed?: number;
}

/**
 * Reads `--until-decided`, `--budget`, `--max-runs`, `--min-effect` and `--redo-disturbed`.
 *
 * @param raw Commander's option values.
 * @returns The options given (none: an empty object).
 * @throws {TypeError} For a bad value.
 *
 * @example
 * ```ts
 * import { roundOptions } from "./_rounds.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(roundOptions({ untilDecided: true, budget: "2m" }), { untilDecided: { on: true, budgetS: 120 } });
 * assert.deepEqual(roundOptions({}), {});
 * assert.throws(() => roundOptions({ redoDisturbed: "-1" }), /--redo-disturbed/);
 * ```
 */
export function roundOptions(raw: OptionValues): RoundOptions {
  const o: RoundOptions = {};
  if (raw.redoDisturbed !== undefined) {
    const n = Number(raw.redoDisturbed);
    if (!(Number.isInteger(n) && n >= 0 && n <= 100)) {
      throw new TypeError(`invalid --redo-disturbed: ${raw.redoDisturbed} (expected 0 to 100)`);
    }
    o.redoDisturbed = n;
  }
  const given = ["budget", "maxRuns", "minEffect"].filter((k) => raw[k] !== undefined);
  if (!raw.untilDecided && given.length === 0) return o;
  const maxRuns = raw.maxRuns === undefined ? undefined : Number(raw.maxRuns);
  if (maxRuns !== undefined && !(Number.isInteger(maxRuns) && maxRuns >= 2)) {
    throw new TypeError(`invalid --max-runs: ${raw.maxRuns} (expected an integer ≥ 2)`);
  }
  o.untilDecided = {
    on: Boolean(raw.untilDecided),
    ...(raw.budget === undefined ? {} : { budgetS: budgetSeconds(String(raw.budget)) }),
    ...(maxRuns === undefined ? {} : { maxRuns }),
    ...(raw.minEffect === undefined ? {} : { minEffect: minEffectOption(raw.minEffect) }),
  };
  return o;
}

/**
 * The settings of a run until decided: the plan's `until_decided:` overridden by the command
 * line's; undefined when neither turns it on.
 *
 * @param plan The plan.
 * @param flags The command line's.
 * @returns The settings, or undefined.
 *
 * @example
 * ```ts
 * import { untilSettings } from "./_rounds.ts";
 * import { parsePlan } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan("name: p\nservers: [{name: a, url: 'redis://h'}]\ntests: [set]\nuntil_decided: { max_runs: 9 }\n", "p.yaml");
 * assert.equal(untilSettings(plan, { on: false, maxRuns: 12 })?.maxRuns, 12);
 * assert.equal(untilSettings({ ...plan, untilDecided: undefined }, undefined), undefined);
 * ```
 */
export function untilSettings(
  plan: StudyPlan,
  flags: RoundOptions["untilDecided"],
): UntilDecided | undefined {
  if (!flags?.on && !plan.untilDecided) return undefined;
  const { on: _, ...given } = flags ?? { on: false };
  return { ...UNTIL_DECIDED_DEFAULTS, ...plan.untilDecided, ...given };
}

/**
 * The hook of `--redo-disturbed N` (issue 36): after a complete run, whether the noise guard
 * found it disturbed (its stored `noise_disturbance`), and the cell has been redone fewer than N
 * times; it says so on one line.
 *
 * @param data The dataset.
 * @param most N (0: never).
 * @param print Where the line goes.
 * @returns The hook, or undefined for 0.
 *
 * @example
 * ```ts
 * import { redoDisturbed } from "./_rounds.ts";
 * import assert from "node:assert/strict";
 * assert.equal(redoDisturbed(Deno.makeTempDirSync(), 0, () => {}), undefined);
 * const hook = redoDisturbed(Deno.makeTempDirSync(), 1, () => {})!;
 * assert.equal(hook({ id: "p/a/x/rep1" } as never, { runId: "r1" } as never), false); // not stored: quiet
 * ```
 */
export function redoDisturbed(
  data: DatasetRef,
  most: number,
  print: (s: string) => void,
): ((cell: PlanCell, run: CollectedRun) => boolean) | undefined {
  if (most <= 0) return undefined;
  const done = new Map<string, number>();
  return (cell, run) => {
    const n = done.get(cell.id) ?? 0;
    if (n >= most || !run.runId) return false;
    const facts = Dataset.of(data).runFacts(["noise_disturbance"], { runIds: [run.runId] });
    const why = facts[0]?.noise_disturbance;
    if (why === null || why === undefined) return false;
    done.set(cell.id, n + 1);
    print(
      `  disturbed (${why}): run again (${
        n + 1
      }/${most}); this run is kept, left out of verdicts\n`,
    );
    return true;
  };
}
