/**
 * Per-second series of an open-loop run: requests sent, replies completed, errors, and a
 * latency histogram (from the intended send time) per second since the start. Each Worker keeps
 * its own; they merge by adding counts.
 *
 * @module
 */

import { type Histogram, latencyHistogram, latencySummary, recordMs } from "./histogram.ts";

/** One second of a run, merged over all connections. */
export interface SecondBucket {
  /** Seconds since the start of the run (0-based). */
  second: number;
  /** Requests written in this second. */
  sent: number;
  /** Non-error replies received in this second. */
  completed: number;
  /** Error replies and requests lost to a disconnect, in this second. */
  errors: number;
  /** Median latency from the intended send time of the replies of this second. */
  p50FromIntendedMs: number;
  /** 99th percentile latency from the intended send time of the replies of this second. */
  p99FromIntendedMs: number;
}

/** Raw per-second counts of one Worker (or of the whole run once merged). */
export interface SecondCounts {
  sent: number[];
  completed: number[];
  errors: number[];
  /** Latency from the intended send time, per second of completion (2 significant digits). */
  latency: Histogram[];
}

/**
 * The second of a run a time falls in (times before the start count in second 0).
 *
 * @param ms Milliseconds since the start of the run.
 * @returns 0, 1, 2, …
 *
 * @example
 * ```ts
 * import { secondOf } from "./series.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual([-3, 0, 999.9, 1000, 2500].map(secondOf), [0, 0, 0, 1, 2]);
 * ```
 */
export function secondOf(ms: number): number {
  return ms <= 0 ? 0 : Math.floor(ms / 1000);
}

/**
 * Empty per-second counts.
 *
 * @returns Counts with no seconds yet.
 */
export function emptySecondCounts(): SecondCounts {
  return { sent: [], completed: [], errors: [], latency: [] };
}

function grow(c: SecondCounts, s: number): void {
  while (c.sent.length <= s) {
    c.sent.push(0);
    c.completed.push(0);
    c.errors.push(0);
    c.latency.push(latencyHistogram(2));
  }
}

/**
 * Counts one request written at `ms`.
 *
 * @param c Counts to update.
 * @param ms Milliseconds since the start of the run.
 */
export function countSent(c: SecondCounts, ms: number): void {
  const s = secondOf(ms);
  if (s >= c.sent.length) grow(c, s);
  c.sent[s]++;
}

/**
 * Counts one reply received at `ms`: an error, or a completion with its latency from the
 * intended send time.
 *
 * @param c Counts to update.
 * @param ms Milliseconds since the start of the run.
 * @param latencyMs Latency from the intended send time, or `undefined` for an error.
 *
 * @example
 * ```ts
 * import { countReply, countSent, emptySecondCounts, secondSeries } from "./series.ts";
 * import assert from "node:assert/strict";
 * const c = emptySecondCounts();
 * countSent(c, 10);
 * countReply(c, 10.2, 0.2);
 * countReply(c, 1500, undefined);
 * const s = secondSeries([c]);
 * assert.deepEqual(s.map((b) => [b.sent, b.completed, b.errors]), [[1, 1, 0], [0, 0, 1]]);
 * assert.ok(Math.abs(s[0].p50FromIntendedMs - 0.2) < 0.002);
 * ```
 */
export function countReply(c: SecondCounts, ms: number, latencyMs: number | undefined): void {
  const s = secondOf(ms);
  if (s >= c.sent.length) grow(c, s);
  if (latencyMs === undefined) c.errors[s]++;
  else {
    c.completed[s]++;
    recordMs(c.latency[s], latencyMs);
  }
}

/**
 * Merges per-second counts (of several Workers) into one series by adding counts and
 * histograms second by second.
 *
 * @param parts Counts to merge (left unchanged).
 * @returns One bucket per second, from second 0 to the last second any part reached.
 *
 * @example
 * ```ts
 * import { countReply, emptySecondCounts, secondSeries } from "./series.ts";
 * import assert from "node:assert/strict";
 * const a = emptySecondCounts(), b = emptySecondCounts();
 * for (let i = 0; i < 99; i++) countReply(a, 100, 0.1);
 * countReply(b, 200, 50);
 * countReply(b, 2100, 1);
 * const s = secondSeries([a, b]);
 * assert.equal(s.length, 3);
 * assert.equal(s[0].completed, 100);
 * assert.ok(s[0].p99FromIntendedMs < 0.11); // 99 of 100 at 0.1 ms
 * assert.equal(s[1].completed, 0);
 * ```
 */
export function secondSeries(parts: readonly SecondCounts[]): SecondBucket[] {
  const seconds = Math.max(0, ...parts.map((p) => p.sent.length));
  const out: SecondBucket[] = [];
  for (let s = 0; s < seconds; s++) {
    const h = latencyHistogram(2);
    let sent = 0, completed = 0, errors = 0;
    for (const p of parts) {
      if (s >= p.sent.length) continue;
      sent += p.sent[s];
      completed += p.completed[s];
      errors += p.errors[s];
      h.add(p.latency[s]);
    }
    const sum = latencySummary(h);
    out.push({
      second: s,
      sent,
      completed,
      errors,
      p50FromIntendedMs: sum.p50Ms,
      p99FromIntendedMs: sum.p99Ms,
    });
  }
  return out;
}
