/**
 * The latency spectrum of each fixed-rate step: percentile → latency, read off the step's
 * repetitions merged as HDR histograms (`hdr_histograms`, on each row's latency basis).
 * Steps without histograms (published cells, runs without them) are left out.
 *
 * @module
 */

import pl from "nodejs-polars";
import { hdrValueAtPercentile } from "../../hdr.ts";
import { rowHistograms, rowKey, sumOf } from "../histograms/rows.ts";
import type { DatasetRef } from "../../store/dataset.ts";
import { type Rec, stepRows, sweepFrames } from "./_steps.ts";
import { SPECTRUM_PERCENTILES } from "../latency.ts";
import type { SweepFrames } from "./_steps.ts";
import { resultsFrame } from "../units.ts";

/**
 * Percentile → latency of each step (workload × connections × arm × requested rate).
 *
 * @param source A dataset (or its directory), or the frames (`results` joined with `runs`, and
 * `hdr_histograms`).
 * @param options The arm column (default `label`) and the percentiles (default
 * {@link SPECTRUM_PERCENTILES}; those the request count does not resolve are left out).
 * @returns `test`, `clients`, the arm column, `requested_ops_per_sec`, `percentile`,
 * `latency_ms`, `nines`, `count`, `latency_basis`.
 *
 * @example
 * ```ts
 * import { sweepSpectrum } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(sweepSpectrum(Deno.makeTempDirSync()).height, 0);
 * ```
 */
export function sweepSpectrum(
  source: DatasetRef | SweepFrames,
  options: { by?: string; percentiles?: number[] } = {},
): pl.DataFrame {
  const by = options.by ?? "label";
  const frames = sweepFrames(source);
  if (frames.results.height === 0) return resultsFrame([]);
  const steps = stepRows(frames.results, by);
  const hist = rowHistograms(
    frames.hdr ?? pl.DataFrame({}),
    new Map(steps.map((s) => [rowKey(s.runId, s.testIndex), s.basis])),
  );
  const groups = new Map<string, { keys: Rec; parts: string[] }>();
  for (const s of steps) {
    const parts = hist.get(rowKey(s.runId, s.testIndex));
    if (!parts) continue;
    const k = JSON.stringify([s.workload, s.clients, s.arm, s.requestedOpsPerSec]);
    const g = groups.get(k) ?? {
      keys: {
        test: s.workload,
        clients: s.clients,
        [by]: s.arm,
        requested_ops_per_sec: s.requestedOpsPerSec,
        latency_basis: s.basis,
      },
      parts: [],
    };
    g.parts.push(...parts);
    groups.set(k, g);
  }
  const out: Rec[] = [];
  for (const g of groups.values()) {
    const sum = sumOf(g.parts);
    for (const p of options.percentiles ?? SPECTRUM_PERCENTILES) {
      if (sum.totalCount === 0 || (p > 0 && p < 100 && (1 - p / 100) * sum.totalCount < 1)) {
        continue;
      }
      const us = p === 0
        ? sum.minNonZeroValue
        : p === 100
        ? sum.maxValue
        : hdrValueAtPercentile(sum, p)!;
      out.push({
        ...g.keys,
        percentile: p,
        latency_ms: us / 1000,
        nines: p >= 100 ? 6 : -Math.log10(1 - p / 100),
        count: sum.totalCount,
      });
    }
  }
  return resultsFrame(out);
}
