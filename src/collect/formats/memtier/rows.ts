/**
 * Rows of the dataset tables from what the memtier_benchmark parsers read: `results` (one per
 * summary block × command type), `latency_distribution` (the JSON's `SET`/`GET`/… arrays),
 * `time_series` (each type's `Time-Serie`, or the stderr progress of a run that has none) and
 * `hdr_histograms` (the JSON's compressed histograms and the `--hdr-file-prefix` interval logs).
 * Shared by live collection and ingest. Pure: parsed values in, rows out.
 *
 * @module
 */

import type {
  HdrHistogramsRow,
  LatencyDistributionRow,
  ResultsRow,
  TimeSeriesRow,
} from "../../../schema.ts";
import {
  type BlockFacts,
  hgrmRows,
  jsonHistogramRow,
  type MemtierHdrLog,
  progressRows,
  secondRow,
  type TypeAt,
} from "./_series_rows.ts";
import { dropImpossibleResults, dropImpossibleSecond, justified, seriesCheck } from "./_checks.ts";
import type { MemtierJson, MemtierSecond } from "./json/parse.ts";
import type { MemtierProgress, MemtierStderr } from "./progress.ts";
import type { MemtierReport } from "./report.ts";
import type { MemtierAggregate, MemtierDistributionRow } from "./types.ts";

/**
 * The run settings a row needs, as the command line gave them (memtier's defaults applied by the
 * caller for flags not given). What the JSON's `configuration` or the stdout's run information
 * says wins; these fill what the output lacks.
 */
export interface MemtierSettings {
  /** `-t`. */
  threads?: number | null;
  /** `-c`: connections per thread. */
  connectionsPerThread?: number | null;
  /** `--pipeline`. */
  pipeline?: number | null;
  /** `-d`. */
  dataSizeBytes?: number | null;
  /** `--key-minimum`. */
  keyMinimum?: number | null;
  /** `--key-maximum`. */
  keyMaximum?: number | null;
  /** `--rate-limiting`: requests per second per connection (null: not limited). */
  rateLimitPerConnection?: number | null;
  /** Whether the run ends after a count of requests (`-n`, the default) or a `--test-time`. */
  requestCount?: boolean;
}

export type { MemtierHdrLog };

/** What memtier wrote for one run, parsed; any part may be missing. */
export interface MemtierParsed {
  /** `parseMemtierJson` of `--json-out-file`. */
  json?: MemtierJson | null;
  /** Its raw file's name. @default {"memtier.json"} */
  jsonFile?: string;
  /** The stdout report's file name, for warnings. @default {"stdout"} */
  reportFile?: string;
  /** `parseMemtierReport` of stdout (rows come from it only when the JSON has no block). */
  report?: MemtierReport | null;
  /** `parseMemtierProgress` of stderr. */
  stderr?: MemtierStderr | null;
  /** Interval logs (`…_FULL_RUN_1.hgrm`, `…_SET_command_run_1.hgrm`). */
  hdr?: readonly MemtierHdrLog[];
  /** Settings from the command line. */
  settings?: MemtierSettings;
}

/** The rows of one memtier run, by table, and what the run came to. */
export interface MemtierRows {
  results: ResultsRow[];
  latency_distribution: LatencyDistributionRow[];
  time_series: TimeSeriesRow[];
  hdr_histograms: HdrHistogramsRow[];
  /** Where the results came from: the JSON, stdout, stderr progress only, or nothing. */
  source: "json" | "stdout" | "progress" | "none";
  /**
   * Whether memtier finished: a complete JSON or report, every block complete, not interrupted,
   * and at least one result.
   */
  complete: boolean;
  /** Why the run is not complete, in words (null when it is). */
  reason: string | null;
  /** What was derived or could not be read (for run.json). */
  warnings: string[];
  /**
   * The `time_series` row of a second handed over by a `MemtierJsonReader` with `onSecond`
   * (`at`: the indexes it gave), or null for a type with no results row. Such seconds are not
   * in {@link time_series}: the caller writes them as it reads them again.
   */
  jsonSecondRow: (
    at: { block: number; type: number },
    second: MemtierSecond,
  ) => TimeSeriesRow | null;
}

/** The settings rows use, resolved. */
interface Resolved {
  threads: number | null;
  connections: number | null;
  pipeline: number | null;
  dataSizeBytes: number | null;
  keyspace: number | null;
  rate: number | null;
  /** Whether the run ended after a count of requests (`-n`) rather than a test time. */
  requestCount: boolean;
}

/**
 * The rows of one memtier_benchmark run. Results come from the JSON's blocks, else from the
 * stdout report; a run killed before either gets one incomplete `TOTALS` row with its last
 * progress rate (never a result). Types with no requests are left out, except `TOTALS`.
 *
 * @param parsed What memtier wrote, parsed (see {@link MemtierParsed}).
 * @param runId The run the rows belong to.
 * @returns Rows by table, the source, completeness and warnings.
 *
 * @example
 * ```ts
 * import { memtierRows, parseMemtierReport } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const report = parseMemtierReport([
 *   "2         Threads", "10        Connections per thread", "10        Seconds", "", "",
 *   "ALL STATS", "=".repeat(60),
 *   "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency       KB/sec ",
 *   "-".repeat(60),
 *   "Sets         1007.50          ---          ---         0.46841         0.27900       297.02 ",
 *   "Gets            0.00         0.00         0.00             ---             ---         0.00 ",
 *   "Totals       1007.50         0.00         0.00         0.46841         0.27900       297.02 ",
 *   "",
 * ].join("\n"));
 * const rows = memtierRows({ report, settings: { rateLimitPerConnection: 50 } }, "r1");
 * assert.equal(rows.source, "stdout");
 * assert.deepEqual(rows.results.map((r) => [r.test, r.clients, r.ops_per_sec]), [
 *   ["SET", 20, 1007.5],
 *   ["TOTALS", 20, 1007.5],
 * ]);
 * assert.equal(rows.results[1].requested_ops_per_sec, 1000);
 * assert.ok(rows.complete);
 * ```
 */
export function memtierRows(parsed: MemtierParsed, runId: string): MemtierRows {
  const warnings: string[] = [];
  const jsonBlocks = parsed.json?.blocks ?? [];
  const blocks = jsonBlocks.length > 0
    ? jsonBlocks.map(jsonBlockFacts)
    : (parsed.report?.blocks ?? []).map(reportBlockFacts);
  const source = jsonBlocks.length > 0
    ? "json"
    : blocks.length > 0
    ? "stdout"
    : parsed.stderr?.progress.length
    ? "progress"
    : "none";
  if (source === "json") {
    pushAll(warnings, parsed.json!.warnings);
    for (const b of parsed.json!.blocks) {
      warnings.push(...b.warnings.map((w) => `${b.title}: ${w}`));
    }
  } else if (parsed.report) warnings.push(...parsed.report.warnings);
  const settings = resolveSettings(parsed);
  const out: MemtierRows = {
    results: [],
    latency_distribution: [],
    time_series: [],
    hdr_histograms: [],
    source,
    complete: false,
    reason: null,
    warnings,
    jsonSecondRow: (at, second) => {
      const target = targets.get(`${at.block}|${at.type}`);
      return target ? checkedSecond(target, second) : null;
    },
  };
  const checkedSecond = secondChecker(out, parsed.jsonFile ?? "memtier.json");
  /** Types whose seconds were handed over as they were read, and how many seconds. */
  const targets = new Map<string, TypeAt>();
  let streamed = 0;
  const lastRate = lastProgressRate(parsed.stderr);
  const finalProgress = lastProgress(parsed.stderr);
  const index = new Map<string, number>();
  let untimed = false;
  for (const [b, block] of blocks.entries()) {
    const check = seriesCheck(block, {
      requestCount: settings.requestCount,
      lastProgress: finalProgress(block.runIndex),
    });
    if (check) warnings.push(check.warning);
    if (check?.justifiedS === null) untimed = true;
    for (const [t, type] of block.types.entries()) {
      if (type.test !== "TOTALS" && !(type.count ?? type.opsPerSec)) continue;
      const i = out.results.length;
      index.set(key(block.aggregate, block.runIndex, type.test), i);
      const at: TypeAt = { runId, index: i, block, type };
      const row = resultRow(at, settings, lastRate(block.runIndex));
      out.results.push(check ? justified(row, check) : row);
      for (const s of type.timeSeries ?? []) out.time_series.push(checkedSecond(at, s));
      if (type.series) {
        targets.set(`${b}|${t}`, at);
        streamed += type.series.seconds;
      }
      if (type.histogram) {
        out.hdr_histograms.push(jsonHistogramRow(at, parsed.jsonFile ?? "memtier.json"));
      }
    }
    for (const d of block.distributions) {
      const i = index.get(key(block.aggregate, block.runIndex, d.test));
      if (i !== undefined) out.latency_distribution.push(distributionRow(runId, i, d));
    }
  }
  if (out.results.length === 0 && source === "progress") {
    out.results.push(killedRow(runId, parsed.stderr!, settings));
    index.set(key(null, out.results[0].run_index ?? null, "TOTALS"), 0);
  }
  const join = (runIndex: number | null, test: string) =>
    index.get(key(null, runIndex, test)) ??
      out.results.find((r) => r.run_index === runIndex && r.test === test)?.test_index ?? null;
  if (out.time_series.length === 0 && streamed === 0 && parsed.stderr) {
    pushAll(out.time_series, progressRows(runId, parsed.stderr, join));
  }
  for (const h of parsed.hdr ?? []) pushAll(out.hdr_histograms, hgrmRows(runId, h, join));
  const file = source === "json"
    ? parsed.jsonFile ?? "memtier.json"
    : parsed.reportFile ?? "stdout";
  const impossible = dropImpossibleResults(out, file);
  out.reason = incompleteReason(parsed, blocks, out.results.length) ??
    (impossible || checkedSecond.bad() ? "impossible values (see the warnings)" : null) ??
    (untimed
      ? "memtier's Total duration disagrees with its per-second series (see the warnings)"
      : null);
  out.complete = out.reason === null;
  return out;
}

/**
 * A `time_series` row maker that keeps no impossible value of a second (`_checks.ts`): the
 * second's test is then not complete, and the first three such seconds are warned, with their
 * file and line. It also marks the run (`out`), for seconds handed over after its rows were made.
 */
function secondChecker(out: MemtierRows, jsonName: string) {
  let bad = 0;
  const check = (at: TypeAt, s: MemtierSecond) => {
    const row = secondRow(at, s);
    const why = dropImpossibleSecond(row);
    if (why === null) return row;
    if (bad++ < 3) {
      out.warnings.push(
        `${jsonName}:${row.source_line}: impossible value in ${row.test}, second ${row.second}: ` +
          `${why}; not kept${bad === 3 ? " (further such seconds are not listed)" : ""}`,
      );
    }
    const r = out.results[at.index];
    if (r) r.complete = false;
    out.complete = false;
    out.reason ??= "impossible values (see the warnings)";
    return row;
  };
  return Object.assign(check, { bad: () => bad > 0 });
}

/**
 * Appends every item, one by one: `push(...items)` passes each as an argument and overflows
 * the stack for a long run's rows (a 36-hour run has 130,000 seconds per type).
 */
function pushAll<T>(to: T[], items: readonly T[]): void {
  for (const x of items) to.push(x);
}

const key = (aggregate: MemtierAggregate, runIndex: number | null, test: string) =>
  `${aggregate}|${runIndex}|${test}`;

/** The settings: the JSON's configuration, else stdout's run information, else the command line. */
function resolveSettings(parsed: MemtierParsed): Resolved {
  const c = parsed.json?.configuration;
  const info = parsed.json?.runInformation ?? parsed.report?.runInformation;
  const s = parsed.settings ?? {};
  const threads = c?.threads ?? info?.threads ?? s.threads ?? null;
  const connections = c?.clients ?? info?.connectionsPerThread ?? s.connectionsPerThread ?? null;
  const min = c?.keyMinimum ?? s.keyMinimum ?? null;
  const max = c?.keyMaximum ?? s.keyMaximum ?? null;
  const rate = c ? c.rateLimitPerConnection : s.rateLimitPerConnection ?? null;
  return {
    threads,
    connections,
    pipeline: c?.pipeline ?? s.pipeline ?? null,
    dataSizeBytes: c?.dataSizeBytes ?? s.dataSizeBytes ?? null,
    keyspace: min !== null && max !== null ? max - min + 1 : null,
    rate: rate || null,
    requestCount: c
      ? c.testTimeS === null && c.requests !== null
      : info
      ? info.testTimeS === null && info.requestsPerClient !== null
      : s.requestCount ?? false,
  };
}

function jsonBlockFacts(b: MemtierJson["blocks"][number]): BlockFacts {
  const rt = b.runtime;
  return {
    title: b.title,
    aggregate: b.aggregate,
    runIndex: b.runIndex,
    durationS: rt?.durationMs != null ? rt.durationMs / 1000 : null,
    startTimeMs: rt?.startTimeMs ?? null,
    finishTimeMs: rt?.finishTimeMs ?? null,
    complete: b.complete,
    types: b.types,
    distributions: b.distributions,
  };
}

function reportBlockFacts(b: MemtierReport["blocks"][number]): BlockFacts {
  return {
    title: b.title,
    aggregate: b.aggregate,
    runIndex: b.runIndex,
    durationS: null,
    startTimeMs: null,
    finishTimeMs: null,
    complete: b.complete,
    types: b.rows.map((r) => ({ ...r, count: null, minLatencyMs: null, maxLatencyMs: null })),
    distributions: b.distributions,
  };
}

/** The `results` row of one type of one block. */
function resultRow(
  { runId, index, block, type: t }: TypeAt,
  s: Resolved,
  lastProgress: number | null,
): ResultsRow {
  const clients = s.threads !== null && s.connections !== null ? s.threads * s.connections : null;
  const totals = t.test === "TOTALS";
  // hits and misses are GET's: memtier's table prints `---` for the other types, and has no
  // such column for arbitrary commands (--command), where its JSON prints 0
  const gets = (totals || t.test === "GET") && block.types.some((x) => x.test === "GET");
  return {
    run_id: runId,
    test_index: index,
    test: t.test,
    test_title: t.label,
    clients,
    threads: s.threads,
    pipeline: s.pipeline,
    data_size_bytes: s.dataSizeBytes,
    requests: t.count,
    keyspace: s.keyspace,
    duration_s: block.durationS,
    ops_per_sec: block.complete ? t.opsPerSec : null,
    avg_latency_ms: t.avgLatencyMs,
    min_latency_ms: t.minLatencyMs,
    p50_latency_ms: t.p50LatencyMs,
    p95_latency_ms: t.percentiles.find((p) => p.percentile === 95)?.latencyMs ?? null,
    p99_latency_ms: t.p99LatencyMs,
    p999_latency_ms: t.p999LatencyMs,
    max_latency_ms: t.maxLatencyMs,
    requested_ops_per_sec: totals && s.rate !== null && clients !== null ? s.rate * clients : null,
    hits_per_sec: gets ? t.hitsPerSec : null,
    misses_per_sec: gets ? t.missesPerSec : null,
    throughput_kb_per_sec: t.kbPerSec,
    aggregate: block.aggregate,
    run_index: block.runIndex,
    last_progress_ops_per_sec: block.complete || !totals ? null : lastProgress,
    complete: block.complete,
    source_line: t.sourceLine,
  };
}

/** The one row of a run killed before it printed anything: its last progress, not a result. */
function killedRow(runId: string, stderr: MemtierStderr, s: Resolved): ResultsRow {
  const last = stderr.progress.at(-1)!;
  return {
    run_id: runId,
    test_index: 0,
    test: "TOTALS",
    test_title: "Totals",
    clients: s.threads !== null && s.connections !== null ? s.threads * s.connections : null,
    threads: s.threads,
    pipeline: s.pipeline,
    data_size_bytes: s.dataSizeBytes,
    keyspace: s.keyspace,
    ops_per_sec: null,
    run_index: last.runIndex,
    last_progress_ops_per_sec: last.opsPerSec,
    complete: false,
    source_line: last.sourceLine,
  };
}

/** The last progress rate of each run (`--run-count`), or of the last run when none is named. */
/** The last progress update of a run (`null`: any run), or null. */
function lastProgress(stderr: MemtierStderr | null | undefined) {
  return (runIndex: number | null): MemtierProgress | null => {
    const progress = stderr?.progress ?? [];
    const mine = runIndex === null ? progress : progress.filter((p) => p.runIndex === runIndex);
    return mine.at(-1) ?? null;
  };
}

function lastProgressRate(stderr: MemtierStderr | null | undefined) {
  return (runIndex: number | null): number | null => {
    const progress = stderr?.progress ?? [];
    const mine = runIndex === null ? progress : progress.filter((p) => p.runIndex === runIndex);
    return mine.at(-1)?.opsPerSec ?? null;
  };
}

function distributionRow(
  runId: string,
  index: number,
  d: MemtierDistributionRow,
): LatencyDistributionRow {
  return {
    run_id: runId,
    test_index: index,
    test: d.test,
    distribution: "percentile",
    percentile: d.percent,
    latency_ms: d.latencyMs,
    count: null,
    source_line: d.sourceLine,
  };
}

/** Why a run is not complete, or null when memtier finished it. */
function incompleteReason(
  parsed: MemtierParsed,
  blocks: readonly BlockFacts[],
  rows: number,
): string | null {
  const interrupted = parsed.stderr?.interrupted.at(-1) ??
    (parsed.json?.blocks.some((b) => b.runtime?.interrupted) ? { afterS: null } : undefined);
  if (interrupted) {
    return `interrupted${interrupted.afterS !== null ? ` after ${interrupted.afterS} s` : ""}`;
  }
  if (rows === 0) return "no result in the output";
  if (blocks.length === 0) return "killed before memtier printed its results";
  const fromJson = (parsed.json?.blocks.length ?? 0) > 0;
  const doc = fromJson ? parsed.json! : parsed.report!;
  if (!doc.complete || blocks.some((b) => !b.complete)) {
    return `${fromJson ? "JSON" : "stdout report"} cut short`;
  }
  return null;
}
