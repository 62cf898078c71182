/**
 * The connections of a pub/sub run: a publisher (open-loop PUBLISH or SPUBLISH writes, replies
 * counted) and a subscriber (SUBSCRIBE or SSUBSCRIBE, pushes read as they arrive).
 *
 * @module
 */

import { encodeCommand, RespReplyReader } from "../loadgen/resp.ts";
import { seededRandom } from "../loadgen/schedule.ts";
import { PushReader } from "./push.ts";

const encoder = new TextEncoder();

/** Writes to a socket in order, gathering what is written while a write is pending. */
export class QueuedWriter {
  #pending: Uint8Array[] = [];
  #busy = false;
  #closed = false;
  #queued = 0;

  /**
   * @param sock The socket.
   * @param onError Called once when a write fails.
   */
  constructor(readonly sock: Deno.TcpConn, readonly onError: (e: unknown) => void) {}

  /** Bytes given to {@link QueuedWriter.write} and not yet taken by the socket. */
  get queuedBytes(): number {
    return this.#queued;
  }

  /** Queues bytes (written at once when no write is pending). */
  write(bytes: Uint8Array): void {
    if (this.#closed) return;
    this.#queued += bytes.length;
    this.#pending.push(bytes);
    if (!this.#busy) this.#flush();
  }

  async #flush(): Promise<void> {
    this.#busy = true;
    try {
      while (this.#pending.length > 0 && !this.#closed) {
        const parts = this.#pending;
        this.#pending = [];
        let bytes = parts[0];
        if (parts.length > 1) {
          bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
          parts.reduce((at, p) => (bytes.set(p, at), at + p.length), 0);
        }
        for (let at = 0; at < bytes.length;) {
          const n = await this.sock.write(bytes.subarray(at));
          at += n;
          this.#queued -= n;
        }
      }
    } catch (e) {
      if (!this.#closed) this.onError(e);
    } finally {
      this.#busy = false;
    }
  }

  /** Drops what is queued; later writes are ignored. */
  close(): void {
    this.#closed = true;
    this.#pending = [];
  }
}

/** A publisher: its schedule state and its encoded commands. */
export class Publisher {
  next = 0;
  inHeap = false;
  sequence = 0;
  outstanding = 0;
  closed = false;
  readonly random: () => number;
  readonly replies: RespReplyReader;
  readonly writer: QueuedWriter;
  /** Per channel: the command up to the payload's length line. */
  readonly #heads: Uint8Array[];

  /**
   * @param sock Its connection.
   * @param index Publisher index.
   * @param command `PUBLISH` or `SPUBLISH`.
   * @param channelNames Every channel of the run.
   * @param payloadBytes Payload size.
   * @param seed Seed of its arrival randomness.
   * @param onReply Each reply, with the publisher.
   * @param onError A failed write.
   */
  constructor(
    readonly sock: Deno.TcpConn,
    readonly index: number,
    command: string,
    channelNames: readonly string[],
    payloadBytes: number,
    seed: number,
    onReply: (p: Publisher, error: boolean) => void,
    onError: (p: Publisher, e: unknown) => void,
  ) {
    this.random = seededRandom(Math.imul(seed, 1_000_003) + index);
    this.replies = new RespReplyReader((kind) => onReply(this, kind === "error"));
    this.writer = new QueuedWriter(sock, (e) => onError(this, e));
    this.#heads = channelNames.map((ch) => {
      const cmd = `*3\r\n$${command.length}\r\n${command}\r\n$${encoder.encode(ch).length}\r\n`;
      return encoder.encode(`${cmd}${ch}\r\n$${payloadBytes}\r\n`);
    });
  }

  /**
   * One command on `channel` with a payload filled by `fill` (which writes the header).
   *
   * @returns The bytes to write.
   */
  command(channel: number, payloadBytes: number, fill: (payload: Uint8Array) => void): Uint8Array {
    const head = this.#heads[channel];
    const out = new Uint8Array(head.length + payloadBytes + 2).fill(120, head.length);
    out.set(head, 0);
    fill(out.subarray(head.length, head.length + payloadBytes));
    out[out.length - 2] = 13;
    out[out.length - 1] = 10;
    return out;
  }
}

/** A subscriber: its connection, its reader, its confirmations. */
export class Subscriber {
  confirmed = 0;
  closed = false;
  readonly reader: PushReader;

  /**
   * @param sock Its connection.
   * @param index Subscriber index.
   * @param channels Names of its channels.
   * @param onMessage Each message push, with the payload's header bytes.
   * @param onOther An error reply (its text) or another reply.
   */
  constructor(
    readonly sock: Deno.TcpConn,
    readonly index: number,
    readonly channels: readonly string[],
    onMessage: (s: Subscriber, header: Uint8Array) => void,
    onOther: (s: Subscriber, error: string) => void,
  ) {
    this.reader = new PushReader({
      message: (h) => onMessage(this, h),
      subscribed: () => this.confirmed++,
      other: (e) => onOther(this, e),
    });
  }

  /** The SUBSCRIBE (or SSUBSCRIBE) command for its channels. */
  subscribeCommand(sharded: boolean): Uint8Array {
    return encodeCommand([sharded ? "SSUBSCRIBE" : "SUBSCRIBE", ...this.channels]);
  }
}
