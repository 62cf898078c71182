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
import type { PubSubChecked, PubSubResult } from "./types.ts";

/** The result without what only the caller knows (CPU, wall time, the engine). */
export type TalliedResult = Omit<
  PubSubResult,
  "clientCpuS" | "setupCpuS" | "wallS" | "engine" | "engineNote" | "stampedDeliveries"
>;

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
  /** Last sequence seen per subscriber × publisher (−1: none). */
  readonly #last: Int32Array;
  readonly #o: PubSubChecked;
  readonly #windowEndMs: number;

  /** @param o The step's checked options. */
  constructor(o: PubSubChecked) {
    this.#o = o;
    this.#last = new Int32Array(o.subscribers * o.publishers).fill(-1);
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
   * sequence its publisher has not reached) is a protocol error, never a delivery.
   *
   * @param sentBy How many messages each publisher has written (`undefined`: no such one).
   */
  // positional: called once per delivery on the hot path, where an options object would allocate
  delivery(
    s: number,
    t: number,
    stampNs: number,
    publisher: number,
    sequence: number,
    sentBy: number | undefined,
  ): void {
    if (sentBy === undefined || sequence >= sentBy || !(stampNs >= 0)) {
      this.protocolErrors++;
      this.errors++;
      this.sample(`subscriber ${s}: protocol error: a message kvlab did not publish`);
      return;
    }
    const k = s * this.#o.publishers + publisher;
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

  /** The result of the step. */
  result(interrupted: boolean): TalliedResult {
    const o = this.#o;
    return {
      mode: o.mode,
      publishers: o.publishers,
      subscribers: o.subscribers,
      channels: o.channels,
      fanOut: o.fanOut,
      payloadBytes: o.payloadBytes,
      requestedOpsPerSec: o.requestedOpsPerSec,
      publishRatePerSec: o.requestedOpsPerSec / o.fanOut,
      durationS: o.durationS,
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
      achievedOpsPerSec: this.deliveredInWindow / o.durationS,
      latency: this.latency,
      sendLateness: this.lateness,
      summary: latencySummary(this.latency),
      lateness: latencySummary(this.lateness),
      perSecond: secondSeries([this.series]),
      interrupted,
    };
  }
}
