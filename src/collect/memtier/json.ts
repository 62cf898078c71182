/**
 * Parser for memtier_benchmark 2.x `--json-out-file`: `configuration`, `run information`, and
 * one block per summary (`ALL STATS`; with `--run-count` > 1 `BEST RUN RESULTS`,
 * `WORST RUN RESULTS`, `AGGREGATED AVERAGE RESULTS (N runs)`, and `RUN #n RESULTS` with
 * `--print-all-runs`), each with per-type stats (`Sets`, `Gets`, `Waits`, arbitrary commands,
 * `Totals`), percentiles, the compressed HdrHistogram, the per-second `Time-Serie` and the
 * latency distribution arrays.
 *
 * memtier prints some numbers it never computed; kvlab derives them and says so in `derived`
 * (and, for the aggregated block, in `warnings`): see {@link parseMemtierJson}. Pure.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";
import { checkMemtierHistogram, decodeMemtierHistogram, memtierPercentileMs } from "./hdr.ts";
import { type JsonObject, type JsonValue, readJson } from "./json_reader.ts";
import {
  deriveAverageTotals,
  deriveTotalsLatency,
  type MemtierRuntime,
  type MemtierSecond,
  type MemtierTypeStats,
  resolveBestWorst,
} from "./json_stats.ts";
import { commonPercentiles, memtierBlockTitle, memtierTest, percentileOfLabel } from "./types.ts";
import type {
  MemtierBlockTitle,
  MemtierDistributionRow,
  MemtierPercentile,
  MemtierRunInformation,
} from "./types.ts";

export type { MemtierRuntime, MemtierSecond, MemtierTypeStats };

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

/** What {@link parseMemtierJson} returns. */
export interface MemtierJson {
  configuration: MemtierConfiguration | null;
  runInformation: MemtierRunInformation | null;
  blocks: MemtierJsonBlock[];
  /** Whether the file was read to its end (false for a killed run's file). */
  complete: boolean;
  /** File-level remarks (cut file, repeated keys, unknown blocks). */
  warnings: string[];
}

/** Options of {@link parseMemtierJson}. */
export interface MemtierJsonOptions {
  /**
   * File name for error messages.
   * @default {"<text>"}
   */
  file?: string;
}

/**
 * Parses a memtier_benchmark 2.x `--json-out-file`.
 *
 * Derived numbers: `Totals` `Latency`/`Average Latency` are always printed as 0.000, so its
 * `avgLatencyMs` is the mean of its histogram, as memtier's stdout table prints it (without a
 * histogram: `Accumulated Latency / Count`). In `AGGREGATED AVERAGE RESULTS` the accumulated
 * latency is 0 too and the `Totals` histogram is empty, so `Totals` latencies, KB/sec RX/TX and
 * histogram come from the per-type blocks (histograms added, mean and percentiles read from the
 * sum as memtier reads them), with a warning.
 * Percentiles of a type with no requests are `null` (memtier prints the histogram floor).
 * A file cut short reads as far as it goes, with `complete: false`.
 *
 * @param text The JSON text.
 * @param options File name for errors.
 * @returns Configuration, run information and blocks.
 * @throws {ParseError} When the text is not JSON or not memtier's layout.
 *
 * @example
 * ```ts
 * import { parseMemtierJson } from "./json.ts";
 * import assert from "node:assert/strict";
 * const json = parseMemtierJson('{"configuration": {"threads": 2, "clients": 10, "rate_limit": 0}}');
 * assert.equal(json.configuration?.threads, 2);
 * assert.equal(json.configuration?.rateLimitPerConnection, null);
 * assert.deepEqual(json.blocks, []);
 * assert.throws(() => parseMemtierJson("[1]", { file: "a.json" }), /a\.json:1:1: expected a memtier JSON object/);
 * ```
 */
export function parseMemtierJson(text: string, options: MemtierJsonOptions = {}): MemtierJson {
  const file = options.file ?? "<text>";
  const doc = readJson(text, file);
  const out: MemtierJson = {
    configuration: null,
    runInformation: null,
    blocks: [],
    complete: doc.complete,
    warnings: [],
  };
  if (!doc.root) return { ...out, warnings: ["the file is empty"] };
  const root = doc.root;
  if (root.kind !== "object") {
    throw new ParseError("expected a memtier JSON object", {
      file,
      line: root.line,
      column: root.column,
      text: text.split("\n", 1)[0],
    });
  }
  if (!doc.complete) out.warnings.push("the file is cut short (the run was killed?)");
  for (const e of root.entries) {
    const v = e.value;
    if (!v || v.kind !== "object") continue;
    if (e.key === "configuration") out.configuration = readConfiguration(v);
    else if (e.key === "run information") out.runInformation = readRunInformation(v);
    else {
      const title = memtierBlockTitle(e.key);
      if (title) out.blocks.push(readBlock(title, v, { line: e.line, file }));
      else if (e.key !== "client verifications results") {
        out.warnings.push(`line ${e.line}: unknown block "${e.key}" skipped`);
      }
    }
  }
  resolveBestWorst(out.blocks);
  return out;
}

function readConfiguration(o: JsonObject): MemtierConfiguration {
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

function readRunInformation(o: JsonObject): MemtierRunInformation {
  const f = scalars(o);
  return {
    threads: num(f, "Threads"),
    connectionsPerThread: num(f, "Connections per thread"),
    testTimeS: num(f, "Seconds"),
    requestsPerClient: num(f, "Requests per client"),
    formatVersion: num(f, "Format version"),
  };
}

/** A summary block (`ALL STATS`, `RUN #1 RESULTS`, …) at `line` of `file`. */
function readBlock(
  title: MemtierBlockTitle,
  o: JsonObject,
  { line, file = "<text>" }: { line: number; file?: string },
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
      block.types.push(readType(e.key, v, { warnings: block.warnings, file }));
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
  { warnings, file = "<text>" }: { warnings: string[]; file?: string },
): MemtierTypeStats {
  const f = scalars(o);
  const count = num(f, "Count");
  const empty = count === 0;
  const latency = (k: string) => (empty ? null : num(f, k));
  let percentiles: MemtierPercentile[] = [];
  let histogram: string | null = null;
  let timeSeries: MemtierSecond[] = [];
  for (const e of o.entries) {
    if (e.key === "Time-Serie" && e.value?.kind === "object") {
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
    derived: [],
    sourceLine: o.line,
  };
}

function readSecond(second: number, o: JsonObject, line: number): MemtierSecond {
  const f = scalars(o);
  const percentiles: MemtierPercentile[] = [];
  for (const [k, v] of f) {
    const p = percentileOfLabel(k);
    if (p !== null && typeof v === "number") percentiles.push({ percentile: p, latencyMs: v });
  }
  return {
    second,
    count: num(f, "Count"),
    bytesRx: num(f, "Bytes RX"),
    bytesTx: num(f, "Bytes TX"),
    avgLatencyMs: num(f, "Average Latency"),
    accumulatedLatencyMs: num(f, "Accumulated Latency"),
    minLatencyMs: num(f, "Min Latency"),
    maxLatencyMs: num(f, "Max Latency"),
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
  // impossible-value rule (`../impossible.ts`) reports with its field
  return typeof v === "number" ? v : v === undefined || v === null ? null : NaN;
}
