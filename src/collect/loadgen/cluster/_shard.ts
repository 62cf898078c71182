/**
 * The open loop against a Redis Cluster (engine `deno`, one thread, pipeline 1): each
 * connection of the step holds one socket to every master and sends each request to the master
 * its key's slot maps to. A `MOVED` reply points the slot at the node it names (the slot map
 * refreshed for that slot) and the request is sent there; an `ASK` reply sends it there once,
 * after `ASKING`. Redirections are counted apart (`moved`, `asked`), never as errors, and the
 * request's latency runs on from its intended time; a request redirected more than
 * {@link MAX_REDIRECTS} times is an error. Replies are matched to requests per socket, as in
 * `_shard.ts`: a reply to no request, or of a kind its request cannot get, drops the connection.
 *
 * A failover run (`ShardOptions.failover`) keeps a connection whose socket failed: the request
 * in flight on that socket is an error of its kind (`refused`, `reset`, `timeout`), the socket
 * is opened again by the next request to its node, and every error and MOVED is counted per
 * interval by kind. The slot map is the caller's object: it may point slots elsewhere while the
 * run goes on (`../../failover/` does, from CLUSTER SHARDS, or to a promoted replica).
 *
 * @module
 */

import { setImmediate } from "node:timers";
import { encodeCommand, encodeGet, encodeSet, ReplyMismatchError } from "../resp.ts";
import { type RespReplyKind, RespReplyReader } from "../resp.ts";
import { connectionIntervalMs, firstSendMs, nextSendMs, seededRandom } from "../schedule.ts";
import { unsentBefore } from "../schedule.ts";
import { TimeHeap } from "../heap.ts";
import { connectResp, type Endpoint } from "../wire.ts";
import {
  bookLost,
  bookReply,
  bookSend,
  emptyOutcome,
  replyProblem,
  sampleError,
  type ShardOptions,
  type ShardOutcome,
} from "../_outcome.ts";
import { keySlot, moveSlot, parseRedirect, type SlotMap } from "../../cluster/slots.ts";
import {
  countKind,
  countReply,
  countSent,
  emptyIntervalCounts,
  type IntervalCounts,
} from "../series.ts";
import { errorKind, lostKind, RequestTimeout } from "./kinds.ts";

/** Redirections one request may follow before it counts as an error. */
export const MAX_REDIRECTS = 5;

const ASKING = encodeCommand(["ASKING"]);

/** One socket of a connection, to one master. */
class NodeSock {
  sock: Deno.Conn | null = null;
  /** What each reply owed on it answers: 0 an ASKING (skipped), 1 the request. */
  readonly owed: number[] = [];
  readonly queue: Uint8Array[] = [];
  writing = false;
  readonly reader: RespReplyReader;
  constructor(onReply: (s: NodeSock, kind: RespReplyKind) => void) {
    this.reader = new RespReplyReader((kind) => onReply(this, kind));
  }
}

/** A connection of the step: its pipeline slot, and a socket per master. */
class Conn {
  next = 0;
  n = 0;
  head = 0;
  outstanding = 0;
  readyAt = 0;
  inHeap = false;
  closed = false;
  redirects = 0;
  /** The socket of the request in flight (failover runs). */
  at: NodeSock | null = null;
  /** The request in flight, to send again on a redirection. */
  bytes: Uint8Array = new Uint8Array();
  readonly intended = new Float64Array(1);
  readonly sentAt = new Float64Array(1);
  readonly flags = new Uint8Array(1);
  readonly socks: (NodeSock | undefined)[] = [];
  readonly random: () => number;
  constructor(readonly index: number, seed: number) {
    this.random = seededRandom(Math.imul(seed, 1_000_003) + index);
  }
}

/** Connects the shard's connections to every master of the slot map. */
export async function connectClusterShard(o: ShardOptions, map: SlotMap): Promise<ClusterShard> {
  const shard = new ClusterShard(o, map);
  try {
    await shard.connectAll();
  } catch (e) {
    shard.close();
    throw e;
  }
  return shard;
}

/** The connections of one thread against a cluster, and their measurements. */
export class ClusterShard {
  readonly #o: ShardOptions;
  readonly #map: SlotMap;
  readonly #conns: Conn[];
  readonly #heap = new TimeHeap<Conn>();
  readonly #interval: number;
  readonly #value: Uint8Array;
  /** The slot of each key of the key space. */
  readonly #slots: Uint16Array;
  readonly #owner = new Map<NodeSock, Conn>();
  #t0 = 0;
  #sending = false;
  #finished = false;
  #interrupted = false;
  #budget: number;
  #outstanding = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #armed = false;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;
  #stopTimer: ReturnType<typeof setTimeout> | undefined;
  #resolve: (o: ShardOutcome) => void = () => {};
  readonly #out: ShardOutcome = emptyOutcome();
  /** A failover run's interval counts (else undefined). */
  readonly #iv: IntervalCounts | undefined;
  #timeoutTimer: ReturnType<typeof setInterval> | undefined;

  constructor(o: ShardOptions, map: SlotMap) {
    this.#o = o;
    this.#map = map;
    this.#interval = connectionIntervalMs(o.requestedOpsPerSec, o.connections);
    this.#value = new Uint8Array(o.valueSize).fill(120);
    this.#budget = o.maxRequests;
    this.#conns = o.indices.map((i) => new Conn(i, o.seed));
    this.#slots = new Uint16Array(o.keys);
    for (let k = 0; k < o.keys; k++) this.#slots[k] = keySlot(o.keyPrefix + k);
    if (o.failover) this.#out.intervals = this.#iv = emptyIntervalCounts(o.failover.intervalMs);
  }

  /** Opens every connection's socket to every master known now. */
  async connectAll(): Promise<void> {
    for (const c of this.#conns) {
      for (let i = 0; i < this.#map.nodes.length; i++) await this.#open(c, i);
    }
  }

  #endpoint(i: number): Endpoint {
    const n = this.#map.nodes[i];
    return { hostname: n.host, port: n.port, password: this.#o.password, tls: this.#o.tls };
  }

  /** The socket of `c` to master `i`, opened when it is not yet. */
  #open(c: Conn, i: number): Promise<void> {
    const have = c.socks[i];
    if (have) return Promise.resolve();
    const ns = new NodeSock((s, kind) => this.#reply(s, kind));
    c.socks[i] = ns;
    this.#owner.set(ns, c);
    return connectResp(this.#endpoint(i), this.#o.connectTimeoutMs).then((sock) => {
      if (c.closed || this.#finished || c.socks[i] !== ns) return sock.close();
      ns.sock = sock;
      this.#readLoop(c, ns);
      this.#flush(c, ns);
    });
  }

  #now(): number {
    return performance.now() - this.#t0;
  }

  /** Runs the schedule from `startAtEpochMs` for the duration, then drains. */
  run(startAtEpochMs: number): Promise<ShardOutcome> {
    const o = this.#o;
    if (this.#interrupted) {
      this.#finish();
      return Promise.resolve(this.#out);
    }
    this.#t0 = startAtEpochMs - performance.timeOrigin;
    const schedule = { connections: o.connections, intervalMs: this.#interval, arrival: o.arrival };
    for (const c of this.#conns) {
      c.next = firstSendMs(c, schedule);
      if (c.next < o.durationMs) this.#push(c);
    }
    this.#sending = true;
    const done = new Promise<ShardOutcome>((r) => (this.#resolve = r));
    if (o.failover) {
      const limit = o.failover.requestTimeoutMs;
      this.#timeoutTimer = setInterval(() => this.#timeouts(limit), Math.min(50, limit / 4));
    }
    this.#stopTimer = setTimeout(() => this.#stop(), Math.max(0, o.durationMs - this.#now()));
    this.#schedule();
    return done;
  }

  #push(c: Conn): void {
    this.#heap.push(c);
  }

  readonly #pump = () => {
    this.#timer = undefined;
    this.#armed = false;
    if (!this.#sending) return;
    let t = this.#now();
    while (this.#heap.size > 0 && this.#heap.peek()!.next <= t) {
      this.#sendDue(this.#heap.pop()!, t);
      t = this.#now();
    }
    this.#schedule();
  };

  #schedule(): void {
    const top = this.#heap.peek();
    if (!this.#sending || top === undefined || this.#armed) return;
    this.#armed = true;
    const wait = top.next - this.#now();
    if (wait <= this.#o.spinMs) setImmediate(this.#pump);
    else this.#timer = setTimeout(this.#pump, Math.max(0, wait - this.#o.spinMs));
  }

  #sendDue(c: Conn, t: number): void {
    const o = this.#o;
    if (
      c.closed || c.outstanding > 0 || c.next > t || c.next >= o.durationMs || this.#budget <= 0
    ) {
      return this.#requeue(c);
    }
    const k = Math.floor(c.random() * o.keys);
    const key = o.keyPrefix + k;
    const set = o.mix.set > 0 && (c.n + c.index) % (o.mix.set + o.mix.get) < o.mix.set;
    c.bytes = set ? encodeSet(key, this.#value) : encodeGet(key);
    c.n++;
    c.redirects = 0;
    const now = this.#now();
    bookSend(this.#out, c, 1, c.next, now, set, o.warmupMs);
    if (this.#iv) countSent(this.#iv, now);
    this.#outstanding++;
    this.#budget--;
    c.next = nextSendMs(c.next, this.#interval, o.arrival, c.random);
    const node = this.#map.slotNode[this.#slots[k]];
    if (node < 0) {
      return this.#lost(c, new Error(`no master serves slot ${this.#slots[k]}`), null);
    }
    this.#send(c, node, false);
  }

  /** Sends the request of `c` to master `i` (after ASKING when asked). */
  #send(c: Conn, i: number, asking: boolean): void {
    const opened = this.#open(c, i).catch((e) => this.#lost(c, e, ns));
    const ns = c.socks[i]!;
    c.at = ns;
    if (asking) {
      ns.owed.push(0);
      ns.queue.push(ASKING);
    }
    ns.owed.push(1);
    ns.queue.push(c.bytes);
    if (ns.sock) this.#flush(c, ns);
    else void opened;
  }

  #requeue(c: Conn): void {
    const o = this.#o;
    if (
      !c.closed && !c.inHeap && c.outstanding === 0 && c.next < o.durationMs && this.#budget > 0
    ) this.#push(c);
  }

  /** Writes what is queued on a socket, one write at a time. */
  #flush(c: Conn, ns: NodeSock): void {
    if (ns.writing || !ns.sock || ns.queue.length === 0) return;
    const total = ns.queue.reduce((s, b) => s + b.length, 0);
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const b of ns.queue) {
      bytes.set(b, at);
      at += b.length;
    }
    ns.queue.length = 0;
    ns.writing = true;
    const write = (from: number): void => {
      ns.sock!.write(bytes.subarray(from)).then((n) => {
        if (from + n < bytes.length && !c.closed) return write(from + n);
        ns.writing = false;
        if (!c.closed) this.#flush(c, ns);
      }, (e) => this.#lost(c, e, ns));
    };
    write(0);
  }

  async #readLoop(c: Conn, ns: NodeSock): Promise<void> {
    const buf = new Uint8Array(16 * 1024);
    try {
      for (;;) {
        const n = await ns.sock!.read(buf);
        if (n === null) break;
        ns.reader.feed(buf, n);
      }
      this.#lost(c, new Deno.errors.ConnectionReset("server closed the connection"), ns);
    } catch (e) {
      this.#lost(c, e, ns);
    }
  }

  #reply(ns: NodeSock, kind: RespReplyKind): void {
    const c = this.#owner.get(ns)!;
    const what = ns.owed.shift();
    if (what === undefined) {
      throw new ReplyMismatchError(replyProblem({ ...c, outstanding: 0 }, kind)!);
    }
    if (what === 0) {
      // ASKING's +OK: the request follows on the same socket
      if (kind !== "simple") sampleError(this.#out, `ASKING: ${ns.reader.lastError || kind}`);
      return;
    }
    const t = this.#now();
    if (kind === "error") {
      const r = parseRedirect(ns.reader.lastError);
      if (r && c.redirects < MAX_REDIRECTS) {
        c.redirects++;
        const host = r.host || this.#map.nodes[0].host;
        if (r.kind === "moved") {
          this.#out.moved++;
          if (this.#iv) countKind(this.#iv, t, "moved");
          this.#send(c, moveSlot(this.#map, r.slot, { host, port: r.port, id: null }), false);
        } else {
          this.#out.asked++;
          if (this.#iv) countKind(this.#iv, t, "asked");
          const i = this.#map.nodes.findIndex((n) => n.host === host && n.port === r.port);
          const at = i >= 0 ? i : this.#map.nodes.push({ host, port: r.port, id: null }) - 1;
          this.#send(c, at, true);
        }
        return;
      }
      sampleError(
        this.#out,
        r ? `${ns.reader.lastError} (after ${MAX_REDIRECTS} redirections)` : ns.reader.lastError,
      );
    }
    const problem = replyProblem(c, kind);
    if (problem !== null) throw new ReplyMismatchError(problem);
    this.#outstanding--;
    if (this.#iv) {
      if (kind === "error") countKind(this.#iv, t, errorKind(ns.reader.lastError));
      else countReply(this.#iv, t, t - c.intended[0]);
    }
    c.at = null;
    bookReply(this.#out, c, 1, t, kind === "error", this.#o);
    if (this.#sending) {
      if (!c.inHeap) c.next <= t ? this.#sendDue(c, t) : this.#requeue(c);
      this.#schedule();
    } else if (this.#outstanding === 0) this.#finish();
  }

  /**
   * A socket failed: its connection's request in flight is an error; it sends no more (in a
   * failover run: the socket is dropped, the request in flight on it, if any, is an error of its
   * kind, and the connection goes on).
   */
  #lost(c: Conn, e: unknown, ns: NodeSock | null): void {
    if (c.closed || this.#finished) return;
    if (this.#iv) return this.#lostSocket(c, e, ns);
    c.closed = true;
    sampleError(this.#out, e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    this.#outstanding -= bookLost(this.#out, { conn: c, depth: 1, atMs: this.#now() });
    this.#closeConn(c);
    if (!this.#sending && this.#outstanding === 0) this.#finish();
  }

  #lostSocket(c: Conn, e: unknown, ns: NodeSock | null): void {
    const i = ns === null ? -1 : c.socks.indexOf(ns);
    if (ns !== null && i < 0) return; // a socket dropped before (its read loop ending)
    if (ns !== null) {
      c.socks[i] = undefined;
      this.#owner.delete(ns);
      try {
        ns.sock?.close();
      } catch { /* already closed */ }
    }
    if (c.outstanding === 0 || (ns !== null && c.at !== ns)) return;
    const t = this.#now();
    sampleError(this.#out, e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    this.#outstanding -= bookLost(this.#out, { conn: c, depth: 1, atMs: t });
    countKind(this.#iv!, t, lostKind(e));
    c.at = null;
    if (this.#sending) {
      if (!c.inHeap) c.next <= t ? this.#sendDue(c, t) : this.#requeue(c);
      this.#schedule();
    } else if (this.#outstanding === 0) this.#finish();
  }

  /** Requests in flight longer than the limit: errors (`timeout`), their sockets dropped. */
  #timeouts(limitMs: number): void {
    const t = this.#now();
    for (const c of this.#conns) {
      if (c.outstanding > 0 && c.at !== null && t - c.sentAt[0] > limitMs) {
        this.#lost(c, new RequestTimeout(`no reply in ${limitMs} ms`), c.at);
      }
    }
  }

  #closeConn(c: Conn): void {
    for (const ns of c.socks) {
      try {
        ns?.sock?.close();
      } catch { /* already closed */ }
    }
  }

  #stop(): void {
    if (!this.#sending) return;
    this.#sending = false;
    clearTimeout(this.#timer);
    this.#heap.clear();
    const o = this.#o;
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
    for (const t of [this.#timer, this.#drainTimer, this.#stopTimer]) clearTimeout(t);
    clearInterval(this.#timeoutTimer);
    this.#out.unanswered = this.#outstanding;
    if (this.#outstanding > 0) {
      sampleError(
        this.#out,
        `no reply by the end of the step (its window and ${this.#o.drainMs / 1000} s after)`,
      );
    }
    for (const c of this.#conns) {
      c.closed = true;
      this.#closeConn(c);
    }
    this.#resolve(this.#out);
  }

  /** Ends the sending window now (Ctrl-C, SIGTERM). */
  interrupt(): void {
    this.#interrupted = true;
    if (this.#sending) this.#stop();
  }

  /** Stops at once and closes every connection. */
  close(): void {
    this.#finish();
  }
}
