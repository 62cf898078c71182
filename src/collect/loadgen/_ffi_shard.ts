/**
 * The epoll engine of the open loop: the connections of one Worker driven by a blocking loop
 * over libc (`libc.ts`) instead of Deno's TCP ops and a timer thread. Same contract as
 * `_shard.ts` (`ShardOptions` in, `ShardOutcome` out, the same counts and histograms).
 *
 * One loop per Worker: send everything due, sleep in `epoll_pwait2` (ns timeout, 1 ns slack)
 * until the next due send or a reply, send what came due (at pipeline 1 and after a sleep that
 * replies could not end, before reading: replies carry the kernel's stamps), read each ready
 * connection with one `recv`, send what a reply made due. A clock read or two per wake-up and
 * one per send; one fixed buffer per connection (one `send`), so nothing is allocated but the
 * series' new seconds. Sleeps are at most {@link MAX_SLEEP_MS}; each wake-up checks the stop
 * flag: 1 ends the sending window (Ctrl-C), 2 the run (deadline).
 *
 * @module
 */

import {
  encodeKeyCommandInto,
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
import {
  connectFd,
  EV_DATA,
  EV_WORDS,
  K,
  type Libc,
  openLibc,
  recvAll,
  RunClock,
  sendAfter,
  StampedReceiver,
} from "./libc.ts";

/** Longest single sleep, ms: how soon the loop sees the stop flag. */
export const MAX_SLEEP_MS = 20;

const MAX_EVENTS = 256;
/** Most bytes of requests encoded for one `send` of a connection. */
const OUT_MAX_BYTES = 1 << 20;
/** Most send lengths whose BigInt is made up front. */
const SIZES_MAX = 65_536;
/** The most bytes one request of these options takes, encoded. */
const requestBytes = (o: ShardOptions) => 64 + o.keyPrefix.length * 3 + o.valueSize;

class Conn {
  next = 0;
  inHeap = false;
  n = 0;
  outstanding = 0;
  readyAt = 0;
  head = 0;
  closed = false;
  /** Whether the last reply read had no usable kernel timestamp (none yet counts as none). */
  stampless = true;
  /** Hands a read's bytes to {@link reader}, timed (see `FfiShard`'s feeder). */
  feed!: (n: number) => boolean;
  /** Bytes a full socket buffer did not take (rare: then EPOLLOUT is watched). */
  pending: Uint8Array<ArrayBuffer> | null = null;
  readonly intended: Float64Array;
  readonly sentAt: Float64Array;
  /** Per pipeline slot: 1 for a SET, and 2 added when the request is measured (not warm-up). */
  readonly flags: Uint8Array;
  readonly random: () => number;
  readonly reader: RespReplyReader;
  readonly out: Uint8Array;
  /** Its socket. */
  readonly fd: number;
  /** Its place in the shard (the epoll data of its events). */
  readonly slot: number;
  /** Its global connection index (across workers). */
  readonly index: number;

  constructor(
    at: { fd: number; slot: number; index: number },
    o: ShardOptions,
    onReply: (c: Conn, kind: RespReplyKind) => void,
  ) {
    this.fd = at.fd;
    this.slot = at.slot;
    this.index = at.index;
    const index = at.index;
    this.intended = new Float64Array(o.pipeline);
    this.sentAt = new Float64Array(o.pipeline);
    this.flags = new Uint8Array(o.pipeline);
    this.random = seededRandom(Math.imul(o.seed, 1_000_003) + index);
    this.reader = new RespReplyReader((kind) => onReply(this, kind));
    // room for the due requests of one send, bounded: a deep pipeline of large values is sent
    // in several (not a buffer of pipeline × value size per connection)
    const request = requestBytes(o);
    this.out = new Uint8Array(Math.max(request, Math.min(o.pipeline * request, OUT_MAX_BYTES)));
  }
}

/** The connections of one Worker, driven by epoll. */
export class FfiShard {
  readonly #o: ShardOptions;
  readonly #lib: Libc;
  readonly #stop: Int32Array;
  readonly #conns: Conn[] = [];
  readonly #heap = new TimeHeap<Conn>();
  readonly #interval: number;
  readonly #prefix: Uint8Array;
  readonly #value: Uint8Array;
  readonly #ev = new Uint32Array(4);
  readonly #events = new Uint32Array(MAX_EVENTS * EV_WORDS);
  readonly #ts = new Uint32Array(4);
  #rx!: StampedReceiver;
  #ep = -1;
  /** An epoll set with no socket: sleeping on it, replies do not wake the loop. */
  #sleepEp = -1;
  #runClock!: RunClock;
  /** When the replies being fed arrived (ms since the start). */
  #replyAt = 0;
  #now = 0;
  #sending = false;
  #interrupted = false;
  #budget: number;
  #outstanding = 0;
  #out: ShardOutcome = emptyOutcome();
  /** size_t lengths as BigInts made once: V8's fast FFI path takes a 64-bit argument only as a
   * BigInt (a number deoptimizes the loop, "not a BigInt", over and over), and making one per
   * call would allocate. */
  readonly #sizes: bigint[] = [];

  /**
   * Opens the shard's connections (blocking; AUTH included).
   *
   * @param o The shard.
   * @param stop The shared stop flag (0 run, 1 end the window, 2 end the run now).
   */
  constructor(o: ShardOptions, stop: Int32Array) {
    this.#o = o;
    this.#stop = stop;
    this.#interval = connectionIntervalMs(o.requestedOpsPerSec, o.connections);
    this.#prefix = new TextEncoder().encode(o.keyPrefix);
    this.#value = new Uint8Array(o.valueSize).fill(120);
    this.#budget = o.maxRequests;
    this.#lib = openLibc();
    this.#runClock = new RunClock(this.#lib);
    try {
      const C = this.#lib.symbols;
      C.prctl(K.PR_SET_TIMERSLACK, 1n, 0n, 0n, 0n);
      this.#ep = C.epoll_create1(0o2000000 /* EPOLL_CLOEXEC */);
      this.#sleepEp = C.epoll_create1(0o2000000);
      this.#rx = new StampedReceiver(this.#lib, 64 * 1024);
      const onReply = (c: Conn, kind: RespReplyKind) => this.#reply(c, kind);
      // (the lengths of most sends; longer ones make their BigInt when sent)
      const most = Math.min(o.pipeline * requestBytes(o), SIZES_MAX);
      for (let n = 0; n <= most; n++) this.#sizes.push(BigInt(n));
      for (const index of o.indices) {
        const fd = connectFd(this.#lib, o, o.connectTimeoutMs);
        const c = new Conn({ fd, slot: this.#conns.length, index }, o, onReply);
        c.feed = this.#feeder(c);
        this.#conns.push(c);
        if (o.kernelTimestamps) this.#rx.enable(fd);
        this.#watch(c, K.EPOLL_CTL_ADD, K.EPOLLIN);
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  #watch(c: Conn, op: number, events: number): void {
    const ev = this.#ev;
    ev[0] = events;
    ev[EV_DATA] = c.slot;
    this.#lib.symbols.epoll_ctl(this.#ep, op, c.fd, new Uint8Array(ev.buffer));
  }

  /** Milliseconds since the start of the run (also kept as `#now`). */
  #clock(): number {
    return (this.#now = this.#runClock.now());
  }

  /**
   * Whether a reply must wake the loop before `until`: a connection with every pipeline slot
   * busy has a send due by then (the send waits for it); or a reply could not be timed when it
   * arrived if read later: its connection's last reply had no kernel stamp, or it has more
   * than one request out (replies read together carry one stamp, the last segment's); or a
   * socket must wake it when it takes the bytes it refused (EPOLLOUT).
   */
  #blockedBy(until: number): boolean {
    const o = this.#o;
    for (const c of this.#conns) {
      if (c.closed) continue;
      if (c.pending !== null) return true; // bytes a full socket did not take: EPOLLOUT wakes
      if (c.outstanding === 0) continue;
      if (c.outstanding > 1 || c.stampless) return true;
      if (c.outstanding >= o.pipeline && c.next <= until && c.next < o.durationMs) return true;
    }
    return false;
  }

  /**
   * Runs the schedule from `startAtEpochMs` (wall clock, shared by all shards) for the
   * duration, waits up to `drainMs` for outstanding replies, closes the connections. Blocks
   * the calling thread throughout.
   */
  run(startAtEpochMs: number): ShardOutcome {
    const o = this.#o;
    this.#runClock.setOrigin(startAtEpochMs);
    if (Atomics.load(this.#stop, 0) !== 0) {
      // interrupted before the start: nothing sent, nothing owed
      this.close();
      return this.#out;
    }
    const waited0 = runQueueWaitS();
    const schedule = { connections: o.connections, intervalMs: this.#interval, arrival: o.arrival };
    for (const c of this.#conns) {
      c.next = firstSendMs(c, schedule);
      if (c.next < o.durationMs) this.#heap.push(c);
    }
    this.#sending = true;
    let drainEnd = Infinity;
    const heap = this.#heap;
    const C = this.#lib.symbols;
    const ts = this.#ts;
    const tsBytes = new Uint8Array(ts.buffer);
    const evBytes = new Uint8Array(this.#events.buffer);
    let now = this.#clock();
    for (;;) {
      const flag = Atomics.load(this.#stop, 0);
      if (flag === 2) break;
      if (this.#sending && (flag === 1 || now >= o.durationMs)) {
        this.#interrupted = flag === 1;
        this.#endWindow();
        drainEnd = now + o.drainMs;
      }
      if (!this.#sending && (this.#outstanding === 0 || now >= drainEnd)) break;
      if (this.#sending) {
        while (heap.size > 0 && heap.peek()!.next <= now) this.#sendDue(heap.pop()!, now);
      }
      // sleep until the next due send (or the window's end, or the drain's), then read
      const q = o.quantumMs;
      const due = heap.peek()?.next ?? Infinity;
      const until = this.#sending
        ? Math.min(q > 0 ? Math.ceil(due / q) * q : due, o.durationMs)
        : drainEnd;
      const waitMs = Math.min(MAX_SLEEP_MS, Math.max(0, until - this.#clock()));
      const ns = Math.round(waitMs * 1e6);
      ts[0] = Math.floor(ns / 1e9);
      ts[2] = ns % 1e9;
      // While sending, replies need not wake the loop: the kernel stamps them and the next
      // due send's wake-up reads them (one wake-up per send, not two), unless one must be read
      // when it arrives (#blockedBy). Draining, replies wake it.
      let k: number;
      if (ns > 0 && this.#sending && !this.#blockedBy(until)) {
        C.epoll_pwait2(this.#sleepEp, evBytes, 1, tsBytes, null);
        // what came due leaves before the replies that arrived meanwhile are read (they carry
        // the kernel's stamps): a due send does not wait for them. Pipeline 1 only: a connection
        // in the heap then has nothing out, so no reply of its own is left unread (deeper, its
        // unread reply would share a read, and a stamp, with the next one's)
        now = this.#clock();
        if (o.pipeline === 1 && Atomics.load(this.#stop, 0) === 0 && now < o.durationMs) {
          while (heap.size > 0 && heap.peek()!.next <= now) this.#sendDue(heap.pop()!, now);
        }
        ts[0] = ts[2] = 0;
        k = C.epoll_pwait2(this.#ep, evBytes, MAX_EVENTS, tsBytes, null);
      } else k = C.epoll_pwait2(this.#ep, evBytes, MAX_EVENTS, tsBytes, null);
      now = this.#clock();
      for (let e = 0; e < k; e++) {
        const events = this.#events[e * EV_WORDS];
        const c = this.#conns[this.#events[e * EV_WORDS + EV_DATA]];
        if (c.closed) continue;
        if (events & K.EPOLLOUT) this.#flush(c);
        if (events & (K.EPOLLIN | K.EPOLLERR | K.EPOLLHUP)) this.#read(c);
      }
    }
    this.#out.unanswered = this.#outstanding;
    for (const c of this.#conns) sampleUnanswered(this.#out, c, o.drainMs);
    const waited = runQueueWaitS();
    if (waited !== null && waited0 !== null) this.#out.runQueueS = waited - waited0;
    this.close();
    return this.#out;
  }

  /** Encodes and sends what is due on `c` (up to its free pipeline slots), then re-queues it. */
  #sendDue(c: Conn, t: number): void {
    const o = this.#o;
    const out = this.#out;
    const buf = c.out;
    let len = 0;
    const request = requestBytes(o);
    t = this.#clock(); // the send's own time (due was decided on the wake-up's)
    while (
      !c.closed && c.outstanding < o.pipeline && c.next <= t && c.next < o.durationMs &&
      this.#budget > 0
    ) {
      if (len + request > buf.length) { // the buffer is full: send it, go on from its start
        this.#write(c, buf, len);
        len = 0;
        if (c.closed) break;
      }
      const key = Math.floor(c.random() * o.keys);
      const set = o.mix.set > 0 && (c.n + c.index) % (o.mix.set + o.mix.get) < o.mix.set;
      len = encodeKeyCommandInto(buf, len, this.#prefix, key, set ? this.#value : null);
      c.n++;
      bookSend(out, c, o.pipeline, c.next, t, set, o.warmupMs);
      this.#outstanding++;
      this.#budget--;
      c.next = nextSendMs(c.next, this.#interval, o.arrival, c.random);
    }
    if (len > 0) this.#write(c, buf, len);
    if (!c.closed && c.outstanding < o.pipeline && c.next < o.durationMs && this.#budget > 0) {
      this.#heap.push(c);
    }
  }

  /** One nonblocking `send`; what the socket does not take waits for EPOLLOUT. */
  #write(c: Conn, buf: Uint8Array, len: number): void {
    const was = c.pending;
    const left = sendAfter(this.#lib, c.fd, was, buf, len, this.#sizes[len] ?? BigInt(len));
    if (typeof left === "string") return this.#lost(c, left);
    c.pending = left;
    if (left !== null && was === null) this.#watch(c, K.EPOLL_CTL_MOD, K.EPOLLIN | K.EPOLLOUT);
  }

  #flush(c: Conn): void {
    const p = c.pending;
    if (p === null) return;
    c.pending = null;
    this.#write(c, p, p.length);
    if (c.pending === null && !c.closed) this.#watch(c, K.EPOLL_CTL_MOD, K.EPOLLIN);
  }

  /** Reads what `c` has (one `recvmsg`, more only when the buffer filled) and feeds its
   * replies, timed when they arrived (the kernel's stamp; the clock where there is none). */
  #read(c: Conn): void {
    const lost = recvAll(this.#rx, c.fd, c.feed);
    if (lost !== null) this.#lost(c, lost);
  }

  /** What feeds `c`'s reads to its reply reader, timed (made once per connection). */
  #feeder(c: Conn): (n: number) => boolean {
    const rx = this.#rx;
    return (n: number) => {
      // the kernel's stamp, unless missing or impossible (after this read, or before the
      // oldest request out was sent: the system clock stepped): then the time of the read
      const stamp = this.#runClock.realMs(rx);
      if (stamp > this.#now) this.#clock(); // it arrived after this wake-up's clock read
      c.stampless = !(stamp <= this.#now) ||
        (c.outstanding > 0 && stamp < c.sentAt[c.head]);
      this.#replyAt = c.stampless ? this.#now : stamp;
      c.reader.feed(rx.buf, n);
      return !c.closed;
    };
  }

  #reply(c: Conn, kind: RespReplyKind): void {
    // a reply to no request, or of a kind its request cannot get: the connection is dropped
    // (thrown through the reader to recvAll, which says why it is lost)
    const problem = replyProblem(c, kind);
    if (problem !== null) throw new ReplyMismatchError(problem);
    const error = kind === "error";
    const o = this.#o;
    const t = this.#replyAt;
    this.#outstanding--;
    if (!c.stampless) this.#out.stampedReplies++;
    if (error) sampleError(this.#out, c.reader.lastError);
    bookReply(this.#out, c, o.pipeline, t, error, o);
    // the next request, when already due, leaves in this wake-up (a connection still in the
    // heap keeps its key; the loop serves it)
    if (this.#sending && !c.inHeap && c.next <= t) this.#sendDue(c, t);
    else if (this.#sending && !c.inHeap) {
      if (c.outstanding < o.pipeline && c.next < o.durationMs && this.#budget > 0) {
        this.#heap.push(c);
      }
    }
  }

  /** A connection failed: its outstanding requests count as errors; it sends no more. */
  #lost(c: Conn, text: string): void {
    if (c.closed) return;
    c.closed = true;
    sampleError(this.#out, text);
    this.#outstanding -= bookLost(this.#out, { conn: c, depth: this.#o.pipeline, atMs: this.#now });
    this.#lib.symbols.epoll_ctl(this.#ep, K.EPOLL_CTL_DEL, c.fd, new Uint8Array(16));
    this.#lib.symbols.close(c.fd);
  }

  /** End of the sending window: count what was due but never sent (not when interrupted). */
  #endWindow(): void {
    this.#sending = false;
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
  }

  /** Closes every connection, the epoll descriptor and libc (idempotent). */
  close(): void {
    const C = this.#lib?.symbols;
    if (!C) return;
    for (const c of this.#conns) {
      if (!c.closed) C.close(c.fd);
      c.closed = true;
    }
    if (this.#ep >= 0) C.close(this.#ep);
    if (this.#sleepEp >= 0) C.close(this.#sleepEp);
    this.#ep = this.#sleepEp = -1;
  }
}
