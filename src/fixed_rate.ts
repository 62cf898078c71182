/**
 * The fixed-rate model (seed 000's sweeps), in one place for collect, analyze and bench:
 *
 * - a **step** is a requested rate and the rate achieved ({@link FixedRateStep});
 * - the **sustained rule** ({@link sustainedVerdict}): a step is `sustained` when
 *   `min ≤ achieved ÷ requested ≤ max` ({@link DEFAULT_SUSTAINED_RULE}: 97–103 %), `NS` (not
 *   sustained) below, `over` above; the ratio is compared at six decimals, so a step exactly on
 *   a bound is sustained whatever the float error; a step with no achieved rate is `NS`;
 * - **skip-after-NS** ({@link SkipAfterNs}, {@link firstNotSustained}, {@link isSkipped}):
 *   once a sweep fails to sustain a rate, its higher rates are `skipped`. A skipped step is
 *   not run and **nothing is stored for it** (latency sweeps and pub/sub alike): the analysis
 *   shows it as `skipped` from the rates the sweep planned (the runs' `sweep_rates` tag);
 * - the verdicts of a sweep table: {@link SweepVerdict};
 * - the **generator-bound rule** ({@link generatorBound}): a step whose load generator's own
 *   send delay is not small against the latency it reports measured the generator, not the
 *   server ({@link DEFAULT_GENERATOR_RULE}: p99 delay above 10 % of the p99 latency).
 *
 * Pure: no I/O, no clock.
 *
 * @module
 */

/** The sustained rule: a step holds when `min ≤ achieved ÷ requested ≤ max`. */
export interface SustainedRule {
  /** Lowest achieved ÷ requested that counts as sustained. @default {0.97} */
  min: number;
  /** Highest achieved ÷ requested that counts as sustained (above: `over`). @default {1.03} */
  max: number;
}

/** The rule's defaults, seed 000's: 97–103 % of the requested rate. */
export const DEFAULT_SUSTAINED_RULE: Readonly<SustainedRule> = Object.freeze({
  min: 0.97,
  max: 1.03,
});

/** How a step went against its requested rate. */
export type SustainedVerdict = "sustained" | "NS" | "over";

/** A step's verdict in a sweep table, or `skipped` for a rate above the sweep's first NS. */
export type SweepVerdict = SustainedVerdict | "skipped";

/** One fixed-rate step: the rate asked for and the rate achieved. */
export interface FixedRateStep {
  /** Requested rate (requests or, for pub/sub, deliveries per second); > 0. */
  requestedOpsPerSec: number;
  /** Achieved rate; null (or NaN) when the step measured none. */
  achievedOpsPerSec: number | null;
}

/** The ratio at six decimals, as an integer (parts per million). */
const ppm = (x: number) => Math.round(x * 1e6);

/**
 * Checks a sustained rule (`0 < min ≤ 1 ≤ max`).
 *
 * @param rule The bounds.
 * @returns The rule.
 * @throws {RangeError} When a bound is out of range.
 *
 * @example
 * ```ts
 * import { checkSustainedRule } from "./fixed_rate.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(checkSustainedRule({ min: 0.95, max: 1.05 }), { min: 0.95, max: 1.05 });
 * assert.throws(() => checkSustainedRule({ min: 1.2, max: 1.3 }), RangeError);
 * ```
 */
export function checkSustainedRule(rule: SustainedRule): SustainedRule {
  const { min, max } = rule;
  if (!(min > 0 && min <= 1 && max >= 1 && Number.isFinite(max))) {
    throw new RangeError(`invalid sustained rule: ${min}:${max} (expected 0 < min ≤ 1 ≤ max)`);
  }
  return rule;
}

/**
 * The sustained rule's verdict on one step.
 *
 * @param step The requested and achieved rates.
 * @param rule The bounds (default {@link DEFAULT_SUSTAINED_RULE}).
 * @returns `sustained` within the bounds (inclusive), `NS` below them or with no achieved rate,
 * `over` above them (the rate was not held either).
 * @throws {RangeError} When the requested rate is not a positive number.
 *
 * @example
 * ```ts
 * import { sustainedVerdict } from "./fixed_rate.ts";
 * import assert from "node:assert/strict";
 * const v = (requestedOpsPerSec: number, achievedOpsPerSec: number | null) =>
 *   sustainedVerdict({ requestedOpsPerSec, achievedOpsPerSec });
 * assert.equal(v(100_000, 97_000), "sustained");
 * assert.equal(v(100_000, 103_000), "sustained");
 * assert.equal(v(100_000, 96_999), "NS");
 * assert.equal(v(100_000, 103_001), "over");
 * assert.equal(v(100_000, null), "NS");
 * assert.equal(v(400_000, 258_000), "NS");
 * assert.equal(v(4_000, 5_010), "over"); // memtier's token bucket over-delivers
 * assert.equal(v(17, 16.49), "sustained"); // 16.49 / 17 is 0.96999… in floats: exactly 97 %
 * assert.equal(
 *   sustainedVerdict({ requestedOpsPerSec: 100, achievedOpsPerSec: 96 }, { min: 0.95, max: 1.05 }),
 *   "sustained",
 * );
 * ```
 */
export function sustainedVerdict(
  step: FixedRateStep,
  rule: SustainedRule = DEFAULT_SUSTAINED_RULE,
): SustainedVerdict {
  const { requestedOpsPerSec: requested, achievedOpsPerSec: achieved } = step;
  if (!(requested > 0) || !Number.isFinite(requested)) {
    throw new RangeError(`requested rate must be a positive number: ${requested}`);
  }
  if (achieved === null || !Number.isFinite(achieved)) return "NS";
  const ratio = ppm(achieved / requested);
  if (ratio < ppm(rule.min)) return "NS";
  if (ratio > ppm(rule.max)) return "over";
  return "sustained";
}

/**
 * A sweep's first NS: the lowest requested rate among its steps judged `NS`.
 *
 * @param steps One sweep's steps with their verdicts, in any order.
 * @returns The rate, or null when no step is NS.
 *
 * @example
 * ```ts
 * import { firstNotSustained } from "./fixed_rate.ts";
 * import assert from "node:assert/strict";
 * assert.equal(firstNotSustained([
 *   { requestedOpsPerSec: 300, verdict: "NS" },
 *   { requestedOpsPerSec: 100, verdict: "sustained" },
 *   { requestedOpsPerSec: 200, verdict: "NS" },
 * ]), 200);
 * assert.equal(firstNotSustained([{ requestedOpsPerSec: 100, verdict: "over" }]), null);
 * ```
 */
export function firstNotSustained(
  steps: Iterable<{ requestedOpsPerSec: number; verdict: SweepVerdict | null }>,
): number | null {
  let first: number | null = null;
  for (const s of steps) {
    if (s.verdict === "NS" && (first === null || s.requestedOpsPerSec < first)) {
      first = s.requestedOpsPerSec;
    }
  }
  return first;
}

/**
 * Whether a rate is skipped: above its sweep's first NS.
 *
 * @param requestedOpsPerSec The step's requested rate.
 * @param firstNs The sweep's first NS ({@link firstNotSustained}), or null for none.
 * @returns True when the step is not to be run (or, in a table, is shown `-` when absent).
 *
 * @example
 * ```ts
 * import { isSkipped } from "./fixed_rate.ts";
 * import assert from "node:assert/strict";
 * assert.equal(isSkipped(400, 300), true);
 * assert.equal(isSkipped(300, 300), false); // the NS step itself ran
 * assert.equal(isSkipped(400, null), false);
 * ```
 */
export function isSkipped(requestedOpsPerSec: number, firstNs: number | null): boolean {
  return firstNs !== null && requestedOpsPerSec > firstNs;
}

/**
 * Skip-after-NS while sweeps run: each sweep (a key: a server, or a server × mode ×
 * repetition) remembers its first NS, from this session's steps and from stored ones (a
 * resumed plan), and says which later steps to skip.
 *
 * @example
 * ```ts
 * import { SkipAfterNs } from "./fixed_rate.ts";
 * import assert from "node:assert/strict";
 * const sweeps = new SkipAfterNs();
 * sweeps.note("redis", { requestedOpsPerSec: 1000, achievedOpsPerSec: 1000 });
 * sweeps.note("redis", { requestedOpsPerSec: 4000, achievedOpsPerSec: 2500 }); // NS
 * assert.equal(sweeps.skips("redis", 8000), 4000);
 * assert.equal(sweeps.skips("redis", 4000), null);
 * assert.equal(sweeps.skips("valkey", 8000), null);
 * assert.equal(sweeps.skipReason("redis", 8000, { label: "redis" }),
 *   "skipped: redis did not sustain 4,000/s");
 * ```
 */
export class SkipAfterNs {
  readonly #rule: SustainedRule;
  readonly #firstNs = new Map<string, number>();

  /** @param rule The sustained rule the steps are judged by (default 97–103 %). */
  constructor(rule: SustainedRule = DEFAULT_SUSTAINED_RULE) {
    this.#rule = rule;
  }

  /**
   * Judges a step of a sweep and remembers it when NS.
   * @param key The sweep.
   * @param step The step's rates.
   * @returns The step's verdict.
   */
  note(key: string, step: FixedRateStep): SustainedVerdict {
    const verdict = sustainedVerdict(step, this.#rule);
    if (verdict === "NS") this.noteNs(key, step.requestedOpsPerSec);
    return verdict;
  }

  /**
   * Remembers a step already judged NS (a stored verdict).
   * @param key The sweep.
   * @param requestedOpsPerSec The NS step's requested rate.
   */
  noteNs(key: string, requestedOpsPerSec: number): void {
    const first = this.#firstNs.get(key);
    if (first === undefined || requestedOpsPerSec < first) {
      this.#firstNs.set(key, requestedOpsPerSec);
    }
  }

  /**
   * @param key The sweep.
   * @param requestedOpsPerSec A step's requested rate.
   * @returns The sweep's first NS rate when the step is to be skipped, else null.
   */
  skips(key: string, requestedOpsPerSec: number): number | null {
    const first = this.#firstNs.get(key) ?? null;
    return isSkipped(requestedOpsPerSec, first) ? first : null;
  }

  /**
   * Why a step is skipped, as `kvlab run` reports it, or null when it is not.
   * @param key The sweep.
   * @param requestedOpsPerSec The step's requested rate.
   * @param say The server's label, the rate's unit (default `/s`) and what else names the sweep.
   * @returns `skipped: <label> did not sustain <first NS><unit>[ (<detail>)]`, or null.
   */
  skipReason(
    key: string,
    requestedOpsPerSec: number,
    say: { label: string; unit?: string; detail?: string },
  ): string | null {
    const first = this.skips(key, requestedOpsPerSec);
    if (first === null) return null;
    return `skipped: ${say.label} did not sustain ${first.toLocaleString("en")}${
      say.unit ?? "/s"
    }` +
      (say.detail ? ` (${say.detail})` : "");
  }
}

/** The generator-bound rule (issue 20): when a step's latency is the load generator's own. */
export interface GeneratorRule {
  /** Largest generator delay p99 ÷ latency p99 that still counts as the server's. @default {0.1} */
  maxShare: number;
}

/** The rule's default: the generator's delay p99 above 10 % of the p99 latency. */
export const DEFAULT_GENERATOR_RULE: Readonly<GeneratorRule> = Object.freeze({ maxShare: 0.1 });

/** What a step measured of its load generator (the `results` columns; null when unknown). */
export interface GeneratorFacts {
  /** The latency the step reports (`p99_latency_ms`, from the intended send). */
  p99LatencyMs: number | null;
  /** p99 of the whole intended → actual send delay (`send_delay_p99_ms`). */
  sendDelayP99Ms?: number | null;
  /** p99 of its timer part (`send_lateness_p99_ms`), for steps stored without the whole. */
  sendLatenessP99Ms?: number | null;
}

const finite = (x: number | null | undefined): x is number =>
  typeof x === "number" && Number.isFinite(x);

/**
 * The generator's delay of a step, ms: the p99 of the whole delay from the intended to the
 * actual send (the timer's lateness and the wait behind a connection busy with earlier
 * requests: either way the request left later than the schedule said), or, for a step stored
 * without it, the p99 of its lateness. Null when the step measured neither (another tool's).
 *
 * @param f The step's facts.
 * @returns The delay in ms, or null.
 *
 * @example
 * ```ts
 * import { generatorDelayMs } from "./fixed_rate.ts";
 * import assert from "node:assert/strict";
 * assert.equal(generatorDelayMs({ p99LatencyMs: 5, sendDelayP99Ms: 4, sendLatenessP99Ms: 0.01 }), 4);
 * assert.equal(generatorDelayMs({ p99LatencyMs: 5, sendLatenessP99Ms: 0.5 }), 0.5);
 * assert.equal(generatorDelayMs({ p99LatencyMs: 5 }), null);
 * ```
 */
export function generatorDelayMs(f: GeneratorFacts): number | null {
  return finite(f.sendDelayP99Ms)
    ? f.sendDelayP99Ms
    : finite(f.sendLatenessP99Ms)
    ? f.sendLatenessP99Ms
    : null;
}

/**
 * The generator-bound rule: a step is generator-bound when its generator's delay
 * ({@link generatorDelayMs}) is above `maxShare` of the p99 latency it reports, so that latency
 * is not (only) the server's. Null when the step did not measure the delay (another tool's).
 *
 * @param f The step's facts.
 * @param rule The bound (default {@link DEFAULT_GENERATOR_RULE}).
 * @returns true (generator-bound), false, or null (not known).
 *
 * @example
 * ```ts
 * import { generatorBound } from "./fixed_rate.ts";
 * import assert from "node:assert/strict";
 * assert.equal(generatorBound({ p99LatencyMs: 4.73, sendDelayP99Ms: 3.58 }), true);
 * assert.equal(generatorBound({ p99LatencyMs: 0.6, sendDelayP99Ms: 0.05 }), false);
 * assert.equal(generatorBound({ p99LatencyMs: 0.6, sendDelayP99Ms: null }), null);
 * ```
 */
export function generatorBound(
  f: GeneratorFacts,
  rule: GeneratorRule = DEFAULT_GENERATOR_RULE,
): boolean | null {
  const delay = generatorDelayMs(f);
  if (delay === null || !finite(f.p99LatencyMs)) return null;
  return delay > rule.maxShare * f.p99LatencyMs;
}
