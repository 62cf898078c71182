/**
 * Option parsers shared by the commands, and the repository root that their defaults name.
 *
 * @module
 */

import { InvalidArgumentError, type OptionValues } from "commander";
import { type TableFormat, tableFormat } from "../analyze/format.ts";
import { Dataset } from "../store/dataset.ts";
import { checkSustainedRule, DEFAULT_SUSTAINED_RULE, type SustainedRule } from "../fixed_rate.ts";

/** The repository root (with a trailing slash): bundled data, plans and samples live under it. */
export const REPO: string = new URL("../../", import.meta.url).pathname;

/**
 * A number of seconds from an option's text.
 *
 * @param option The option's name, for the message, e.g. `"--interval"`.
 * @param value The option's text.
 * @returns The number.
 * @throws {TypeError} When the text is not a finite number.
 *
 * @example
 * ```ts
 * import { seconds } from "./_options.ts";
 * import assert from "node:assert/strict";
 * assert.equal(seconds("--interval", "0.5"), 0.5);
 * assert.throws(() => seconds("--interval", "abc"), /invalid --interval: "abc"/);
 * ```
 */
export function seconds(option: string, value: string): number {
  const n = Number(value);
  if (value === undefined || value.trim() === "" || !Number.isFinite(n)) {
    throw new TypeError(
      `invalid ${option}: ${JSON.stringify(value)} (expected seconds, e.g. 1 or 0.5)`,
    );
  }
  return n;
}

/**
 * Collects a repeatable `--tag k=v` option into a record (a commander option parser).
 *
 * @param value One `k=v`.
 * @param previous The tags so far.
 * @returns The tags with this one added.
 * @throws {InvalidArgumentError} When there is no `=` or no key.
 *
 * @example
 * ```ts
 * import { collectTag } from "./_options.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(collectTag("host=lab=1", { a: "b" }), { a: "b", host: "lab=1" });
 * assert.throws(() => collectTag("novalue", {}), /expected k=v, got "novalue"/);
 * ```
 */
export function collectTag(
  value: string,
  previous: Record<string, string>,
): Record<string, string> {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError(`expected k=v, got ${JSON.stringify(value)}`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

/**
 * An optional string option: `undefined` stays `undefined`, anything else becomes a string.
 *
 * @param value The option's value as commander gives it.
 * @returns The string, or `undefined`.
 *
 * @example
 * ```ts
 * import { optionalString } from "./_options.ts";
 * import assert from "node:assert/strict";
 * assert.equal(optionalString(undefined), undefined);
 * assert.equal(optionalString("x"), "x");
 * ```
 */
export function optionalString(value: unknown): string | undefined {
  return value === undefined ? undefined : String(value);
}

/**
 * An optional `--format`: `undefined` stays `undefined` (the command then picks by where its
 * output goes, see {@link peopleFormat}), anything else is checked.
 *
 * @param value The option's value as commander gives it.
 * @returns The format, or `undefined`.
 * @throws {TypeError} For an unknown format.
 *
 * @example
 * ```ts
 * import { optionalFormat } from "./_options.ts";
 * import assert from "node:assert/strict";
 * assert.equal(optionalFormat(undefined), undefined);
 * assert.equal(optionalFormat("csv"), "csv");
 * assert.throws(() => optionalFormat("xml"), /invalid format: xml/);
 * ```
 */
export function optionalFormat(value: unknown): TableFormat | undefined {
  return value === undefined ? undefined : tableFormat(String(value));
}

/**
 * The dataset of `--data`, opened once for the whole command (see `store/dataset.ts`).
 *
 * @param value The option's value.
 * @returns The dataset.
 * @throws {TypeError} For an empty path.
 *
 * @example
 * ```ts
 * import { datasetOption } from "./_options.ts";
 * import assert from "node:assert/strict";
 * assert.equal(datasetOption("data/demo/").dir, "data/demo");
 * assert.throws(() => datasetOption(""), /invalid dataset directory/);
 * ```
 */
export function datasetOption(value: unknown): Dataset {
  return Dataset.open(value === undefined ? "" : String(value));
}

/**
 * The sustained rule of `--sustained min:max` (`kvlab sweep`, `kvlab plot sweep`).
 *
 * @param value The option's text, e.g. `0.95:1.05`.
 * @returns The rule.
 * @throws {TypeError} For text that is not `min:max` around 1.
 *
 * @example
 * ```ts
 * import { sustainedOption } from "./_options.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(sustainedOption("0.95:1.05"), { min: 0.95, max: 1.05 });
 * assert.throws(() => sustainedOption("1.1:2"), /invalid --sustained: 1\.1:2 \(expected min:max around 1/);
 * ```
 */
export function sustainedOption(value: unknown): SustainedRule {
  const d = `${DEFAULT_SUSTAINED_RULE.min}:${DEFAULT_SUSTAINED_RULE.max}`;
  const text = String(value ?? d);
  const m = /^(\d*\.?\d+):(\d*\.?\d+)$/.exec(text);
  const rule = m ? { min: Number(m[1]), max: Number(m[2]) } : { min: NaN, max: NaN };
  try {
    checkSustainedRule(rule);
  } catch {
    throw new TypeError(`invalid --sustained: ${text} (expected min:max around 1, e.g. ${d})`);
  }
  return rule;
}

/** The detector's thresholds, as `kvlab changes` and `kvlab plot changes` read them. */
export interface ChangesThresholds {
  /** @default {0.001} */
  maxPValue: number;
  /** Relative (0.05 = 5 %). @default {0} */
  minChange: number;
  /** @default {50} */
  window: number;
}

/** A number option, checked. */
function numberOption(
  name: string,
  value: unknown,
  rule: { ok: (n: number) => boolean; what: string },
) {
  const { ok, what } = rule;
  const n = Number(value);
  if (String(value).trim() === "" || !Number.isFinite(n) || !ok(n)) {
    throw new TypeError(`invalid ${name}: ${value} (${what})`);
  }
  return n;
}

/**
 * Reads `--max-pvalue`, `--min-change` and `--window` (the detector's thresholds), for
 * `kvlab changes` and `kvlab plot changes` alike.
 *
 * @param raw Commander's option values.
 * @returns The thresholds, defaults filled in.
 * @throws {TypeError} For a p, change or window out of range.
 *
 * @example
 * ```ts
 * import { changesThresholds } from "./_options.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(changesThresholds({}), { maxPValue: 0.001, minChange: 0, window: 50 });
 * assert.equal(changesThresholds({ minChange: "5%" }).minChange, 0.05);
 * assert.throws(() => changesThresholds({ window: "3" }), /invalid --window: 3/);
 * ```
 */
export function changesThresholds(raw: OptionValues): ChangesThresholds {
  const pct = String(raw.minChange ?? "0").trim();
  const minChange = pct.endsWith("%")
    ? numberOption("--min-change", pct.slice(0, -1), { ok: (n) => n >= 0, what: "at least 0" }) /
      100
    : numberOption("--min-change", pct, {
      ok: (n) => n >= 0,
      what: "relative, at least 0: 0.05 or 5%",
    });
  return {
    maxPValue: numberOption(
      "--max-pvalue",
      raw.maxPvalue ?? "0.001",
      { ok: (n) => n > 0 && n <= 1, what: "in (0, 1]" },
    ),
    minChange,
    window: numberOption(
      "--window",
      raw.window ?? "50",
      { ok: (n) => Number.isInteger(n) && n >= 4, what: "an integer of at least 4" },
    ),
  };
}
