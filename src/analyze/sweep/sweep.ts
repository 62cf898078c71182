/**
 * Fixed-rate sweeps (seed 000's tables): per arm and requested rate, the achieved rate, p50 and
 * p99 with the repetitions merged, the spread between repetitions, and the sustained rule's
 * verdict (`fixed_rate.ts`'s rule: `sustained`, `NS` below it, `over` above it; `skipped` for
 * planned rates above the arm's first NS that did not run). Generic over "step rows": any complete `results` row with a
 * `requested_ops_per_sec` — a kvlab open-loop step, a rate-limited memtier run (its `TOTALS`
 * row: rate limit × clients × threads), a pub/sub delivery step (`PUBSUB_…`, requested = target
 * delivery rate), or a published cell.
 *
 * @module
 */

import pl from "nodejs-polars";
import { median as medianOf } from "../_stats.ts";
import { mergedPercentiles, rowHistograms, rowKey } from "../histograms/rows.ts";
import type { DatasetRef } from "../../store/dataset.ts";
import { type Rec, type StepRow, stepRows, type SweepFrames, sweepFrames } from "./_steps.ts";
import { formatForPeople } from "../present.ts";

export { type SweepFrames, sweepFrames };
import { formatTable, type TableFormat } from "../format.ts";
import { markdownText } from "../../text/safe.ts";
import {
  DEFAULT_SUSTAINED_RULE,
  firstNotSustained,
  generatorBound,
  isSkipped,
  type SustainedRule,
  sustainedVerdict,
  type SweepVerdict,
} from "../../fixed_rate.ts";
import { resultsFrame } from "../units.ts";

export { sweepSpectrum } from "./spectrum.ts";
export { sweepChart, type SweepChartOptions, sweepSpectrumChart } from "../charts/sweep.ts";

export type { SweepVerdict } from "../../fixed_rate.ts";

/** Options of {@link sweepTable}. */
export interface SweepOptions {
  /** The runs column naming the arms. @default {"label"} */
  by?: string;
  /** Sustained when `min ≤ achieved / requested ≤ max`. @default {DEFAULT_SUSTAINED_RULE} */
  sustained?: SustainedRule;
  /**
   * Told the runs a dataset's load left out as superseded attempts of plan cells (see
   * `attempts.ts`; a repeated step counts its latest complete attempt).
   */
  onLeftOut?: (runIds: string[]) => void;
  /**
   * Told each step's row as it is made, with its repetitions (what a comparison over
   * repetitions reads, `compareSteps`).
   */
  onStep?: (row: Readonly<Record<string, unknown>>, repetitions: StepRepetition[]) => void;
}

/** One repetition of a step, as {@link SweepOptions.onStep} tells it. */
export interface StepRepetition {
  runId: string;
  /** The load generator (the run's `tool`: `kvlab-loadgen`, `memtier_benchmark`, …). */
  engine: string;
  /** The latency basis (`intended`, `send`). */
  basis: string;
  achievedOpsPerSec: number | null;
  p50LatencyMs: number | null;
  p99LatencyMs: number | null;
}

/** The median (`_stats.ts`), or null for none. */
const median = (xs: number[]): number | null => (xs.length === 0 ? null : medianOf(xs));

const present = (xs: (number | null)[]): number[] => xs.filter((x): x is number => x !== null);

/**
 * The sweep table: one row per workload × connections × arm × requested rate.
 *
 * Repetitions of a step are merged as HDR histograms when every one has a histogram on its
 * latency basis (`merge = hdr`: exact percentiles over all requests), else p50 and p99 are the
 * medians of the repetitions' own (`merge = median`). The achieved rate is the median over
 * repetitions. A step with latency but no achieved rate (a published cell) is taken as
 * sustained, as its source judged it; a step with neither is `NS` (the rule: no rate measured
 * is no rate sustained).
 *
 * @param source A dataset (or its directory), or the frames ({@link SweepFrames}).
 * @param options The arm column and the sustained rule.
 * @returns `test`, `clients`, the arm column, `requested_ops_per_sec`, `achieved_ops_per_sec`,
 * `p50_latency_ms`, `p99_latency_ms`, `verdict`, `repetitions`, the spread
 * (`achieved_min_ops_per_sec` … `p99_max_latency_ms`), `merge`, `latency_basis`, the whole
 * send delay `send_delay_p99_ms` (median over repetitions), and the generator's own delay:
 * `generator_delay_p99_ms` (the median over repetitions of
 * `fixed_rate.ts`'s `generatorDelayMs`) and `generator_bound` (`generatorBound`: that delay
 * above 10 % of the p99, so the latency is the generator's, not the server's; null when the
 * tool did not measure it).
 * @throws {TypeError} When the frame lacks a column it needs.
 *
 * @example
 * ```ts
 * import { sweepTable } from "@kvlab/kvlab/analyze";
 * import pl from "nodejs-polars";
 * import assert from "node:assert/strict";
 * const row = (run: string, label: string, req: number, ops: number | null, p50: number | null) =>
 *   ({ run_id: run, test_index: 0, test: "GET", clients: 48, label, requested_ops_per_sec: req,
 *     ops_per_sec: ops, p50_latency_ms: p50, p99_latency_ms: p50 && p50 * 2, complete: true });
 * const results = pl.DataFrame([
 *   row("a1", "redis", 10000, 9990, 0.25), row("a2", "redis", 10000, 10010, 0.75),
 *   row("a3", "redis", 300000, 231000, 3), row("b1", "io", 10000, 10000, 0.1),
 *   row("b2", "io", 300000, 299000, 0.1), row("b3", "io", 400000, 330000, 1),
 * ]);
 * const t = sweepTable({ results });
 * assert.deepEqual(
 *   t.select("label", "requested_ops_per_sec", "verdict", "p50_latency_ms").toRecords(),
 *   [
 *     { label: "redis", requested_ops_per_sec: 10000, verdict: "sustained", p50_latency_ms: 0.5 },
 *     { label: "redis", requested_ops_per_sec: 300000, verdict: "NS", p50_latency_ms: 3 },
 *     { label: "redis", requested_ops_per_sec: 400000, verdict: "skipped", p50_latency_ms: null },
 *     { label: "io", requested_ops_per_sec: 10000, verdict: "sustained", p50_latency_ms: 0.1 },
 *     { label: "io", requested_ops_per_sec: 300000, verdict: "sustained", p50_latency_ms: 0.1 },
 *     { label: "io", requested_ops_per_sec: 400000, verdict: "NS", p50_latency_ms: 1 },
 *   ],
 * );
 * assert.deepEqual(t.row(0).slice(8, 10), [2, 9990]); // repetitions, achieved min
 * ```
 */
export function sweepTable(
  source: DatasetRef | SweepFrames,
  options: SweepOptions = {},
): pl.DataFrame {
  const by = options.by ?? "label";
  const rule = options.sustained ?? DEFAULT_SUSTAINED_RULE;
  const frames = sweepFrames(source, options.onLeftOut);
  const steps = stepRows(frames.results, by);
  const hist = rowHistograms(
    frames.hdr ?? pl.DataFrame({}),
    new Map(steps.map((s) => [rowKey(s.runId, s.testIndex), s.basis])),
  );
  const groups = new Map<string, StepRow[]>();
  for (const s of steps) {
    const k = JSON.stringify([s.workload, s.clients, s.arm, s.requestedOpsPerSec]);
    groups.set(k, [...(groups.get(k) ?? []), s]);
  }
  const rows: Rec[] = [...groups.values()].map((g) => {
    const row = stepSummary(g, { hist, by, rule });
    options.onStep?.(
      row,
      g.map((x) => ({
        runId: x.runId,
        engine: x.engine,
        basis: x.basis,
        achievedOpsPerSec: x.achievedOpsPerSec,
        p50LatencyMs: x.p50,
        p99LatencyMs: x.p99,
      })),
    );
    return row;
  });
  rows.push(...skippedRows(rows, by, planned(steps)));
  // tables in order of appearance; arms in order of appearance; rates ascending
  const order = (k: (r: Rec) => string) => {
    const seen = new Map<string, number>();
    for (const r of rows) if (!seen.has(k(r))) seen.set(k(r), seen.size);
    return (r: Rec) => seen.get(k(r))!;
  };
  const table = order((r) => JSON.stringify([r.test, r.clients]));
  const arm = order((r) => String(r[by]));
  rows.sort((a, b) =>
    table(a) - table(b) || arm(a) - arm(b) ||
    Number(a.requested_ops_per_sec) - Number(b.requested_ops_per_sec)
  );
  return resultsFrame(rows.map((r) => ({ ...EMPTY(by), ...r })));
}

const EMPTY = (by: string): Rec => ({
  test: null,
  clients: null,
  [by]: null,
  requested_ops_per_sec: null,
  achieved_ops_per_sec: null,
  p50_latency_ms: null,
  p99_latency_ms: null,
  verdict: null,
  repetitions: null,
  achieved_min_ops_per_sec: null,
  achieved_max_ops_per_sec: null,
  p50_min_latency_ms: null,
  p50_max_latency_ms: null,
  p99_min_latency_ms: null,
  p99_max_latency_ms: null,
  merge: null,
  latency_basis: null,
  send_delay_p99_ms: null,
  generator_delay_p99_ms: null,
  generator_bound: null,
});

/** What {@link stepSummary} merges a step's repetitions with. */
interface StepContext {
  /** The HDR histograms of each step row (`rowHistograms`), by `rowKey`. */
  hist: Map<string, string[]>;
  /** The arm column. */
  by: string;
  /** The sustained rule the step is judged by. */
  rule: SustainedRule;
}

/** One step's row: its repetitions merged. */
function stepSummary(g: StepRow[], { hist, by, rule }: StepContext): Rec {
  const s = g[0];
  const achieved = present(g.map((x) => x.achievedOpsPerSec));
  const p50s = present(g.map((x) => x.p50));
  const p99s = present(g.map((x) => x.p99));
  const parts = g.map((x) => hist.get(rowKey(x.runId, x.testIndex)));
  const merged = parts.every((p) => p !== undefined)
    ? mergedPercentiles(parts.flat() as string[])
    : null;
  const a = median(achieved);
  const p50 = merged?.p50 ?? median(p50s);
  const p99 = merged?.p99 ?? median(p99s);
  const delay = median(present(g.map((x) => x.generatorDelay)));
  const verdict: SweepVerdict = a === null && p50 !== null
    ? "sustained" // a published cell: judged by its source
    : sustainedVerdict({ requestedOpsPerSec: s.requestedOpsPerSec, achievedOpsPerSec: a }, rule);
  return {
    test: s.workload,
    clients: s.clients,
    [by]: s.arm,
    requested_ops_per_sec: s.requestedOpsPerSec,
    achieved_ops_per_sec: a,
    p50_latency_ms: p50,
    p99_latency_ms: p99,
    verdict,
    repetitions: g.length,
    achieved_min_ops_per_sec: achieved.length ? Math.min(...achieved) : null,
    achieved_max_ops_per_sec: achieved.length ? Math.max(...achieved) : null,
    p50_min_latency_ms: p50s.length ? Math.min(...p50s) : null,
    p50_max_latency_ms: p50s.length ? Math.max(...p50s) : null,
    p99_min_latency_ms: p99s.length ? Math.min(...p99s) : null,
    p99_max_latency_ms: p99s.length ? Math.max(...p99s) : null,
    merge: merged ? "hdr" : p50 === null ? null : "median",
    latency_basis: s.basis,
    send_delay_p99_ms: median(present(g.map((x) => x.sendDelay))),
    generator_delay_p99_ms: delay,
    // the step's own rule (fixed_rate.ts) on the repetitions' median delay and the merged p99
    generator_bound: generatorBound({ p99LatencyMs: p99, sendDelayP99Ms: delay }),
  };
}

/** The rates each arm's sweep planned (its runs' `sweep_rates` tags), by table and arm. */
function planned(steps: StepRow[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const s of steps) {
    const k = JSON.stringify([s.workload, s.clients, s.arm]);
    out.set(k, [...new Set([...(out.get(k) ?? []), ...s.planned])]);
  }
  return out;
}

/**
 * Rows for the rates of a table (those other arms ran, and those the arm's own plan had) that an
 * arm did not run after its first NS.
 */
function skippedRows(rows: Rec[], by: string, plannedRates: Map<string, number[]>): Rec[] {
  const out: Rec[] = [];
  const tables = new Map<string, Rec[]>();
  for (const r of rows) {
    const k = JSON.stringify([r.test, r.clients]);
    tables.set(k, [...(tables.get(k) ?? []), r]);
  }
  for (const t of tables.values()) {
    const ran = t.map((r) => Number(r.requested_ops_per_sec));
    for (const arm of new Set(t.map((r) => String(r[by])))) {
      const own = plannedRates.get(JSON.stringify([t[0].test, t[0].clients, arm])) ?? [];
      const rates = [...new Set([...ran, ...own])];
      const mine = t.filter((r) => String(r[by]) === arm);
      const ns = firstNotSustained(mine.map((r) => ({
        requestedOpsPerSec: Number(r.requested_ops_per_sec),
        verdict: r.verdict as SweepVerdict,
      })));
      const have = new Set(mine.map((r) => Number(r.requested_ops_per_sec)));
      for (const rate of rates) {
        if (isSkipped(rate, ns) && !have.has(rate)) {
          out.push({
            test: t[0].test,
            clients: t[0].clients,
            [by]: arm,
            requested_ops_per_sec: rate,
            verdict: "skipped",
            repetitions: 0,
          });
        }
      }
    }
  }
  return out;
}

/** One printed table of a sweep: a workload at a number of connections. */
export interface SweepMatrix {
  /** `GET, 48 connections`. */
  title: string;
  /**
   * `requested (ops/s)` (`requested (msg/s)` for pub/sub), then one column per arm: `p50 / p99`
   * (ms), `NS (258k)`, `-`.
   */
  frame: pl.DataFrame;
}

/**
 * A step as seed 000 prints it: `p50 / p99` (ms, two decimals), `NS (258k)` with the achieved
 * rate, `-` for a step not run; an `over` step keeps its latency and says so; a step whose
 * generator delay dominates (`generator_bound`) ends in `gen-bound`.
 *
 * @param r A row of {@link sweepTable}.
 * @returns The cell text.
 *
 * @example
 * ```ts
 * import { sweepCell } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(sweepCell({ verdict: "sustained", p50_latency_ms: 0.384, p99_latency_ms: 1.806 }), "0.38 / 1.81");
 * assert.equal(sweepCell({ verdict: "NS", achieved_ops_per_sec: 1_078_400 }), "NS (1,078k)");
 * assert.equal(sweepCell({ verdict: "over", p50_latency_ms: 0.2, p99_latency_ms: 0.5, achieved_ops_per_sec: 5010 }), "0.20 / 0.50 over (5k)");
 * assert.equal(sweepCell({ verdict: "NS", achieved_ops_per_sec: 3116 }), "NS (3.1k)");
 * assert.equal(sweepCell({ verdict: "NS", achieved_ops_per_sec: 40 }), "NS (40/s)");
 * assert.equal(sweepCell({ verdict: "skipped" }), "-");
 * assert.equal(
 *   sweepCell({ verdict: "sustained", p50_latency_ms: 4.1, p99_latency_ms: 4.73, generator_bound: true }),
 *   "4.10 / 4.73 gen-bound",
 * );
 * ```
 */
export function sweepCell(r: Record<string, unknown>): string {
  // thousands, as the post prints them; one decimal below 10k (`NS (3.1k)`)
  const k = (v: unknown) => {
    const x = Number(v) / 1000;
    // below 1k the rate itself: `NS (0k)` would read as nothing delivered
    if (x < 1) return `${Math.round(Number(v)).toLocaleString("en")}/s`;
    return `${x < 10 ? x.toFixed(1).replace(/\.0$/, "") : Math.round(x).toLocaleString("en")}k`;
  };
  const lat = () =>
    `${Number(r.p50_latency_ms).toFixed(2)} / ${Number(r.p99_latency_ms).toFixed(2)}`;
  // the generator's own delay dominates: the latency is the client's, not the server's
  const gen = r.generator_bound === true ? " gen-bound" : "";
  switch (r.verdict) {
    case "sustained":
      return lat() + gen;
    case "over":
      return `${lat()} over (${k(r.achieved_ops_per_sec)})${gen}`;
    case "NS":
      return `NS (${k(r.achieved_ops_per_sec)})${gen}`;
    case "skipped":
      return "-";
    default:
      return "";
  }
}

/**
 * The sweep table as seed 000 prints it: one table per workload and connections, rows =
 * requested rate, columns = arms.
 *
 * @param table {@link sweepTable}'s result.
 * @param options The arm column (as given to {@link sweepTable}).
 * @returns One matrix per table, in order.
 */
export function sweepMatrices(table: pl.DataFrame, options: { by?: string } = {}): SweepMatrix[] {
  const by = options.by ?? "label";
  const recs = table.toRecords() as Rec[];
  const keys = [...new Set(recs.map((r) => JSON.stringify([r.test, r.clients])))];
  return keys.map((key) => {
    const [test, clients] = JSON.parse(key);
    const mine = recs.filter((r) => JSON.stringify([r.test, r.clients]) === key);
    const arms = [...new Set(mine.map((r) => String(r[by])))];
    const rates = [...new Set(mine.map((r) => Number(r.requested_ops_per_sec)))].sort((a, b) =>
      a - b
    );
    const pubsub = String(test).startsWith("PUBSUB");
    const cols: Record<string, string[]> = {
      [pubsub ? "requested (msg/s)" : "requested (ops/s)"]: rates.map((x) =>
        Math.round(x).toLocaleString("en")
      ),
    };
    for (const arm of arms) {
      cols[arm] = rates.map((rate) => {
        const r = mine.find((x) => String(x[by]) === arm && x.requested_ops_per_sec === rate);
        return r ? sweepCell(r) : "";
      });
    }
    const who = pubsub ? "publishers" : "connections";
    const title = clients === null ? String(test) : `${test}, ${clients} ${who}`;
    return { title, frame: pl.DataFrame(cols) };
  });
}

/** What the cells of {@link sweepMatrices} mean, printed under the Markdown tables. */
export const SWEEP_LEGEND = "Cells: p50 / p99 latency in ms; NS (achieved rate) = not sustained " +
  "(below the sustained rule); over (achieved rate) = above it; - = not run after a first NS; " +
  "gen-bound = the load generator's send delay p99 (requests sent later than scheduled) is " +
  "above 10 % of the p99 latency: that latency is not the server's alone.";

/**
 * The sweep for people or programs: Markdown prints each table of {@link sweepMatrices} under
 * its title; text gives {@link sweepTable}'s rows (one per arm × step) rounded by unit, with
 * units in the headers; CSV and JSON give them at full precision.
 *
 * @param table {@link sweepTable}'s result.
 * @param format md, csv or json.
 * @param options The arm column.
 * @returns The text.
 */
export function formatSweep(
  table: pl.DataFrame,
  format: TableFormat,
  options: { by?: string } = {},
): string {
  if (format === "csv" || format === "json") return formatTable(table, format);
  // one row per arm × step, rounded by unit (ms to 3 decimals, rates to 2)
  if (format === "text") return formatForPeople(table, "text");
  return sweepMatrices(table, options).map((m) =>
    `**${markdownText(m.title)}**\n\n${formatTable(m.frame, "md")}`
  )
    .join("\n") + `\n${SWEEP_LEGEND}\n`;
}

/**
 * Whether a results frame holds fixed-rate steps only (every row has a requested rate): data
 * that {@link sweepTable} shows and that `compare`, `plot ratio` and the summary page do not.
 *
 * @param results A results frame ({@link loadResults}).
 * @returns True when it has rows and each has a `requested_ops_per_sec`.
 *
 * @example
 * ```ts
 * import { fixedRateOnly } from "@kvlab/kvlab/analyze";
 * import pl from "nodejs-polars";
 * import assert from "node:assert/strict";
 * assert.equal(fixedRateOnly(pl.DataFrame({ requested_ops_per_sec: [1000, 2000] })), true);
 * assert.equal(fixedRateOnly(pl.DataFrame({ requested_ops_per_sec: [1000, null] })), false);
 * assert.equal(fixedRateOnly(pl.DataFrame({ ops_per_sec: [1000] })), false);
 * assert.equal(fixedRateOnly(pl.DataFrame({ requested_ops_per_sec: [] })), false);
 * ```
 */
export function fixedRateOnly(results: pl.DataFrame): boolean {
  return results.height > 0 && results.columns.includes("requested_ops_per_sec") &&
    results.getColumn("requested_ops_per_sec").nullCount() === 0;
}
