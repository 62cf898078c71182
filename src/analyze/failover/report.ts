/**
 * A failover run, read back: the numbers every view shows ({@link failoverReport}: time to the
 * first error, the unavailable window, the time back to the target rate, the requests that
 * failed or fell short), from the stored rows of `failover_intervals` and
 * `failover_events` (schema 1.8), and {@link readFailover}, which reads them for one run. The
 * chart is `./chart.ts`'s.
 *
 * Definitions (README "Failover"): the target of an interval is the run's fixed rate × its
 * width; an interval is *short* when it completed less than `threshold` (default 0.9) of it.
 * The load must first be at the target: `sustained` (default 3) consecutive intervals not short
 * before the action, else the run is inconclusive. The *unavailable window* starts at the first
 * short interval at or after the action's interval and ends where the first `sustained`
 * consecutive intervals not short begin (its length is a multiple of the width); the *time back
 * to the target rate* is that end minus the action's time. A run without an action is read the
 * same way from its first sustained intervals on (an A/A run: no window expected). The
 * schedule's last interval, when the duration ends within it, has its share of the target (by
 * its stored width, or its sends), or is left out when that share is too thin to tell (its
 * errors still count).
 *
 * @module
 */

import pl from "nodejs-polars";
import { Dataset, type DatasetRef } from "../../store/dataset.ts";

/** One `failover_intervals` row, as the analysis reads it. */
export interface FailoverInterval {
  interval: number;
  start_ms: number;
  width_ms: number;
  requested_ops_per_sec: number;
  sent: number;
  completed: number;
  errors: number;
  p99_latency_ms?: number | null;
  [kind: string]: unknown;
}

/** One `failover_events` row, as the analysis reads it. */
export interface FailoverEvent {
  event: string;
  elapsed_ms?: number | null;
  action: string;
  node?: string | null;
  address?: string | null;
  pid?: number | null;
  detail?: string | null;
}

/** Options of {@link failoverReport}. */
export interface FailoverReportOptions {
  /** An interval below this share of its target is short. @default {0.9} */
  threshold?: number;
  /** Consecutive intervals not short that make the rate sustained. @default {3} */
  sustained?: number;
  /**
   * An error-free window longer than every noise dip before the action is an outage only when
   * the settled stretch before the action is at least this many times the rest of the run (under
   * noise alone the longest dip then falls after the action in at most 1 / (1 + ratio) of runs:
   * 5 % at 19). @default {19}
   */
  calibrationRatio?: number;
}

/** The short intervals of a stretch of the run where no outage is expected (noise). */
export interface FailoverNoise {
  /** Settled intervals before the action (a run without an action: from the settled start on). */
  intervals: number;
  /** Those short. */
  short: number;
  /** The longest run of short intervals among them, ms (0 when none). */
  longestDipMs: number;
}

/** What a failover run came to (see the module's doc for each definition). */
export interface FailoverReport {
  /** `measured`, or `inconclusive` when the data cannot tell (`reason` says why). */
  verdict: "measured" | "inconclusive";
  reason: string | null;
  action: string | null;
  /** When the action was sent, ms since the schedule started. */
  actionMs: number | null;
  /** When it completed (SIGCONT sent, replica promoted, CLUSTER FAILOVER answered). */
  actionDoneMs: number | null;
  /** The node acted on (`node 1 (127.0.0.1:7001)`), and the one that served its slots after. */
  failedNode: string | null;
  tookOver: string | null;
  /** The stored words of the take-over (why none took over: a replica acted on, no failover). */
  tookOverDetail: string | null;
  /** From the action to the start of the first interval with an error (0 if the action's own). */
  timeToFirstErrorMs: number | null;
  /**
   * Whether the run had an outage: a window of short intervals after the action with an error
   * in it, or an error-free one longer than every noise dip before the action (see
   * {@link FailoverReportOptions.calibrationRatio}).
   */
  unavailable: boolean;
  /** An error-free window no longer than the longest noise dip before the action: no outage. */
  withinNoise: boolean;
  /** The short intervals before the action (noise; null when the load never settled). */
  noise: FailoverNoise | null;
  /** Short intervals from the action on (an `action: none` run's: noise too). */
  shortAfterAction: number | null;
  /** The length of the dip read as noise (or left inconclusive), ms. */
  dipMs: number | null;
  /** The window's start and length, ms (null when none, or when it never ended). */
  windowStartMs: number | null;
  windowMs: number | null;
  /** From the action to the end of the window, ms. */
  backToTargetMs: number | null;
  /** Errors from the action on, and by kind. */
  failed: number;
  failedByKind: Record<string, number>;
  /** MOVED and ASK redirections followed from the action on (not errors; `asked` null before 1.10). */
  moved: number;
  asked: number;
  /** Requests the window fell short of its target (target − completed, summed over it). */
  shortOfTarget: number | null;
  /** The run's fixed rate and the interval width. */
  requestedOpsPerSec: number | null;
  widthMs: number | null;
  threshold: number;
  sustained: number;
}

const KINDS = ["refused", "reset", "timeout", "clusterdown", "readonly", "other"] as const;

const nodeText = (e: FailoverEvent | undefined) =>
  e?.node ? `${e.node}${e.address ? ` (${e.address})` : ""}` : null;

/**
 * The numbers of a failover run (see the module's doc): one function for every view.
 *
 * @param intervals Its `failover_intervals` rows (any order).
 * @param events Its `failover_events` rows.
 * @param o The threshold and the sustained count.
 * @returns The report; `inconclusive` with a reason when the rows cannot tell.
 *
 * @example
 * ```ts
 * import { failoverReport } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * // 1,000/s in 100 ms intervals: 100 each, none from 1.0 s to 2.2 s (refused), then 100 again
 * const rows = Array.from({ length: 40 }, (_, i) => {
 *   const down = i >= 10 && i < 22;
 *   return { interval: i, start_ms: i * 100, width_ms: 100, requested_ops_per_sec: 1000,
 *     sent: 100, completed: down ? 0 : 100, errors: down ? 100 : 0, refused: down ? 100 : 0 };
 * });
 * const events = [{ event: "action", elapsed_ms: 1020, action: "kill", node: "node 1" },
 *   { event: "took_over", elapsed_ms: null, action: "kill", node: "node 4" }];
 * const r = failoverReport(rows, events);
 * assert.equal(r.verdict, "measured");
 * assert.equal(r.windowMs, 1200);
 * assert.equal(r.backToTargetMs, 2200 - 1020);
 * assert.equal(r.timeToFirstErrorMs, 0);
 * assert.equal(r.failedByKind.refused, 1200);
 * assert.equal(r.tookOver, "node 4");
 * // no action, steady load: no window
 * const aa = failoverReport(rows.map((x) => ({ ...x, completed: 100, errors: 0, refused: 0 })), []);
 * assert.equal(aa.unavailable, false);
 * assert.equal(aa.windowMs, null);
 * ```
 */
// long: the definitions read best as one pass, each early return a reason the data cannot tell
export function failoverReport(
  intervals: readonly FailoverInterval[],
  events: readonly FailoverEvent[],
  o: FailoverReportOptions = {},
): FailoverReport {
  const threshold = o.threshold ?? 0.9;
  const sustained = o.sustained ?? 3;
  const calibrationRatio = o.calibrationRatio ?? 19;
  const rows = [...intervals].sort((a, b) => a.interval - b.interval);
  const action = events.find((e) => e.event === "action");
  const done = events.find((e) => e.event === "action_done");
  const took = events.find((e) => e.event === "took_over");
  const report: FailoverReport = {
    verdict: "inconclusive",
    reason: null,
    action: action?.action ?? null,
    actionMs: action?.elapsed_ms ?? null,
    actionDoneMs: done?.elapsed_ms ?? null,
    failedNode: nodeText(action),
    tookOver: nodeText(took),
    tookOverDetail: took?.detail ?? null,
    timeToFirstErrorMs: null,
    unavailable: false,
    withinNoise: false,
    noise: null,
    shortAfterAction: null,
    dipMs: null,
    windowStartMs: null,
    windowMs: null,
    backToTargetMs: null,
    failed: 0,
    failedByKind: Object.fromEntries(KINDS.map((k) => [k, 0])),
    moved: 0,
    asked: 0,
    shortOfTarget: null,
    requestedOpsPerSec: rows[0]?.requested_ops_per_sec ?? null,
    widthMs: rows[0]?.width_ms ?? null,
    threshold,
    sustained,
  };
  if (rows.length === 0) return { ...report, reason: "no intervals stored for this run" };
  const width = rows[0].width_ms;
  const target = (rows[0].requested_ops_per_sec * width) / 1000;
  if (!(target > 0)) return { ...report, reason: "the run's rate is not positive" };
  if (target * (1 - threshold) < 1) {
    return {
      ...report,
      reason: `${target} requests per ${width} ms interval: too few for a ${
        Math.round(threshold * 100)
      } % threshold (one request more or less crosses it); raise the rate`,
    };
  }
  // the schedule's intervals: those sending at the rate (the drain after it sends nothing)
  const lastSending = rows.findLastIndex((r) => r.sent > 0);
  // the schedule ends within its last interval (a duration not a multiple of the width): that
  // interval's target is its share, its width's when stored narrower, else what it sent (an
  // open loop sends on schedule whatever the server does); too thin a share is left out
  const timeline = rows.slice(0, lastSending + 1);
  const last = timeline.at(-1);
  const lastTarget = last ? Math.min((target * last.width_ms) / width, last.sent, target) : 0;
  if (last && lastTarget * (1 - threshold) < 1) timeline.pop();
  const targetOf = (r: FailoverInterval) => (r === last ? lastTarget : target);
  const short = (r: FailoverInterval) => r.completed < threshold * targetOf(r);
  // where the load is first at the target: `sustained` intervals not short in a row
  const runFrom = (from: number) => {
    for (let i = Math.max(0, from); i + sustained <= timeline.length; i++) {
      if (timeline.slice(i, i + sustained).every((r) => !short(r))) return i;
    }
    return -1;
  };
  const actionMs = report.actionMs;
  const actionAt = actionMs === null
    ? -1
    : timeline.findIndex((r) => r.start_ms + width > actionMs);
  const settled = runFrom(0);
  if (settled < 0 || (actionAt >= 0 && settled + sustained > actionAt)) {
    return {
      ...report,
      reason: `the load was not at the target rate (${sustained} intervals of ${width} ms at ` +
        `≥ ${Math.round(threshold * 100)} % of ${target} requests) before the ${
          action ? "action" : "end"
        }: the window cannot be told from a slow start`,
    };
  }
  if (action && actionAt < 0) {
    return { ...report, reason: "the action came after the load's last interval" };
  }
  const from = action ? actionAt : settled + sustained;
  const after = timeline.slice(from);
  for (const r of rows.slice(from)) {
    for (const k of KINDS) report.failedByKind[k] += Number(r[k] ?? 0);
    report.failed += r.errors;
    report.moved += Number(r.moved ?? 0);
    report.asked += Number(r.asked ?? 0);
  }
  const firstError = after.find((r) => r.errors > 0);
  if (firstError && actionMs !== null) {
    report.timeToFirstErrorMs = Math.max(0, firstError.start_ms - actionMs);
  }
  // the noise: short intervals where no outage is expected (before the action; a run without
  // one: all of it)
  const calm = action ? timeline.slice(settled, actionAt) : timeline.slice(settled);
  report.noise = { intervals: calm.length, short: calm.filter(short).length, longestDipMs: 0 };
  for (let i = 0, n = 0; i < calm.length; i++) {
    n = short(calm[i]) ? n + 1 : 0;
    report.noise.longestDipMs = Math.max(report.noise.longestDipMs, n * width);
  }
  report.shortAfterAction = after.filter(short).length;
  const firstShort = after.findIndex(short);
  if (firstShort < 0) return { ...report, verdict: "measured" };
  const start = from + firstShort;
  const back = runFrom(start + 1);
  if (back < 0) {
    return {
      ...report,
      unavailable: true,
      windowStartMs: timeline[start].start_ms,
      reason: `not back to the target rate by the end of the load (short from ${
        timeline[start].start_ms
      } ms on): run it longer`,
    };
  }
  const dipMs = timeline[back].start_ms - timeline[start].start_ms;
  if (timeline.slice(start, back).every((r) => r.errors === 0)) {
    // no error: a stall the machine's noise may make; an outage only beyond every noise dip
    const noise = report.noise;
    if (!action || dipMs <= noise.longestDipMs) {
      return { ...report, verdict: "measured", withinNoise: true, dipMs };
    }
    if (noise.intervals < calibrationRatio * after.length) {
      return {
        ...report,
        dipMs,
        reason: `an error-free dip of ${dipMs} ms, longer than any in the ${noise.intervals} ` +
          `settled intervals before the action (longest ${noise.longestDipMs} ms): too little ` +
          `pre-action data to tell it from noise (${calibrationRatio} × the ${after.length} ` +
          "intervals after it; an action: none run calibrates)",
      };
    }
  }
  report.unavailable = true;
  report.windowStartMs = timeline[start].start_ms;
  report.windowMs = dipMs;
  report.backToTargetMs = actionMs === null ? null : timeline[back].start_ms - actionMs;
  report.shortOfTarget = timeline.slice(start, back).reduce(
    (n, r) => n + Math.max(0, targetOf(r) - r.completed),
    0,
  );
  return { ...report, verdict: "measured" };
}

/**
 * The rows of one failover run, read from a dataset (the newest failover run when no run id is
 * given).
 *
 * @param data The dataset.
 * @param runId The run, or undefined for the newest.
 * @returns Its intervals and events, with its run id; null when the dataset holds none.
 *
 * @example
 * ```ts
 * import { readFailover } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * // a dataset with no failover run (a bundled study): null, not an error
 * assert.equal(readFailover("data/studies/valkey-vs-redis"), null);
 * ```
 */
export function readFailover(
  data: DatasetRef,
  runId?: string,
): { runId: string; intervals: FailoverInterval[]; events: FailoverEvent[] } | null {
  const ds = Dataset.of(data);
  const events = ds.read("failover_events", runId ? { runIds: [runId] } : {});
  if (events.height === 0) return null;
  const id = runId ??
    String(events.select("run_id").unique().sort("run_id").toRecords().at(-1)?.run_id);
  const mine = events.filter(pl.col("run_id").eq(pl.lit(id)));
  const intervals = ds.read("failover_intervals", { runIds: [id] });
  return {
    runId: id,
    intervals: intervals.toRecords() as unknown as FailoverInterval[],
    events: mine.toRecords() as unknown as FailoverEvent[],
  };
}
