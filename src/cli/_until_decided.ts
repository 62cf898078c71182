/**
 * `kvlab run --until-decided` (issue 36): a plan run in interleaved rounds of repetitions, each
 * cell decided after every round by the sequential rule (`analyze/sequential/sequential.ts`,
 * valid under any number of looks); decided cells stop, open ones go on until the time budget or
 * the most runs per arm is spent, then stay inconclusive with the runs they would need. The
 * first round runs the plan's `repetitions`, every later round one more. Resuming (the same
 * command again) reads the runs stored before and continues the sequence: the rule is a function
 * of all the runs so far, whenever they ran.
 *
 * @module
 */

import pl from "nodejs-polars";
import { loadResults } from "../analyze/load.ts";
import { pooledLogSd, runsNeeded } from "../analyze/sequential/sample_size.ts";
import { sequentialVerdict } from "../analyze/sequential/sequential.ts";
import { planCells, type StudyPlan } from "../collect/plan/plan.ts";
import type { PlanWhere } from "../collect/plan/reader.ts";
import { PlanError } from "../collect/plan/kind.ts";
import { runPlan, type RunPlanOptions, type StudyResult } from "../collect/plan/study.ts";
import { Dataset, type DatasetRef } from "../store/dataset.ts";

export { budgetSeconds } from "../collect/plan/until.ts";

/** The settings of a run until decided (`--budget`, `--max-runs`, `--min-effect`). */
export interface UntilDecided {
  /** Start no round after this many seconds (null: no time budget). */
  budgetS: number | null;
  /** The most runs per arm of a cell. @default {30} */
  maxRuns: number;
  /** "No difference" needs the interval within ± this (0.05 = 5 %). @default {0.05} */
  minEffect: number;
  /** The plan field it came from, if any (for errors). */
  at?: PlanWhere;
}

/** The defaults of {@link UntilDecided}. */
export const UNTIL_DECIDED_DEFAULTS = { budgetS: null, maxRuns: 30, minEffect: 0.05 } as const;

/** The plan kinds whose cells are runs per test that a throughput verdict decides. */
const KINDS = new Set(["redis-benchmark", "memtier"]);

/** The decision on one test of one cell for one candidate arm. */
export interface CellDecision {
  /** The cell: the baseline's parameters (`c50-d3-P1-t0-r0`). */
  cell: string;
  test: string;
  baseline: string;
  candidate: string;
  verdict: "better" | "worse" | "no difference" | "inconclusive";
  baselineRuns: number;
  candidateRuns: number;
  ratio: number | null;
  ciLow: number | null;
  ciHigh: number | null;
  /** The round in which it was decided (null: open at the end). */
  round: number | null;
  /** For an open cell: runs per arm to tell ±minEffect at 5 % with 80 % power. */
  runsNeeded: number | null;
}

/** How a run until decided ended. */
export interface UntilDecidedResult extends StudyResult {
  rounds: number;
  /** Why it stopped. */
  stop: "decided" | "budget" | "max-runs" | "interrupted" | "failed";
  decisions: CellDecision[];
}

/** A plan cell's place: its cell (parameter point) and its arm. */
interface Place {
  point: number;
  arm: string;
}

/**
 * Each cell id's stem (the id without `/rep<k>`) and its place: the parameter point (cells are
 * interleaved repetition, point, server) and the server.
 */
function places(plan: StudyPlan): Map<string, Place> {
  const out = new Map<string, Place>();
  const arms = plan.servers.map((s) => s.name);
  const first = planCells({ ...plan, repetitions: 1 } as StudyPlan);
  first.forEach((c, i) => {
    if (c.server.name !== arms[i % arms.length]) {
      throw new TypeError(
        `--until-decided: the cells of plan ${plan.name} do not alternate servers`,
      );
    }
    out.set(stem(c.id), { point: Math.floor(i / arms.length), arm: c.server.name });
  });
  return out;
}

/** A cell id without its repetition. */
const stem = (id: string) => id.replace(/\/rep\d+$/, "");

/** The values of each point, test and arm from the complete runs stored for the plan. */
function storedValues(
  data: DatasetRef,
  plan: StudyPlan,
  where: Map<string, Place>,
): Map<string, Map<string, number[]>> {
  try {
    Deno.statSync(Dataset.of(data).dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return new Map(); // nothing stored yet
    throw e;
  }
  const df = loadResults(data, {
    columns: ["plan_name", "plan_cell", "status", "test", "ops_per_sec", "complete"],
  });
  if (df.height === 0) return new Map();
  const rows = df.filter(
    pl.col("plan_name").eq(pl.lit(plan.name)).and(pl.col("status").eq(pl.lit("complete")))
      .and(pl.col("complete")),
  ).toRecords() as { plan_cell: string; test: string; ops_per_sec: number | null }[];
  const out = new Map<string, Map<string, number[]>>();
  for (const r of rows) {
    const p = where.get(stem(r.plan_cell));
    if (!p || r.ops_per_sec === null || !(r.ops_per_sec > 0)) continue;
    const key = `${p.point}\u0000${r.test}`;
    const arms = out.get(key) ?? new Map<string, number[]>();
    arms.set(p.arm, [...arms.get(p.arm) ?? [], r.ops_per_sec]);
    out.set(key, arms);
  }
  return out;
}

/** What the rounds know: the plan's places, the values so far, and the decisions frozen. */
class Sequence {
  readonly map: Map<string, Place>;
  readonly points: Set<number>;
  readonly #names = new Map<number, string>();
  /** Decided (test, candidate) pairs of each point, kept as first decided. */
  readonly frozen = new Map<string, CellDecision>();
  values = new Map<string, Map<string, number[]>>();

  constructor(readonly plan: StudyPlan, readonly until: UntilDecided) {
    this.map = places(plan);
    this.points = new Set([...this.map.values()].map((p) => p.point));
    for (const [s, p] of this.map) {
      if (p.arm === plan.servers[0].name) this.#names.set(p.point, s.split("/").slice(2).join("/"));
    }
  }

  /** The most runs an arm of any cell has. */
  mostRuns(): number {
    const counts = [...this.values.values()].flatMap((a) => [...a.values()].map((v) => v.length));
    return Math.max(0, ...counts);
  }

  /** The verdict of a (point, test) key's candidate. */
  #verdict(key: string, candidate: string, round: number | null): CellDecision {
    const arms = this.values.get(key) ?? new Map<string, number[]>();
    const base = arms.get(this.plan.servers[0].name) ?? [];
    const cand = arms.get(candidate) ?? [];
    const v = sequentialVerdict(base, cand, {
      direction: "higher",
      minEffect: this.until.minEffect,
    });
    const sd = pooledLogSd(base, cand);
    const [point, test] = key.split("\u0000");
    return {
      cell: this.#names.get(Number(point)) ?? point,
      test,
      baseline: this.plan.servers[0].name,
      candidate,
      verdict: v.verdict === "open" ? "inconclusive" : v.verdict,
      baselineRuns: base.length,
      candidateRuns: cand.length,
      ratio: v.ratio,
      ciLow: v.ciLow,
      ciHigh: v.ciHigh,
      round: v.verdict === "open" ? null : round,
      runsNeeded: v.verdict === "open" && sd !== null ? runsNeeded(sd, this.until.minEffect) : null,
    };
  }

  /** Decides what the runs so far decide (freezing it); returns the points still open. */
  decide(round: number): Set<number> {
    const open = new Set(this.points);
    const seen = new Set<number>();
    for (const key of this.values.keys()) {
      const point = Number(key.split("\u0000")[0]);
      seen.add(point);
      for (const s of this.plan.servers.slice(1)) {
        const id = `${key}\u0000${s.name}`;
        if (this.frozen.has(id)) continue;
        const d = this.#verdict(key, s.name, round);
        if (d.round !== null) this.frozen.set(id, d);
      }
    }
    for (const point of seen) {
      const pending = [...this.values.keys()].some((k) =>
        k.startsWith(`${point}\u0000`) &&
        this.plan.servers.slice(1).some((s) => !this.frozen.has(`${k}\u0000${s.name}`))
      );
      if (!pending) open.delete(point);
    }
    return open;
  }

  /** Every (cell, test, candidate): the frozen decision, else the open one with its advice. */
  decisions(): CellDecision[] {
    return [...this.values.keys()].flatMap((key) =>
      this.plan.servers.slice(1).map((s) =>
        this.frozen.get(`${key}\u0000${s.name}`) ?? this.#verdict(key, s.name, null)
      )
    );
  }
}

/** Why to start no more rounds, or null to go on. */
function stopBefore(
  open: Set<number>,
  o: { signal?: AbortSignal; until: UntilDecided; elapsedS: number; repetitions: number },
): UntilDecidedResult["stop"] | null {
  if (open.size === 0) return "decided";
  if (o.signal?.aborted) return "interrupted";
  if (o.until.budgetS !== null && o.elapsedS >= o.until.budgetS) return "budget";
  if (o.repetitions > o.until.maxRuns) return "max-runs";
  return null;
}

/**
 * Runs a plan until every cell is decided, the budget is spent or the cells reach `maxRuns` per
 * arm (see the module doc). The first server is the baseline.
 *
 * @param plan A checked plan of kind redis-benchmark or memtier, with two or more servers.
 * @param options What `runPlan` takes (the dataset, the signal, the events), and `onRound`.
 * @param until The budget, the most runs, the smallest difference.
 * @returns The plan's counts over all rounds, the rounds, why it stopped, and the decisions.
 * @throws {PlanError} For a plan of another kind or with one server.
 */
export async function runUntilDecided(
  plan: StudyPlan,
  options: RunPlanOptions & { onRound?: (round: number, open: number) => void },
  until: UntilDecided,
): Promise<UntilDecidedResult> {
  const where = { file: "", line: 0, column: 0, text: "", ...until.at };
  if (!KINDS.has(plan.kind)) {
    throw new PlanError(
      `--until-decided: kind ${plan.kind} (only redis-benchmark and memtier)`,
      where,
    );
  }
  if (plan.servers.length < 2) {
    throw new PlanError("--until-decided: at least two servers (the first is the baseline)", where);
  }
  const started = Date.now();
  const seq = new Sequence(plan, until);
  const total: UntilDecidedResult = {
    cells: 0,
    complete: 0,
    skipped: 0,
    incomplete: 0,
    failed: 0,
    interrupted: false,
    rounds: 0,
    stop: "decided",
    decisions: [],
  };
  seq.values = storedValues(options.data, plan, seq.map);
  // resume: the runs stored before count, and the next round completes the last one
  let repetitions = Math.max(plan.repetitions, seq.mostRuns());
  let open = seq.values.size > 0 ? seq.decide(0) : new Set(seq.points);
  for (;;) {
    const elapsedS = (Date.now() - started) / 1000;
    const stop = stopBefore(open, { signal: options.signal, until, elapsedS, repetitions });
    if (stop !== null) {
      total.stop = stop;
      break;
    }
    const first = ++total.rounds === 1;
    options.onRound?.(total.rounds, open.size);
    const shut = open;
    const r = await runPlan({ ...plan, repetitions } as StudyPlan, {
      ...options,
      // the cells of earlier rounds are skipped again each round: said once
      onEvent: (e) => (first || e.kind !== "skip") && options.onEvent?.(e),
      only: (c) => shut.has(seq.map.get(stem(c.id))?.point ?? -1),
    });
    if (first) total.skipped = r.skipped;
    total.cells += r.cells - (first ? 0 : r.skipped);
    total.complete += r.complete;
    total.incomplete += r.incomplete;
    total.failed += r.failed;
    if (r.interrupted) {
      total.interrupted = true;
      total.stop = "interrupted";
      break;
    }
    if (r.failed > 0 && r.complete === 0) {
      total.stop = "failed"; // nothing new to decide on: a server is down
      break;
    }
    seq.values = storedValues(options.data, plan, seq.map);
    open = seq.decide(total.rounds);
    repetitions++;
  }
  total.decisions = seq.decisions();
  return total;
}

/**
 * The decisions as a table for people: cell, test, candidate, verdict, runs per arm, ratio
 * with its interval (the confidence sequence's), the round that decided it, and the runs an open
 * cell would need.
 *
 * @param decisions From {@link runUntilDecided}.
 * @returns The frame.
 *
 * @example
 * ```ts
 * import { decisionsFrame } from "./_until_decided.ts";
 * import assert from "node:assert/strict";
 * const df = decisionsFrame([{ cell: "c1", test: "SET", baseline: "a", candidate: "b",
 *   verdict: "better", baselineRuns: 3, candidateRuns: 3, ratio: 2, ciLow: 1.5, ciHigh: 2.5,
 *   round: 1, runsNeeded: null }]);
 * assert.deepEqual(df.columns.slice(0, 4), ["cell", "test", "candidate", "verdict"]);
 * ```
 */
export function decisionsFrame(decisions: readonly CellDecision[]): pl.DataFrame {
  return pl.DataFrame(decisions.map((d) => ({
    cell: d.cell,
    test: d.test,
    candidate: d.candidate,
    verdict: d.verdict,
    runs_per_arm: `${d.baselineRuns}/${d.candidateRuns}`,
    ratio: d.ratio,
    ratio_ci_low: d.ciLow,
    ratio_ci_high: d.ciHigh,
    decided_in_round: d.round,
    runs_needed: d.runsNeeded,
  })));
}

/**
 * One line on how a run until decided ended.
 *
 * @param r The result.
 * @param until The settings.
 * @returns The line, with its newline.
 *
 * @example
 * ```ts
 * import { untilDecidedLine } from "./_until_decided.ts";
 * import assert from "node:assert/strict";
 * const r = { rounds: 2, stop: "decided", decisions: [{ verdict: "better" }] } as never;
 * assert.equal(
 *   untilDecidedLine(r, { budgetS: null, maxRuns: 30, minEffect: 0.05 }),
 *   "until decided: every cell decided after 2 rounds (1 better, 0 worse, 0 no difference, 0 open)\n",
 * );
 * ```
 */
export function untilDecidedLine(r: UntilDecidedResult, until: UntilDecided): string {
  const n = (v: string) => r.decisions.filter((d) => d.verdict === v).length;
  const why = {
    decided: "every cell decided",
    budget: `the budget (${until.budgetS} s) spent`,
    "max-runs": `${until.maxRuns} runs per arm reached`,
    interrupted: "interrupted",
    failed: "a round stored no complete run",
  }[r.stop];
  return `until decided: ${why} after ${r.rounds} round${r.rounds === 1 ? "" : "s"} ` +
    `(${n("better")} better, ${n("worse")} worse, ${n("no difference")} no difference, ` +
    `${n("inconclusive")} open)\n`;
}
