/**
 * Latency spectra: percentile → latency from the `latency_distribution` table, with the runs
 * of a group merged as histograms (HdrHistogram, 3 significant digits), never by averaging
 * percentiles.
 *
 * @module
 */

import * as hdr from "hdr-histogram-js";
import pl from "nodejs-polars";
import { rowsFrame } from "./compare.ts";

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

/**
 * Merges the distributions of the runs in each group and test into one histogram and reads the
 * percentiles off it. Uses the 6.2+ rows (both the "Latency by percentile distribution" and
 * the "Cumulative distribution of latencies" blocks: cumulative counts at latency bounds; each
 * request is placed at the upper bound of its printed bucket, so a percentile is at most one
 * printed bucket above the tool's own figure). Runs with only ≤6.0 `x% <= N ms` rows are
 * skipped (they have no counts), as are percentiles beyond what the merged count resolves.
 *
 * @param dist `latency_distribution` joined with the run columns named in `by`.
 * @returns `test`, the `by` columns, `percentile`, `latency_ms`, `nines` (−log10(1 − p/100),
 * capped at 6 for p = 100), `count` (requests merged).
 */
export function latencySpectrum(dist: pl.DataFrame, options: SpectrumOptions = {}): pl.DataFrame {
  const by = options.by ?? ["server"];
  for (const c of ["run_id", "test_index", "test", "distribution", "latency_ms", "count", ...by]) {
    if (!dist.columns.includes(c)) throw new TypeError(`invalid column: ${c} (not in the frame)`);
  }
  // Both 6.2+ blocks print points of the same histogram (cumulative counts at latency bounds):
  // their union is the finest picture the output gives.
  const rows = dist.filter(
    pl.col("distribution").neq(pl.lit("legacy")).and(pl.col("count").isNotNull()),
  )
    .select("run_id", "test_index", "test", "latency_ms", "count", ...by).toRecords() as Rec[];
  // per run and test: cumulative counts at latency bounds, in print order
  const perRun = new Map<string, Rec[]>();
  for (const r of rows) {
    const k = `${r.run_id}\u0000${r.test_index}`;
    const l = perRun.get(k);
    if (l) l.push(r);
    else perRun.set(k, [r]);
  }
  const groups = new Map<string, { keys: Rec; h: hdr.Histogram; total: number; order: number }>();
  for (const list of perRun.values()) {
    const first = list[0];
    const gk = JSON.stringify([first.test, ...by.map((c) => first[c] ?? null)]);
    let g = groups.get(gk);
    if (!g) {
      const keys: Rec = { test: first.test };
      for (const c of by) keys[c] = first[c] ?? null;
      g = {
        keys,
        h: hdr.build({
          lowestDiscernibleValue: 1,
          highestTrackableValue: 3_600_000_000,
          numberOfSignificantValueDigits: 3,
          bitBucketSize: 64,
          useWebAssembly: false,
        }),
        total: 0,
        order: Number(first.test_index),
      };
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
      const n = c - prev;
      if (n > 0) g.h.recordValueWithCount(Math.max(1, Math.round(Number(r.latency_ms) * 1000)), n);
      if (c > prev) prev = c;
    }
    g.total += prev;
  }
  const ps = options.percentiles ?? SPECTRUM_PERCENTILES;
  const out: Rec[] = [];
  // deterministic order: tests as printed, then arms by name
  const sorted = [...groups.values()].sort((a, b) =>
    a.order - b.order || String(a.keys.test).localeCompare(String(b.keys.test)) ||
    JSON.stringify(by.map((c) => a.keys[c])).localeCompare(JSON.stringify(by.map((c) => b.keys[c])))
  );
  for (const g of sorted) {
    for (const p of ps) {
      // a percentile needs at least one request beyond it to be meaningful
      if (p > 0 && p < 100 && (1 - p / 100) * g.total < 1) continue;
      const us = p === 100
        ? g.h.maxValue
        : p === 0
        ? g.h.minNonZeroValue
        : g.h.getValueAtPercentile(p);
      out.push({
        ...g.keys,
        percentile: p,
        latency_ms: us / 1000,
        nines: p >= 100 ? 6 : -Math.log10(1 - p / 100),
        count: g.total,
      });
    }
  }
  return rowsFrame(out);
}
