/**
 * The epoll engine of pub/sub: every publisher and subscriber of a step in one blocking loop
 * over libc (`../loadgen/libc.ts`) on a Worker, one clock (CLOCK_MONOTONIC, ms since the run's
 * start), the same counts as the Deno-TCP engine (`_run.ts`, one `PubSubTally`).
 *
 * Each turn: one `send` per publisher with messages due (encoded in place into one buffer, the
 * intended time in each payload's header), one `recvmsg` per ready subscriber (pushes parsed in
 * place), the publishers' replies once per {@link REPLY_READ_MS}, then a sleep in `epoll_pwait2`
 * until the next due time rounded up to the pacing quantum. A delivery is timed by the kernel's
 * receive stamp (SO_TIMESTAMPNS: when the read's last segment arrived), so pushes wait for the
 * next turn; without one (or with `kernelTimestamps` false, or a read delay injected) it is
 * timed when read, and pushes wake the loop. Sleeps are at most {@link MAX_SLEEP_MS}; each
 * wake-up checks the stop flag (1: end now keeping the counts, Ctrl-C; 2: a deadline).
 *
 * @module
 */

import { encodeCommand } from "../loadgen/resp.ts";
import {
  connectionIntervalMs,
  firstSendMs,
  nextSendMs,
  unsentBefore,
} from "../loadgen/schedule.ts";
import { TimeHeap } from "../loadgen/heap.ts";
import { encodeHistogram } from "../loadgen/histogram.ts";
import {
  connectFd,
  errno,
  K,
  type Libc,
  openLibc,
  osError,
  recvAll,
  RunClock,
  StampedReceiver,
} from "../loadgen/libc.ts";
import { PublishFrames } from "./_conns.ts";
import { EpollSet, FfiPublisher, FfiSubscriber, type PublisherIo } from "./_ffi_conns.ts";
import { PushReader } from "./push.ts";
import { messageChannel, sequenceSeal, subscriberChannels } from "./payload.ts";
import { PubSubTally, subscribeFailure, subscribeTimeout, type TalliedResult } from "./_tally.ts";
import type { PubSubChecked } from "./types.ts";

/** Longest single sleep, ms: how soon the loop sees the stop flag. */
export const MAX_SLEEP_MS = 20;
/** While publishing, the publishers' replies are read once per this many ms (one read, many). */
const REPLY_READ_MS = 100;
/** Most bytes a publisher may have waiting for its socket; messages due beyond are unsent. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/** The publishing buffer: a batch longer than this goes out in several sends. */
const OUT_BYTES = 256 * 1024;

/** The encoded result a Worker posts: histograms as text. */
export type EncodedTally = Omit<TalliedResult, "latency" | "sendLateness"> & {
  latency: string;
  sendLateness: string;
  stampedDeliveries: number;
};

/** One pub/sub step on one epoll loop. */
export class FfiPubSub {
  readonly #o: PubSubChecked;
  readonly #stop: Int32Array;
  readonly #tally: PubSubTally;
  readonly #names: string[];
  readonly #pubs: FfiPublisher[] = [];
  readonly #subs: FfiSubscriber[] = [];
  readonly #heap = new TimeHeap<FfiPublisher>();
  readonly #interval: number;
  readonly #windowMs: number;
  readonly #frames: PublishFrames;
  readonly #out = new Uint8Array(OUT_BYTES);
  readonly #outView = new DataView(this.#out.buffer);
  #lib: Libc | undefined;
  #clock!: RunClock;
  #rx!: StampedReceiver;
  #subSet!: EpollSet;
  #pubIo!: PublisherIo;
  /** An epoll set with no socket: sleeping on it, pushes do not wake the loop. */
  #sleepSet!: EpollSet;
  readonly #stampOn: boolean;
  /** Whether the last read had no kernel stamp (none yet counts as none): pushes wake the loop. */
  #stampless = true;
  /** When the pushes being fed arrived (ms since the start). */
  #readAt = 0;
  #stamped = 0;
  #sending = false;
  #running = false; // connect() is over
  #interrupted = false;
  #budget: number;
  #outstanding = 0;
  #delayed = 0;
  #setupError: Error | null = null;

  /** @param stop The shared stop flag (0 run, 1 end now keeping the counts, 2 deadline). */
  constructor(o: PubSubChecked, stop: Int32Array) {
    this.#o = o;
    this.#stop = stop;
    this.#tally = new PubSubTally(o);
    this.#names = Array.from({ length: o.channels }, (_, c) => `${o.channelPrefix}${c}`);
    this.#interval = connectionIntervalMs(o.requestedOpsPerSec / o.fanOut, o.publishers);
    this.#windowMs = o.durationS * 1000 - 1e-6; // summed intervals drift by ulps
    this.#budget = o.maxMessages;
    const command = o.mode === "sharded" ? "SPUBLISH" : "PUBLISH";
    this.#frames = new PublishFrames(command, this.#names, o.payloadBytes);
    this.#stampOn = o.kernelTimestamps && o.readDelayMs === 0;
  }

  /** Connects and subscribes every subscriber, then connects the publishers (blocking).
   * @throws {PubSubUnsupportedError} When the server refuses SSUBSCRIBE. */
  connect(): void {
    const o = this.#o;
    const lib = this.#lib = openLibc();
    const C = lib.symbols;
    C.prctl(K.PR_SET_TIMERSLACK, 1n, 0n, 0n, 0n);
    this.#clock = new RunClock(lib);
    this.#subSet = new EpollSet(lib);
    this.#sleepSet = new EpollSet(lib);
    const sizes = Array.from({ length: 65_537 }, (_, n) => BigInt(n));
    this.#pubIo = { lib, set: new EpollSet(lib), sizes, pending: 0 };
    this.#rx = new StampedReceiver(lib, 64 * 1024);
    const topology = { subscribers: o.subscribers, channels: o.channels, fanOut: o.fanOut };
    const command = o.mode === "sharded" ? "SSUBSCRIBE" : "SUBSCRIBE";
    for (let i = 0; i < o.subscribers; i++) {
      this.#checkStop("subscribing");
      const fd = connectFd(lib, o, o.connectTimeoutMs);
      const names = subscriberChannels(topology, i).map((c) => this.#names[c]);
      const s = new FfiSubscriber(fd, i, names);
      s.reader = this.#pushReader(s);
      s.feed = this.#feeder(s);
      this.#subs.push(s);
      if (this.#stampOn) this.#rx.enable(fd);
      this.#subSet.watch(s, K.EPOLL_CTL_ADD, K.EPOLLIN);
      const bytes = encodeCommand([command, ...names]);
      const n = C.send(fd, bytes, BigInt(bytes.length), K.MSG_NOSIGNAL | K.MSG_DONTWAIT);
      if (n !== bytes.length) this.#lostSubscriber(s, osError("send", errno(lib)));
    }
    this.#awaitSubscribed();
    const reply = (p: FfiPublisher, error: boolean) => this.#reply(p, error);
    for (let i = 0; i < o.publishers; i++) {
      this.#checkStop("connecting the publishers");
      const fd = connectFd(lib, o, o.connectTimeoutMs);
      this.#pubs.push(new FfiPublisher(this.#pubIo, { fd, index: i, seed: o.seed }, reply));
    }
  }

  /** Throws when stopped while setting up (the Worker then closes what is open). */
  #checkStop(doing: string): void {
    if (Atomics.load(this.#stop, 0) !== 0) {
      throw new Deno.errors.Interrupted(`interrupted while ${doing}`);
    }
  }

  #pushReader(s: FfiSubscriber): PushReader {
    return new PushReader({
      message: (stampNs, publisher, sequence) => {
        const t = this.#tally;
        const before = t.delivered;
        const sentBy = this.#pubs[publisher]?.sequence;
        // a stamp before the intended publish (the clock stepped back): timed at the read
        const early = !this.#stampless && this.#readAt < stampNs / 1e6;
        const at = early ? this.#clock.now() : this.#readAt;
        t.delivery(s.index, at, stampNs, publisher, sequence, sentBy);
        if (!this.#stampless && !early && t.delivered > before) this.#stamped++;
      },
      subscribed: () => s.confirmed++,
      other: (error) => {
        const command = this.#o.mode === "sharded" ? "SSUBSCRIBE" : "SUBSCRIBE";
        const failed = subscribeFailure(error, { command, subscribing: !this.#running });
        if (failed) this.#setupError ??= failed;
        else if (error !== "") this.#tally.subscriberError(s.index, error);
      },
    });
  }

  /** Reads the subscribers until each confirmed all its channels (or the connect timeout). */
  #awaitSubscribed(): void {
    const o = this.#o;
    const end = this.#clock.now() + o.connectTimeoutMs;
    for (;;) {
      if (this.#setupError !== null) throw this.#setupError;
      if (this.#subs.every((s) => s.confirmed >= s.channels.length)) return;
      this.#checkStop("subscribing");
      const left = end - this.#clock.now();
      if (left <= 0) throw subscribeTimeout(this.#subs, o.connectTimeoutMs);
      this.#readReady(Math.min(MAX_SLEEP_MS, left));
    }
  }

  /**
   * Publishes from `startAtEpochMs` (wall clock) for the window, waits out the grace (or until
   * every delivery owed arrived), closes every connection. Blocks the calling thread.
   */
  run(startAtEpochMs: number): EncodedTally {
    const o = this.#o;
    const clock = this.#clock;
    clock.setOrigin(startAtEpochMs);
    this.#running = true;
    const schedule = { connections: o.publishers, intervalMs: this.#interval, arrival: o.arrival };
    for (const p of this.#pubs) {
      p.next = firstSendMs(p, schedule);
      if (p.next < this.#windowMs) this.#heap.push(p);
    }
    this.#sending = true;
    let graceEnd = Infinity;
    let replyReadAt = REPLY_READ_MS;
    let now = clock.now();
    for (;;) {
      const flag = Atomics.load(this.#stop, 0);
      if (flag !== 0) {
        this.#interrupted = flag === 1;
        break;
      }
      if (this.#sending && now >= o.durationS * 1000) {
        this.#publishDue(); // what fell due in the last quantum leaves, late, rather than unsent
        this.#endWindow();
        graceEnd = now + o.graceS * 1000;
      }
      if (!this.#sending && (this.#owedNothing() || now >= graceEnd)) break;
      if (this.#sending) {
        this.#publishDue();
        if (o.stallSubscribers > 0 && now >= o.stallAfterMs) this.#stall();
        // the kernel stamps pushes: read after publishing, so the publishers leave on time
        if (!this.#stampless) this.#readReady(0);
      }
      if (this.#delayed > 0) this.#readDelayed();
      if (!this.#sending || this.#pubIo.pending > 0 || now >= replyReadAt) {
        this.#readPublishers();
        replyReadAt = now + REPLY_READ_MS;
      }
      now = this.#sleep(this.#sending ? this.#turnAt(replyReadAt) : Math.min(graceEnd, now + 1));
    }
    this.close();
    const r = this.#tally.result(this.#interrupted, now);
    return {
      ...r,
      latency: encodeHistogram(r.latency),
      sendLateness: encodeHistogram(r.sendLateness),
      stampedDeliveries: this.#stamped,
    };
  }

  /** When the next publishing turn is (ms since the start): the next due time rounded up to
   * the quantum, within the window, no later than the next replies' read or delayed read. */
  #turnAt(replyReadAt: number): number {
    const o = this.#o;
    const q = o.quantumMs;
    const due = this.#heap.peek()?.next ?? Infinity;
    let until = Math.min(q > 0 ? Math.ceil(due / q) * q : due, o.durationS * 1000, replyReadAt);
    if (this.#pubIo.pending > 0) until = Math.min(until, this.#clock.now() + 1);
    if (this.#delayed > 0) { for (const s of this.#subs) until = Math.min(until, s.readAt); }
    return until;
  }

  /** Sleeps until `until` (or a push, when pushes must wake the loop), reads what is ready;
   * returns the time after the wake-up. */
  #sleep(until: number): number {
    const waitMs = Math.min(MAX_SLEEP_MS, Math.max(0, until - this.#clock.now()));
    // the kernel stamps pushes: they wait in their sockets for the next turn
    if (this.#sending && !this.#stampless) this.#sleepSet.wait(waitMs, 1);
    else this.#readReady(waitMs);
    return this.#clock.now();
  }

  /** Waits up to `waitMs` for ready subscribers and reads each. */
  #readReady(waitMs: number): void {
    const set = this.#subSet;
    const k = set.wait(waitMs);
    for (let e = 0; e < k; e++) {
      const s = this.#subs[set.slot(e)];
      if (s.closed || s.stalled) continue;
      if (this.#o.readDelayMs > 0 && this.#running) {
        // fault injection: read it later (its socket is not watched meanwhile)
        if (s.readAt === Infinity) {
          s.readAt = this.#clock.now() + this.#o.readDelayMs;
          this.#delayed++;
          set.watch(s, K.EPOLL_CTL_MOD, 0);
        }
      } else this.#readSubscriber(s);
    }
  }

  #readDelayed(): void {
    const now = this.#clock.now();
    for (const s of this.#subs) {
      if (s.readAt > now) continue;
      s.readAt = Infinity;
      this.#delayed--;
      if (s.closed || s.stalled) continue;
      this.#readSubscriber(s);
      if (!s.closed) this.#subSet.watch(s, K.EPOLL_CTL_MOD, K.EPOLLIN);
    }
  }

  /** Reads what `s` has and feeds it, timed by the kernel's stamp (else the clock: #feeder). */
  #readSubscriber(s: FfiSubscriber): void {
    const lost = recvAll(this.#rx, s.fd, s.feed);
    if (lost !== null) this.#lostSubscriber(s, lost);
  }

  /** What feeds `s`'s reads to its reader, timed (made once per subscriber). */
  #feeder(s: FfiSubscriber): (n: number) => void {
    return (n: number) => {
      const now = this.#clock.now();
      const stamp = this.#stampOn ? this.#clock.realMs(this.#rx) : NaN;
      this.#stampless = !(stamp <= now);
      this.#readAt = this.#stampless ? now : stamp;
      s.reader.feed(this.#rx.buf, n);
    };
  }

  /** Publishes every message due by now, publisher by publisher in due order, for at most
   * {@link MAX_SLEEP_MS} (at a rate the client cannot keep, something is always due: the loop
   * must still see the stop flag and the window's end). */
  #publishDue(): void {
    const heap = this.#heap;
    const start = this.#clock.now();
    let now = start;
    while (heap.size > 0 && heap.peek()!.next <= now && now - start < MAX_SLEEP_MS) {
      this.#publish(heap.pop()!, now);
      now = this.#clock.now();
    }
  }

  /** Encodes every message of `p` due by `t` into the buffer (the intended time written in
   * place), sends it, re-queues `p`. */
  #publish(p: FfiPublisher, t: number): void {
    const o = this.#o;
    const tally = this.#tally;
    const frames = this.#frames;
    const out = this.#out;
    const v = this.#outView;
    let len = 0;
    // (at most 4,096 messages per call: a publisher far behind leaves room for the others)
    for (let n = 0; n < 4096 && !p.closed && p.next <= t && p.next < this.#windowMs; n++) {
      if (this.#budget <= 0) break;
      this.#budget--;
      if (p.pending !== null && p.pending.length > MAX_QUEUED_BYTES) {
        // the socket does not take more: the client (or the server) is saturated
        tally.unsent++;
        p.next = nextSendMs(p.next, this.#interval, o.arrival, p.random);
        continue;
      }
      const sequence = p.sequence++;
      const head = frames.heads[messageChannel(p.index, sequence, o)];
      if (len + head.length + frames.payload.length > out.length) {
        this.#write(p, len);
        len = 0;
        if (p.closed) break; // the write failed: this message is not sent (nor counted)
      }
      out.set(head, len);
      const at = len + head.length;
      out.set(frames.payload, at);
      const stamp = Math.round(p.next * 1e6);
      v.setFloat64(at, stamp, true);
      v.setUint32(at + 8, p.index, true);
      v.setUint32(at + 12, (sequence ^ sequenceSeal(stamp, o.sealKey)) >>> 0, true);
      len = at + frames.payload.length;
      p.outstanding++;
      this.#outstanding++;
      tally.published++;
      tally.sent(t, p.next);
      p.next = nextSendMs(p.next, this.#interval, o.arrival, p.random);
    }
    if (len > 0) this.#write(p, len);
    if (!p.closed && p.next < this.#windowMs && this.#budget > 0) this.#heap.push(p);
  }

  #write(p: FfiPublisher, len: number): void {
    if (p.closed) return;
    const failed = p.write(this.#out, len);
    if (failed !== null) this.#lostPublisher(p, failed);
  }

  /** Reads the publishers' replies and sends what their sockets did not take before. */
  #readPublishers(): void {
    const set = this.#pubIo.set;
    for (;;) {
      const k = set.wait(0);
      for (let e = 0; e < k; e++) {
        const events = set.events(e);
        const p = this.#pubs[set.slot(e)];
        if (p.closed) continue;
        let failed = events & K.EPOLLOUT ? p.flush() : null;
        if (failed === null && events & (K.EPOLLIN | K.EPOLLERR | K.EPOLLHUP)) {
          failed = recvAll(this.#rx, p.fd, (n) => void p.replies.feed(this.#rx.buf, n));
        }
        if (failed !== null) this.#lostPublisher(p, failed);
      }
      if (k < set.max) return;
    }
  }

  #reply(p: FfiPublisher, error: boolean): void {
    p.outstanding--;
    this.#outstanding--;
    if (error) this.#tally.publishError(this.#clock.now(), p.replies.lastError);
  }

  /** A publisher lost: its outstanding messages count as publish errors. */
  #lostPublisher(p: FfiPublisher, text: string): void {
    if (p.closed) return;
    p.close();
    this.#tally.lost(`publisher ${p.index}`, text, p.outstanding);
    this.#outstanding -= p.outstanding;
    p.outstanding = 0;
  }

  /** A subscriber lost (while subscribing: the step fails). */
  #lostSubscriber(s: FfiSubscriber, text: string): void {
    if (s.closed) return;
    s.closed = true;
    this.#subSet.remove(s.fd);
    if (!this.#running) {
      this.#setupError = new Deno.errors.ConnectionReset(text.replace(/^\w+: /, ""));
    }
    this.#tally.lost(`subscriber ${s.index}`, text, 0);
  }

  /** Fault injection: the first subscribers stop reading (their sockets fill up). */
  #stall(): void {
    for (const s of this.#subs.slice(0, this.#o.stallSubscribers)) {
      if (s.stalled || s.closed) continue;
      s.stalled = true;
      this.#subSet.watch(s, K.EPOLL_CTL_MOD, 0);
    }
  }

  /** End of the window: count what was due but never sent, then wait out the grace. */
  #endWindow(): void {
    const o = this.#o;
    this.#sending = false;
    this.#heap.clear();
    const window = { endMs: this.#windowMs, intervalMs: this.#interval, arrival: o.arrival };
    const unsent = unsentBefore(this.#pubs, window, this.#budget);
    this.#tally.unsent += unsent;
    this.#budget -= unsent;
  }

  #owedNothing(): boolean {
    return this.#outstanding === 0 && this.#tally.delivered >= this.#tally.expected();
  }

  /** Closes every connection, the epoll sets and libc (idempotent). */
  close(): void {
    const lib = this.#lib;
    if (!lib) return;
    this.#lib = undefined;
    const C = lib.symbols;
    for (const c of [...this.#pubs, ...this.#subs]) {
      if (!c.closed) C.close(c.fd);
      c.closed = true;
    }
    for (const set of [this.#subSet, this.#pubIo?.set, this.#sleepSet]) set?.close();
    lib.close();
  }
}
