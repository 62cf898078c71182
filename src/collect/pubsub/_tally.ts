/**
 * The counts of a pub/sub step, kept the same way by both engines (`_run.ts` on Deno TCP,
 * `_ffi_run.ts` on the epoll loop): what a delivery, a publish reply and a lost connection
 * count, and the result they make. One rule, one place: the engines only say when things
 * happened.
 *
 * @module
 */

import { latencyHistogram, latencySummary, recordMs } from "../loadgen/histogram.ts";
import { countReply, countSent, emptySecondCounts, secondSeries } from "../loadgen/series.ts";
import { listensOn, messageChannel, sequenceSeal } from "./payload.ts";
import type { RespReplyKind } from "../loadgen/resp.ts";
import { type PubSubChecked, type PubSubResult, PubSubUnsupportedError } from "./types.ts";

/** The result without what only the caller knows (CPU, wall time, the engine). */
export type TalliedResult = Omit<
  PubSubResult,
  "clientCpuS" | "setupCpuS" | "wallS" | "engine" | "engineNote" | "stampedDeliveries"
>;

/**
 * What a subscriber's reply other than a message means before it confirmed every channel: an
 * error ends the step at once, named (`SUBSCRIBE refused: ERR …`, or a server without sharded
 * pub/sub), as does a reply that is no confirmation; "" (none) after the confirmations is
 * counted as the step goes.
 *
 * @param reply The error text, or "" for another reply.
 * @param o The command sent and whether the subscriber is still subscribing.
 * @returns The error to end the step with, or null.
 *
 * @example
 * ```ts
 * import { subscribeFailure } from "./_tally.ts";
 * import assert from "node:assert/strict";
 * const o = { command: "SUBSCRIBE", subscribing: true };
 * assert.equal(subscribeFailure("ERR no", o)?.message, "SUBSCRIBE refused: ERR no");
 * assert.match(subscribeFailure("", o)?.message ?? "", /not a subscribe confirmation/);
 * assert.equal(subscribeFailure("ERR no", { ...o, subscribing: false }), null);
 * ```
 */
export function subscribeFailure(
  reply: string,
  o: { command: string; subscribing: boolean },
): Error | null {
  if (!o.subscribing) return null;
  if (reply === "") {
    return new Deno.errors.InvalidData(
      `${o.command} answered with a reply that is not a subscribe confirmation`,
    );
  }
  if (/unknown command|unknown subcommand/i.test(reply)) return new PubSubUnsupportedError(reply);
  return new Deno.errors.PermissionDenied(`${o.command} refused: ${reply}`);
}

/**
 * The error of subscribers that did not confirm their channels in time, saying how far they got.
 *
 * @example
 * ```ts
 * import { subscribeTimeout } from "./_tally.ts";
 * import assert from "node:assert/strict";
 * assert.equal(subscribeTimeout([{ confirmed: 1, channels: ["a", "b"] }], 5000).message,
 *   "subscribing timed out: 1 of 2 subscriptions confirmed in 5 s (the server answers, but " +
 *   "not to SUBSCRIBE?)");
 * ```
 */
export function subscribeTimeout(
  subs: readonly { confirmed: number; channels: readonly string[] }[],
  ms: number,
): Error {
  const got = subs.reduce((n, s) => n + Math.min(s.confirmed, s.channels.length), 0);
  const want = subs.reduce((n, s) => n + s.channels.length, 0);
  return new Deno.errors.TimedOut(
    `subscribing timed out: ${got} of ${want} subscriptions confirmed in ${ms / 1000} s ` +
      "(the server answers, but not to SUBSCRIBE?)",
  );
}

/**
 * What is wrong with a reply to a publisher, or null: a reply to no PUBLISH (more replies than
 * messages), or one that is neither an integer (the receivers reached) nor an error. The
 * replies can then no longer be matched: the engines drop the connection.
 *
 * @example
 * ```ts
 * import { publishReplyProblem } from "./_tally.ts";
 * import assert from "node:assert/strict";
 * assert.equal(publishReplyProblem(1, "integer"), null);
 * assert.equal(publishReplyProblem(1, "simple"),
 *   "a simple string in reply to PUBLISH (expected an integer)");
 * assert.equal(publishReplyProblem(0, "integer"),
 *   "a reply to no PUBLISH (more replies than messages)");
 * ```
 */
export function publishReplyProblem(outstanding: number, kind: RespReplyKind): string | null {
  if (outstanding === 0) return "a reply to no PUBLISH (more replies than messages)";
  if (kind === "integer" || kind === "error") return null;
  const what = {
    simple: "a simple string",
    bulk: "a bulk string",
    nil: "a nil",
    array: "an array",
  };
  return `${what[kind]} in reply to PUBLISH (expected an integer)`;
}

/** One step's counts. */
export class PubSubTally {
  published = 0;
  unsent = 0;
  publishErrors = 0;
  delivered = 0;
  deliveredInWindow = 0;
  duplicated = 0;
  disconnects = 0;
  protocolErrors = 0;
  errors = 0;
  readonly errorSamples: string[] = [];
  readonly latency = latencyHistogram();
  readonly lateness = latencyHistogram();
  readonly series = emptySecondCounts();
  /**
   * Last sequence seen per lane × subscriber × publisher (−1: none). A lane is a cluster
   * master: a publisher's messages reach a subscriber in order through one master only.
   */
  readonly #last: Int32Array;
  readonly #o: PubSubChecked;
  readonly #windowEndMs: number;

  /**
   * @param o The step's checked options.
   * @param lanes How many lanes (the masters of a cluster in sharded mode, else 1).
   */
  constructor(o: PubSubChecked, lanes = 1) {
    this.#o = o;
    this.#last = new Int32Array(lanes * o.subscribers * o.publishers).fill(-1);
    this.#windowEndMs = o.durationS * 1000;
  }

  /** A message written at `t` (ms since the start), intended at `intendedMs`. */
  sent(t: number, intendedMs: number): void {
    recordMs(this.lateness, t - intendedMs);
    countSent(this.series, t);
  }

  /**
   * A `message` push read by subscriber `s`, received at `t` (ms since the start). A message
   * kvlab did not publish (a server pushing its own, a payload too short to be ours: NaN, a
   * stamp kvlab did not write: its sealed sequence then decodes to one its publisher has not
   * reached, see `sequenceSeal`) or one the topology cannot bring to `s` (a channel it did not
   * subscribe to) is a protocol error, never a delivery (issue 30).
   *
   * @param sealed The header's sequence field (the sequence XOR its seal).
   * @param sentBy How many messages each publisher has written (`undefined`: no such one).
   * @param lane The master it came through (its order is kept per lane). @default {0}
   */
  // positional: called once per delivery on the hot path, where an options object would allocate
  delivery(
    s: number,
    t: number,
    stampNs: number,
    publisher: number,
    sealed: number,
    sentBy: number | undefined,
    lane = 0,
  ): void {
    const o = this.#o;
    const sequence = (sealed ^ sequenceSeal(stampNs, o.sealKey)) >>> 0;
    if (sentBy === undefined || sequence >= sentBy || !(stampNs >= 0)) {
      this.protocolErrors++;
      this.errors++;
      this.sample(`subscriber ${s}: protocol error: a message kvlab did not publish`);
      return;
    }
    if (!listensOn(o, s, messageChannel(publisher, sequence, o))) {
      this.protocolErrors++;
      this.errors++;
      this.sample(
        `subscriber ${s}: protocol error: a message on a channel it did not subscribe to ` +
          `(the ${o.mode} topology cannot deliver it there)`,
      );
      return;
    }
    const k = (lane * o.subscribers + s) * o.publishers + publisher;
    if (sequence <= this.#last[k]) {
      this.duplicated++;
      return;
    }
    this.#last[k] = sequence;
    this.delivered++;
    if (t < this.#windowEndMs) this.deliveredInWindow++;
    const latencyMs = t - stampNs / 1e6;
    recordMs(this.latency, latencyMs);
    countReply(this.series, t, latencyMs);
  }

  /** An error reply to a PUBLISH, read at `t`. */
  publishError(t: number, text: string): void {
    this.publishErrors++;
    this.errors++;
    this.sample(`publish: ${text}`);
    countReply(this.series, t, undefined);
  }

  /** An error reply to a subscriber (not the refused SSUBSCRIBE of a server without it). */
  subscriberError(s: number, text: string): void {
    this.errors++;
    this.sample(`subscriber ${s}: ${text}`);
  }

  /** A connection lost: `outstanding` publishes (of a publisher) become publish errors. */
  lost(who: string, text: string, outstanding: number): void {
    this.disconnects++;
    this.errors++;
    this.publishErrors += outstanding;
    this.sample(`${who}: ${text}`);
  }

  /** Keeps up to five distinct error texts. */
  sample(text: string): void {
    const s = this.errorSamples;
    if (s.length < 5 && !s.includes(text)) s.push(text);
  }

  /** Deliveries owed: (published − publish errors) × fan-out. */
  expected(): number {
    return (this.published - this.publishErrors) * this.#o.fanOut;
  }

  /**
   * The result of the step.
   *
   * @param interrupted Whether a signal ended it.
   * @param endedAtMs When it ended (ms since the start): an interrupted window's length, over
   * which its rate is counted (not the window asked for).
   */
  result(interrupted: boolean, endedAtMs = Infinity): TalliedResult {
    const o = this.#o;
    const durationS = interrupted
      ? Math.min(o.durationS, Math.max(0.001, endedAtMs / 1000))
      : o.durationS;
    return {
      mode: o.mode,
      publishers: o.publishers,
      subscribers: o.subscribers,
      channels: o.channels,
      fanOut: o.fanOut,
      payloadBytes: o.payloadBytes,
      requestedOpsPerSec: o.requestedOpsPerSec,
      publishRatePerSec: o.requestedOpsPerSec / o.fanOut,
      durationS,
      graceS: o.graceS,
      published: this.published,
      unsent: this.unsent,
      publishErrors: this.publishErrors,
      delivered: this.delivered,
      deliveredInWindow: this.deliveredInWindow,
      lost: Math.max(0, this.expected() - this.delivered),
      duplicated: this.duplicated,
      disconnects: this.disconnects,
      protocolErrors: this.protocolErrors,
      errors: this.errors,
      errorSamples: this.errorSamples,
      achievedOpsPerSec: this.deliveredInWindow / durationS,
      latency: this.latency,
      sendLateness: this.lateness,
      summary: latencySummary(this.latency),
      lateness: latencySummary(this.lateness),
      perSecond: secondSeries([this.series]),
      interrupted,
    };
  }
}
