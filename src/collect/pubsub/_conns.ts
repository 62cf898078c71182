/**
 * The connections of a pub/sub run: a publisher (open-loop PUBLISH or SPUBLISH writes, replies
 * counted) and a subscriber (SUBSCRIBE or SSUBSCRIBE, pushes read as they arrive).
 *
 * @module
 */

import { encodeCommand, ReplyMismatchError, RespReplyReader } from "../loadgen/resp.ts";
import { seededRandom } from "../loadgen/schedule.ts";
import { PushReader } from "./push.ts";
import { sequenceSeal } from "./payload.ts";
import { publishReplyProblem } from "./_tally.ts";

const encoder = new TextEncoder();

/** First size of a publisher's batch buffer; it grows (doubling) when a turn needs more. */
const FIRST_BATCH_BYTES = 16 * 1024;

/**
 * Writes to a socket in batches: commands are appended in place to a buffer, and
 * {@link BatchWriter.send} writes all of it in one write, or, while a write is pending, leaves
 * it to be written as soon as that one ends. Two buffers take turns (the one being written and
 * the one being filled), so nothing is allocated per command.
 */
export class BatchWriter {
  #fill = new Uint8Array(FIRST_BATCH_BYTES);
  #spare = new Uint8Array(FIRST_BATCH_BYTES);
  #view = new DataView(this.#fill.buffer);
  #length = 0;
  #inFlight = 0;
  #busy = false;
  #closed = false;

  /**
   * @param sock The socket.
   * @param onError Called once when a write fails.
   */
  constructor(readonly sock: Deno.Conn, readonly onError: (e: unknown) => void) {}

  /** Bytes appended and not yet taken by the socket. */
  get queuedBytes(): number {
    return this.#length + this.#inFlight;
  }

  /** The buffer being filled (valid until the next {@link BatchWriter.reserve}). */
  get buffer(): Uint8Array {
    return this.#fill;
  }

  /** A view of {@link BatchWriter.buffer}. */
  get view(): DataView {
    return this.#view;
  }

  /**
   * Makes room for `n` more bytes at the end of the batch and counts them as appended.
   *
   * @returns Where to write them in {@link BatchWriter.buffer}.
   */
  reserve(n: number): number {
    const at = this.#length;
    if (at + n > this.#fill.length) {
      const bigger = new Uint8Array(Math.max(2 * this.#fill.length, at + n));
      bigger.set(this.#fill.subarray(0, at));
      this.#fill = bigger;
      this.#view = new DataView(bigger.buffer);
    }
    this.#length = at + n;
    return at;
  }

  /** Writes what was appended (now, or when the pending write ends). */
  send(): void {
    if (!this.#busy && this.#length > 0 && !this.#closed) this.#flush();
  }

  async #flush(): Promise<void> {
    this.#busy = true;
    try {
      while (this.#length > 0 && !this.#closed) {
        const out = this.#fill;
        const length = this.#length;
        this.#fill = this.#spare;
        this.#view = new DataView(this.#fill.buffer);
        this.#length = 0;
        this.#inFlight = length;
        for (let at = 0; at < length;) {
          const n = await this.sock.write(out.subarray(at, length));
          at += n;
          this.#inFlight -= n;
        }
        this.#spare = out;
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
    this.#length = 0;
  }
}

/**
 * The bytes of a run's publish commands, shared by its publishers: per channel, the command
 * up to the payload (`*3 $7 PUBLISH $n <channel> $size`), and one payload template (filler and
 * the final CRLF) whose header each command overwrites in place.
 */
export class PublishFrames {
  readonly heads: Uint8Array[];
  readonly payload: Uint8Array;

  /**
   * @param command `PUBLISH` or `SPUBLISH`.
   * @param channelNames Every channel of the run.
   * @param payloadBytes Payload size.
   */
  constructor(command: string, channelNames: readonly string[], payloadBytes: number) {
    this.heads = channelNames.map((ch) => {
      const cmd = `*3\r\n$${command.length}\r\n${command}\r\n$${encoder.encode(ch).length}\r\n`;
      return encoder.encode(`${cmd}${ch}\r\n$${payloadBytes}\r\n`);
    });
    this.payload = new Uint8Array(payloadBytes + 2).fill(120);
    this.payload[payloadBytes] = 13;
    this.payload[payloadBytes + 1] = 10;
  }
}

/**
 * One connection of a publisher: to the server, or (against a cluster) to one master. Its
 * replies come in the order of its commands: a reply to none is thrown to its read.
 */
export class PublishLink {
  /** Commands written (or queued) and not yet answered. */
  outstanding = 0;
  /** Commands appended over the step. */
  published = 0;
  readonly replies: RespReplyReader;
  readonly writer: BatchWriter;

  /**
   * @param sock Its connection.
   * @param node Index of its master in the slot map (0 for one server).
   * @param on Each reply matched to a command (`error`: an error reply), and a failed write.
   */
  constructor(
    readonly sock: Deno.Conn,
    readonly node: number,
    on: { reply: (l: PublishLink, error: boolean) => void; error: (e: unknown) => void },
  ) {
    this.replies = new RespReplyReader((kind) => {
      // a reply to no PUBLISH, or not an integer: thrown to the read, which drops the
      // connection: the replies can no longer be matched to the messages
      const problem = publishReplyProblem(this.outstanding, kind);
      if (problem !== null) throw new ReplyMismatchError(problem);
      this.outstanding--;
      on.reply(this, kind === "error");
    });
    this.writer = new BatchWriter(sock, on.error);
  }
}

/**
 * A publisher: its schedule state, and its commands appended in place to the batch of the link
 * its channel goes to (one link to one server; against a cluster in sharded mode, one per
 * master).
 */
export class Publisher {
  next = 0;
  inHeap = false;
  sequence = 0;
  /** Messages not yet answered, over its links. */
  outstanding = 0;
  closed = false;
  readonly random: () => number;
  readonly links: PublishLink[];
  readonly #frames: PublishFrames;
  readonly #sealKey: number;
  /** Per channel, its link (null: the one link). */
  readonly #linkOf: Int32Array | null;

  /** Publisher index. */
  readonly index: number;

  /**
   * @param socks Its connections: one, or one per master (`nodes`, `linkOf`).
   * @param o Its index, the run's command bytes (`frames`), the seed of its arrivals, the
   * step's seal key (`sequenceSeal`), each connection's master (`nodes`) and each channel's
   * connection (`linkOf`).
   * @param on Each reply matched to a message (`error`: an error reply), and a failed write.
   */
  constructor(
    socks: readonly Deno.Conn[],
    o: {
      index: number;
      frames: PublishFrames;
      seed: number;
      sealKey: number;
      nodes?: readonly number[];
      linkOf?: Int32Array;
    },
    on: {
      reply: (p: Publisher, error: boolean, link: PublishLink) => void;
      error: (p: Publisher, e: unknown) => void;
    },
  ) {
    const { index, frames } = o;
    this.index = index;
    this.random = seededRandom(Math.imul(o.seed, 1_000_003) + index);
    this.links = socks.map((sock, i) =>
      new PublishLink(sock, o.nodes?.[i] ?? 0, {
        reply: (l, error) => on.reply(this, error, l),
        error: (e) => on.error(this, e),
      })
    );
    this.#linkOf = o.linkOf ?? null;
    this.#frames = frames;
    this.#sealKey = o.sealKey;
  }

  /** The link the commands on `channel` go to. */
  linkFor(channel: number): PublishLink {
    return this.links[this.#linkOf === null ? 0 : this.#linkOf[channel]];
  }

  /**
   * Appends one command on `channel` to its link's batch, its payload header written in place
   * (stamp, publisher, sequence sealed with the stamp); {@link Publisher.send} writes the
   * batches.
   */
  append(channel: number, stampNs: number, sequence: number): void {
    const sealed = (sequence ^ sequenceSeal(stampNs, this.#sealKey)) >>> 0;
    const head = this.#frames.heads[channel];
    const payload = this.#frames.payload;
    const link = this.linkFor(channel);
    link.outstanding++;
    link.published++;
    const w = link.writer;
    const at = w.reserve(head.length + payload.length);
    const buf = w.buffer;
    buf.set(head, at);
    const p = at + head.length;
    buf.set(payload, p);
    const v = w.view;
    v.setFloat64(p, stampNs, true);
    v.setUint32(p + 8, this.index, true);
    v.setUint32(p + 12, sealed, true);
  }

  /** Writes every link's batch (now, or when its pending write ends). */
  send(): void {
    for (const l of this.links) l.writer.send();
  }

  /** Drops what is queued and closes every link. */
  close(): void {
    for (const l of this.links) {
      l.writer.close();
      l.outstanding = 0;
      try {
        l.sock.close();
      } catch { /* already closed */ }
    }
  }
}

/** A subscriber: its connection, its reader, its confirmations. */
export class Subscriber {
  confirmed = 0;
  closed = false;
  readonly reader: PushReader;

  /** Subscriber index. */
  readonly index: number;
  /** Names of its channels. */
  readonly channels: readonly string[];
  /** Its master's index in a cluster's slot map (0 for one server): its deliveries' lane. */
  readonly lane: number;

  /**
   * @param sock Its connection.
   * @param o Its index, the names of its channels and its lane (a cluster master's index: a
   * subscriber of channels on several masters has one connection to each, one lane each).
   * @param on Each message push (`message`), with its payload header's fields (`NaN` stamp:
   * none); an error reply (its text) or another reply (`other`).
   */
  constructor(
    readonly sock: Deno.Conn,
    o: { index: number; channels: readonly string[]; lane?: number },
    on: {
      message: (s: Subscriber, stampNs: number, publisher: number, sequence: number) => void;
      other: (s: Subscriber, error: string) => void;
    },
  ) {
    this.index = o.index;
    this.channels = o.channels;
    this.lane = o.lane ?? 0;
    const { message: onMessage, other: onOther } = on;
    this.reader = new PushReader({
      message: (stampNs, publisher, sequence) => onMessage(this, stampNs, publisher, sequence),
      subscribed: () => this.confirmed++,
      other: (e) => onOther(this, e),
    });
  }

  /**
   * The SUBSCRIBE (or SSUBSCRIBE) command for its channels; `perChannel`: one command per
   * channel (a cluster refuses an SSUBSCRIBE of channels in different slots: CROSSSLOT).
   */
  subscribeCommand(sharded: boolean, perChannel = false): Uint8Array {
    const command = sharded ? "SSUBSCRIBE" : "SUBSCRIBE";
    if (!perChannel) return encodeCommand([command, ...this.channels]);
    const parts = this.channels.map((c) => encodeCommand([command, c]));
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}
