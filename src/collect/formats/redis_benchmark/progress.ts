/**
 * Live progress of a running redis-benchmark / valkey-benchmark: which test runs and at what
 * rate, read from the pieces it draws on the terminal (`TEST: rps=… (overall: …) avg_msec=…`,
 * `\r`-separated) and from the results it prints when a test ends. Pure apart from the
 * callback of {@link ProgressReader}.
 *
 * @module
 */

import type { ProgressEvent } from "../format.ts";
import { splitCsvLine } from "../../../text/csv.ts";
import { normalizeTestName, num } from "./_fields.ts";
import { RE_HEADER, RE_PROGRESS, RE_PROGRESS_LEGACY, RE_QUIET } from "./_lines.ts";

/** A tool's live progress (the type every collector's progress shares). */

/**
 * Reads one drawn piece of live output (a segment between `\r`/`\n`) as progress. Pure.
 *
 * @param segment The piece, without its `\r` / `\n`.
 * @returns What it says, or `undefined` for anything else (report lines, errors, blanks).
 *
 * @example
 * ```ts
 * import { progressEvent } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.deepEqual(progressEvent("SET: rps=51613.5 (overall: 51613.5) avg_msec=0.586 (overall: 0.586)"), {
 *   kind: "progress", test: "SET", opsPerSec: 51613.5, overallOpsPerSec: 51613.5,
 * });
 * assert.deepEqual(progressEvent("GET: rps=0.0 (overall: -nan) avg_msec=-nan (overall: -nan)"), {
 *   kind: "progress", test: "GET", opsPerSec: 0, overallOpsPerSec: null,
 * });
 * assert.deepEqual(progressEvent("====== SET ======"), { kind: "done", test: "SET", opsPerSec: null });
 * assert.equal(progressEvent("  50 parallel clients"), undefined);
 * assert.equal(progressEvent("  throughput summary: 52219.32 requests per second"), undefined);
 * ```
 */
export function progressEvent(segment: string): ProgressEvent | undefined {
  const t = segment.trim();
  let m = RE_PROGRESS.exec(t);
  if (m) {
    return {
      kind: "progress",
      test: normalizeTestName(m[1]),
      opsPerSec: num(m[2]),
      overallOpsPerSec: num(m[3]),
    };
  }
  m = RE_HEADER.exec(t);
  if (m) return { kind: "done", test: normalizeTestName(m[1]), opsPerSec: null };
  m = RE_QUIET.exec(t);
  if (m && m[1] !== "throughput summary") {
    return { kind: "done", test: normalizeTestName(m[1]), opsPerSec: num(m[2]) };
  }
  if (t.startsWith('"') && !t.startsWith('"test"')) {
    const f = splitCsvLine(t);
    if (f && f.length >= 2 && /^[\d.]+$/.test(f[1])) {
      return { kind: "done", test: normalizeTestName(f[0]), opsPerSec: num(f[1]) };
    }
  }
  m = RE_PROGRESS_LEGACY.exec(t);
  if (m && /^[A-Z][A-Z0-9_]*( \(.*\))?$/.test(m[1])) {
    return {
      kind: "progress",
      test: normalizeTestName(m[1]),
      opsPerSec: num(m[2]),
      overallOpsPerSec: num(m[2]),
    };
  }
  return undefined;
}

/**
 * Turns a stream of output chunks into {@link ProgressEvent}s (keeps the partial segment
 * between chunks). Pure apart from the callback.
 *
 * @example
 * ```ts
 * import { type ProgressEvent, ProgressReader } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const events: ProgressEvent[] = [];
 * const reader = new ProgressReader((e) => events.push(e));
 * const out = new TextEncoder().encode("SET: 41000.00\rSET: 41562.76 requests per second\n");
 * reader.push(out.subarray(0, 9)); // a segment split between two chunks
 * reader.push(out.subarray(9));
 * assert.deepEqual(events, [
 *   { kind: "progress", test: "SET", opsPerSec: 41000, overallOpsPerSec: 41000 },
 *   { kind: "done", test: "SET", opsPerSec: 41562.76 },
 * ]);
 * ```
 */
export class ProgressReader {
  #rest = "";
  readonly #decoder = new TextDecoder();
  /** @param onEvent Called for each event. */
  constructor(readonly onEvent: (e: ProgressEvent) => void) {}
  /** Feeds a chunk of stdout. */
  push(chunk: Uint8Array): void {
    const text = this.#rest + this.#decoder.decode(chunk, { stream: true });
    const parts = text.split(/[\r\n]/);
    this.#rest = parts.pop() ?? "";
    for (const p of parts) {
      const e = p.trim() === "" ? undefined : progressEvent(p);
      if (e) this.onEvent(e);
    }
  }
}
