/**
 * The open-loop engine for the connections of one thread (the main thread, or one Worker).
 *
 * Pacing: one min-heap of idle connections keyed by the intended time of their next request.
 * While the next send is more than `spinMs` away the loop sleeps on a timer; closer than that
 * it polls through `setImmediate`, and every turn sends everything that is due. A connection
 * with all its pipeline slots busy leaves the heap; its reply puts it back (or sends at once
 * when its next request is already overdue), so a late reply delays the next send and that
 * delay is counted from the intended time.
 *
 * @module
 */

import { setImmediate } from "node:timers";
import {
  encodeGet,
  encodeSet,
  ReplyMismatchError,
  type RespReplyKind,
  RespReplyReader,
} from "./resp.ts";
import {
  connectionIntervalMs,
  firstSendMs,
  nextSendMs,
  seededRandom,
  unsentBefore,
} from "./schedule.ts";
import { TimeHeap } from "./heap.ts";
import { connectResp } from "./wire.ts";
import { Waker } from "./waker.ts";
import {
  bookLost,
  bookReply,
  bookSend,
  emptyOutcome,
  replyProblem,
  sampleError,
  sampleUnanswered,
  type ShardOptions,
  type ShardOutcome,
} from "./_outcome.ts";
import { runQueueWaitS } from "./_run_queue.ts";

export type { OpenLoopCounts, SetCounts, ShardOptions, ShardOutcome } from "./_outcome.ts";

class Conn {
  next = 0;
  inHeap = false;
  n = 0;
  outstanding = 0;
  readyAt = 0;
  head = 0;
  closed = false;
  writing = false;
  queue: Uint8Array[] = [];
  readonly intended: Float64Array;
  readonly sentAt: Float64Array;
  /** Per pipeline slot: 1 for a SET, and 2 added when the request is measured (not warm-up). */
  readonly flags: Uint8Array;
  readonly random: () => number;
  readonly reader: RespReplyReader;

  /** Its global connection index (across workers). */
  readonly index: number;

  /**
   * @param sock Its connection.
   * @param o Its global index, the pipeline depth and the run's seed.
   * @param onReply Each reply.
   */
  constructor(
    readonly sock: Deno.TcpConn,
    o: { index: number; depth: number; seed: number },
    onReply: (c: Conn, kind: RespReplyKind) => void,
  ) {
    const { index, depth } = o;
    this.index = index;
    this.intended = new Float64Array(depth);
    this.sentAt = new Float64Array(depth);
    this.flags = new Uint8Array(depth);
    this.random = seededRandom(Math.imul(o.seed, 1_000_003) + index);
    this.reader = new RespReplyReader((kind) => onReply(this, kind));
  }
}

/** Opens the shard's connections; `run` then drives them. */
export async function connectShard(o: ShardOptions): Promise<Shard> {
  const socks: Deno.TcpConn[] = [];
  try {
    for (const _ of o.indices) socks.push(await connectResp(o, o.connectTimeoutMs));
  } catch (e) {
    for (const s of socks) s.close();
    throw e;
  }
  const shard = new Shard(o, socks);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      shard.ready,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Deno.errors.TimedOut("the pacer's timer thread did not start")),
          o.connectTimeoutMs,
        );
      }),
    ]);
  } catch (e) {
    shard.close();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  return shard;
}

/** The connections of one thread and their measurements. */
export class Shard {
  readonly #o: ShardOptions;
  readonly #conns: Conn[];
  readonly #heap = new TimeHeap<Conn>();
  readonly #interval: number;
  readonly #value: Uint8Array;
  #t0 = 0;
  #epoch0 = 0;
  #replyAt = 0;
  #sending = false;
  #finished = false;
  #interrupted = false;
  #budget: number;
  #outstanding = 0;
  #immediate = false;
  #waited0: number | null = null;
  readonly #waker: Waker;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;
  #stopTimer: ReturnType<typeof setTimeout> | undefined;
  #resolve: (o: ShardOutcome) => void = () => {};
  readonly #out: ShardOutcome = emptyOutcome();

  constructor(o: ShardOptions, socks: Deno.TcpConn[]) {
    this.#o = o;
    this.#interval = connectionIntervalMs(o.requestedOpsPerSec, o.connections);
    this.#value = new Uint8Array(o.valueSize).fill(120);
    this.#budget = o.maxRequests;
    const onReply = (c: Conn, kind: RespReplyKind) => this.#reply(c, kind);
    this.#conns = socks.map((s, i) =>
      new Conn(s, { index: o.indices[i], depth: o.pipeline, seed: o.seed }, onReply)
    );
    this.#waker = new Waker(this.#pump);
  }

  /** Resolves when the shard's timer thread is up. */
  get ready(): Promise<void> {
    return this.#waker.ready;
  }

  /** Milliseconds since the start of the run. */
  #now(): number {
    return performance.now() - this.#t0;
  }

  /**
   * Runs the schedule from `startAtEpochMs` (wall clock, shared by all shards) for the
   * duration, waits up to `drainMs` for outstanding replies, closes the connections.
   */
  run(startAtEpochMs: number): Promise<ShardOutcome> {
    const o = this.#o;
    if (this.#interrupted) {
      // interrupted before the start: nothing sent, nothing owed
      this.#finish();
      return Promise.resolve(this.#out);
    }
    this.#t0 = startAtEpochMs - performance.timeOrigin;
    this.#epoch0 = startAtEpochMs;
    this.#waited0 = runQueueWaitS();
    const schedule = { connections: o.connections, intervalMs: this.#interval, arrival: o.arrival };
    for (const c of this.#conns) {
      c.next = firstSendMs(c, schedule);
      if (c.next < o.durationMs) this.#heap.push(c);
      this.#readLoop(c);
    }
    this.#sending = true;
    const done = new Promise<ShardOutcome>((r) => (this.#resolve = r));
    this.#stopTimer = setTimeout(() => this.#stop(), Math.max(0, o.durationMs - this.#now()));
    this.#schedule();
    return done;
  }

  readonly #onImmediate = () => {
    this.#immediate = false;
    this.#pump();
  };

  /** Sends everything that is due, then arranges the next wake-up. */
  readonly #pump = () => {
    if (!this.#sending) return;
    const heap = this.#heap;
    let t = this.#now();
    while (heap.size > 0 && heap.peek()!.next <= t) {
      this.#sendDue(heap.pop()!, t);
      t = this.#now();
    }
    this.#schedule();
  };

  /**
   * Wakes the pump in time for the earliest due connection: the timer thread when it is more
   * than `spinMs` away, polling through `setImmediate` when closer.
   */
  #schedule(): void {
    const top = this.#heap.peek();
    if (!this.#sending || top === undefined || this.#immediate) return;
    const wait = top.next - this.#now();
    if (wait <= this.#o.spinMs) {
      this.#immediate = true;
      setImmediate(this.#onImmediate);
    } else this.#waker!.arm(this.#epoch0 + top.next - this.#o.spinMs);
  }

  /** Sends what is due on `c` (up to its free pipeline slots), then re-queues it. */
  #sendDue(c: Conn, t: number): void {
    const o = this.#o;
    while (
      !c.closed && c.outstanding < o.pipeline && c.next <= t && c.next < o.durationMs &&
      this.#budget > 0
    ) {
      const key = o.keyPrefix + Math.floor(c.random() * o.keys);
      const set = o.mix.set > 0 && (c.n + c.index) % (o.mix.set + o.mix.get) < o.mix.set;
      const bytes = set ? encodeSet(key, this.#value) : encodeGet(key);
      c.n++;
      bookSend(this.#out, c, o.pipeline, c.next, this.#now(), set, o.warmupMs);
      this.#outstanding++;
      this.#budget--;
      this.#write(c, bytes);
      c.next = nextSendMs(c.next, this.#interval, o.arrival, c.random);
    }
    this.#requeue(c);
  }

  /** Puts `c` back in the heap when it has a free slot and requests left to send. */
  #requeue(c: Conn): void {
    const o = this.#o;
    if (!c.closed && c.outstanding < o.pipeline && c.next < o.durationMs && this.#budget > 0) {
      this.#heap.push(c);
    }
  }

  #write(c: Conn, bytes: Uint8Array): void {
    if (c.writing) {
      c.queue.push(bytes);
      return;
    }
    c.writing = true;
    c.sock.write(bytes).then((n) => this.#written(c, bytes, n), (e) => this.#lost(c, e));
  }

  #written(c: Conn, bytes: Uint8Array, n: number): void {
    let rest: Uint8Array | undefined;
    if (n < bytes.length) rest = bytes.subarray(n);
    else if (c.queue.length > 0) {
      const total = c.queue.reduce((s, b) => s + b.length, 0);
      rest = new Uint8Array(total);
      let at = 0;
      for (const b of c.queue) {
        rest.set(b, at);
        at += b.length;
      }
      c.queue.length = 0;
    }
    if (rest === undefined || c.closed) c.writing = false;
    else c.sock.write(rest).then((k) => this.#written(c, rest, k), (e) => this.#lost(c, e));
  }

  async #readLoop(c: Conn): Promise<void> {
    const buf = new Uint8Array(16 * 1024);
    try {
      for (;;) {
        const n = await c.sock.read(buf);
        if (n === null) break;
        this.#replyAt = this.#now();
        c.reader.feed(buf, n);
      }
      this.#lost(c, new Deno.errors.ConnectionReset("server closed the connection"));
    } catch (e) {
      this.#lost(c, e);
    }
  }

  #reply(c: Conn, kind: RespReplyKind): void {
    // a reply to no request, or of a kind its request cannot get: the connection is dropped
    const problem = replyProblem(c, kind);
    if (problem !== null) throw new ReplyMismatchError(problem);
    const t = this.#replyAt;
    this.#outstanding--;
    if (kind === "error") sampleError(this.#out, c.reader.lastError);
    bookReply(this.#out, c, this.#o.pipeline, t, kind === "error", this.#o);
    if (this.#sending) {
      // (a connection still in the heap keeps its key; the pump serves it)
      if (!c.inHeap) c.next <= t ? this.#sendDue(c, t) : this.#requeue(c);
      this.#schedule();
    } else if (this.#outstanding === 0) this.#finish();
  }

  /** A connection failed: its outstanding requests count as errors; it sends no more. */
  #lost(c: Conn, e: unknown): void {
    if (c.closed || this.#finished) return;
    c.closed = true;
    sampleError(this.#out, e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    this.#outstanding -= bookLost(this.#out, {
      conn: c,
      depth: this.#o.pipeline,
      atMs: this.#now(),
    });
    try {
      c.sock.close();
    } catch { /* already closed */ }
    if (!this.#sending && this.#outstanding === 0) this.#finish();
  }

  /** End of the sending window: count what was due but never sent, then drain. */
  #stop(): void {
    if (!this.#sending) return;
    this.#sending = false;
    this.#waker.close();
    this.#heap.clear();
    const o = this.#o;
    // interrupted: what was not yet due is not owed (no unsent counted)
    const unsent = unsentBefore(
      this.#interrupted ? [] : this.#conns,
      { endMs: o.durationMs, intervalMs: this.#interval, arrival: o.arrival },
      this.#budget,
    );
    this.#out.unsent += unsent;
    this.#budget -= unsent;
    if (this.#outstanding === 0) this.#finish();
    else this.#drainTimer = setTimeout(() => this.#finish(), o.drainMs);
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#sending = false;
    this.#waker.close();
    for (const t of [this.#drainTimer, this.#stopTimer]) clearTimeout(t);
    this.#out.unanswered = this.#outstanding;
    for (const c of this.#conns) sampleUnanswered(this.#out, c, this.#o.drainMs);
    const waited = runQueueWaitS();
    if (waited !== null && this.#waited0 !== null) this.#out.runQueueS = waited - this.#waited0;
    for (const c of this.#conns) {
      c.closed = true;
      try {
        c.sock.close();
      } catch { /* already closed */ }
    }
    this.#resolve(this.#out);
  }

  /**
   * Ends the sending window now (Ctrl-C, SIGTERM): requests not yet sent are not counted as
   * unsent, outstanding replies are drained as at the window's end. Before {@link run}, the run
   * ends at once.
   */
  interrupt(): void {
    this.#interrupted = true;
    if (this.#sending) this.#stop();
  }

  /** Stops at once and closes every connection (after a failed start, or at a deadline). */
  close(): void {
    this.#finish();
  }
}
