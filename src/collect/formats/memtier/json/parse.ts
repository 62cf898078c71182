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

import { ParseError } from "../../../../errors.ts";
import {
  type MemtierConfiguration,
  type MemtierJsonBlock,
  readBlock,
  readConfiguration,
  readRunInformation,
  readSecond,
} from "./_blocks.ts";
import { type JsonContainer, type JsonEntry, type JsonObject, JsonReader } from "./reader.ts";
import {
  type MemtierRuntime,
  type MemtierSecond,
  type MemtierSeriesSummary,
  type MemtierTypeStats,
  resolveBestWorst,
} from "./stats.ts";
import { memtierBlockTitle, type MemtierRunInformation } from "../types.ts";

export type {
  MemtierConfiguration,
  MemtierJsonBlock,
  MemtierRuntime,
  MemtierSecond,
  MemtierSeriesSummary,
  MemtierTypeStats,
};

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
 * import { parseMemtierJson } from "./parse.ts";
 * import assert from "node:assert/strict";
 * const json = parseMemtierJson('{"configuration": {"threads": 2, "clients": 10, "rate_limit": 0}}');
 * assert.equal(json.configuration?.threads, 2);
 * assert.equal(json.configuration?.rateLimitPerConnection, null);
 * assert.deepEqual(json.blocks, []);
 * assert.throws(() => parseMemtierJson("[1]", { file: "a.json" }), /a\.json:1:1: expected a memtier JSON object/);
 * ```
 */
export function parseMemtierJson(text: string, options: MemtierJsonOptions = {}): MemtierJson {
  const reader = new MemtierJsonReader(options);
  reader.push(text);
  return reader.end();
}

/** Options of {@link MemtierJsonReader}. */
export interface MemtierJsonReaderOptions extends MemtierJsonOptions {
  /**
   * Takes each second of every `Time-Serie` as it is read, with the block and type it belongs
   * to (their indexes in `blocks` and in the block's `types`); the seconds are then not kept in
   * `timeSeries` (left empty), only counted in `series`, so a long run's series is never all in
   * memory. Without it, seconds are kept as {@link parseMemtierJson} keeps them.
   * @default {undefined}
   */
  onSecond?: (second: MemtierSecond, at: { block: number; type: number }) => void;
}

/**
 * {@link parseMemtierJson} of a text given in chunks (split anywhere): {@link push} each, then
 * {@link end}. With `onSecond`, the per-second series are handed over as they are read.
 *
 * @example
 * ```ts
 * import { MemtierJsonReader } from "./parse.ts";
 * import assert from "node:assert/strict";
 * const seconds: number[] = [];
 * const r = new MemtierJsonReader({ onSecond: (s) => void seconds.push(s.second) });
 * r.push('{"ALL STATS": {"Totals": {"Count": 3, "Time-Serie": {"0": {"Count": 1}, "1": {"Co');
 * r.push('unt": 2}}}}}');
 * const json = r.end();
 * assert.deepEqual(seconds, [0, 1]);
 * assert.deepEqual(json.blocks[0].types[0].timeSeries, []);
 * assert.equal(json.blocks[0].types[0].series?.seconds, 2);
 * ```
 */
export class MemtierJsonReader {
  readonly #file: string;
  readonly #reader: JsonReader;
  readonly #onSecond: MemtierJsonReaderOptions["onSecond"];
  /** Series counted so far, by their type's object. */
  readonly #series = new WeakMap<JsonObject, MemtierSeriesSummary>();
  /** Block and type index of a type's object (null: not a type of a block). */
  readonly #at = new WeakMap<JsonObject, { block: number; type: number } | null>();
  #firstLine = "";
  #headDone = false;

  /** @param options File name for errors, and where seconds go. */
  constructor(options: MemtierJsonReaderOptions = {}) {
    this.#file = options.file ?? "<text>";
    this.#onSecond = options.onSecond;
    this.#reader = new JsonReader({
      file: this.#file,
      onMember: this.#onSecond ? (e, parents) => this.#member(e, parents) : undefined,
    });
  }

  /**
   * Reads one more chunk.
   *
   * @throws {ParseError} When the text is not JSON.
   */
  push(chunk: string): void {
    if (!this.#headDone) {
      // the first line, quoted when the text is not an object
      const nl = chunk.indexOf("\n");
      this.#firstLine += nl < 0 ? chunk.slice(0, 4096) : chunk.slice(0, nl);
      this.#headDone = nl >= 0 || this.#firstLine.length >= 4096;
    }
    this.#reader.push(chunk);
  }

  /**
   * Ends the text and reads what it held.
   *
   * @throws {ParseError} When the text is not JSON or not memtier's layout.
   */
  end(): MemtierJson {
    const doc = this.#reader.end();
    const file = this.#file;
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
        text: this.#firstLine,
      });
    }
    if (!doc.complete) out.warnings.push("the file is cut short (the run was killed?)");
    const streamed = this.#onSecond ? this.#streamed.bind(this) : undefined;
    for (const e of root.entries) {
      const v = e.value;
      if (!v || v.kind !== "object") continue;
      if (e.key === "configuration") out.configuration = readConfiguration(v);
      else if (e.key === "run information") out.runInformation = readRunInformation(v);
      else {
        const title = memtierBlockTitle(e.key);
        if (title) {
          const block = out.blocks.length;
          const series = streamed && ((type: number, o: JsonObject) => streamed(o, block, type));
          out.blocks.push(readBlock(title, v, { line: e.line, file, series }));
        } else if (e.key !== "client verifications results") {
          out.warnings.push(`line ${e.line}: unknown block "${e.key}" skipped`);
        }
      }
    }
    resolveBestWorst(out.blocks);
    return out;
  }

  /** A member read whole: a second of a block's type's `Time-Serie` is handed over, not kept. */
  #member(e: JsonEntry, parents: readonly JsonContainer[]): boolean {
    if (parents.length !== 4) return false;
    const [root, block, type, series] = parents;
    if (root.kind !== "object" || block.kind !== "object" || type.kind !== "object") return false;
    const t = type.entries.at(-1);
    if (series.kind !== "object" || t?.key !== "Time-Serie" || t.value !== series) return false;
    const at = this.#typeAt(root, block, type);
    if (at === null) return false;
    if (e.value?.kind === "object") this.#second(type, at, readSecond(+e.key, e.value, e.line));
    return true;
  }

  /** Counts a second of a type and hands it over. */
  #second(type: JsonObject, at: { block: number; type: number }, s: MemtierSecond): void {
    let sum = this.#series.get(type);
    if (!sum) {
      this.#series.set(
        type,
        sum = { seconds: 0, countSum: 0, nullCounts: 0, last: null, maxSecond: -1, first: null },
      );
    }
    // a count that is not a number (kept as NaN for the impossible-value rule) counts as missing
    const count = s.count !== null && Number.isFinite(s.count) ? s.count : null;
    sum.seconds++;
    sum.countSum += count ?? 0;
    if (count === null) sum.nullCounts++;
    sum.last = count;
    sum.maxSecond = Math.max(sum.maxSecond, s.second);
    sum.first ??= { second: s.second, count };
    this.#onSecond!(s, at);
  }

  /** The block and type index of a type's object, as `end` will number them. */
  #typeAt(root: JsonObject, block: JsonObject, type: JsonObject) {
    let at = this.#at.get(type);
    if (at !== undefined) return at;
    at = null;
    const b = root.entries.at(-1);
    const t = block.entries.at(-1);
    if (
      b?.value === block && memtierBlockTitle(b.key) && t?.value === type && t.key !== "Runtime"
    ) {
      const blocks = root.entries.filter((x) =>
        x.value?.kind === "object" && x.key !== "configuration" && x.key !== "run information" &&
        memtierBlockTitle(x.key)
      );
      const types = block.entries.filter((x) => x.value?.kind === "object" && x.key !== "Runtime");
      at = { block: blocks.length - 1, type: types.length - 1 };
    }
    this.#at.set(type, at);
    return at;
  }

  /** The series of a type read as it went, with the seconds still in the tree (cut short). */
  #streamed(o: JsonObject, block: number, type: number): MemtierSeriesSummary {
    const at = { block, type };
    for (const e of o.entries) {
      if (e.key !== "Time-Serie" || e.value?.kind !== "object") continue;
      for (const s of e.value.entries) {
        if (s.value?.kind === "object") this.#second(o, at, readSecond(+s.key, s.value, s.line));
      }
    }
    return this.#series.get(o) ??
      { seconds: 0, countSum: 0, nullCounts: 0, last: null, maxSecond: -1, first: null };
  }
}
