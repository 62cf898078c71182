/**
 * Per-interval series of an open-loop run: requests sent, replies completed, errors, and a
 * latency histogram (from the intended send time) per interval since the start: a second for
 * every run (`SecondCounts`), and 100 ms with the errors split by kind for a failover run
 * (`IntervalCounts`, `../../failover/`). Each Worker keeps its own; they merge by adding counts.
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
  /** The bucket width, ms (1000 when absent: a second). */
  widthMs?: number;
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
  return bucketOf(ms, 1000);
}

/**
 * The interval of a run a time falls in, for intervals `widthMs` long (times before the start
 * count in interval 0).
 *
 * @param ms Milliseconds since the start of the run.
 * @param widthMs The interval's width, ms.
 * @returns 0, 1, 2, …
 *
 * @example
 * ```ts
 * import { bucketOf } from "./series.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual([-3, 0, 99.9, 100, 250].map((ms) => bucketOf(ms, 100)), [0, 0, 0, 1, 2]);
 * ```
 */
export function bucketOf(ms: number, widthMs: number): number {
  return ms <= 0 ? 0 : Math.floor(ms / widthMs);
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
  const k = (c as Partial<IntervalCounts>).kinds;
  while (c.sent.length <= s) {
    c.sent.push(0);
    c.completed.push(0);
    c.errors.push(0);
    c.latency.push(latencyHistogram(2));
    if (k) { for (const name of INTERVAL_COUNTS) k[name].push(0); }
  }
}

/**
 * Counts one request written at `ms`.
 *
 * @param c Counts to update.
 * @param ms Milliseconds since the start of the run.
 */
export function countSent(c: SecondCounts, ms: number): void {
  const s = bucketOf(ms, c.widthMs ?? 1000);
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
  const s = bucketOf(ms, c.widthMs ?? 1000);
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

/**
 * The kinds an interval series counts apart: errors by what caused them (a connection refused
 * or reset, a request without a reply within the run's request timeout, `CLUSTERDOWN`,
 * `READONLY`, any other error), and `moved` and `asked`, MOVED and ASK redirections followed
 * (not errors).
 */
export const INTERVAL_COUNTS = [
  "refused",
  "reset",
  "timeout",
  "clusterdown",
  "readonly",
  "other",
  "moved",
  "asked",
] as const;

/** One of {@link INTERVAL_COUNTS}. */
export type IntervalCount = typeof INTERVAL_COUNTS[number];

/** The error kinds among {@link INTERVAL_COUNTS} (all but `moved` and `asked`). */
export type IntervalErrorKind = Exclude<IntervalCount, "moved" | "asked">;

/** Per-interval counts with the errors split by kind (a failover run's). */
export interface IntervalCounts extends SecondCounts {
  widthMs: number;
  kinds: Record<IntervalCount, number[]>;
}

/** One interval of a run, merged over all connections. */
export interface IntervalBucket extends Record<IntervalCount, number> {
  /** 0-based interval. */
  interval: number;
  /** Its start, ms since the start of the run. */
  startMs: number;
  widthMs: number;
  sent: number;
  /** Non-error replies received in it. */
  completed: number;
  /** Errors in it (every kind but `moved` and `asked`). */
  errors: number;
  /** Latency from the intended send time of its replies, ms (null when none completed). */
  p50FromIntendedMs: number | null;
  p99FromIntendedMs: number | null;
  maxFromIntendedMs: number | null;
}

/**
 * Empty counts of intervals `widthMs` long, with the errors split by kind.
 *
 * @param widthMs The interval's width, ms.
 * @returns Counts with no interval yet.
 */
export function emptyIntervalCounts(widthMs: number): IntervalCounts {
  if (!(widthMs > 0)) throw new RangeError(`widthMs must be > 0: ${widthMs}`);
  const kinds = Object.fromEntries(INTERVAL_COUNTS.map((k) => [k, [] as number[]]));
  return { ...emptySecondCounts(), widthMs, kinds: kinds as Record<IntervalCount, number[]> };
}

/**
 * Counts an error of a kind at `ms` (an error reply, a lost connection's request), or a MOVED
 * or ASK followed (`moved`, `asked`: not errors).
 *
 * @param c Counts to update.
 * @param ms Milliseconds since the start of the run.
 * @param kind What it was.
 *
 * @example
 * ```ts
 * import { countKind, countReply, countSent, emptyIntervalCounts, intervalSeries } from "./series.ts";
 * import assert from "node:assert/strict";
 * const c = emptyIntervalCounts(100);
 * countSent(c, 10);
 * countReply(c, 11, 1);
 * countKind(c, 150, "refused");
 * countKind(c, 160, "moved");
 * countKind(c, 170, "asked");
 * const s = intervalSeries([c]);
 * assert.deepEqual(s.map((b) => [b.startMs, b.completed, b.errors, b.refused, b.moved, b.asked]),
 *   [[0, 1, 0, 0, 0, 0], [100, 0, 1, 1, 1, 1]]);
 * assert.equal(s[1].p99FromIntendedMs, null);
 * ```
 */
export function countKind(c: IntervalCounts, ms: number, kind: IntervalCount): void {
  const s = bucketOf(ms, c.widthMs);
  if (s >= c.sent.length) grow(c, s);
  c.kinds[kind][s]++;
  if (kind !== "moved" && kind !== "asked") c.errors[s]++;
}

/**
 * Merges interval counts (all of one width) into one series.
 *
 * @param parts Counts to merge (left unchanged).
 * @returns One bucket per interval, from 0 to the last any part reached.
 */
export function intervalSeries(parts: readonly IntervalCounts[]): IntervalBucket[] {
  const widthMs = parts[0]?.widthMs ?? 100;
  if (parts.some((p) => p.widthMs !== widthMs)) {
    throw new RangeError("interval counts of different widths do not merge");
  }
  const n = Math.max(0, ...parts.map((p) => p.sent.length));
  const out: IntervalBucket[] = [];
  for (let i = 0; i < n; i++) {
    const h = latencyHistogram(2);
    const b = {
      interval: i,
      startMs: i * widthMs,
      widthMs,
      sent: 0,
      completed: 0,
      errors: 0,
      ...Object.fromEntries(INTERVAL_COUNTS.map((k) => [k, 0])),
    } as IntervalBucket;
    for (const p of parts) {
      if (i >= p.sent.length) continue;
      b.sent += p.sent[i];
      b.completed += p.completed[i];
      b.errors += p.errors[i];
      for (const k of INTERVAL_COUNTS) b[k] += p.kinds[k][i];
      h.add(p.latency[i]);
    }
    const sum = latencySummary(h);
    const some = sum.count > 0;
    b.p50FromIntendedMs = some ? sum.p50Ms : null;
    b.p99FromIntendedMs = some ? sum.p99Ms : null;
    b.maxFromIntendedMs = some ? sum.maxMs : null;
    out.push(b);
  }
  return out;
}
