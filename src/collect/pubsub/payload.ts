/**
 * The payload of a pub/sub message and the topology of a run. A payload starts with a 16-byte
 * header: the intended publish time as a float64 of integer nanoseconds since the start of the
 * run (exact up to 104 days), then the publisher's index and the message's sequence number on
 * that publisher (uint32 each, little-endian; the engines write the sequence sealed with the
 * stamp, see {@link sequenceSeal}); filler bytes make up the rest. The topology says
 * which channel each message goes to and which subscribers listen on each channel. Pure: no
 * clock, no I/O.
 *
 * @module
 */

/** Bytes of the header every payload starts with; the smallest payload allowed. */
export const PAYLOAD_HEADER_BYTES = 16;

/** How messages reach subscribers. */
export type PubSubMode = "one-to-one" | "fan-out" | "sharded";

/** The modes, in the order tables and plans list them. */
export const PUBSUB_MODES: readonly PubSubMode[] = ["one-to-one", "fan-out", "sharded"];

/** What a payload's header says. */
export interface PayloadHeader {
  /** Intended publish time, integer nanoseconds since the start of the run. */
  stampNs: number;
  /** Index of the publisher (0-based). */
  publisher: number;
  /** Sequence number of the message on its publisher (0-based). */
  sequence: number;
}

/**
 * Checks a mode name.
 *
 * @param text `one-to-one`, `fan-out` or `sharded`.
 * @returns The mode.
 * @throws {TypeError} On anything else.
 *
 * @example
 * ```ts
 * import { pubSubMode } from "./payload.ts";
 * import assert from "node:assert/strict";
 * assert.equal(pubSubMode("fan-out"), "fan-out");
 * assert.throws(() => pubSubMode("broadcast"), /invalid pub\/sub mode: broadcast/);
 * ```
 */
export function pubSubMode(text: string): PubSubMode {
  switch (text) {
    case "one-to-one":
    case "fan-out":
    case "sharded":
      return text;
    default:
      throw new TypeError(`invalid pub/sub mode: ${text} (expected ${PUBSUB_MODES.join(", ")})`);
  }
}

/**
 * Writes a header into the first 16 bytes of a payload.
 *
 * @param payload The payload (at least {@link PAYLOAD_HEADER_BYTES} bytes), changed in place.
 * @param header What to write.
 *
 * @example
 * ```ts
 * import { readPayloadHeader, writePayloadHeader } from "./payload.ts";
 * import assert from "node:assert/strict";
 * const p = new Uint8Array(128);
 * writePayloadHeader(p, { stampNs: 1_234_567_891, publisher: 63, sequence: 70_000 });
 * assert.deepEqual(readPayloadHeader(p), { stampNs: 1_234_567_891, publisher: 63, sequence: 70_000 });
 * ```
 */
export function writePayloadHeader(payload: Uint8Array, header: PayloadHeader): void {
  const v = new DataView(payload.buffer, payload.byteOffset, PAYLOAD_HEADER_BYTES);
  v.setFloat64(0, header.stampNs, true);
  v.setUint32(8, header.publisher, true);
  v.setUint32(12, header.sequence, true);
}

/**
 * Reads the header of a payload.
 *
 * @param payload At least the first {@link PAYLOAD_HEADER_BYTES} bytes of a payload.
 * @returns The header.
 * @throws {RangeError} When fewer bytes are given.
 */
export function readPayloadHeader(payload: Uint8Array): PayloadHeader {
  if (payload.length < PAYLOAD_HEADER_BYTES) {
    throw new RangeError(`a payload header has ${PAYLOAD_HEADER_BYTES} bytes: ${payload.length}`);
  }
  const v = new DataView(payload.buffer, payload.byteOffset, PAYLOAD_HEADER_BYTES);
  return {
    stampNs: v.getFloat64(0, true),
    publisher: v.getUint32(8, true),
    sequence: v.getUint32(12, true),
  };
}

/**
 * The seal of a message's sequence number: the header's sequence field holds `sequence XOR
 * sequenceSeal(stampNs, key)`, the key a step's own (random), so a message whose stamp (or
 * sequence) kvlab did not write decodes to a sequence its publisher never reached, and is a
 * protocol error, never a delivery (issue 30: a forged stamp of 10³⁰ was counted). A few
 * integer operations per message, nothing allocated.
 *
 * @param stampNs The stamp written in the header.
 * @param key The step's key.
 * @returns The 32-bit seal.
 *
 * @example
 * ```ts
 * import { sequenceSeal } from "./payload.ts";
 * import assert from "node:assert/strict";
 * const field = (7 ^ sequenceSeal(1_500_000, 42)) >>> 0; // what a publisher writes
 * assert.equal((field ^ sequenceSeal(1_500_000, 42)) >>> 0, 7); // what a subscriber reads
 * assert.notEqual((field ^ sequenceSeal(1e30, 42)) >>> 0, 7); // a forged stamp
 * ```
 */
export function sequenceSeal(stampNs: number, key: number): number {
  let h = Math.imul((stampNs >>> 0) ^ key, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h ^ (Math.floor(stampNs / 4294967296) | 0), 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Whether subscriber `subscriber` listens on `channel` (see {@link subscriberChannels}), in
 * constant time: a delivery the topology cannot produce is a protocol error.
 *
 * @param t The topology.
 * @param subscriber Index of the subscriber.
 * @param channel Index of the channel.
 * @returns Whether the channel has that subscriber.
 *
 * @example
 * ```ts
 * import { listensOn, subscriberChannels } from "./payload.ts";
 * import assert from "node:assert/strict";
 * const t = { subscribers: 5, channels: 4, fanOut: 2 };
 * for (let s = 0; s < 5; s++) {
 *   const mine = subscriberChannels(t, s);
 *   for (let c = 0; c < 4; c++) assert.equal(listensOn(t, s, c), mine.includes(c));
 * }
 * ```
 */
export function listensOn(t: PubSubTopology, subscriber: number, channel: number): boolean {
  const n = t.subscribers;
  return ((subscriber - ((channel * t.fanOut) % n)) % n + n) % n < t.fanOut;
}

/** Who listens where. */
export interface PubSubTopology {
  subscribers: number;
  channels: number;
  /** Subscribers of every channel. */
  fanOut: number;
}

/**
 * Most subscriptions of a step (channels × fan-out): each is a channel name a subscriber sends
 * and the server keeps; 10⁹ channels subscribed until the step's deadline.
 */
export const MAX_SUBSCRIPTIONS = 1_000_000;

/**
 * Checks a topology: every channel has `fanOut` distinct subscribers and every subscriber
 * listens on at least one channel.
 *
 * @param t Subscribers, channels, fan-out.
 * @returns `t`.
 * @throws {RangeError} When a count is not a positive integer, the fan-out exceeds the
 * subscribers, some subscriber would listen on nothing (channels × fan-out < subscribers), or
 * there are more than {@link MAX_SUBSCRIPTIONS} subscriptions (channels × fan-out).
 *
 * @example
 * ```ts
 * import { checkTopology } from "./payload.ts";
 * import assert from "node:assert/strict";
 * checkTopology({ subscribers: 100, channels: 100, fanOut: 1 });
 * assert.throws(() => checkTopology({ subscribers: 10, channels: 2, fanOut: 3 }), /listen on nothing/);
 * assert.throws(() => checkTopology({ subscribers: 2, channels: 1e9, fanOut: 1 }), /at most 1000000/);
 * ```
 */
export function checkTopology(t: PubSubTopology): PubSubTopology {
  for (const [k, v] of Object.entries(t)) {
    if (!Number.isInteger(v) || v < 1) {
      throw new RangeError(`${k} must be a positive integer: ${v}`);
    }
  }
  if (t.fanOut > t.subscribers) {
    throw new RangeError(`fan-out ${t.fanOut} exceeds the ${t.subscribers} subscribers`);
  }
  if (t.channels * t.fanOut > MAX_SUBSCRIPTIONS) {
    throw new RangeError(
      `${t.channels} channels × fan-out ${t.fanOut} subscriptions: at most ${MAX_SUBSCRIPTIONS}`,
    );
  }
  if (t.channels * t.fanOut < t.subscribers) {
    throw new RangeError(
      `${t.channels} channels × fan-out ${t.fanOut} < ${t.subscribers} subscribers: ` +
        "some subscribers would listen on nothing",
    );
  }
  return t;
}

/**
 * The channels a subscriber listens on: channel `c` has subscribers `(c × fanOut + j) mod
 * subscribers` for `j < fanOut`, so with as many channels as subscribers and fan-out 1 each
 * subscriber has its own channel (seed 000's one-to-one), and one channel with fan-out =
 * subscribers reaches everyone.
 *
 * @param t A checked topology.
 * @param subscriber Index of the subscriber.
 * @returns Channel indexes, increasing.
 *
 * @example
 * ```ts
 * import { subscriberChannels } from "./payload.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(subscriberChannels({ subscribers: 4, channels: 4, fanOut: 1 }, 2), [2]);
 * assert.deepEqual(subscriberChannels({ subscribers: 4, channels: 1, fanOut: 4 }, 3), [0]);
 * assert.deepEqual(subscriberChannels({ subscribers: 4, channels: 4, fanOut: 2 }, 0), [0, 2]);
 * ```
 */
export function subscriberChannels(t: PubSubTopology, subscriber: number): number[] {
  const out: number[] = [];
  for (let c = 0; c < t.channels; c++) {
    for (let j = 0; j < t.fanOut; j++) {
      if ((c * t.fanOut + j) % t.subscribers === subscriber) {
        out.push(c);
        break;
      }
    }
  }
  return out;
}

/**
 * The channel of a publisher's message: messages are numbered across publishers in send order
 * (`sequence × publishers + publisher`) and dealt to channels in turn, so every channel gets the
 * same share. Called once per message: `step` is the run's options, as they are (no object is
 * made per call).
 *
 * @param publisher Index of the publisher.
 * @param sequence The message's number on its publisher.
 * @param step The numbers of publishers and channels.
 * @returns The channel index.
 *
 * @example
 * ```ts
 * import { messageChannel } from "./payload.ts";
 * import assert from "node:assert/strict";
 * const step = { publishers: 2, channels: 3 };
 * assert.deepEqual([0, 1, 2, 3].map((n) => messageChannel(1, n, step)), [1, 0, 2, 1]);
 * ```
 */
export function messageChannel(
  publisher: number,
  sequence: number,
  step: { publishers: number; channels: number },
): number {
  return (sequence * step.publishers + publisher) % step.channels;
}
