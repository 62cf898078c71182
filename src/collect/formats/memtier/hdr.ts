/**
 * memtier_benchmark's HdrHistograms: the files `--hdr-file-prefix` writes (in 2.3.0 `.txt` is
 * the percentile distribution and `.hgrm` the interval log, the reverse of the usual naming),
 * the compressed histograms of its JSON, and percentiles computed exactly as memtier computes
 * them (HdrHistogram_c rounds the target count to nearest; hdr-histogram-js rounds up, which
 * moves p99 by a bucket on real data). Histogram values are microseconds; results are ms.
 * Pure: text in, numbers out.
 *
 * @module
 */

import * as hdr from "hdr-histogram-js";
import { Buffer } from "node:buffer";
import { inflateSync } from "node:zlib";
import { ParseError } from "../../../errors.ts";
import { type Line, splitLines } from "../../../text/lines.ts";
import { hdrValueAtPercentile } from "../../../hdr.ts";

/** A decoded histogram (values in µs, as memtier records them). */
export type MemtierHistogram = hdr.JsHistogram;

/** Microseconds per millisecond: memtier's `LATENCY_HDR_RESULTS_MULTIPLIER`. */
const US_PER_MS = 1000;

/**
 * Decodes a compressed histogram (`HISTFAAA…`, base64 of the zlib-compressed V2 encoding), as
 * memtier writes it in the JSON (`Histogram log format`) and in `.hgrm` files.
 *
 * @param compressed The base64 text.
 * @returns The histogram (values in µs).
 * @throws {TypeError} When the text is not a compressed HdrHistogram.
 *
 * @example
 * ```ts
 * import { decodeMemtierHistogram } from "./hdr.ts";
 * import assert from "node:assert/strict";
 * // memtier's empty histogram (no WAIT commands)
 * assert.equal(decodeMemtierHistogram("HISTFAAAACF4nJNpmSzMwMDAyAABTFCaC0QoH3ZjsP8AEWAEAEsrA7A=").totalCount, 0);
 * ```
 */
export function decodeMemtierHistogram(compressed: string): MemtierHistogram {
  if (!/^HISTF[A-Za-z0-9+/]+=*$/.test(compressed)) {
    throw new TypeError(`not a compressed HdrHistogram: ${compressed.slice(0, 40)}`);
  }
  checkMemtierHistogram(compressed);
  try {
    return hdr.decodeFromCompressedBase64(compressed, 32, false) as MemtierHistogram;
  } catch (e) {
    throw new TypeError(`not a compressed HdrHistogram (${(e as Error).message})`);
  }
}

/** Most bytes a compressed histogram may inflate to (memtier's are about 250 KiB at most). */
export const MAX_INFLATED_HISTOGRAM_BYTES = 16 << 20;
/** Most significant digits of a histogram (memtier uses 3; each digit is ten times the memory). */
const MAX_SIGNIFICANT_DIGITS = 5;
/** Widest range, highest trackable ÷ lowest discernible value (memtier's: 6·10⁸). */
const MAX_RANGE = 2 ** 50;

/**
 * Refuses a histogram before it is decoded when it would take unbounded memory: one that
 * inflates past {@link MAX_INFLATED_HISTOGRAM_BYTES} (a decompression bomb), or whose header
 * asks for more significant digits or a wider range than any latency histogram needs (the
 * decoder allocates its counts for the whole range).
 *
 * @param compressed The base64 text (`HISTF…`).
 * @throws {TypeError} Saying which limit it passes.
 *
 * @example
 * ```ts
 * import { checkMemtierHistogram } from "./hdr.ts";
 * import assert from "node:assert/strict";
 * checkMemtierHistogram("HISTFAAAACF4nJNpmSzMwMDAyAABTFCaC0QoH3ZjsP8AEWAEAEsrA7A=");
 * assert.throws(() => checkMemtierHistogram("HISTFAAA"), /not a compressed HdrHistogram/);
 * ```
 */
export function checkMemtierHistogram(compressed: string): void {
  if (!/^HISTF[A-Za-z0-9+/]+=*$/.test(compressed)) {
    throw new TypeError(`not a compressed HdrHistogram: ${compressed.slice(0, 40)}`);
  }
  const bytes = Buffer.from(compressed, "base64");
  if (bytes.length < 8) throw new TypeError("not a compressed HdrHistogram: too short");
  const length = bytes.readUInt32BE(4);
  let inflated: Buffer;
  try {
    inflated = inflateSync(bytes.subarray(8, 8 + length), {
      maxOutputLength: MAX_INFLATED_HISTOGRAM_BYTES,
    });
  } catch (e) {
    if (e instanceof RangeError) {
      throw new TypeError(
        `an HdrHistogram that inflates to more than ${MAX_INFLATED_HISTOGRAM_BYTES >> 20} MiB ` +
          `(${compressed.length} characters compressed): not kept`,
      );
    }
    throw new TypeError(`not a compressed HdrHistogram (${(e as Error).message})`);
  }
  if (inflated.length < 40) throw new TypeError("not a compressed HdrHistogram: header cut");
  const digits = inflated.readInt32BE(12);
  const lowest = Number(inflated.readBigInt64BE(16));
  const highest = Number(inflated.readBigInt64BE(24));
  if (
    !(digits >= 0 && digits <= MAX_SIGNIFICANT_DIGITS) || !(lowest >= 1) ||
    !(highest >= 2 * lowest) || highest / lowest > MAX_RANGE
  ) {
    throw new TypeError(
      `an HdrHistogram with ${digits} significant digits from ${lowest} to ${highest}: at most ` +
        `${MAX_SIGNIFICANT_DIGITS} digits and a range of 2^50`,
    );
  }
}

/**
 * The latency at a percentile, as memtier prints it (`hdr_value_at_percentile` of
 * HdrHistogram_c: target count rounded to nearest, highest equivalent value), in ms.
 *
 * @param histogram A decoded histogram (µs).
 * @param percentile 0–100.
 * @returns The latency in ms; `null` for an empty histogram.
 *
 * @example
 * ```ts
 * import { decodeMemtierHistogram, memtierPercentileMs } from "./hdr.ts";
 * import assert from "node:assert/strict";
 * const h = decodeMemtierHistogram("HISTFAAAACF4nJNpmSzMwMDAyAABTFCaC0QoH3ZjsP8AEWAEAEsrA7A=");
 * assert.equal(memtierPercentileMs(h, 50), null);
 * ```
 */
export function memtierPercentileMs(
  histogram: MemtierHistogram,
  percentile: number,
): number | null {
  const us = hdrValueAtPercentile(histogram, percentile);
  return us === null ? null : us / US_PER_MS;
}

/**
 * Adds histograms into one (memtier's `hdr_add`), for example the SET, GET and WAIT histograms
 * of a block into its Totals. Never averages percentiles.
 *
 * @param compressed Compressed histograms (`HISTFAAA…`).
 * @returns The sum, decoded and compressed again.
 *
 * @example
 * ```ts
 * import { mergeMemtierHistograms } from "./hdr.ts";
 * import assert from "node:assert/strict";
 * const empty = "HISTFAAAACF4nJNpmSzMwMDAyAABTFCaC0QoH3ZjsP8AEWAEAEsrA7A=";
 * assert.equal(mergeMemtierHistograms([empty, empty]).histogram.totalCount, 0);
 * ```
 */
export function mergeMemtierHistograms(
  compressed: readonly string[],
): { histogram: MemtierHistogram; compressed: string } {
  if (compressed.length === 0) throw new RangeError("mergeMemtierHistograms: no histograms");
  const parts = compressed.map(decodeMemtierHistogram);
  const sum = hdr.build({
    bitBucketSize: 64,
    lowestDiscernibleValue: parts[0].lowestDiscernibleValue,
    highestTrackableValue: Math.max(...parts.map((p) => p.highestTrackableValue)),
    numberOfSignificantValueDigits: parts[0].numberOfSignificantValueDigits as 1 | 2 | 3 | 4 | 5,
    useWebAssembly: false,
  }) as MemtierHistogram;
  for (const p of parts) sum.add(p);
  return { histogram: sum, compressed: hdr.encodeIntoCompressedBase64(sum) };
}

/** One row of a percentile-distribution file (`…_FULL_RUN_1.txt`). */
export interface HdrPercentileRow {
  /** Latency, ms (printed with 2 decimals). */
  latencyMs: number;
  /** Percent of requests at or below it (0–100; the file prints a 0–1 fraction). */
  percentile: number;
  /** Requests at or below it. */
  totalCount: number;
  /** Line of the file. */
  sourceLine: number;
}

/** A `--hdr-file-prefix` percentile distribution (`hdr_percentiles_print`, CLASSIC). */
export interface HdrPercentileFile {
  rows: HdrPercentileRow[];
  /** `#[Mean = …]`, ms. */
  meanLatencyMs: number | null;
  /** `StdDeviation`, ms. */
  stdDeviationMs: number | null;
  /** `#[Max = …]`, ms. */
  maxLatencyMs: number | null;
  /** `Total count`. */
  totalCount: number | null;
  /** Whether the footer was read (false for a cut file). */
  complete: boolean;
}

/** Options of the HDR file parsers. */
export interface HdrParseOptions {
  /**
   * File name for error messages.
   * @default {"<text>"}
   */
  file?: string;
}

const NUM = String.raw`(-?\d+(?:\.\d+)?)`;
const PERCENTILE_ROW = new RegExp(
  String.raw`^\s*${NUM}\s+${NUM}\s+(\d+)\s+(?:${NUM}|inf)\s*$`,
);

/**
 * Parses a percentile-distribution file (memtier 2.3.0 names it `PREFIX_FULL_RUN_<n>.txt`,
 * `PREFIX_<SET|GET|CMD>_command_run_<n>.txt`).
 *
 * @param text The file's text.
 * @param options File name for errors.
 * @returns Rows and the footer's mean, deviation, max and count.
 * @throws {ParseError} For a line that is neither a row, a header nor a footer.
 *
 * @example
 * ```ts
 * import { parseHdrPercentiles } from "./hdr.ts";
 * import assert from "node:assert/strict";
 * const f = parseHdrPercentiles([
 *   "       Value   Percentile   TotalCount 1/(1-Percentile)", "",
 *   "        0.03     0.000000            5         1.00",
 *   "       52.99     1.000000         9070          inf",
 *   "#[Mean    =        0.468, StdDeviation   =        1.318]",
 *   "#[Max     =       52.991, Total count    =         9070]",
 *   "#[Buckets =           20, SubBuckets     =          256]", "",
 * ].join("\n"));
 * assert.deepEqual(f.rows[1], { latencyMs: 52.99, percentile: 100, totalCount: 9070, sourceLine: 4 });
 * assert.equal(f.meanLatencyMs, 0.468);
 * assert.ok(f.complete);
 * ```
 */
export function parseHdrPercentiles(
  text: string,
  options: HdrParseOptions = {},
): HdrPercentileFile {
  const file = options.file ?? "<text>";
  const out: HdrPercentileFile = {
    rows: [],
    meanLatencyMs: null,
    stdDeviationMs: null,
    maxLatencyMs: null,
    totalCount: null,
    complete: false,
  };
  for (const l of splitLines(text)) {
    const t = l.text;
    if (t.trim() === "" || /^\s*Value\s+Percentile/.test(t)) continue;
    const row = PERCENTILE_ROW.exec(t);
    if (row && l.terminated) {
      out.rows.push({
        latencyMs: +row[1],
        percentile: roundPercent(+row[2] * 100),
        totalCount: +row[3],
        sourceLine: l.line,
      });
      continue;
    }
    if (row) continue; // a cut last row
    const mean = /^#\[Mean\s*=\s*([\d.]+), StdDeviation\s*=\s*([\d.]+)\]/.exec(t);
    const max = /^#\[Max\s*=\s*([\d.]+), Total count\s*=\s*(\d+)\]/.exec(t);
    if (mean) [out.meanLatencyMs, out.stdDeviationMs] = [+mean[1], +mean[2]];
    else if (max) [out.maxLatencyMs, out.totalCount] = [+max[1], +max[2]];
    else if (/^#\[Buckets\s*=/.test(t)) out.complete = l.terminated;
    else if (l.terminated) throw lineError(file, l, "expected an HdrHistogram percentile row");
  }
  return out;
}

/** One interval of an interval log (memtier writes one per file: the whole run). */
export interface HdrInterval {
  /** Interval start, seconds since the epoch. */
  startTimestampS: number;
  /** Interval end, seconds since the epoch (memtier writes absolute times). */
  endTimestampS: number;
  /** `Interval_Max`, ms (the file prints µs). */
  intervalMaxMs: number;
  /** The compressed histogram as written (`HISTFAAA…`, values in µs). */
  compressed: string;
  /** Line of the file. */
  sourceLine: number;
}

/** A `--hdr-file-prefix` interval log (`hdr_log_write`). */
export interface HdrIntervalLog {
  /** The first comment: `Full Run command HDR latency histogram results`. */
  title: string | null;
  /** `Histogram log format version 1.2`. */
  formatVersion: string | null;
  /** `#[StartTime: …]`, seconds since the epoch. */
  startTimeS: number | null;
  intervals: HdrInterval[];
  /** Whether the file ends with a whole interval line. */
  complete: boolean;
}

/**
 * Parses an interval log (memtier 2.3.0 names it `PREFIX_FULL_RUN_<n>.hgrm`,
 * `PREFIX_<SET|GET|CMD>_command_run_<n>.hgrm`).
 *
 * @param text The file's text.
 * @param options File name for errors.
 * @returns Header facts and the intervals, histograms kept compressed.
 * @throws {ParseError} For a line that is not part of an interval log.
 *
 * @example
 * ```ts
 * import { parseHdrIntervalLog } from "./hdr.ts";
 * import assert from "node:assert/strict";
 * const log = parseHdrIntervalLog([
 *   "#[SET command HDR latency histogram results]",
 *   "#[Histogram log format version 1.2]",
 *   "#[StartTime: 1795986853.519 (seconds since epoch), Sun Nov 21:14:13 GMT 2026]",
 *   '"StartTimestamp","EndTimestamp","Interval_Max","Interval_Compressed_Histogram"',
 *   "1795986853.519,1795986862.521,52991.0,HISTFAAAACF4nJNpmSzMwMDAyAABTFCaC0QoH3ZjsP8AEWAEAEsrA7A=", "",
 * ].join("\n"));
 * assert.equal(log.title, "SET command HDR latency histogram results");
 * assert.equal(log.intervals[0].intervalMaxMs, 52.991);
 * assert.ok(log.complete);
 * ```
 */
export function parseHdrIntervalLog(text: string, options: HdrParseOptions = {}): HdrIntervalLog {
  const file = options.file ?? "<text>";
  const out: HdrIntervalLog = {
    title: null,
    formatVersion: null,
    startTimeS: null,
    intervals: [],
    complete: false,
  };
  let cut = false;
  for (const l of splitLines(text)) {
    const t = l.text;
    if (t.trim() === "" || t.startsWith('"StartTimestamp"')) continue;
    const comment = /^#\[(.*)\]\s*$/.exec(t);
    if (comment) {
      const c = comment[1];
      const version = /^Histogram log format version (\S+)/.exec(c);
      const start = /^StartTime: ([\d.]+)/.exec(c);
      if (version) out.formatVersion = version[1];
      else if (start) out.startTimeS = +start[1];
      else if (!/^(BaseTime|MaxValueDivisor):/.test(c)) out.title ??= c;
      continue;
    }
    const row = /^(?:Tag=[^,]*,)?([\d.]+),([\d.]+),([\d.]+),(HISTF[A-Za-z0-9+/]+=*)$/.exec(t);
    if (!l.terminated) {
      cut = true; // the text ends inside this line
      break;
    }
    if (!row) throw lineError(file, l, "expected an HdrHistogram interval log line");
    try {
      // bounded before it is decoded (a decompression bomb names its file and line)
      checkMemtierHistogram(row[4]);
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
      throw lineError(file, l, `a readable HdrHistogram (${e.message})`);
    }
    out.intervals.push({
      startTimestampS: +row[1],
      endTimestampS: +row[2],
      intervalMaxMs: +row[3] / US_PER_MS,
      compressed: row[4],
      sourceLine: l.line,
    });
  }
  out.complete = out.intervals.length > 0 && !cut;
  return out;
}

/** What a `--hdr-file-prefix` file name says. */
export interface HdrFileName {
  /** The prefix given to memtier. */
  prefix: string;
  /** `FULL` for the whole run, else the command (`SET`, `GET`, `INCR`, …). */
  test: string;
  /** 1-based run (`--run-count`). */
  runIndex: number;
  /** In memtier 2.3.0: `.txt` → percentile distribution, `.hgrm` → interval log. */
  format: "percentiles" | "interval-log";
}

/**
 * Reads a `--hdr-file-prefix` file name (without folders).
 *
 * @param name The base name, e.g. `run_hdr_GET_command_run_2.hgrm`.
 * @returns What the name says, or `null` for a name memtier does not write.
 *
 * @example
 * ```ts
 * import { parseHdrFileName } from "./hdr.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseHdrFileName("x_hdr_GET_command_run_2.hgrm"), {
 *   prefix: "x_hdr", test: "GET", runIndex: 2, format: "interval-log",
 * });
 * assert.equal(parseHdrFileName("x_hdr_FULL_RUN_1.txt")?.test, "FULL");
 * assert.equal(parseHdrFileName("notes.txt"), null);
 * ```
 */
export function parseHdrFileName(name: string): HdrFileName | null {
  const m = /^(.*)_(?:FULL_RUN|([^_]+)_command_run)_(\d+)\.(txt|hgrm)$/.exec(name);
  if (!m) return null;
  return {
    prefix: m[1],
    test: m[2] ?? "FULL",
    runIndex: +m[3],
    format: m[4] === "txt" ? "percentiles" : "interval-log",
  };
}

function roundPercent(p: number): number {
  return Math.round(p * 1e6) / 1e6;
}

function lineError(file: string, l: Line, expected: string): ParseError {
  return new ParseError(expected, { file, line: l.line, column: 1, text: l.text });
}
