/**
 * The step rows of a results frame (what a sweep is made of), and the frames a sweep reads.
 * Private to `sweep.ts` and `spectrum.ts`.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { Dataset, type DatasetRef } from "../../store/dataset.ts";
import { type FixedRateStep, generatorDelayMs } from "../../fixed_rate.ts";
import { loadResults, loadTable } from "../load.ts";

/** A record of a frame. */
export type Rec = Record<string, unknown>;

/** A step row with what the table needs: a fixed-rate step and its latency. */
export interface StepRow extends FixedRateStep {
  runId: string;
  testIndex: number;
  workload: string;
  clients: number | null;
  arm: string;
  p50: number | null;
  p99: number | null;
  basis: string;
  /** Every rate of the sweep the run belongs to (its `sweep_rates` tag), when known. */
  planned: number[];
  /** The run's tool (the load generator: `kvlab-loadgen`, `memtier_benchmark`, …). */
  engine: string;
  /** The generator's own delay, p99 ms (`fixed_rate.ts`'s {@link generatorDelayMs}); null when
   * the step did not measure it (every tool but kvlab's). */
  generatorDelay: number | null;
  /** The whole intended → actual send delay, p99 ms (`send_delay_p99_ms`). */
  sendDelay: number | null;
}

/** The `sweep_rates` tag of a run's tags (JSON), as numbers. */
function plannedRates(tags: unknown): number[] {
  try {
    const t = JSON.parse(String(tags ?? "{}"));
    return typeof t.sweep_rates === "string" ? t.sweep_rates.split(",").map(Number) : [];
  } catch {
    return [];
  }
}

/**
 * The rate the plan asked of a run (its `requested_ops_per_sec` tag), when it is one of the
 * sweep's planned rates; else null.
 */
function askedRate(tags: unknown, planned: readonly number[]): number | null {
  try {
    const v = Number(JSON.parse(String(tags ?? "{}")).requested_ops_per_sec);
    return v > 0 && planned.includes(v) ? v : null;
  } catch {
    return null;
  }
}

/**
 * The step rows of the results: per run, its `TOTALS` rows with a requested rate when it has
 * one (named after the run's other tests: `GET`, `SET+GET`), else every row with one.
 */
export function stepRows(results: pl.DataFrame, by: string): StepRow[] {
  for (const c of ["run_id", "test_index", "test", "requested_ops_per_sec", "ops_per_sec", by]) {
    if (!results.columns.includes(c)) {
      throw new TypeError(`invalid column: ${c} (not in the frame)`);
    }
  }
  const recs = results.toRecords() as Rec[];
  const byRun = new Map<string, Rec[]>();
  for (const r of recs) byRun.set(String(r.run_id), [...(byRun.get(String(r.run_id)) ?? []), r]);
  const out: StepRow[] = [];
  for (const [runId, rows] of byRun) {
    // a requested rate of 0 or less is no fixed rate (memtier's `--rate-limiting=0`: unlimited)
    const steps = rows.filter((r) =>
      typeof r.requested_ops_per_sec === "number" && r.requested_ops_per_sec > 0 &&
      r.complete !== false
    );
    const totals = steps.filter((r) => r.test === "TOTALS");
    const others = rows.filter((r) => r.test !== "TOTALS").map((r) => String(r.test));
    for (const r of totals.length > 0 ? totals : steps) {
      const num = (k: string) => (typeof r[k] === "number" ? r[k] as number : null);
      const planned = plannedRates(r.tags);
      out.push({
        runId,
        testIndex: Number(r.test_index),
        workload: r.test === "TOTALS" && others.length
          ? [...new Set(others)].join("+")
          : String(r.test),
        clients: num("clients"),
        arm: r[by] === null || r[by] === undefined ? "(no label)" : String(r[by]),
        // a step sits at the rate its plan asked for: a tool may store another (memtier's
        // overflowed 3,567,587,328 for 10¹²), which made one step two rows, the plan's rate
        // then shown as `skipped` (issue 21)
        requestedOpsPerSec: askedRate(r.tags, planned) ?? r.requested_ops_per_sec as number,
        achievedOpsPerSec: num("ops_per_sec"),
        p50: num("p50_latency_ms"),
        p99: num("p99_latency_ms"),
        basis: typeof r.latency_basis === "string" ? r.latency_basis : "send",
        planned,
        engine: typeof r.tool === "string" ? r.tool : "unknown",
        generatorDelay: generatorDelayMs({
          p99LatencyMs: num("p99_latency_ms"),
          sendDelayP99Ms: num("send_delay_p99_ms"),
          sendLatenessP99Ms: num("send_lateness_p99_ms"),
        }),
        sendDelay: num("send_delay_p99_ms"),
      });
    }
  }
  return engineArms(out);
}

/**
 * Keeps engines apart: an arm whose steps in one table (workload × clients) come from more than
 * one load generator (kvlab's open-loop engine, memtier_benchmark, …) or latency basis is split
 * into one arm per engine (`redis · kvlab-loadgen`; one engine on two latency bases:
 * `redis · intended latency`), so latencies timed from the
 * intended send are never merged with latencies timed from the send.
 */
function engineArms(steps: StepRow[]): StepRow[] {
  const table = (s: StepRow) => JSON.stringify([s.workload, s.clients, s.arm]);
  const engines = new Map<string, Set<string>>();
  const bases = new Map<string, Set<string>>();
  for (const s of steps) {
    engines.set(table(s), (engines.get(table(s)) ?? new Set()).add(s.engine));
    bases.set(table(s), (bases.get(table(s)) ?? new Set()).add(s.basis));
  }
  return steps.map((s) => {
    const manyEngines = engines.get(table(s))!.size > 1;
    const manyBases = bases.get(table(s))!.size > 1;
    if (!manyEngines && !manyBases) return s;
    const name = manyEngines ? s.engine : `${s.basis} latency`;
    return { ...s, arm: `${s.arm} · ${name}` };
  });
}

/** The frames {@link sweepTable} reads, when not given a dataset directory. */
export interface SweepFrames {
  /** `results` joined with `runs` ({@link loadResults}). */
  results: pl.DataFrame;
  /** `hdr_histograms`; without it, repetitions are merged by their median. */
  hdr?: pl.DataFrame;
}

/**
 * The frames of a sweep: a dataset's are read (each table once), frames given are kept.
 *
 * @param source The dataset (or its directory), or its frames.
 * @param onLeftOut Told the runs a dataset's load left out as superseded attempts.
 * @returns The frames.
 *
 * @example
 * ```ts
 * import { sweepFrames } from "./_steps.ts";
 * import pl from "nodejs-polars";
 * import assert from "node:assert/strict";
 * const given = { results: pl.DataFrame({ run_id: ["r1"] }) };
 * assert.equal(sweepFrames(given), given);
 * assert.equal(sweepFrames(Deno.makeTempDirSync()).hdr?.height, 0);
 * ```
 */
export function sweepFrames(
  source: DatasetRef | SweepFrames,
  onLeftOut?: (runIds: string[]) => void,
): SweepFrames {
  if (typeof source !== "string" && !(source instanceof Dataset)) return source;
  const runs = loadTable(source, "runs", { onLeftOut });
  return {
    results: loadResults(source, { runs }),
    hdr: loadTable(source, "hdr_histograms", { runs }),
  };
}
