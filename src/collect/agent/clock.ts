/**
 * Clocks of several client hosts: each agent's offset against the control server's `TIME`
 * (NTP's rule: the sample with the shortest round trip, the offset taken at its midpoint, half
 * its round trip as the uncertainty), the start time a coordinator gives a step (far enough
 * ahead for every agent), and the bound above which a start skew is a warning. Pure.
 *
 * @module
 */

import type { ClockOffset } from "./protocol.ts";

/** One round trip of `TIME`: local send and receive times and the server's time, epoch ms. */
export interface TimeSample {
  sentMs: number;
  serverMs: number;
  receivedMs: number;
}

/**
 * The clock offset from round trips of `TIME`: the shortest one's midpoint.
 *
 * @param samples At least one round trip.
 * @returns Offset (control − local) and its uncertainty (half the best round trip), ms.
 * @throws {RangeError} Without samples, or with a sample received before it was sent.
 *
 * @example
 * ```ts
 * import { clockOffset } from "./clock.ts";
 * import assert from "node:assert/strict";
 * // the server is 100 ms ahead; the second round trip is the shortest (2 ms)
 * const c = clockOffset([
 *   { sentMs: 0, serverMs: 105, receivedMs: 8 },
 *   { sentMs: 10, serverMs: 111, receivedMs: 12 },
 * ]);
 * assert.deepEqual(c, { offsetMs: 100, uncertaintyMs: 1, roundTrips: 2 });
 * ```
 */
export function clockOffset(samples: readonly TimeSample[]): ClockOffset {
  if (samples.length === 0) throw new RangeError("no round trip of TIME measured");
  let best = samples[0];
  for (const s of samples) {
    if (!(s.receivedMs >= s.sentMs)) throw new RangeError("a round trip ended before it began");
    if (s.receivedMs - s.sentMs < best.receivedMs - best.sentMs) best = s;
  }
  const rtt = best.receivedMs - best.sentMs;
  return {
    offsetMs: best.serverMs - (best.sentMs + rtt / 2),
    uncertaintyMs: rtt / 2,
    roundTrips: samples.length,
  };
}

/**
 * The control server's `TIME` reply (`[seconds, microseconds]`) in epoch ms.
 *
 * @param reply The two strings.
 * @returns Milliseconds.
 * @throws {TypeError} For a reply that is not two integers.
 *
 * @example
 * ```ts
 * import { timeReplyMs } from "./clock.ts";
 * import assert from "node:assert/strict";
 * assert.equal(timeReplyMs(["1700000000", "250000"]), 1_700_000_000_250);
 * assert.throws(() => timeReplyMs(["x"]), TypeError);
 * ```
 */
export function timeReplyMs(reply: unknown): number {
  if (
    !Array.isArray(reply) || reply.length !== 2 ||
    !reply.every((x) => typeof x === "string" && /^\d{1,12}$/.test(x))
  ) {
    throw new TypeError(`TIME: expected [seconds, microseconds], got ${JSON.stringify(reply)}`);
  }
  return Number(reply[0]) * 1000 + Number(reply[1]) / 1000;
}

/** The smallest start skew that is a warning, ms (issue 35). */
export const DEFAULT_SKEW_BOUND_MS = 5;

/**
 * The start skew above which an agent's start is a warning: 5 ms, or its measured offset
 * uncertainty when that is larger (a skew within it cannot be told from none).
 *
 * @param uncertaintyMs The agent's offset uncertainty.
 * @returns The bound, ms.
 *
 * @example
 * ```ts
 * import { skewBoundMs } from "./clock.ts";
 * import assert from "node:assert/strict";
 * assert.equal(skewBoundMs(0.1), 5);
 * assert.equal(skewBoundMs(12), 12);
 * ```
 */
export function skewBoundMs(uncertaintyMs: number): number {
  return Math.max(DEFAULT_SKEW_BOUND_MS, uncertaintyMs);
}

/**
 * The warning of an agent whose step started too far from the common start, or null.
 *
 * @param agent Its name.
 * @param skewMs Its start − the common start (control clock), ms.
 * @param uncertaintyMs Its offset uncertainty, ms.
 * @returns The warning text, or null within the bound.
 *
 * @example
 * ```ts
 * import { skewWarning } from "./clock.ts";
 * import assert from "node:assert/strict";
 * assert.equal(skewWarning("a1", 1.2, 0.1), null);
 * assert.equal(skewWarning("a2", -7.5, 0.1),
 *   "agent a2 started 7.5 ms before the common start (bound 5 ms)");
 * ```
 */
export function skewWarning(agent: string, skewMs: number, uncertaintyMs: number): string | null {
  const bound = skewBoundMs(uncertaintyMs);
  if (Math.abs(skewMs) <= bound) return null;
  const side = skewMs > 0 ? "after" : "before";
  return `agent ${agent} started ${Math.abs(skewMs).toFixed(1)} ms ${side} the common start ` +
    `(bound ${+bound.toFixed(1)} ms)`;
}

/**
 * When a step starts, control clock: `leadMs` after now, plus the worst offset uncertainty of
 * the agents twice over (each may read the start that much early or late).
 *
 * @param nowMs The control server's time, epoch ms.
 * @param clocks The agents' clocks.
 * @param leadMs Time to post the items and open the connections. @default {3000}
 * @returns Epoch ms, control clock.
 *
 * @example
 * ```ts
 * import { commonStartMs } from "./clock.ts";
 * import assert from "node:assert/strict";
 * assert.equal(commonStartMs(1000, [{ offsetMs: 3, uncertaintyMs: 10, roundTrips: 8 }]), 4020);
 * ```
 */
export function commonStartMs(
  nowMs: number,
  clocks: readonly ClockOffset[],
  leadMs = 3000,
): number {
  const worst = Math.max(0, ...clocks.map((c) => c.uncertaintyMs));
  return nowMs + leadMs + 2 * worst;
}
