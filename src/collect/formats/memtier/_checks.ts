/**
 * What is checked in memtier's numbers before they are stored: kvlab's one rule for impossible
 * values (`../../impossible.ts`) applied to the rows, and memtier's printed `Totals` rate
 * cross-checked against its own per-second series (its `Total duration` can be a second short:
 * see SCHEMA.md). Private to `memtier/`.
 *
 * @module
 */

import type { LatencyDistributionRow, ResultsRow, TimeSeriesRow } from "../../../schema.ts";
import {
  cumulativeProblem,
  findImpossible,
  type ImpossibleRule,
  sumProblem,
} from "../../impossible.ts";
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

/** The shared rule's fields for a `results` row (`../../impossible.ts`). */
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
 * kvlab's one rule for impossible values (`../../impossible.ts`) applied to memtier's rows: each
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

/** The shared rule's fields for a `time_series` row (one second of a type). */
const SECOND_RULE: ImpossibleRule<keyof TimeSeriesRow & string> = {
  counts: ["count", "bytes_rx", "bytes_tx", "accumulated_latency_ms"],
  rates: [],
  latencies: [
    "avg_latency_ms",
    "min_latency_ms",
    "max_latency_ms",
    "p50_latency_ms",
    "p99_latency_ms",
    "p999_latency_ms",
  ],
  // percentiles of one histogram (min and max are exact, the percentiles bucket-rounded)
  ordered: [["p50_latency_ms", "p99_latency_ms", "p999_latency_ms"]],
};

/**
 * kvlab's one rule for impossible values (`../../impossible.ts`) applied to one second of a
 * `Time-Serie`: each impossible value of the row becomes null.
 *
 * @returns What was impossible, or null when every value can be true.
 */
export function dropImpossibleSecond(row: TimeSeriesRow): string | null {
  const values = row as unknown as Record<string, number | null>;
  const found = findImpossible(values, SECOND_RULE);
  if (found.length === 0) return null;
  for (const f of found) for (const field of f.fields) values[field] = null;
  return found.map((f) => f.message).join("; ");
}

/** How far memtier's printed Totals rate may stray from its own per-second series. */
const SERIES_TOLERANCE = 0.05;

/** Slack, s, on a printed duration against the seconds its series spans (clients' skew). */
const SPAN_SLACK_S = 0.25;

/**
 * A block whose printed duration disagrees with its per-second series: the duration kvlab keeps,
 * or null when no duration can be justified (the block's rates are then not kept).
 */
export interface SeriesCheck {
  /** The printed `Total duration`, s. */
  printedS: number;
  /** Requests of `TOTALS` over the series' rate, s; null when the series is too short to tell. */
  justifiedS: number | null;
  warning: string;
}

/**
 * What else tells a block's rate: the run's mode and memtier's own last progress update.
 */
export interface RateEvidence {
  /**
   * Whether the run ended after a count of requests (`-n`, memtier's default) rather than a
   * test time (`--test-time`). Its threads can finish at different times, so its per-second
   * series' later seconds count fewer running threads: the series is no measure of its rate.
   */
  requestCount?: boolean;
  /**
   * memtier's last progress update of the block's run (`[RUN #1 100%, 4 secs] 0 threads …
   * 100000 ops, … (avg: 24879) ops/sec`): requests done and its rate since the start (memtier
   * divides them by its threads' mean running time, measured in µs).
   */
  lastProgress?: { ops: number; avgOpsPerSec: number } | null;
}

/**
 * Cross-checks a JSON block's `Totals` rate against the best evidence for the run's mode. A
 * request-count run (`-n`) is timed by memtier's last progress update, whose average since the
 * start covers the whole run (`requests / avg`), when it counts the block's requests; a
 * test-time run (and a request-count run without that update) by its own `Time-Serie`: the mean
 * count of its full seconds (all but the last, partial one). memtier divides every rate of the block by one
 * duration (`Total duration`), which its client-merging code can get a second wrong (see
 * SCHEMA.md); when the printed rate strays more than 5 % from the series, the block's duration
 * is taken as requests / series rate and a warning gives both. With fewer than 2 full seconds
 * the rate cannot be told, but the span can: a series of k seconds (0 … k−1, counted from each
 * client's start) means a run of k−1 to k s, so a printed duration outside that (memtier prints
 * −0.375 s, or 1.426 s for a 0.4 s run) has no duration kvlab can justify (`justifiedS` null).
 * Null when they agree.
 */
export function seriesCheck(block: BlockFacts, evidence: RateEvidence = {}): SeriesCheck | null {
  const totals = block.types.find((t) => t.test === "TOTALS");
  const series = totals ? seriesFacts(totals) : null;
  if (!totals?.count || block.durationS === null) return null;
  const last = evidence.lastProgress;
  if (evidence.requestCount && last && last.ops === totals.count && last.avgOpsPerSec > 0) {
    return progressCheck(block, { count: totals.count, printed: totals.opsPerSec, series, last });
  }
  if (!series || series.seconds === 0) return null;
  if (series.seconds < 3 || !totals.opsPerSec) {
    const printed = block.durationS;
    const why = shortSeriesProblem(series, totals.count, printed);
    if (!why) return null;
    return {
      printedS: printed,
      justifiedS: null,
      warning: `${block.title}: memtier's Total duration ${printed.toFixed(3)} s cannot be ` +
        `true of ${why}: its start/end clock merge is off (SCHEMA.md), and with fewer than 2 ` +
        "full seconds the rate cannot be taken from the series; this block's rates are not " +
        "kept (memtier's are in tool_ops_per_sec and tool_duration_s). Runs of 3 s or more " +
        "are corrected from the series",
    };
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
  // a request-count run's series undercounts once its first thread is done: say so, with the
  // range its sources give
  const mode = evidence.requestCount
    ? ` (a request-count run with no final progress line: its series counts fewer threads once ` +
      `the first is done, so the rate is somewhere in ${rangeText([seriesRate, totals.opsPerSec])})`
    : "";
  return {
    printedS: block.durationS,
    justifiedS,
    warning: `${block.title}: memtier's Totals say ${f(totals.opsPerSec, 2)} ops/s over ` +
      `${f(block.durationS, 3)} s (Total duration), but its per-second series says ` +
      `${f(seriesRate, 2)} ops/s (${fullCount} requests in ${full.length} full seconds): stored ` +
      `${f(totals.count / justifiedS, 2)} ops/s over ${f(justifiedS, 3)} s${mode}; memtier's ` +
      "numbers are kept in tool_ops_per_sec and tool_duration_s",
  };
}

/** `22,230–30,813 ops/s`: the range of rates its sources give. */
function rangeText(rates: readonly number[]): string {
  const f = (x: number) => x.toLocaleString("en-US", { maximumFractionDigits: 0 });
  return `${f(Math.min(...rates))}–${f(Math.max(...rates))} ops/s`;
}

/**
 * A request-count run timed by its last progress update: `requests / avg` s. Null when memtier's
 * printed rate agrees with it (within 5 %); else the progress' duration, and a warning giving
 * every source's rate (printed, progress, series) and their range.
 */
function progressCheck(
  block: BlockFacts,
  o: {
    count: number;
    printed: number | null;
    series: SeriesFacts | null;
    last: { ops: number; avgOpsPerSec: number };
  },
): SeriesCheck | null {
  const rate = o.last.avgOpsPerSec;
  if (o.printed && Math.abs(o.printed / rate - 1) <= SERIES_TOLERANCE) return null;
  const printedS = block.durationS!;
  const justifiedS = o.count / rate;
  const f = (x: number, d: number) => x.toFixed(d);
  const full = o.series && o.series.seconds > 1 && o.series.fullNulls === 0
    ? o.series.fullCount / (o.series.seconds - 1)
    : null;
  const sources = [
    o.printed !== null ? `its Totals ${f(o.printed, 2)} ops/s over ${f(printedS, 3)} s` : null,
    `its progress lines ${f(rate, 0)} ops/s (${o.count} requests over its threads' mean time)`,
    full !== null ? `its per-second series ${f(full, 2)} ops/s over its full seconds` : null,
  ].filter((x) => x !== null);
  const rates = [o.printed, rate, full].filter((x): x is number => x !== null && x > 0);
  return {
    printedS,
    justifiedS,
    warning: `${block.title}: a request-count run, timed by memtier's last progress line: ` +
      `stored ${f(rate, 2)} ops/s over ${f(justifiedS, 3)} s; memtier's sources disagree ` +
      `(${sources.join("; ")}: ${rangeText(rates)}); memtier's Totals are kept in ` +
      "tool_ops_per_sec and tool_duration_s",
  };
}

/**
 * Why a printed duration cannot be true of a short series (fewer than 2 full seconds), or
 * undefined. A series of k seconds (0 … k−1, each client's seconds since its start) means a run
 * of k−1 to k s; with one full second, the run took about `count / that second's count` s, and
 * memtier's error is about a whole second, so more than half a second off is wrong.
 */
function shortSeriesProblem(
  series: SeriesFacts,
  count: number,
  printedS: number,
): string | undefined {
  const span = series.maxSecond + 1;
  if (printedS <= 0 || printedS < span - 1 - SPAN_SLACK_S || printedS > span + SPAN_SLACK_S) {
    return `a run whose per-second series spans ${span} s (${series.seconds} seconds listed)`;
  }
  const first = series.first;
  if (series.seconds !== 2 || first?.second !== 0 || !first.count) return undefined;
  const aboutS = count / first.count;
  if (Math.abs(printedS - aboutS) <= 0.5) return undefined;
  return `a run of ${count} requests whose first second counted ${first.count} (about ` +
    `${aboutS.toFixed(2)} s)`;
}

/** What {@link seriesCheck} reads of a type's series. */
interface SeriesFacts {
  seconds: number;
  /** Count of the full seconds (all but the last). */
  fullCount: number;
  /** Full seconds with no count. */
  fullNulls: number;
  /** The highest second (−1 when none). */
  maxSecond: number;
  first: { second: number; count: number | null } | null;
}

/**
 * A type's series as {@link seriesCheck} reads it, from the seconds kept or from the summary
 * of a series handed over as it was read.
 */
function seriesFacts(t: TypeFacts): SeriesFacts {
  const s = t.series;
  if (s) {
    const lastNull = s.seconds > 0 && s.last === null ? 1 : 0;
    return {
      seconds: s.seconds,
      fullCount: s.countSum - (s.last ?? 0),
      fullNulls: s.nullCounts - lastNull,
      maxSecond: s.maxSecond,
      first: s.first,
    };
  }
  const all = t.timeSeries ?? [];
  const full = all.slice(0, -1);
  // a count that is not a number (NaN, for the impossible-value rule) counts as missing
  const count = (x: { count: number | null }) => Number.isFinite(x.count) ? x.count : null;
  return {
    seconds: all.length,
    fullCount: full.reduce((a, x) => a + (count(x) ?? 0), 0),
    fullNulls: full.filter((x) => count(x) === null).length,
    maxSecond: all.reduce((m, x) => Math.max(m, x.second), -1),
    first: all[0] ? { second: all[0].second, count: count(all[0]) } : null,
  };
}

/** A block's row with its rates over the justified duration, the printed ones kept beside. */
export function justified(row: ResultsRow, check: SeriesCheck): ResultsRow {
  if (check.justifiedS === null) {
    return {
      ...row,
      complete: false,
      duration_s: null,
      ops_per_sec: null,
      hits_per_sec: null,
      misses_per_sec: null,
      throughput_kb_per_sec: null,
      tool_ops_per_sec: row.ops_per_sec ?? null,
      tool_duration_s: row.duration_s ?? null,
    };
  }
  const justifiedS = check.justifiedS;
  // requests over the justified duration; memtier's other rates scaled as its rate was
  const ops = row.ops_per_sec != null && row.requests != null ? row.requests / justifiedS : null;
  const scale = ops !== null && row.ops_per_sec
    ? ops / row.ops_per_sec
    : check.printedS / justifiedS;
  const rescaled = (x: number | null | undefined) => (x == null ? null : x * scale);
  return {
    ...row,
    duration_s: justifiedS,
    ops_per_sec: ops ?? rescaled(row.ops_per_sec),
    hits_per_sec: rescaled(row.hits_per_sec),
    misses_per_sec: rescaled(row.misses_per_sec),
    throughput_kb_per_sec: rescaled(row.throughput_kb_per_sec),
    tool_ops_per_sec: row.ops_per_sec ?? null,
    tool_duration_s: row.duration_s ?? null,
  };
}
