/**
 * The sockets of the pub/sub epoll engine (`_ffi_run.ts`): an epoll set, a publisher (its
 * schedule, its replies, the bytes its socket did not take) and a subscriber, over libc by
 * Deno FFI (`../loadgen/libc.ts`).
 *
 * @module
 */

import { ReplyMismatchError, RespReplyReader } from "../loadgen/resp.ts";
import { publishReplyProblem } from "./_tally.ts";
import { seededRandom } from "../loadgen/schedule.ts";
import { errno, EV_DATA, EV_WORDS, K, type Libc, osError, sendAfter } from "../loadgen/libc.ts";
import type { PushReader } from "./push.ts";

const MAX_EVENTS = 256;
const EPOLL_CLOEXEC = 0o2000000;

/** An epoll set, its slot numbers, and one buffer of ready events. */
export class EpollSet {
  readonly fd: number;
  readonly max = MAX_EVENTS;
  readonly #lib: Libc;
  readonly #events = new Uint32Array(MAX_EVENTS * EV_WORDS);
  readonly #evBytes = new Uint8Array(this.#events.buffer);
  readonly #ev = new Uint32Array(4);
  readonly #ts = new Uint32Array(4);
  readonly #tsBytes = new Uint8Array(this.#ts.buffer);

  constructor(lib: Libc) {
    this.#lib = lib;
    this.fd = lib.symbols.epoll_create1(EPOLL_CLOEXEC);
    if (this.fd < 0) throw new Deno.errors.NotSupported(osError("epoll_create1", errno(lib)));
  }

  /**
   * Adds (`K.EPOLL_CTL_ADD`) or changes (`K.EPOLL_CTL_MOD`) what a connection's `fd` is watched
   * for; its `index` is the slot its events carry.
   */
  watch(c: { fd: number; index: number }, op: number, events: number): void {
    const ev = this.#ev;
    ev[0] = events;
    ev[EV_DATA] = c.index;
    this.#lib.symbols.epoll_ctl(this.fd, op, c.fd, new Uint8Array(ev.buffer));
  }

  /** Stops watching `fd` and closes it. */
  remove(fd: number): void {
    this.#lib.symbols.epoll_ctl(this.fd, K.EPOLL_CTL_DEL, fd, new Uint8Array(16));
    this.#lib.symbols.close(fd);
  }

  /** Waits up to `waitMs` (ns precision) for up to `max` events; how many came. */
  wait(waitMs: number, max = MAX_EVENTS): number {
    const ns = Math.round(waitMs * 1e6);
    this.#ts[0] = Math.floor(ns / 1e9);
    this.#ts[2] = ns % 1e9;
    return this.#lib.symbols.epoll_pwait2(this.fd, this.#evBytes, max, this.#tsBytes, null);
  }

  /** The events of the `e`th ready entry. */
  events(e: number): number {
    return this.#events[e * EV_WORDS];
  }

  /** The slot of the `e`th ready entry. */
  slot(e: number): number {
    return this.#events[e * EV_WORDS + EV_DATA];
  }

  close(): void {
    this.#lib.symbols.close(this.fd);
  }
}

/** What the publishers of a run share: libc, their epoll set, the BigInt lengths. */
export interface PublisherIo {
  lib: Libc;
  set: EpollSet;
  /** size_t lengths as BigInts made once (V8's fast FFI path takes a 64-bit argument only as
   * a BigInt; making one per send would allocate). */
  sizes: bigint[];
  /** Publishers with bytes waiting for EPOLLOUT. */
  pending: number;
}

/** A publisher: its schedule, its replies, what its socket did not take. */
export class FfiPublisher {
  next = 0;
  inHeap = false;
  sequence = 0;
  outstanding = 0;
  closed = false;
  /** Bytes a full socket buffer did not take (then EPOLLOUT is watched). */
  pending: Uint8Array<ArrayBuffer> | null = null;
  readonly random: () => number;
  readonly replies: RespReplyReader;

  /** Its socket. */
  readonly fd: number;
  /** Publisher index (the slot of its epoll events). */
  readonly index: number;

  /**
   * A publisher, watched for replies in the publishers' epoll set from the start.
   *
   * @param io What the publishers share.
   * @param o Its socket, its index and the seed of its arrivals.
   * @param onReply Each reply matched to a message (`error`: an error reply).
   */
  constructor(
    readonly io: PublisherIo,
    o: { fd: number; index: number; seed: number },
    onReply: (p: FfiPublisher, error: boolean) => void,
  ) {
    this.fd = o.fd;
    this.index = o.index;
    this.random = seededRandom(Math.imul(o.seed, 1_000_003) + o.index);
    this.replies = new RespReplyReader((kind) => {
      // a reply to no PUBLISH, or not an integer: thrown to the read (recvAll), which drops
      // the connection: the replies can no longer be matched to the messages
      const problem = publishReplyProblem(this.outstanding, kind);
      if (problem !== null) throw new ReplyMismatchError(problem);
      onReply(this, kind === "error");
    });
    io.set.watch(this, K.EPOLL_CTL_ADD, K.EPOLLIN);
  }

  /**
   * One nonblocking `send` of `buf`'s first `len` bytes (after what is pending); what the
   * socket does not take waits for EPOLLOUT.
   *
   * @returns null, or the text of the failure (the connection is lost).
   */
  write(buf: Uint8Array<ArrayBuffer>, len: number): string | null {
    const io = this.io;
    const was = this.pending;
    const left = sendAfter(io.lib, this.fd, was, buf, len, io.sizes[len] ?? BigInt(len));
    if (typeof left === "string") return left;
    this.pending = left;
    if (left !== null && was === null) {
      io.pending++;
      io.set.watch(this, K.EPOLL_CTL_MOD, K.EPOLLIN | K.EPOLLOUT);
    }
    return null;
  }

  /** Sends what was pending (on EPOLLOUT). @returns null, or the text of the failure. */
  flush(): string | null {
    const p = this.pending;
    if (p === null) return null;
    this.pending = null;
    this.io.pending--;
    const failed = this.write(p, p.length);
    if (this.pending === null && failed === null) {
      this.io.set.watch(this, K.EPOLL_CTL_MOD, K.EPOLLIN);
    }
    return failed;
  }

  /** Marks it closed, drops what was pending, closes its socket. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.pending !== null) this.io.pending--;
    this.pending = null;
    this.io.set.remove(this.fd);
  }
}

/** A subscriber: its socket, its push reader, its confirmations. */
export class FfiSubscriber {
  confirmed = 0;
  closed = false;
  /** Stopped reading (fault injection). */
  stalled = false;
  /** When a delayed read is due (fault injection); Infinity: none. */
  readAt = Infinity;
  reader!: PushReader;
  /** Feeds a read of `n` bytes to {@link reader}. */
  feed!: (n: number) => void;

  constructor(readonly fd: number, readonly index: number, readonly channels: string[]) {}
}
