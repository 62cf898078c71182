/**
 * The contract of a shard of the open loop, whichever engine drives it (`_shard.ts` over Deno
 * TCP, `_ffi_shard.ts` over libc epoll): what it is given, what it measured (counts, the SET
 * share, the histograms of latency and of the generator's own send delay), the messages of its
 * Worker. All plain data.
 *
 * @module
 */

import {
  decodeHistogram,
  encodeHistogram,
  type Histogram,
  latencyHistogram,
  recordMs,
} from "./histogram.ts";
import { countReply, countSent, emptySecondCounts, type SecondCounts } from "./series.ts";
import type { IntervalCounts } from "./series.ts";
import type { ArrivalMode, RatioMix } from "./schedule.ts";
import type { Endpoint } from "./wire.ts";
import type { RespReplyKind } from "./resp.ts";
import type { SlotMap } from "../cluster/slots.ts";

/** Which engine drives a shard. */
export type EngineName = "ffi" | "deno";

/** Everything one shard needs (plain data, so it can be posted to a Worker). */
export interface ShardOptions extends Endpoint {
  /** Global indices of this shard's connections. */
  indices: number[];
  /** Total connections over all shards. */
  connections: number;
  requestedOpsPerSec: number;
  durationMs: number;
  /** Requests intended before this time are sent but left out of every count and histogram
   * (the per-second series keeps them). */
  warmupMs: number;
  drainMs: number;
  /** Most requests this shard may send. */
  maxRequests: number;
  arrival: ArrivalMode;
  mix: RatioMix;
  valueSize: number;
  keys: number;
  keyPrefix: string;
  pipeline: number;
  seed: number;
  spinMs: number;
  /** Engine `ffi`: wake-ups on a grid of this many ms (0: at each due time). */
  quantumMs: number;
  /** Engine `ffi`: turn on the kernel's receive timestamps. */
  kernelTimestamps: boolean;
  connectTimeoutMs: number;
  /** A Redis Cluster's slot map (engine `deno`, one thread): requests go to their slot's master. */
  cluster?: SlotMap;
  /**
   * A failover run (with `cluster`; `../../failover/`): a lost socket is opened again on the
   * next request to its node (the request in flight on it is an error of its kind), a request
   * without a reply after `requestTimeoutMs` is an error (`timeout`, its socket closed and
   * opened again), and `intervals` counts every `intervalMs` with the errors split by kind.
   */
  failover?: { intervalMs: number; requestTimeoutMs: number };
}

/** Messages the main thread sends to a shard's Worker (`_worker.ts`). */
export type ToWorker =
  | { type: "connect"; options: ShardOptions; engine: EngineName; stop: SharedArrayBuffer }
  | { type: "run"; startAtEpochMs: number }
  | { type: "interrupt" }
  | { type: "close" };

/** Request counts of an open-loop run (of one shard, or of all merged). */
export interface OpenLoopCounts {
  /** Requests written. */
  sent: number;
  /** Successful (non-error) replies. */
  completed: number;
  /** Error replies plus requests lost to disconnects. */
  errors: number;
  /** Connections lost during the run (they are not reopened). */
  disconnects: number;
  /** Requests due in the window that were never sent (the connection stayed busy or closed). */
  unsent: number;
  /** Requests still without a reply when the drain time ran out. */
  unanswered: number;
  /** Up to five distinct error texts. */
  errorSamples: string[];
  /** `MOVED` redirections followed (a cluster's slot served elsewhere), not errors. */
  moved: number;
  /** `ASK` redirections followed (a slot migrating), not errors. */
  asked: number;
}

/** The SET part of an outcome (the GET part is the whole minus it). */
export interface SetCounts {
  sent: number;
  completed: number;
  errors: number;
  fromIntended: Histogram;
  fromSend: Histogram;
}

/** What one shard measured. */
export interface ShardOutcome extends OpenLoopCounts {
  fromIntended: Histogram;
  fromSend: Histogram;
  /** Timer part of the send delay: actual send − max(intended, connection free). */
  lateness: Histogram;
  /** Queue part: max(0, connection free − intended), the wait behind a busy connection. */
  queue: Histogram;
  /** The whole intended → actual send delay (queue + lateness). */
  delay: Histogram;
  series: SecondCounts;
  /** A failover run's interval counts (see `ShardOptions.failover`). */
  intervals?: IntervalCounts;
  /** The SETs among the requests counted above. */
  sets: SetCounts;
  /** Successful replies received inside the measured window, whatever their intended time
   * (the achieved rate; an overloaded schedule falls behind, so its late requests still count). */
  windowCompleted: number;
  /** Seconds the shard's thread waited for a CPU (runnable, not running) from the start of its
   * schedule to its end; null where Linux's schedstat is not readable. */
  runQueueS: number | null;
  /** Replies timed by the kernel's receive timestamp (engine `ffi`); the others were timed
   * when read. */
  stampedReplies: number;
}

/** One command type's share of a run (counts and histograms as in {@link OpenLoopResult}). */
export interface CommandOutcome {
  /** `SET` or `GET`. */
  test: "SET" | "GET";
  sent: number;
  completed: number;
  errors: number;
  /** Latency from the intended send time, ns. */
  latencyFromIntended: Histogram;
  /** Latency from the actual send, ns. */
  latencyFromSend: Histogram;
}

/** An outcome with nothing counted yet. */
export function emptyOutcome(): ShardOutcome {
  return {
    sent: 0,
    completed: 0,
    errors: 0,
    disconnects: 0,
    unsent: 0,
    unanswered: 0,
    errorSamples: [],
    moved: 0,
    asked: 0,
    fromIntended: latencyHistogram(),
    fromSend: latencyHistogram(),
    lateness: latencyHistogram(),
    queue: latencyHistogram(),
    delay: latencyHistogram(),
    series: emptySecondCounts(),
    windowCompleted: 0,
    runQueueS: null,
    stampedReplies: 0,
    sets: {
      sent: 0,
      completed: 0,
      errors: 0,
      fromIntended: latencyHistogram(),
      fromSend: latencyHistogram(),
    },
  };
}

/** A {@link ShardOutcome} as plain structured-clone data. */
export interface EncodedOutcome extends
  Omit<
    ShardOutcome,
    "fromIntended" | "fromSend" | "lateness" | "queue" | "delay" | "series" | "sets"
  > {
  fromIntended: string;
  fromSend: string;
  lateness: string;
  queue: string;
  delay: string;
  series: Omit<SecondCounts, "latency"> & { latency: string[] };
  sets: Omit<SetCounts, "fromIntended" | "fromSend"> & { fromIntended: string; fromSend: string };
}

/** Encodes an outcome for `postMessage`. */
export function encodeOutcome(o: ShardOutcome): EncodedOutcome {
  return {
    ...o,
    fromIntended: encodeHistogram(o.fromIntended),
    fromSend: encodeHistogram(o.fromSend),
    lateness: encodeHistogram(o.lateness),
    queue: encodeHistogram(o.queue),
    delay: encodeHistogram(o.delay),
    series: { ...o.series, latency: o.series.latency.map(encodeHistogram) },
    sets: {
      ...o.sets,
      fromIntended: encodeHistogram(o.sets.fromIntended),
      fromSend: encodeHistogram(o.sets.fromSend),
    },
  };
}

/** Reverses {@link encodeOutcome}. */
export function decodeOutcome(e: EncodedOutcome): ShardOutcome {
  return {
    ...e,
    fromIntended: decodeHistogram(e.fromIntended),
    fromSend: decodeHistogram(e.fromSend),
    lateness: decodeHistogram(e.lateness),
    queue: decodeHistogram(e.queue),
    delay: decodeHistogram(e.delay),
    series: { ...e.series, latency: e.series.latency.map(decodeHistogram) },
    sets: {
      ...e.sets,
      fromIntended: decodeHistogram(e.sets.fromIntended),
      fromSend: decodeHistogram(e.sets.fromSend),
    },
  };
}

/**
 * What both engines keep per connection for its pipeline slots (a ring: `head` is the oldest
 * request in flight, `outstanding` how many).
 */
export interface SlotRing {
  readonly intended: Float64Array;
  readonly sentAt: Float64Array;
  /** Per slot: 1 for a SET, and 2 added when the request is measured (not warm-up). */
  readonly flags: Uint8Array;
  head: number;
  outstanding: number;
  /** When the connection last became free, ms: the reply that freed it with every pipeline
   * slot busy (at pipeline 1, its last reply). */
  readyAt: number;
}

/**
 * Books a request leaving at `now` into the connection's next slot: its intended time, and when
 * it is measured, its delay from the intended time, split into the wait for the connection
 * (`queue`) and the timer's lateness. Returns the slot.
 */
// positional: the per-request hot path of both engines (no object per call)
export function bookSend(
  out: ShardOutcome,
  c: SlotRing,
  depth: number,
  intended: number,
  now: number,
  set: boolean,
  warmupMs: number,
): number {
  const slot = (c.head + c.outstanding) % depth;
  const measured = intended >= warmupMs;
  c.intended[slot] = intended;
  c.sentAt[slot] = now;
  c.flags[slot] = (set ? 1 : 0) | (measured ? 2 : 0);
  if (measured) {
    // the delay from the intended time, split: waiting for the connection, then the timer
    const free = Math.min(Math.max(intended, c.readyAt), now);
    recordMs(out.queue, free - intended);
    recordMs(out.lateness, now - free);
    recordMs(out.delay, now - intended);
    out.sent++;
    if (set) out.sets.sent++;
  }
  c.outstanding++;
  countSent(out.series, now);
  return slot;
}

/**
 * Books the reply to the connection's oldest request, at `t`: an error, or a completion with
 * its latency from the intended and from the actual send (measured requests only). A reply that
 * frees a full connection (every pipeline slot busy) marks when it became free (`readyAt`): the
 * wait until then is the queue part of the next send's delay. One that comes while a slot is
 * free already changes nothing there: the connection was not what the next send waited for.
 *
 * @example
 * ```ts
 * import { bookReply, bookSend, emptyOutcome } from "./_outcome.ts";
 * import assert from "node:assert/strict";
 * const out = emptyOutcome();
 * const w = { warmupMs: 0, durationMs: 100 };
 * const c = { intended: new Float64Array(2), sentAt: new Float64Array(2),
 *   flags: new Uint8Array(2), head: 0, outstanding: 0, readyAt: 0 }; // pipeline 2
 * bookSend(out, c, 2, 10, 10, false, 0); // one out of two
 * bookReply(out, c, 2, 20.3, false, w); // its reply, read after the next intended time (20)
 * assert.equal(c.readyAt, 0); // a slot was free all along
 * bookSend(out, c, 2, 20, 20.5, false, 0); // so its 0.5 ms are the timer's, none the queue's
 * bookSend(out, c, 2, 21, 21, false, 0); // two out: the connection is full
 * bookReply(out, c, 2, 23, false, w); // and free again at 23
 * bookSend(out, c, 2, 22, 23.1, false, 0); // 1 ms waiting for it, then 0.1 ms for the timer
 * assert.equal(Math.round(out.queue.maxValue / 1e3), 1000); // µs
 * assert.equal(Math.round(out.lateness.maxValue / 1e3), 500);
 * ```
 */
// positional: the per-reply hot path of both engines (no object per call)
export function bookReply(
  out: ShardOutcome,
  c: SlotRing,
  depth: number,
  t: number,
  error: boolean,
  window: { warmupMs: number; durationMs: number },
): void {
  const slot = c.head;
  c.head = (c.head + 1) % depth;
  if (c.outstanding === depth) c.readyAt = t; // it frees a full connection
  c.outstanding--;
  const flags = c.flags[slot];
  if (error) {
    countReply(out.series, t, undefined);
    if (flags & 2) {
      out.errors++;
      if (flags & 1) out.sets.errors++;
    }
    return;
  }
  const fromIntended = t - c.intended[slot];
  countReply(out.series, t, fromIntended);
  if (t >= window.warmupMs && t < window.durationMs) out.windowCompleted++;
  if (flags & 2) {
    out.completed++;
    recordMs(out.fromIntended, fromIntended);
    recordMs(out.fromSend, t - c.sentAt[slot]);
    if (flags & 1) {
      out.sets.completed++;
      recordMs(out.sets.fromIntended, fromIntended);
      recordMs(out.sets.fromSend, t - c.sentAt[slot]);
    }
  }
}

/**
 * What is wrong with a reply to the connection's oldest request, or null when nothing is: a
 * reply to no request (a surplus reply: the server answered more than it was asked), or one of a
 * kind the request cannot get (a GET is answered by a bulk string or nil, a SET by a simple
 * string, either by an error). Either way the replies can no longer be matched to the requests:
 * the engines drop the connection as on a protocol error. (No allocation unless wrong.)
 *
 * @example
 * ```ts
 * import { replyProblem } from "./_outcome.ts";
 * import assert from "node:assert/strict";
 * const c = { flags: new Uint8Array([0]), head: 0, outstanding: 1 }; // a GET out
 * assert.equal(replyProblem(c, "bulk"), null);
 * assert.equal(replyProblem(c, "error"), null);
 * assert.equal(replyProblem(c, "simple"),
 *   "a simple string (+) in reply to GET (expected a bulk string or nil)");
 * assert.equal(replyProblem({ ...c, outstanding: 0 }, "simple"),
 *   "a simple string (+) in reply to no request (more replies than requests)");
 * ```
 */
export function replyProblem(
  c: Pick<SlotRing, "flags" | "head" | "outstanding">,
  kind: RespReplyKind,
): string | null {
  if (c.outstanding === 0) {
    return `${REPLY_WORDS[kind]} in reply to no request ` +
      "(more replies than requests)";
  }
  if (kind === "error") return null;
  const set = (c.flags[c.head] & 1) === 1;
  if (set ? kind === "simple" : kind === "bulk" || kind === "nil") return null;
  return `${REPLY_WORDS[kind]} in reply to ${set ? "SET" : "GET"} ` +
    `(expected ${set ? "a simple string" : "a bulk string or nil"})`;
}

const REPLY_WORDS: Record<RespReplyKind, string> = {
  simple: "a simple string (+)",
  error: "an error (-)",
  integer: "an integer (:)",
  bulk: "a bulk string ($)",
  nil: "a nil ($-1)",
  array: "an array (*)",
};

/**
 * Books a lost connection's requests in flight as errors, at `lost.atMs`; returns how many.
 * (Once per connection lost: not a hot path.)
 */
export function bookLost(
  out: ShardOutcome,
  lost: { conn: SlotRing; depth: number; atMs: number },
): number {
  const { conn: c, depth, atMs: t } = lost;
  const n = c.outstanding;
  out.disconnects++;
  for (let i = 0; i < n; i++) {
    countReply(out.series, t, undefined);
    const flags = c.flags[(c.head + i) % depth];
    if (flags & 2) out.errors++;
    if ((flags & 3) === 3) out.sets.errors++;
  }
  c.outstanding = 0;
  return n;
}

/**
 * Says why a connection still has requests without a reply when its shard ends (after the
 * window and the drain): the server sent nothing more, or stopped in the middle of a reply
 * (what the reader holds of it, see `RespReplyReader.pending`). Once per connection at the end.
 *
 * @example
 * ```ts
 * import { emptyOutcome, sampleUnanswered } from "./_outcome.ts";
 * import assert from "node:assert/strict";
 * const out = emptyOutcome();
 * sampleUnanswered(out, { closed: false, outstanding: 1, reader: { pending: () => "" } }, 2000);
 * sampleUnanswered(out, { closed: false, outstanding: 1,
 *   reader: { pending: () => "a bulk string of 10 bytes, 3 received" } }, 2000);
 * assert.deepEqual(out.errorSamples, [
 *   "no reply by the end of the step (its window and 2 s after)",
 *   "a reply cut short: a bulk string of 10 bytes, 3 received, and no more by the end of " +
 *   "the step (its window and 2 s after)",
 * ]);
 * ```
 */
export function sampleUnanswered(
  out: ShardOutcome,
  c: { closed: boolean; outstanding: number; reader: { pending(): string } },
  drainMs: number,
): void {
  if (c.closed || c.outstanding === 0) return;
  const part = c.reader.pending();
  const end = `by the end of the step (its window and ${drainMs / 1000} s after)`;
  sampleError(out, part ? `a reply cut short: ${part}, and no more ${end}` : `no reply ${end}`);
}

/** Keeps up to 5 distinct error texts. */
export function sampleError(out: ShardOutcome, text: string): void {
  const s = out.errorSamples;
  if (s.length < 5 && !s.includes(text)) s.push(text);
}
