/**
 * One pub/sub step's connections, schedule and counts (driven by `runPubSub`).
 *
 * @module
 */

import { connectionIntervalMs, firstSendMs, nextSendMs } from "../loadgen/schedule.ts";
import { TimeHeap } from "../loadgen/heap.ts";
import { Waker } from "../loadgen/waker.ts";
import { connectResp } from "../loadgen/wire.ts";
import { Publisher, PublishFrames, type PublishLink, Subscriber } from "./_conns.ts";
import { messageChannel, subscriberChannels } from "./payload.ts";
import type { PubSubChecked, PubSubResult, PubSubShard } from "./types.ts";
import {
  channelNodes,
  movedProblem,
  publisherRoute,
  shardCounts,
  subscriberGroups,
} from "./_cluster.ts";
import { PubSubTally, subscribeFailure, subscribeTimeout } from "./_tally.ts";

/** Longest stretch the publishers' pump works without yielding to timers, I/O and signals (ms). */
const PUMP_SLICE_MS = 20;

/**
 * While publishing, each publisher's replies are read once per this many ms of pump time (they
 * wait in the socket meanwhile): one read for many replies instead of one per reply.
 */
const REPLY_READ_MS = 100;

/** Most bytes a publisher may have waiting for its socket; messages due beyond are unsent. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

/**
 * Sleeps at least this long go to `setTimeout` (about a millisecond late, and half the CPU of a
 * wake-up through the timer Worker on this project's machines); shorter ones to the Worker.
 */
const TIMEOUT_FROM_MS = 2;

/** One step's connections, schedule and counts. */
export class PubSubRun {
  readonly #o: PubSubChecked;
  readonly #names: string[];
  readonly #pubs: Publisher[] = [];
  readonly #subs: Subscriber[] = [];
  readonly #heap = new TimeHeap<Publisher>();
  readonly #interval: number;
  #waker: Waker | undefined;
  #sleep: ReturnType<typeof setTimeout> | undefined;
  /** When the pump runs next (ms since the start): a read completing after it runs it then. */
  #pumpAt = Infinity;
  /** When the pump last ran (ms since the start): the next runs a quantum later at the earliest. */
  #pumpedAt = -Infinity;
  /** Resolves when the publishers' replies are next read (at once outside the window). */
  #replyTurn = Promise.withResolvers<void>();
  #replyReadAt = 0;
  #t0 = 0;
  #sending = false;
  #finished = false;
  #interrupted = false;
  /** When an interrupt ended the step (ms since the start). */
  #endedAtMs = Infinity;
  #immediate = false;
  #budget: number;
  #outstanding = 0;
  readonly #done = Promise.withResolvers<void>();
  readonly #subscribed = Promise.withResolvers<void>();
  #timers: ReturnType<typeof setTimeout>[] = [];
  readonly #c: PubSubTally;
  /** Against a cluster: per channel, the index of its slot's master (else null). */
  readonly #channelNode: Int32Array | null;
  /** Against a cluster: subscriber connections per master. */
  readonly #subsPerNode: number[];

  constructor(o: PubSubChecked) {
    this.#o = o;
    this.#names = Array.from({ length: o.channels }, (_, c) => `${o.channelPrefix}${c}`);
    this.#interval = connectionIntervalMs(o.requestedOpsPerSec / o.fanOut, o.publishers);
    this.#budget = o.maxMessages;
    this.#channelNode = o.cluster ? channelNodes(o.cluster, this.#names) : null;
    this.#subsPerNode = o.cluster?.nodes.map(() => 0) ?? [];
    // sharded across a cluster, a subscriber has one connection (lane) per master
    const lanes = o.cluster && o.mode === "sharded" ? o.cluster.nodes.length : 1;
    this.#c = new PubSubTally(o, lanes);
    this.#subscribed.promise.catch(() => {/* awaited in connect(); rejected early is fine */});
  }

  /** End of the window for intended times (1 ns early: summed intervals drift by ulps). */
  get #windowMs(): number {
    return this.#o.durationS * 1000 - 1e-6;
  }

  #now(): number {
    return performance.now() - this.#t0;
  }

  /** Where to connect to reach master `node` of a cluster (the server itself otherwise). */
  #endpoint(node: number): PubSubChecked {
    const n = this.#o.cluster?.nodes[node];
    return n ? { ...this.#o, hostname: n.host, port: n.port } : this.#o;
  }

  /** Connects and subscribes every subscriber, then connects the publishers. */
  async connect(): Promise<void> {
    const o = this.#o;
    const sharded = o.mode === "sharded";
    const acrossShards = sharded && o.cluster !== undefined;
    const topology = { subscribers: o.subscribers, channels: o.channels, fanOut: o.fanOut };
    const routing = { mode: o.mode, cluster: o.cluster, byNode: this.#channelNode };
    for (let s = 0; s < o.subscribers; s++) {
      const groups = subscriberGroups(routing, s, subscriberChannels(topology, s));
      for (const [node, channels] of groups) {
        const sock = await connectResp(this.#endpoint(node), o.connectTimeoutMs);
        const names = channels.map((c) => this.#names[c]);
        const lane = acrossShards ? node : 0;
        const sub = new Subscriber(sock, { index: s, channels: names, lane }, {
          message: this.#onMessage,
          other: this.#onSubscriberReply,
        });
        if (o.cluster) this.#subsPerNode[node]++;
        this.#subs.push(sub);
        this.#readSubscriber(sub);
        // a cluster refuses one SSUBSCRIBE of channels in different slots (CROSSSLOT)
        sock.write(sub.subscribeCommand(sharded, acrossShards)).catch((e) => this.#lost(sub, e));
      }
    }
    const timeout = setTimeout(
      () => this.#subscribed.reject(subscribeTimeout(this.#subs, o.connectTimeoutMs)),
      o.connectTimeoutMs,
    );
    this.#checkSubscribed();
    try {
      await this.#subscribed.promise;
    } finally {
      clearTimeout(timeout);
    }
    const frames = new PublishFrames(sharded ? "SPUBLISH" : "PUBLISH", this.#names, o.payloadBytes);
    const route = publisherRoute(o.mode, this.#channelNode);
    for (let p = 0; p < o.publishers; p++) {
      const nodes = route?.nodes ?? [o.cluster ? p % o.cluster.nodes.length : 0];
      const socks: Deno.Conn[] = [];
      for (const node of nodes) {
        socks.push(await connectResp(this.#endpoint(node), o.connectTimeoutMs));
      }
      const pub = new Publisher(socks, {
        index: p,
        frames,
        seed: o.seed,
        sealKey: o.sealKey,
        nodes,
        linkOf: route?.linkOf,
      }, { reply: this.#onReply, error: this.#lost });
      this.#pubs.push(pub);
      for (const link of pub.links) this.#readPublisher(pub, link);
    }
    this.#waker = new Waker(this.#pump);
    await this.#waker.ready;
  }

  #checkSubscribed(): void {
    if (this.#subs.every((s) => s.confirmed >= s.channels.length)) this.#subscribed.resolve();
  }

  /** Publishes from 20 ms from now for the window, then waits out the grace. */
  run(): Promise<void> {
    const o = this.#o;
    this.#t0 = performance.now() + 20;
    const schedule = { connections: o.publishers, intervalMs: this.#interval, arrival: o.arrival };
    for (const p of this.#pubs) {
      p.next = firstSendMs(p, schedule);
      if (p.next < this.#windowMs) this.#heap.push(p);
    }
    this.#sending = true;
    this.#timers.push(setTimeout(() => this.#stop(), o.durationS * 1000 + 20));
    this.#schedule();
    return this.#done.promise;
  }

  /**
   * One turn of the publishers: every message due by now is appended to its publisher's
   * batch, each publisher with something due writes once, then the pump sleeps until the next
   * due message, and at least a quantum after this turn.
   */
  readonly #pump = () => {
    clearTimeout(this.#sleep);
    this.#sleep = undefined;
    this.#pumpAt = Infinity;
    if (!this.#sending) return;
    let t = this.#now();
    this.#pumpedAt = t;
    if (t >= this.#replyReadAt) this.#readReplies(t + REPLY_READ_MS);
    // a slice of work at most: at a rate the client cannot keep, something is always due, and
    // a loop that never yields would never see Ctrl-C or SIGTERM (nor the window's end)
    const sliceEnd = t + PUMP_SLICE_MS;
    while (this.#heap.size > 0 && this.#heap.peek()!.next <= t) {
      this.#publishDue(this.#heap.pop()!, t);
      t = this.#now();
      if (t > sliceEnd) {
        this.#immediate = true;
        setTimeout(this.#onImmediate, 0);
        return;
      }
    }
    this.#schedule();
  };

  readonly #onImmediate = () => {
    this.#immediate = false;
    this.#pump();
  };

  #schedule(): void {
    const top = this.#heap.peek();
    if (!this.#sending || top === undefined || this.#immediate || this.#sleep !== undefined) {
      return;
    }
    const at = Math.max(top.next, this.#pumpedAt + this.#o.quantumMs);
    const sleepMs = at - this.#now();
    this.#pumpAt = at;
    if (sleepMs >= TIMEOUT_FROM_MS) this.#sleep = setTimeout(this.#pump, Math.floor(sleepMs) - 1);
    else if (sleepMs <= 0) {
      this.#immediate = true;
      setTimeout(this.#onImmediate, 0);
    } else this.#waker!.arm(performance.timeOrigin + this.#t0 + at);
  }

  /**
   * Appends every message of `p` due by `t` to its batch and writes the batch (or leaves it
   * to follow the pending write), then re-queues `p`.
   */
  #publishDue(p: Publisher, t: number): void {
    const o = this.#o;
    const windowMs = this.#windowMs;
    let sent = 0;
    while (!p.closed && p.next <= t && p.next < windowMs && this.#budget > 0) {
      const sequence = p.sequence;
      const channel = messageChannel(p.index, sequence, o);
      if (p.linkFor(channel).writer.queuedBytes > MAX_QUEUED_BYTES) {
        // the socket does not take more: the client (or the server) is saturated
        this.#c.unsent++;
        this.#budget--;
        p.next = nextSendMs(p.next, this.#interval, o.arrival, p.random);
        continue;
      }
      p.sequence++;
      p.append(channel, Math.round(p.next * 1e6), sequence);
      sent++;
      this.#c.sent(t, p.next);
      this.#budget--;
      p.next = nextSendMs(p.next, this.#interval, o.arrival, p.random);
    }
    if (sent > 0) p.send();
    p.outstanding += sent;
    this.#outstanding += sent;
    this.#c.published += sent;
    if (!p.closed && p.next < windowMs && this.#budget > 0) this.#heap.push(p);
  }

  readonly #onReply = (p: Publisher, error: boolean, link: PublishLink) => {
    if (p.outstanding === 0) return;
    p.outstanding--;
    this.#outstanding--;
    if (error) this.#c.publishError(this.#now(), this.#clusterError(link.replies.lastError));
    this.#maybeFinish();
  };

  /** An error reply, explained when it is a cluster's redirection (a slot that moved). */
  #clusterError(text: string): string {
    return this.#o.cluster ? movedProblem(text, this.#names) ?? text : text;
  }

  // positional: called once per delivery on the hot path, where an options object would allocate
  readonly #onMessage = (s: Subscriber, stampNs: number, publisher: number, sequence: number) => {
    if (this.#finished) return;
    const sentBy = this.#pubs[publisher]?.sequence;
    this.#c.delivery(s.index, this.#readAt, stampNs, publisher, sequence, sentBy, s.lane);
    if (!this.#sending) this.#maybeFinish();
  };

  readonly #onSubscriberReply = (s: Subscriber, error: string) => {
    // while subscribing, an error (or a reply that is no confirmation) ends the step, named
    const command = this.#o.mode === "sharded" ? "SSUBSCRIBE" : "SUBSCRIBE";
    const text = this.#o.cluster ? movedProblem(error, s.channels) ?? error : error;
    const failed = subscribeFailure(text, { command, subscribing: this.#t0 === 0 });
    if (failed) this.#subscribed.reject(failed);
    else if (error !== "") this.#c.subscriberError(s.index, text);
  };

  /** Receive time of the chunk being read (ms since the start). */
  #readAt = 0;

  async #readSubscriber(s: Subscriber): Promise<void> {
    const o = this.#o;
    const buf = new Uint8Array(64 * 1024);
    const stall = s.index < o.stallSubscribers;
    try {
      for (;;) {
        if (stall && this.#sending && this.#now() >= o.stallAfterMs) {
          await this.#done.promise; // stops reading: the server's buffer for it fills up
          return;
        }
        const n = await s.sock.read(buf);
        if (n === null) break;
        if (o.readDelayMs > 0) await new Promise((r) => setTimeout(r, o.readDelayMs));
        this.#readAt = this.#now();
        s.reader.feed(buf, n);
        // a busy client's reads come often: the pump rides on them rather than on a wake-up
        if (this.#readAt >= this.#pumpAt) this.#pump();
        if (!this.#sending && this.#t0 === 0) this.#checkSubscribed();
      }
      this.#lost(s, new Deno.errors.ConnectionReset("server closed the connection"));
    } catch (e) {
      this.#lost(s, e);
    }
  }

  /** Lets every publisher read its replies once, then (while publishing) wait for `nextMs`. */
  #readReplies(nextMs: number): void {
    this.#replyReadAt = nextMs;
    const turn = this.#replyTurn;
    this.#replyTurn = Promise.withResolvers<void>();
    turn.resolve();
  }

  async #readPublisher(p: Publisher, link: PublishLink): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await link.sock.read(buf);
        if (n === null) break;
        link.replies.feed(buf, n);
        if (this.#sending) await this.#replyTurn.promise;
      }
      this.#lost(p, new Deno.errors.ConnectionReset("server closed the connection"));
    } catch (e) {
      this.#lost(p, e);
    }
  }

  /** A connection failed: a publisher's outstanding messages count as publish errors. */
  readonly #lost = (c: Publisher | Subscriber, e: unknown) => {
    if (c.closed || this.#finished) return;
    c.closed = true;
    const who = c instanceof Publisher ? `publisher ${c.index}` : `subscriber ${c.index}`;
    const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    this.#c.lost(who, text, c instanceof Publisher ? c.outstanding : 0);
    if (c instanceof Publisher) {
      c.close();
      this.#outstanding -= c.outstanding;
      c.outstanding = 0;
    } else {
      if (this.#t0 === 0) this.#subscribed.reject(e);
      try {
        c.sock.close();
      } catch { /* already closed */ }
    }
    this.#maybeFinish();
  };

  /** End of the window: count what was due but not sent, then wait out the grace. */
  #stop(): void {
    const o = this.#o;
    // a last turn: what fell due since the previous one (up to a quantum) is sent, late, rather
    // than counted unsent
    if (this.#sending) this.#pump();
    this.#sending = false;
    this.#waker?.close();
    clearTimeout(this.#sleep);
    this.#readReplies(Infinity);
    this.#heap.clear();
    for (const p of this.#pubs) {
      for (let t = p.next; t < this.#windowMs && this.#budget > 0;) {
        this.#c.unsent++;
        this.#budget--;
        t = nextSendMs(t, this.#interval, o.arrival, p.random);
      }
    }
    this.#timers.push(setTimeout(() => this.#finish(), o.graceS * 1000));
    this.#maybeFinish();
  }

  #maybeFinish(): void {
    if (this.#sending || this.#t0 === 0 || this.#finished) return;
    if (this.#outstanding === 0 && this.#c.delivered >= this.#c.expected()) this.#finish();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#done.resolve();
  }

  /** Ends the step now (Ctrl-C): what was counted so far stands. */
  interrupt(): void {
    if (!this.#interrupted) this.#endedAtMs = this.#t0 === 0 ? 0 : this.#now();
    this.#interrupted = true;
    this.#subscribed.reject(new Deno.errors.Interrupted("interrupted while subscribing"));
    this.#sending = false;
    this.#finish();
  }

  /** Stops everything and closes every connection. */
  close(): void {
    this.#sending = false;
    this.#finish();
    this.#waker?.close();
    clearTimeout(this.#sleep);
    this.#readReplies(Infinity);
    for (const t of this.#timers) clearTimeout(t);
    for (const p of this.#pubs) {
      p.closed = true;
      p.close();
    }
    for (const s of this.#subs) {
      s.closed = true;
      try {
        s.sock.close();
      } catch { /* already closed */ }
    }
  }

  result(
    clientCpuS: number,
    setupCpuS: number,
    wallS: number,
  ): Omit<PubSubResult, "engine" | "engineNote" | "stampedDeliveries"> {
    const counts = this.#c.result(this.#interrupted, this.#endedAtMs);
    const shards = this.#shards();
    return { ...counts, clientCpuS, setupCpuS, wallS, ...(shards ? { shards } : {}) };
  }

  /** Against a cluster: each master's channels, subscriber connections and messages. */
  #shards(): PubSubShard[] | null {
    const map = this.#o.cluster;
    const byNode = this.#channelNode;
    return map && byNode
      ? shardCounts(map, { byNode, subs: this.#subsPerNode, pubs: this.#pubs })
      : null;
  }
}
