/**
 * The blocks of memtier_benchmark's JSON read from the tree `json_reader.ts` makes:
 * `configuration`, `run information`, and each summary block with its types, percentiles,
 * histogram, per-second series and latency distributions. Private to `memtier/` (`json.ts` is
 * its face).
 *
 * @module
 */

import { checkMemtierHistogram, decodeMemtierHistogram, memtierPercentileMs } from "../hdr.ts";
import type { JsonObject, JsonValue } from "./reader.ts";
import {
  deriveAverageTotals,
  deriveTotalsLatency,
  type MemtierRuntime,
  type MemtierSecond,
  type MemtierSeriesSummary,
  type MemtierTypeStats,
} from "./stats.ts";
import { commonPercentiles, memtierTest, percentileOfLabel } from "../types.ts";
import type {
  MemtierBlockTitle,
  MemtierDistributionRow,
  MemtierPercentile,
  MemtierRunInformation,
} from "../types.ts";

/** The `configuration` block: the settings memtier ran with. */
export interface MemtierConfiguration {
  server: string | null;
  port: number | null;
  protocol: string | null;
  runCount: number | null;
  /** `--requests` per client; `null` when the run was timed. */
  requests: number | null;
  /** `--rate-limiting`: requests per second per connection; `null` when not limited. */
  rateLimitPerConnection: number | null;
  /** Connections per thread (`-c`). */
  clients: number | null;
  threads: number | null;
  /** `--test-time`; `null` with `--requests`. */
  testTimeS: number | null;
  /** `--ratio` as printed, `SET:GET` (`1:10`). */
  ratio: string | null;
  pipeline: number | null;
  dataSizeBytes: number | null;
  keyPrefix: string | null;
  keyMinimum: number | null;
  keyMaximum: number | null;
  keyPattern: string | null;
  printAllRuns: boolean | null;
  /** Every field as printed (strings `"true"`/`"false"` kept as strings). */
  fields: Record<string, string | number | boolean | null>;
}

/** One summary block of the JSON. */
export interface MemtierJsonBlock extends MemtierBlockTitle {
  /** `Runtime`; `null` where memtier prints zeros (the aggregated block). */
  runtime: MemtierRuntime | null;
  /** Per command type, in file order; `TOTALS` last. */
  types: MemtierTypeStats[];
  /** The `SET`/`GET`/`WAIT`/… latency distribution arrays, flattened. */
  distributions: MemtierDistributionRow[];
  /** Whether the block was read to its closing brace. */
  complete: boolean;
  /** Line of the block's key. */
  sourceLine: number;
  /** What kvlab derived or could not read in this block. */
  warnings: string[];
}

export function readConfiguration(o: JsonObject): MemtierConfiguration {
  const fields: Record<string, string | number | boolean | null> = {};
  for (const e of o.entries) if (e.value?.kind === "scalar") fields[e.key] = e.value.value;
  const n = (k: string) => (typeof fields[k] === "number" ? fields[k] as number : null);
  const s = (k: string) => (typeof fields[k] === "string" ? fields[k] as string : null);
  const positive = (k: string) => (n(k) ? n(k) : null);
  return {
    server: s("server"),
    port: n("port"),
    protocol: s("protocol"),
    runCount: n("run_count"),
    requests: positive("requests"),
    rateLimitPerConnection: positive("rate_limit"),
    clients: n("clients"),
    threads: n("threads"),
    testTimeS: positive("test_time"),
    ratio: s("ratio"),
    pipeline: n("pipeline"),
    dataSizeBytes: positive("data_size"),
    keyPrefix: s("key_prefix"),
    keyMinimum: n("key_minimum"),
    keyMaximum: n("key_maximum"),
    keyPattern: s("key_pattern"),
    printAllRuns: s("print-all-runs") === null ? null : s("print-all-runs") === "true",
    fields,
  };
}

export function readRunInformation(o: JsonObject): MemtierRunInformation {
  const f = scalars(o);
  return {
    threads: num(f, "Threads"),
    connectionsPerThread: num(f, "Connections per thread"),
    testTimeS: num(f, "Seconds"),
    requestsPerClient: num(f, "Requests per client"),
    formatVersion: num(f, "Format version"),
  };
}

/** Where a streamed type's series went (see {@link MemtierJsonReaderOptions.onSecond}). */
type StreamedSeries = (type: number, o: JsonObject) => MemtierSeriesSummary;

/**
 * A summary block (`ALL STATS`, `RUN #1 RESULTS`, …) at `line` of `file`; `series`, when the
 * seconds were handed over as they were read.
 */
export function readBlock(
  title: MemtierBlockTitle,
  o: JsonObject,
  { line, file = "<text>", series }: { line: number; file?: string; series?: StreamedSeries },
): MemtierJsonBlock {
  const block: MemtierJsonBlock = {
    ...title,
    runtime: null,
    types: [],
    distributions: [],
    complete: o.closed,
    sourceLine: line,
    warnings: [],
  };
  for (const e of o.entries) {
    const v = e.value;
    if (!v) continue;
    if (e.key === "Runtime" && v.kind === "object") block.runtime = readRuntime(v);
    else if (v.kind === "object") {
      const streamed = series && series(block.types.length, v);
      block.types.push(readType(e.key, v, { warnings: block.warnings, file, streamed }));
    } else if (v.kind === "array") {
      // one by one: a spread of a long array overflows the stack
      for (const d of readDistribution(e.key, v.items)) block.distributions.push(d);
    }
  }
  const totals = block.types.find((t) => t.test === "TOTALS");
  if (totals) {
    if (block.aggregate === "average") deriveAverageTotals(block.types, totals, block.warnings);
    else deriveTotalsLatency(totals);
  }
  if (block.aggregate === "average" && block.runtime?.startTimeMs === 0) {
    block.runtime = null;
    block.warnings.push("Runtime is printed as zeros in the aggregated block: left empty");
  }
  return block;
}

function readRuntime(o: JsonObject): MemtierRuntime {
  const f = scalars(o);
  return {
    startTimeMs: num(f, "Start time"),
    finishTimeMs: num(f, "Finish time"),
    durationMs: num(f, "Total duration"),
    interrupted: f.get("Interrupted") === "true",
  };
}

/** One command type's statistics; what it cannot read is added to `warnings`. */
function readType(
  label: string,
  o: JsonObject,
  { warnings, file = "<text>", streamed }: {
    warnings: string[];
    file?: string;
    streamed?: MemtierSeriesSummary;
  },
): MemtierTypeStats {
  const f = scalars(o);
  const count = num(f, "Count");
  const empty = count === 0;
  const latency = (k: string) => (empty ? null : num(f, k));
  let percentiles: MemtierPercentile[] = [];
  let histogram: string | null = null;
  let timeSeries: MemtierSecond[] = [];
  for (const e of o.entries) {
    if (e.key === "Time-Serie" && e.value?.kind === "object" && !streamed) {
      timeSeries = e.value.entries.flatMap((s) =>
        s.value?.kind === "object" ? [readSecond(+s.key, s.value, s.line)] : []
      );
    } else if (e.key === "Percentile Latencies" && e.value?.kind === "object") {
      percentiles = readPercentiles(e.value, `${label} at line ${e.line}`, warnings);
      const log = e.value.entries.find((x) => x.key === "Histogram log format")?.value;
      const c = log?.kind === "object" ? scalars(log).get("Compressed Histogram") : undefined;
      histogram = typeof c === "string" ? c : null;
      if (histogram !== null) {
        // a histogram that cannot be read, or would take unbounded memory, is not kept
        const line = log?.kind === "object"
          ? log.entries.find((x) => x.key === "Compressed Histogram")?.line ?? e.line
          : e.line;
        try {
          checkMemtierHistogram(histogram);
        } catch (err) {
          if (!(err instanceof TypeError)) throw err;
          warnings.push(`${file}:${line}: ${label}: ${err.message}; histogram not kept`);
          histogram = null;
        }
      }
    }
  }
  if (empty) percentiles = [];
  else if (histogram) percentiles = fixCutKeys(percentiles, histogram);
  return {
    test: memtierTest(label),
    label,
    count,
    opsPerSec: num(f, "Ops/sec"),
    hitsPerSec: num(f, "Hits/sec"),
    missesPerSec: num(f, "Misses/sec"),
    movedPerSec: num(f, "MOVED/sec"),
    askPerSec: num(f, "ASK/sec"),
    connectionErrorsPerSec: num(f, "Connection Errors/sec"),
    connectionErrors: num(f, "Connection Errors"),
    avgLatencyMs: latency("Average Latency"),
    accumulatedLatencyMs: latency("Accumulated Latency"),
    minLatencyMs: latency("Min Latency"),
    maxLatencyMs: latency("Max Latency"),
    kbPerSec: num(f, "KB/sec"),
    kbPerSecRx: num(f, "KB/sec RX"),
    kbPerSecTx: num(f, "KB/sec TX"),
    percentiles,
    ...commonPercentiles(percentiles),
    histogram,
    timeSeries,
    ...(streamed ? { series: streamed } : {}),
    derived: [],
    sourceLine: o.line,
  };
}

export function readSecond(second: number, o: JsonObject, line: number): MemtierSecond {
  const f = scalars(o);
  const count = num(f, "Count");
  // a second with no request has no latency (memtier prints its 0/0 mean as nan): none kept,
  // as for a type with no request
  const empty = count === 0;
  const latency = (k: string) => (empty ? null : num(f, k));
  const percentiles: MemtierPercentile[] = [];
  for (const [k, v] of empty ? [] : f) {
    const p = percentileOfLabel(k);
    if (p !== null && typeof v === "number") percentiles.push({ percentile: p, latencyMs: v });
  }
  return {
    second,
    count,
    bytesRx: num(f, "Bytes RX"),
    bytesTx: num(f, "Bytes TX"),
    avgLatencyMs: latency("Average Latency"),
    accumulatedLatencyMs: latency("Accumulated Latency"),
    minLatencyMs: latency("Min Latency"),
    maxLatencyMs: latency("Max Latency"),
    percentiles,
    sourceLine: line,
  };
}

function readPercentiles(o: JsonObject, where: string, warnings: string[]): MemtierPercentile[] {
  const out: MemtierPercentile[] = [];
  for (const e of o.entries) {
    const p = percentileOfLabel(e.key);
    if (p === null || e.value?.kind !== "scalar" || typeof e.value.value !== "number") continue;
    if (out.some((x) => x.percentile === p)) {
      warnings.push(
        `${where}: percentile key ${e.key} repeats (memtier cuts keys to 6 characters)`,
      );
    }
    out.push({ percentile: p, latencyMs: e.value.value });
  }
  return out;
}

/**
 * memtier prints `p%.3f` into 6 characters: `p99.999` and `p99.990` both read `p99.99`. Where
 * a key repeats, the later one is recomputed: the percentile with one more digit whose value,
 * computed from the histogram, is the printed one.
 */
function fixCutKeys(list: MemtierPercentile[], compressed: string): MemtierPercentile[] {
  const seen = new Set<number>();
  if (list.every((p) => !seen.has(p.percentile) && seen.add(p.percentile))) return list;
  const h = decodeMemtierHistogram(compressed);
  const done = new Set<number>();
  return list.map((p) => {
    if (!done.has(p.percentile)) {
      done.add(p.percentile);
      return p;
    }
    for (let d = 1; d <= 9; d++) {
      const longer = +`${p.percentile.toFixed(2)}${d}`;
      if (memtierPercentileMs(h, longer) === p.latencyMs) return { ...p, percentile: longer };
    }
    return p;
  });
}

function readDistribution(label: string, items: JsonValue[]): MemtierDistributionRow[] {
  const test = memtierTest(label);
  return items.flatMap((it) => {
    if (it.kind !== "object") return [];
    const f = scalars(it);
    const latencyMs = num(f, "<=msec");
    const percent = num(f, "percent");
    return latencyMs === null || percent === null
      ? []
      : [{ test, latencyMs, percent, sourceLine: it.line }];
  });
}

type Scalars = Map<string, string | number | boolean | null>;

function scalars(o: JsonObject): Scalars {
  const m: Scalars = new Map();
  for (const e of o.entries) if (e.value?.kind === "scalar") m.set(e.key, e.value.value);
  return m;
}

function num(f: Scalars, key: string): number | null {
  const v = f.get(key);
  // a string or other value where memtier writes a number is not a number: NaN, which the
  // impossible-value rule (`../../../impossible.ts`) reports with its field
  return typeof v === "number" ? v : v === undefined || v === null ? null : NaN;
}
