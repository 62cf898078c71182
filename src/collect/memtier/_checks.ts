/**
 * What is checked in memtier's numbers before they are stored: kvlab's one rule for impossible
 * values (`../impossible.ts`) applied to the rows, and memtier's printed `Totals` rate
 * cross-checked against its own per-second series (its `Total duration` can be a second short:
 * see SCHEMA.md). Private to `memtier/`.
 *
 * @module
 */

import type { LatencyDistributionRow, ResultsRow } from "../../schema.ts";
import {
  cumulativeProblem,
  findImpossible,
  type ImpossibleRule,
  sumProblem,
} from "../impossible.ts";
import type { BlockFacts, TypeFacts } from "./_series_rows.ts";

/** The rows {@link dropImpossibleResults} checks (a run's `MemtierRows`), changed in place. */
export interface CheckedRows {
  results: ResultsRow[];
  latency_distribution: LatencyDistributionRow[];
  warnings: string[];
}

/** The latency columns of a `results` row that are ordered: min ≤ p50 ≤ … ≤ max. */
const ORDERED_LATENCIES = [
  "min_latency_ms",
  "p50_latency_ms",
  "p95_latency_ms",
  "p99_latency_ms",
  "p999_latency_ms",
  "max_latency_ms",
] as const;

/** The shared rule's fields for a `results` row (`../impossible.ts`). */
const RESULT_RULE: ImpossibleRule<keyof ResultsRow & string> = {
  counts: [
    "requests",
    "clients",
    "threads",
    "pipeline",
    "data_size_bytes",
    "keyspace",
    "duration_s",
    "throughput_kb_per_sec",
  ],
  rates: [
    "ops_per_sec",
    "requested_ops_per_sec",
    "hits_per_sec",
    "misses_per_sec",
    "last_progress_ops_per_sec",
  ],
  latencies: ["avg_latency_ms", ...ORDERED_LATENCIES],
  ordered: [[...ORDERED_LATENCIES]],
};

/**
 * kvlab's one rule for impossible values (`../impossible.ts`) applied to memtier's rows: each
 * impossible value becomes null and its test not complete, with a warning naming the file and
 * line; a block's `Totals` that is not the sum of its types, or GET hits + misses that are not
 * its rate, make the block's rows incomplete; a latency distribution that is not cumulative is
 * dropped. Returns whether anything was impossible.
 */
export function dropImpossibleResults(out: CheckedRows, file: string): boolean {
  let bad = false;
  const warn = (r: ResultsRow, message: string) => {
    out.warnings.push(`${file}:${r.source_line ?? 1}: impossible value in ${r.test}: ${message}`);
    r.complete = false;
    bad = true;
  };
  const blocks = new Map<string, ResultsRow[]>();
  for (const r of out.results) {
    const k = `${r.aggregate}|${r.run_index}`;
    blocks.set(k, [...blocks.get(k) ?? [], r]);
    const values = r as unknown as Record<string, number | null>;
    for (const f of findImpossible(values, RESULT_RULE)) {
      warn(r, `${f.message}; not kept`);
      for (const field of f.fields) values[field] = null;
    }
  }
  for (const rows of blocks.values()) {
    const total = rows.find((r) => r.test === "TOTALS");
    const parts = rows.filter((r) => r !== total).map((r) => r.ops_per_sec);
    if (total?.ops_per_sec != null && parts.length && parts.every((p) => p != null)) {
      const why = sumProblem(total.ops_per_sec, parts as number[], 2);
      if (why) { for (const r of rows) warn(r, `Ops/sec of Totals ${why}`); }
    }
    for (const g of rows.filter((r) => r.test === "GET" || r.test === "TOTALS")) {
      const { ops_per_sec: ops, hits_per_sec: hits, misses_per_sec: misses } = g;
      if (ops == null || hits == null || misses == null) continue;
      // GET: hits + misses are its rate; Totals: they are part of it
      const why = g.test === "GET"
        ? sumProblem(ops, [hits, misses], 2)
        : hits + misses > ops + 0.02 + ops * 1e-9
        ? `hits + misses (${hits + misses}) above ${ops}`
        : undefined;
      if (why) warn(g, `Hits/sec + Misses/sec: ${why}`);
    }
  }
  const byTest = new Map<number, LatencyDistributionRow[]>();
  for (const d of out.latency_distribution) {
    byTest.set(d.test_index, [...byTest.get(d.test_index) ?? [], d]);
  }
  for (const [index, rows] of byTest) {
    const found = cumulativeProblem(
      rows.map((d) => ({ percentile: d.percentile ?? NaN, latencyMs: d.latency_ms ?? NaN })),
    );
    if (!found) continue;
    const [i, why] = found;
    const r = out.results[index];
    out.warnings.push(
      `${file}:${rows[i].source_line ?? 1}: impossible value in ${rows[i].test}: ` +
        `latency distribution row (${why}); block not kept`,
    );
    if (r) r.complete = false;
    out.latency_distribution = out.latency_distribution.filter((d) => d.test_index !== index);
    bad = true;
  }
  return bad;
}

/** How far memtier's printed Totals rate may stray from its own per-second series. */
const SERIES_TOLERANCE = 0.05;

/** A block whose printed duration disagrees with its per-second series: the duration kvlab keeps. */
export interface SeriesCheck {
  /** The printed `Total duration`, s. */
  printedS: number;
  /** Requests of `TOTALS` over the series' rate, s. */
  justifiedS: number;
  warning: string;
}

/**
 * Cross-checks a JSON block's `Totals` rate against its own `Time-Serie`: the mean count of its
 * full seconds (all but the last, partial one). memtier divides every rate of the block by one
 * duration (`Total duration`), which its client-merging code can get a second wrong (see
 * SCHEMA.md); when the printed rate strays more than 5 % from the series, the block's duration
 * is taken as requests / series rate and a warning gives both. Null when they agree or there
 * are fewer than 2 full seconds to tell.
 */
export function seriesCheck(block: BlockFacts): SeriesCheck | null {
  const totals = block.types.find((t) => t.test === "TOTALS");
  const series = totals ? seriesFacts(totals) : { seconds: 0, fullCount: 0, fullNulls: 0 };
  if (!totals?.count || !totals.opsPerSec || block.durationS === null || series.seconds < 3) {
    return null;
  }
  if (series.fullNulls > 0) return null;
  const { fullCount } = series;
  const full = { length: series.seconds - 1 };
  const seriesRate = fullCount / full.length;
  if (seriesRate <= 0 || Math.abs(totals.opsPerSec / seriesRate - 1) <= SERIES_TOLERANCE) {
    return null;
  }
  const justifiedS = totals.count / seriesRate;
  const f = (x: number, d: number) => x.toFixed(d);
  return {
    printedS: block.durationS,
    justifiedS,
    warning: `${block.title}: memtier's Totals say ${f(totals.opsPerSec, 2)} ops/s over ` +
      `${f(block.durationS, 3)} s (Total duration), but its per-second series says ` +
      `${f(seriesRate, 2)} ops/s (${fullCount} requests in ${full.length} full seconds): stored ` +
      `${f(totals.count / justifiedS, 2)} ops/s over ${f(justifiedS, 3)} s; memtier's numbers ` +
      "are kept in tool_ops_per_sec and tool_duration_s",
  };
}

/**
 * A type's series as {@link seriesCheck} reads it: seconds, and the count and missing counts
 * of its full seconds (all but the last), from the seconds kept or from the summary of a
 * series handed over as it was read.
 */
function seriesFacts(t: TypeFacts): { seconds: number; fullCount: number; fullNulls: number } {
  const s = t.series;
  if (s) {
    const lastNull = s.seconds > 0 && s.last === null ? 1 : 0;
    return {
      seconds: s.seconds,
      fullCount: s.countSum - (s.last ?? 0),
      fullNulls: s.nullCounts - lastNull,
    };
  }
  const full = (t.timeSeries ?? []).slice(0, -1);
  return {
    seconds: t.timeSeries?.length ?? 0,
    fullCount: full.reduce((a, x) => a + (x.count ?? 0), 0),
    fullNulls: full.filter((x) => x.count === null).length,
  };
}

/** A block's row with its rates over the justified duration, the printed ones kept beside. */
export function justified(row: ResultsRow, check: SeriesCheck): ResultsRow {
  // requests over the justified duration; memtier's other rates scaled as its rate was
  const ops = row.ops_per_sec != null && row.requests != null
    ? row.requests / check.justifiedS
    : null;
  const scale = ops !== null && row.ops_per_sec
    ? ops / row.ops_per_sec
    : check.printedS / check.justifiedS;
  const rescaled = (x: number | null | undefined) => (x == null ? null : x * scale);
  return {
    ...row,
    duration_s: check.justifiedS,
    ops_per_sec: ops ?? rescaled(row.ops_per_sec),
    hits_per_sec: rescaled(row.hits_per_sec),
    misses_per_sec: rescaled(row.misses_per_sec),
    throughput_kb_per_sec: rescaled(row.throughput_kb_per_sec),
    tool_ops_per_sec: row.ops_per_sec ?? null,
    tool_duration_s: row.duration_s ?? null,
  };
}
