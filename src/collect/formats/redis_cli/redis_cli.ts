/**
 * Parsers for redis-cli / valkey-cli replies kvlab reads: `DBSIZE` (`(integer) N` on a
 * terminal, `N` in a pipe), and `--latency` / `--latency-history` in both their terminal form
 * (`min: 0, max: 1, avg: 0.25 (4 samples)`, redrawn with ANSI escapes, `-- 1.00 seconds range`
 * at the end of each interval) and their pipe form (`0 1 0.25 4` lines). Pure.
 *
 * @module
 */

import { segments, splitLines } from "../../../text/lines.ts";

/**
 * The key count of a DBSIZE reply, or null.
 *
 * @example
 * ```ts
 * import { parseDbsize } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(parseDbsize("(integer) 99994\n"), 99994);
 * assert.equal(parseDbsize("100000\r\n"), 100000);
 * assert.equal(parseDbsize("ERR\n"), null);
 * ```
 */
export function parseDbsize(text: string): number | null {
  const m = /^\s*(?:\(integer\)\s*)?(\d+)\s*$/m.exec(text.replace(/\r/g, ""));
  return m ? Number(m[1]) : null;
}

/** One latency sample line: cumulative over its interval. */
export interface LatencySample {
  minMs: number;
  maxMs: number;
  avgMs: number;
  samples: number;
  /** Interval number (0, 1, … for --latency-history; 0 for --latency). */
  interval: number;
  /** True for the last line of a finished interval (`-- N seconds range`). */
  intervalEnd: boolean;
  line: number;
}

/**
 * Parses `redis-cli --latency` / `--latency-history` output (terminal or pipe form). A cut last
 * line is dropped.
 *
 * @example
 * ```ts
 * import { parseCliLatency } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const s = parseCliLatency("min: 0, max: 18, avg: 0.40 (4591 samples)\n");
 * assert.deepEqual([s[0].minMs, s[0].maxMs, s[0].avgMs, s[0].samples], [0, 18, 0.4, 4591]);
 * const p = parseCliLatency("0 1 0.10 10\n -- 1.00 seconds range\n0 0 0.00 1\n");
 * assert.deepEqual(p.map((x) => [x.interval, x.intervalEnd, x.samples]), [[0, true, 10], [1, false, 1]]);
 * ```
 */
export function parseCliLatency(text: string): LatencySample[] {
  const out: LatencySample[] = [];
  let interval = 0;
  for (const { text: raw, line, terminated } of splitLines(text)) {
    // on a terminal redis-cli redraws the line with ESC[0G ESC[2K: each redraw is a sample
    // deno-lint-ignore no-control-regex
    for (const seg of segments(raw.replace(/\x1b\[\d*G/g, "\r"))) {
      const t = seg.trim();
      if (/^-- [\d.]+ seconds range$/.test(t)) {
        if (out.length) out[out.length - 1].intervalEnd = true;
        interval++;
        continue;
      }
      let m =
        /^min: (\d+(?:\.\d+)?), max: (\d+(?:\.\d+)?), avg: (\d+(?:\.\d+)?) \((\d+) samples\)( -- [\d.]+ seconds range)?$/
          .exec(t);
      if (!m) {
        m = /^(\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\d+)$/.exec(t);
        if (m && !terminated) continue; // cut by the end of the capture
      }
      if (!m) continue;
      out.push({
        minMs: Number(m[1]),
        maxMs: Number(m[2]),
        avgMs: Number(m[3]),
        samples: Number(m[4]),
        interval,
        intervalEnd: Boolean(m[5]),
        line,
      });
      if (m[5]) interval++;
    }
  }
  return out;
}
