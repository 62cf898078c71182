/**
 * Why a comparison's cell is unstable, per arm: one short reason for its table (`CV 27 %, 4/5
 * runs disturbed (steal ≤ 37 %)`) and the details for JSON and the summary page's details
 * section (every reason the noise guard gave). Private to `compare/`.
 *
 * @module
 */

import { instability } from "./verdict.ts";

/** A plain record (a summary row of one arm). */
type Rec = Record<string, unknown>;

/** The column that holds, per run, 1 when the noise guard found it disturbed, else 0. */
export const DISTURBED = "noise_disturbed";

/** The distinct reasons the noise guard gave an arm's runs. */
function reasons(r: Rec): string[] {
  return ((r.distinct_noise_disturbance as unknown[] | undefined) ?? [])
    .filter((x) => x !== null && x !== undefined).map(String);
}

/**
 * The reasons of disturbed runs in short: each kind once with its largest value, `steal ≤ 37 %`,
 * `other processes ≤ 49 %`, `load ≤ 3.1` (from the noise guard's texts: `steal 37.0 %`, `other
 * processes used 49 % of the CPUs`, `load 3.1 on 2 CPUs`).
 *
 * @example
 * ```ts
 * import { shortReasons } from "./_unstable.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   shortReasons(["steal 37.0 %", "steal 12.4 %; other processes used 20 % of the CPUs", "load 3.1 on 2 CPUs"]),
 *   "steal ≤ 37 %, other processes ≤ 20 %, load ≤ 3.1",
 * );
 * assert.equal(shortReasons(["something else"]), "something else");
 * ```
 */
export function shortReasons(texts: readonly string[]): string {
  const kinds = new Map<string, { max: number; unit: string }>();
  const other: string[] = [];
  for (const part of texts.flatMap((t) => t.split("; "))) {
    const m = part.match(/^([^\d]*?)\s*(?:used\s+)?(\d+(?:\.\d+)?)\s*(%?)/);
    if (!m || m[1].trim() === "") {
      if (!other.includes(part)) other.push(part);
      continue;
    }
    const name = m[1].replace(/\s+used$/, "").trim();
    const value = Number(m[2]);
    const k = kinds.get(name);
    if (!k || value > k.max) kinds.set(name, { max: value, unit: m[3] });
  }
  const round = (v: number) => v >= 10 ? String(Math.round(v)) : String(+v.toFixed(1));
  return [
    ...[...kinds].map(([name, k]) => `${name} ≤ ${round(k.max)}${k.unit ? ` ${k.unit}` : ""}`),
    ...other,
  ].join(", ");
}

/**
 * One arm's reason in short: the instability of its values (CV or drift) and how many of its
 * runs were disturbed, with their reasons in short; null when it is stable and quiet.
 */
function armReason(metric: string, r: Rec): string | null {
  const why: string[] = [];
  const w = instability((r[`values_${metric}`] as number[] | undefined) ?? []);
  if (w) why.push(w);
  const flags = (r[`values_${DISTURBED}`] as number[] | undefined) ?? [];
  const disturbed = flags.filter((f) => f > 0).length;
  const texts = reasons(r);
  if (disturbed > 0 || texts.length > 0) {
    const count = flags.length > 0 ? `${disturbed}/${flags.length} runs` : "runs";
    why.push(`${count} disturbed${texts.length ? ` (${shortReasons(texts)})` : ""}`);
  }
  return why.length ? why.join(", ") : null;
}

/**
 * Why a cell's repetitions are unstable or were disturbed, one short reason per arm
 * (`baseline: CV 12 %; candidate: 4/5 runs disturbed (steal ≤ 37 %)`), or null.
 *
 * @param metric The metric compared.
 * @param arms Each arm's name in the text and its summary row.
 * @returns The text, or null.
 */
export function unstableText(metric: string, arms: [string, Rec][]): string | null {
  const why = arms.flatMap(([name, r]) => {
    const w = armReason(metric, r);
    return w ? [`${name}: ${w}`] : [];
  });
  return why.length ? why.join("; ") : null;
}

/**
 * The details behind {@link unstableText}: per arm, every reason the noise guard gave its runs
 * (`candidate: runs disturbed (steal 37.0 %; steal 36.2 %)`), or null. (The spread or drift
 * `unstableText` names is whole there.)
 *
 * @param arms Each arm's name in the text and its summary row.
 * @returns The text, or null.
 */
export function unstableDetails(arms: [string, Rec][]): string | null {
  const why = arms.flatMap(([name, r]) => {
    const texts = reasons(r);
    return texts.length ? [`${name}: runs disturbed (${texts.join("; ")})`] : [];
  });
  return why.length ? why.join("; ") : null;
}
