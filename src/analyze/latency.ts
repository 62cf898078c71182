/**
 * Latency spectra: percentile → latency from the `latency_distribution` table, with the runs
 * of a group merged as histograms (request counts summed at the tools' printed bucket bounds),
 * never by averaging percentiles.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { resultsFrame } from "./units.ts";

/** Options of {@link latencySpectrum}. */
export interface SpectrumOptions {
  /** Columns to group runs by (each group is one merged histogram per test). @default {["server"]} */
  by?: string[];
  /** Percentiles to report. @default {SPECTRUM_PERCENTILES} */
  percentiles?: number[];
}

/** Percentiles reported by default: 0 … 99.999 and 100. */
export const SPECTRUM_PERCENTILES = [0, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100];

type Rec = Record<string, unknown>;

/** A merged histogram: request counts at latency bounds, for one test and group. */
interface Histogram {
  keys: Rec;
  buckets: Map<number, number>;
  total: number;
  order: number;
}

/**
 * Merges the distributions of the runs in each group and test into one histogram and reads the
 * percentiles off it. Uses the 6.2+ rows (both the "Latency by percentile distribution" and
 * the "Cumulative distribution of latencies" blocks: cumulative counts at latency bounds; each
 * request is placed at the upper bound of its printed bucket, so a percentile is at most one
 * printed bucket above the tool's own figure). ≤6.0 `x% <= N ms` rows have no counts: they are
 * used when the frame has a `requests` column (count = percentage × requests), else skipped.
 * Percentiles beyond what the merged count resolves are left out.
 *
 * @param dist `latency_distribution` joined with the run columns named in `by`.
 * @returns `test`, the `by` columns, `percentile`, `latency_ms`, `nines` (−log10(1 − p/100),
 * capped at 6 for p = 100), `count` (requests merged).
 */
export function latencySpectrum(dist: pl.DataFrame, options: SpectrumOptions = {}): pl.DataFrame {
  const ps = options.percentiles ?? SPECTRUM_PERCENTILES;
  const out: Rec[] = [];
  for (const g of mergedHistograms(dist, options.by ?? ["server"])) {
    out.push(...readPercentiles(g, ps));
  }
  return resultsFrame(out);
}

/**
 * The merged histogram of each group of `by` and test (see {@link latencySpectrum}), tests in
 * print order, then groups by their keys.
 */
function mergedHistograms(dist: pl.DataFrame, by: string[]): Histogram[] {
  for (const c of ["run_id", "test_index", "test", "distribution", "latency_ms", "count", ...by]) {
    if (!dist.columns.includes(c)) throw new TypeError(`invalid column: ${c} (not in the frame)`);
  }
  // Both 6.2+ blocks print points of the same histogram (cumulative counts at latency bounds):
  // their union is the finest picture the output gives.
  // ≤6.0 rows have percentages only: with a `requests` column their counts are
  // percentage × requests (to 0.005 % of requests, as the percentages are printed).
  const hasRequests = dist.columns.includes("requests");
  const cols = ["run_id", "test_index", "test", "distribution", "latency_ms", "count"];
  if (dist.columns.includes("percentile")) cols.push("percentile");
  const all = dist.select(...cols, ...(hasRequests ? ["requests"] : []), ...by)
    .toRecords() as Rec[];
  const modern = new Set(
    all.filter((r) => r.distribution !== "legacy").map((r) => `${r.run_id}\u0000${r.test_index}`),
  );
  const rows: Rec[] = [];
  for (const r of all) {
    if (r.distribution !== "legacy") {
      if (r.count !== null) rows.push(r);
    } else if (
      hasRequests && typeof r.requests === "number" &&
      !modern.has(`${r.run_id}\u0000${r.test_index}`)
    ) {
      rows.push({ ...r, count: Math.round((Number(r.percentile) / 100) * r.requests) });
    }
  }
  // per run and test: cumulative counts at latency bounds, in print order
  const perRun = new Map<string, Rec[]>();
  for (const r of rows) {
    const k = `${r.run_id}\u0000${r.test_index}`;
    const l = perRun.get(k);
    if (l) l.push(r);
    else perRun.set(k, [r]);
  }
  // One histogram per group: request counts summed at each printed latency bound (bounds are
  // the tools' own bucket edges, so summing them is an exact merge; nothing is re-bucketed).
  const groups = new Map<string, Histogram>();
  for (const list of perRun.values()) {
    const first = list[0];
    const gk = JSON.stringify([first.test, ...by.map((c) => first[c] ?? null)]);
    let g = groups.get(gk);
    if (!g) {
      const keys: Rec = { test: first.test };
      for (const c of by) keys[c] = first[c] ?? null;
      g = { keys, buckets: new Map(), total: 0, order: Number(first.test_index) };
      groups.set(gk, g);
    }
    g.order = Math.min(g.order, Number(first.test_index));
    // points in latency order; the same bound printed twice counts once
    list.sort((a, b) =>
      Number(a.latency_ms) - Number(b.latency_ms) || Number(a.count) - Number(b.count)
    );
    let prev = 0;
    for (const r of list) {
      const c = Number(r.count);
      if (c > prev) {
        const ms = Number(r.latency_ms);
        g.buckets.set(ms, (g.buckets.get(ms) ?? 0) + (c - prev));
        prev = c;
      }
    }
    g.total += prev;
  }
  // deterministic order: tests as printed, then arms by name
  return [...groups.values()].sort((a, b) =>
    a.order - b.order || String(a.keys.test).localeCompare(String(b.keys.test)) ||
    JSON.stringify(by.map((c) => a.keys[c])).localeCompare(JSON.stringify(by.map((c) => b.keys[c])))
  );
}

/**
 * The exact step function of each merged histogram (as {@link latencySpectrum} merges them):
 * one row per printed bucket, its upper bound `latency_ms` holding from `from_percentile` (the
 * share of requests in lower buckets) up to `to_percentile`; `nines` is that of
 * `from_percentile`, capped at 6. Drawn with `interpolate: "step-after"` plus a last point at
 * nines 6 (`to_percentile` 100), it is the spectrum with no interpolation: every percentile
 * {@link latencySpectrum} reports lies on it.
 *
 * @param dist `latency_distribution` joined with the run columns named in `by`.
 * @param options The grouping (`by`); `percentiles` is not used.
 * @returns `test`, the `by` columns, `from_percentile`, `to_percentile`, `latency_ms`,
 * `nines`, `count` (requests merged); the last row of each group repeats its last bucket at
 * nines 6.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { latencySteps } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const dist = pl.DataFrame({ run_id: ["r", "r"], test_index: [0, 0], test: ["GET", "GET"],
 *   distribution: ["cumulative", "cumulative"], latency_ms: [1, 2], count: [90, 100], server: ["redis", "redis"] });
 * const steps = latencySteps(dist).toRecords();
 * assert.deepEqual(steps.map((r) => [r.from_percentile, r.latency_ms]), [[0, 1], [90, 2], [100, 2]]);
 * assert.equal(steps[1].nines, 1);
 * ```
 */
export function latencySteps(dist: pl.DataFrame, options: SpectrumOptions = {}): pl.DataFrame {
  const out: Rec[] = [];
  for (const g of mergedHistograms(dist, options.by ?? ["server"])) {
    const bounds = [...g.buckets.entries()].sort((a, b) => a[0] - b[0]);
    let cum = 0;
    const row = (from: number, to: number, ms: number) => ({
      ...g.keys,
      from_percentile: from,
      to_percentile: to,
      latency_ms: ms,
      nines: from >= 100 ? 6 : Math.min(6, -Math.log10(1 - from / 100)),
      count: g.total,
    });
    for (const [ms, n] of bounds) {
      out.push(row((cum / g.total) * 100, ((cum + n) / g.total) * 100, ms));
      cum += n;
    }
    if (bounds.length) out.push(row(100, 100, bounds[bounds.length - 1][0]));
  }
  return resultsFrame(out);
}

/** The spectrum rows of one merged histogram: the percentiles its request count resolves. */
function readPercentiles(g: Histogram, ps: readonly number[]): Rec[] {
  const out: Rec[] = [];
  const bounds = [...g.buckets.entries()].sort((a, b) => a[0] - b[0]);
  for (const p of ps) {
    // a percentile needs at least one request beyond it to be meaningful
    if (p > 0 && p < 100 && (1 - p / 100) * g.total < 1) continue;
    // the smallest bound with at least p % of the requests at or below it
    const need = p === 0 ? 1 : Math.ceil((p / 100) * g.total - 1e-9);
    let cum = 0;
    let ms = bounds[bounds.length - 1]?.[0] ?? NaN;
    for (const [b, n] of bounds) {
      cum += n;
      if (cum >= need) {
        ms = b;
        break;
      }
    }
    out.push({
      ...g.keys,
      percentile: p,
      latency_ms: ms,
      nines: p >= 100 ? 6 : -Math.log10(1 - p / 100),
      count: g.total,
    });
  }
  return out;
}
