/**
 * Fixed-rate latency, each arm against a baseline (seed 000's "p99 at 20,000/s: Valkey vs
 * Redis"): per table (workload × connections) and requested rate, each arm's achieved rate and
 * p50 / p99 with the repetitions merged by `sweepTable` (the same rows `kvlab sweep` prints),
 * the ratio of the candidate's to the baseline's, with the interval and verdict of the rank rule
 * (`compare/verdict.ts`) over the repetitions' own p50 and p99, resolution-aware: latencies that tie
 * within the histogram's or the printed table's resolution are never better or worse, and
 * "no difference" needs the interval within ±5 % or the resolution, the larger. A step that
 * either arm did not sustain (`NS`, `over`, not run after a first NS), or that two load
 * generators or latency bases measured, is shown and never compared (`not compared`).
 *
 * @module
 */

import pl from "nodejs-polars";
import type { DatasetRef } from "../../store/dataset.ts";
import { benjaminiHochberg, ratioOf } from "../_stats.ts";
import { resultsFrame } from "../units.ts";
import type { SustainedRule } from "../../fixed_rate.ts";
import { type StepRepetition, sweepTable } from "./sweep.ts";
import { type SweepFrames, sweepFrames } from "./_steps.ts";
import { cellVerdict, latencyResolutionMs, VERDICT_DEFAULTS } from "../compare/verdict.ts";

type Rec = Record<string, unknown>;

/** Options of {@link compareSteps}. */
export interface StepCompareOptions {
  /** The runs column naming the arms. @default {"label"} */
  by?: string;
  /** The baseline arm (its steps split by load generator, `redis · kvlab-loadgen`, count too). */
  baseline: string;
  /** The sustained rule the steps are judged by. @default {DEFAULT_SUSTAINED_RULE} */
  sustained?: SustainedRule;
  /** Confidence of the intervals; each step's test is at `1 - confidence`. @default {0.95} */
  confidence?: number;
  /** "No difference" needs the interval inside `1 ± band` (or the resolution). @default {0.05} */
  band?: number;
  /** The fewest repetitions per arm for a verdict other than inconclusive. @default {4} */
  minRuns?: number;
  /** Told the runs a dataset's load left out as superseded attempts of plan cells. */
  onLeftOut?: (runIds: string[]) => void;
}

/** The resolution of a published table's latencies: two decimals, in ms. */
export const PRINTED_RESOLUTION_MS = 0.01;

/** A row of the sweep table with its repetitions (none for a step not run). */
interface Step {
  row: Rec;
  reps: StepRepetition[];
}

/** What a step's comparison needs besides its two steps. */
interface Context {
  by: string;
  /** Runs stored from a published table (their latencies are printed to 2 decimals). */
  published: Set<string>;
  options: StepCompareOptions;
}

const key = (r: Rec, by: string) =>
  JSON.stringify([r.test, r.clients, String(r[by]), r.requested_ops_per_sec]);

/** The run ids whose latencies come from a published table (`output_format = published`). */
function publishedRuns(results: pl.DataFrame): Set<string> {
  if (!results.columns.includes("output_format")) return new Set();
  return new Set(
    results.filter(pl.col("output_format").eq(pl.lit("published"))).getColumn("run_id")
      .toArray().map(String),
  );
}

/**
 * Compares each arm's fixed-rate steps with the baseline's, rate by rate (see the module doc).
 *
 * @param source A dataset (or its directory), or its frames (`results`, `hdr`).
 * @param options The arm column, the baseline, the sustained rule and the verdict's level.
 * @returns One row per table, candidate arm and requested rate: `test`, `clients`, the arm
 * column (the candidate), `baseline` (the baseline arm compared with), `requested_ops_per_sec`,
 * `baseline_n` / `candidate_n` (repetitions), `baseline_step` / `candidate_step` (`sustained`,
 * `NS`, `over`, `skipped`, or null for a rate the arm ran no step at),
 * `baseline_achieved_ops_per_sec`, `candidate_achieved_ops_per_sec`, then for p99 and p50:
 * `baseline_p99_latency_ms`, `candidate_p99_latency_ms` (as `kvlab sweep` merges them),
 * `p99_ratio` (candidate / baseline; null for a step not compared), `p99_ratio_ci_low`, `p99_ratio_ci_high` (Moses' interval of
 * the Hodges–Lehmann ratio of the repetitions' own p99s), `p99_verdict` (better / worse / no
 * difference / inconclusive / not compared; lower latency is better), `p99_p_value`,
 * `p99_q_value` (Benjamini–Hochberg over the steps compared), `p99_verdict_note`, the same for
 * p50, `merge` and `latency_basis`.
 * @throws {TypeError} When the frame lacks a column a sweep needs.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { compareSteps } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const step = (i: number, label: string, req: number, ops: number, p99: number) => ({
 *   run_id: `${label}${req}-${i}`, test_index: 0, test: "GET", clients: 48, label,
 *   requested_ops_per_sec: req, ops_per_sec: ops, p50_latency_ms: p99 / 4,
 *   p99_latency_ms: p99 * (1 + i / 100), complete: true,
 * });
 * const reps = [0, 1, 2, 3, 4];
 * const results = pl.DataFrame([
 *   ...reps.map((i) => step(i, "redis", 20000, 20000, 1.0)),
 *   ...reps.map((i) => step(i, "valkey", 20000, 20000, 0.8)),
 *   ...reps.map((i) => step(i, "redis", 400000, 258000, 9)),
 *   ...reps.map((i) => step(i, "valkey", 400000, 400000, 2)),
 * ]);
 * const c = compareSteps({ results }, { baseline: "redis" }).toRecords();
 * assert.deepEqual(c.map((r) => [r.requested_ops_per_sec, r.p99_verdict]), [
 *   [20000, "better"], [400000, "not compared"],
 * ]);
 * assert.ok(Math.abs((c[0].p99_ratio as number) - 0.8) < 1e-9);
 * assert.equal(c[1].p99_verdict_note, "redis NS at 400,000/s (achieved 258,000/s)");
 * ```
 */
export function compareSteps(
  source: DatasetRef | SweepFrames,
  options: StepCompareOptions,
): pl.DataFrame {
  const by = options.by ?? "label";
  const frames = sweepFrames(source, options.onLeftOut);
  const reps = new Map<string, StepRepetition[]>();
  const table = sweepTable(frames, {
    by,
    sustained: options.sustained,
    onStep: (row, r) => reps.set(key(row, by), r),
  });
  const steps: Step[] = (table.toRecords() as Rec[]).map((row) => ({
    row,
    reps: reps.get(key(row, by)) ?? [],
  }));
  const ctx = { by, published: publishedRuns(frames.results), options };
  const tables = new Map<string, Step[]>();
  for (const s of steps) {
    const k = JSON.stringify([s.row.test, s.row.clients]);
    tables.set(k, [...(tables.get(k) ?? []), s]);
  }
  const out = [...tables.values()].flatMap((t) => tableRows(t, ctx));
  for (const m of ["p99", "p50"]) {
    const q = benjaminiHochberg(out.map((r) => (r[`${m}_p_value`] as number | null) ?? NaN));
    out.forEach((r, i) => r[`${m}_q_value`] = Number.isFinite(q[i]) ? q[i] : null);
  }
  return resultsFrame(out.map((r) => ({ ...EMPTY(by), ...r })));
}

/** The columns of a {@link compareSteps} row, in order. */
const EMPTY = (by: string): Rec =>
  Object.fromEntries(
    [
      "test",
      "clients",
      by,
      "baseline",
      "requested_ops_per_sec",
      "baseline_n",
      "candidate_n",
      "baseline_step",
      "candidate_step",
      "baseline_achieved_ops_per_sec",
      "candidate_achieved_ops_per_sec",
      ...["p99", "p50"].flatMap((m) => [
        `baseline_${m}_latency_ms`,
        `candidate_${m}_latency_ms`,
        `${m}_ratio`,
        `${m}_ratio_ci_low`,
        `${m}_ratio_ci_high`,
        `${m}_verdict`,
        `${m}_p_value`,
        `${m}_q_value`,
        `${m}_verdict_note`,
      ]),
      "merge",
      "latency_basis",
    ].map((c) => [c, null]),
  );

/** The engines and latency bases of an arm's repetitions in a table, as one text. */
function generators(steps: Step[]): string {
  const e = [...new Set(steps.flatMap((s) => s.reps.map((r) => r.engine)))].sort();
  const b = [...new Set(steps.flatMap((s) => s.reps.map((r) => r.basis)))].sort();
  return JSON.stringify([e, b]);
}

/**
 * One table's rows: each candidate arm against the baseline arm measured by the same load
 * generator (an arm split by generator, `redis · kvlab-loadgen`, is matched with its own), rate
 * by rate over the rates either ran.
 */
function tableRows(t: Step[], ctx: Context): Rec[] {
  const { by } = ctx;
  const base = ctx.options.baseline;
  const arm = (s: Step) => String(s.row[by]);
  const isBase = (a: string) => a === base || a.startsWith(`${base} · `);
  const arms = [...new Set(t.map(arm))];
  const of = (a: string) => t.filter((s) => arm(s) === a);
  const bases = arms.filter(isBase);
  const out: Rec[] = [];
  for (const a of arms.filter((x) => !isBase(x))) {
    const mine = of(a);
    const match = bases.find((b) => generators(of(b)) === generators(mine)) ?? bases[0];
    const theirs = match === undefined ? [] : of(match);
    const rates = [...new Set([...mine, ...theirs].map((s) => Number(s.row.requested_ops_per_sec)))]
      .sort((x, y) => x - y);
    for (const rate of rates) {
      const at = (steps: Step[]) => steps.find((s) => s.row.requested_ops_per_sec === rate);
      out.push(stepRow({ base: at(theirs), cand: at(mine), rate, names: [match ?? base, a] }, ctx));
    }
  }
  return out;
}

/** The two steps of a row, the rate and the arms' names (baseline, candidate). */
interface Pair {
  base: Step | undefined;
  cand: Step | undefined;
  rate: number;
  names: [string, string];
}

/** One row of the comparison: the two steps side by side, and the verdict of each latency. */
function stepRow(p: Pair, ctx: Context): Rec {
  const { base, cand, rate, names } = p;
  const side = (s: Step | undefined, who: string) => ({
    [`${who}_n`]: s?.reps.length ?? 0,
    [`${who}_step`]: s?.row.verdict ?? null,
    [`${who}_achieved_ops_per_sec`]: s?.row.achieved_ops_per_sec ?? null,
    [`${who}_p99_latency_ms`]: s?.row.p99_latency_ms ?? null,
    [`${who}_p50_latency_ms`]: s?.row.p50_latency_ms ?? null,
  });
  const first = (cand ?? base)!.row;
  const row: Rec = {
    test: first.test,
    clients: first.clients,
    [ctx.by]: names[1],
    baseline: names[0],
    requested_ops_per_sec: rate,
    ...side(base, "baseline"),
    ...side(cand, "candidate"),
    merge: cand?.row.merge ?? base?.row.merge ?? null,
    latency_basis: cand?.row.latency_basis ?? base?.row.latency_basis ?? null,
  };
  const why = notCompared(p);
  for (const m of ["p99", "p50"] as const) {
    const b = row[`baseline_${m}_latency_ms`] as number | null;
    const c = row[`candidate_${m}_latency_ms`] as number | null;
    // a step not compared has no ratio: its latencies are shown, never set side by side
    row[`${m}_ratio`] = why !== null || b === null || c === null ? null : ratioOf(c, b);
    Object.assign(
      row,
      why === null ? latencyVerdict(p, m, ctx) : {
        [`${m}_verdict`]: "not compared",
        [`${m}_verdict_note`]: why,
      },
    );
  }
  return row;
}

/** A rate in words: `400,000/s`. */
const perSec = (v: unknown) => `${Math.round(Number(v)).toLocaleString("en")}/s`;

/** Why a pair of steps is not compared, or null when it is. */
function notCompared(p: Pair): string | null {
  const { base, cand, rate, names } = p;
  const sides = [[base, names[0]], [cand, names[1]]] as const;
  for (const [s, name] of sides) {
    if (s === undefined) return `${name} ran no step at ${perSec(rate)}`;
  }
  // two load generators, or two latency bases, are never compared, sustained or not
  const gen = (s: Step) => [...new Set(s.reps.map((r) => r.engine))].join("/");
  if (base!.reps.length > 0 && cand!.reps.length > 0 && gen(base!) !== gen(cand!)) {
    return `different load generators (${gen(base!)} vs ${gen(cand!)})`;
  }
  const basis = (s: Step) => String(s.row.latency_basis);
  if (base!.reps.length > 0 && cand!.reps.length > 0 && basis(base!) !== basis(cand!)) {
    return `latency timed from different points (${basis(base!)} vs ${basis(cand!)})`;
  }
  for (const [s, name] of sides) {
    const achieved = `(achieved ${perSec(s!.row.achieved_ops_per_sec)})`;
    switch (s!.row.verdict) {
      case "sustained":
        continue;
      case "skipped":
        return `${name} did not run ${perSec(rate)} (after its first NS)`;
      case "NS":
        return s!.row.achieved_ops_per_sec === null
          ? `${name} NS at ${perSec(rate)} (no rate measured)`
          : `${name} NS at ${perSec(rate)} ${achieved}`;
      default:
        return `${name} ${s!.row.verdict} at ${perSec(rate)} ${achieved}`;
    }
  }
  return null;
}

/** The verdict on one latency of two sustained steps, over their repetitions. */
function latencyVerdict(p: Pair, m: "p50" | "p99", ctx: Context): Rec {
  const values = (s: Step) =>
    s.reps.map((r) => m === "p99" ? r.p99LatencyMs : r.p50LatencyMs)
      .filter((v): v is number => v !== null && Number.isFinite(v));
  const both = [...p.base!.reps, ...p.cand!.reps];
  const printed = both.some((r) => ctx.published.has(r.runId));
  const engines = [...new Set(both.map((r) => r.engine))];
  const o = ctx.options;
  const v = cellVerdict(values(p.base!), values(p.cand!), {
    direction: "lower",
    alpha: 1 - (o.confidence ?? 1 - VERDICT_DEFAULTS.alpha),
    band: o.band,
    minRuns: o.minRuns,
    resolution: (x) =>
      Math.max(
        ...engines.map((e) => latencyResolutionMs(e, x)),
        printed ? PRINTED_RESOLUTION_MS : 0,
      ),
    ties: "equivalent",
  });
  const bound = [p.base!, p.cand!].filter((s) => s.row.generator_bound === true);
  const note = bound.length > 0
    ? `generator-bound (${bound.map((s) => s.row[ctx.by]).join(", ")}): the load ` +
      "generator's send delay is above 10 % of the p99"
    : v.note;
  return {
    [`${m}_ratio_ci_low`]: v.ciLow,
    [`${m}_ratio_ci_high`]: v.ciHigh,
    [`${m}_verdict`]: bound.length > 0 ? "inconclusive" : v.verdict,
    [`${m}_p_value`]: v.pValue,
    [`${m}_verdict_note`]: note,
  };
}

/**
 * A results frame split into the runs of fixed-rate steps (a run with a row whose requested
 * rate is above 0: its SET, GET and TOTALS rows alike) and the others, which `compare` compares.
 *
 * @param results A results frame (`loadResults`).
 * @returns The rows of step runs, and the rest.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { splitFixedRate } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const results = pl.DataFrame({
 *   run_id: ["a", "a", "b"], test: ["GET", "TOTALS", "SET"],
 *   requested_ops_per_sec: [null, 1000, null],
 * });
 * const { steps, others } = splitFixedRate(results);
 * assert.deepEqual(steps.getColumn("test").toArray(), ["GET", "TOTALS"]);
 * assert.deepEqual(others.getColumn("run_id").toArray(), ["b"]);
 * ```
 */
export function splitFixedRate(
  results: pl.DataFrame,
): { steps: pl.DataFrame; others: pl.DataFrame } {
  if (!results.columns.includes("requested_ops_per_sec") || results.height === 0) {
    return { steps: results.head(0), others: results };
  }
  const stepRow = pl.col("requested_ops_per_sec").gt(0).fillNull(false);
  // a run with a requested rate is a step, all its rows (a frame without run ids: row by row)
  const isStep = results.columns.includes("run_id")
    ? pl.col("run_id").isIn(results.filter(stepRow).getColumn("run_id").unique().toArray())
    : stepRow;
  return { steps: results.filter(isStep), others: results.filter(isStep.not()) };
}
