/**
 * The open-loop schedule: when each connection is meant to send (phases spread so no burst is
 * synchronized; evenly spaced or Poisson arrivals), and which command and key each request
 * uses. Pure: seeded random numbers, no clock.
 *
 * @module
 */

import { seededRandom } from "../../random.ts";

/** How requests arrive: evenly spaced per connection, or a Poisson process. */
export type ArrivalMode = "uniform" | "poisson";

import { parseRatio, type RatioMix } from "../tools/workload.ts";

/** SET:GET (see `../tools/workload.ts`). */
export { parseRatio, type RatioMix };

/** A seeded generator in [0, 1) (mulberry32; see `src/random.ts`). */
export { seededRandom };

/**
 * Mean time between two requests of one connection when `connections` share `requestedOpsPerSec`.
 *
 * @param requestedOpsPerSec Requested total rate.
 * @param connections Number of connections.
 * @returns Milliseconds.
 *
 * @example
 * ```ts
 * import { connectionIntervalMs } from "./schedule.ts";
 * import assert from "node:assert/strict";
 * assert.equal(connectionIntervalMs(1000, 10), 10);
 * ```
 */
export function connectionIntervalMs(requestedOpsPerSec: number, connections: number): number {
  if (!(requestedOpsPerSec > 0) || !Number.isFinite(requestedOpsPerSec)) {
    throw new RangeError(`rate must be a positive number: ${requestedOpsPerSec}`);
  }
  if (!Number.isInteger(connections) || connections < 1) {
    throw new RangeError(`connections must be a positive integer: ${connections}`);
  }
  return (connections * 1000) / requestedOpsPerSec;
}

/** The schedule a connection's first request is placed in (see {@link firstSendMs}). */
export interface FirstSendOptions {
  /** Total connections (across workers). */
  connections: number;
  /** Per-connection interval, ms ({@link connectionIntervalMs}). */
  intervalMs: number;
  /** Arrival mode. */
  arrival: ArrivalMode;
}

/**
 * Intended time of a connection's first request. Uniform: connection `index` of `connections`
 * starts at `index / connections` of an interval, so the merged stream is evenly spaced.
 * Poisson: an exponential wait from 0 (the process is memoryless).
 *
 * @param conn The connection: its global index (0-based, across workers) and its random
 * source (for `poisson`).
 * @param o The connections, their interval and the arrival mode.
 * @returns Milliseconds from the start of the run.
 *
 * @example
 * ```ts
 * import { firstSendMs } from "./schedule.ts";
 * import assert from "node:assert/strict";
 * const o = { connections: 4, intervalMs: 10, arrival: "uniform" as const };
 * assert.deepEqual([0, 1, 2, 3].map((index) => firstSendMs({ index, random: Math.random }, o)),
 *   [0, 2.5, 5, 7.5]);
 * ```
 */
export function firstSendMs(
  conn: { index: number; random: () => number },
  o: FirstSendOptions,
): number {
  switch (o.arrival) {
    case "uniform":
      return (conn.index * o.intervalMs) / o.connections;
    case "poisson":
      return -Math.log(1 - conn.random()) * o.intervalMs;
    default:
      throw new TypeError(`invalid arrival mode: ${o.arrival}`);
  }
}

/**
 * Intended time of the request after one meant for `previousMs`.
 *
 * @param previousMs Intended time of the previous request.
 * @param intervalMs Per-connection interval (the mean, for `poisson`).
 * @param mode Arrival mode.
 * @param random Random source for `poisson`.
 * @returns Milliseconds from the start of the run.
 *
 * @example
 * ```ts
 * import { nextSendMs } from "./schedule.ts";
 * import assert from "node:assert/strict";
 * assert.equal(nextSendMs(5, 10, "uniform", Math.random), 15);
 * assert.ok(nextSendMs(5, 10, "poisson", Math.random) >= 5);
 * ```
 */
// positional: called once per request (and per pub/sub message) on the engines' hot paths
export function nextSendMs(
  previousMs: number,
  intervalMs: number,
  mode: ArrivalMode,
  random: () => number,
): number {
  return mode === "uniform"
    ? previousMs + intervalMs
    : previousMs - Math.log(1 - random()) * intervalMs;
}

/**
 * Requests that fell due before the end of the sending window but were never sent: from each
 * connection's next intended time up to `endMs`, at most `budget` in all (a run's request cap).
 *
 * @param conns Each connection's next intended time (ms) and its random source.
 * @param o The window's end (ms), the connections' interval (ms) and arrival mode.
 * @param budget Most requests left to count.
 * @returns How many.
 *
 * @example
 * ```ts
 * import { unsentBefore } from "./schedule.ts";
 * import assert from "node:assert/strict";
 * const conns = [{ next: 0, random: Math.random }, { next: 5, random: Math.random }];
 * const o = { endMs: 20, intervalMs: 10, arrival: "uniform" as const };
 * assert.equal(unsentBefore(conns, o, 100), 4); // 0, 10 and 5, 15
 * assert.equal(unsentBefore(conns, o, 3), 3);
 * ```
 */
export function unsentBefore(
  conns: Iterable<{ next: number; random: () => number }>,
  o: { endMs: number; intervalMs: number; arrival: ArrivalMode },
  budget: number,
): number {
  let n = 0;
  for (const c of conns) {
    for (
      let t = c.next;
      t < o.endMs && n < budget;
      t = nextSendMs(t, o.intervalMs, o.arrival, c.random)
    ) {
      n++;
    }
  }
  return n;
}

/** The run a connection's whole schedule is made for (see {@link connectionSchedule}). */
export interface ConnectionScheduleOptions {
  /** Total connections. */
  connections: number;
  /** Requested total rate, requests per second. */
  requestedOpsPerSec: number;
  /** Length of the run, ms. */
  durationMs: number;
  /** Arrival mode. */
  arrival: ArrivalMode;
  /** Seed of the connection's random source. */
  seed: number;
}

/**
 * All intended send times of one connection in `[0, durationMs)`: the whole schedule, for
 * tests and plots (the generator computes them one at a time).
 *
 * @param index Global connection index.
 * @param o The connections, the rate, the run's length, the arrival mode and the seed.
 * @returns Increasing times in milliseconds.
 *
 * @example
 * ```ts
 * import { connectionSchedule } from "./schedule.ts";
 * import assert from "node:assert/strict";
 * // 1,000/s over 10 connections: connection 3 sends at 3, 13, 23, … ms
 * assert.deepEqual(
 *   connectionSchedule(3, {
 *     connections: 10, requestedOpsPerSec: 1000, durationMs: 40, arrival: "uniform", seed: 1,
 *   }),
 *   [3, 13, 23, 33],
 * );
 * ```
 */
export function connectionSchedule(index: number, o: ConnectionScheduleOptions): number[] {
  const intervalMs = connectionIntervalMs(o.requestedOpsPerSec, o.connections);
  const random = seededRandom(o.seed);
  const out: number[] = [];
  for (
    let t = firstSendMs({ index, random }, { ...o, intervalMs });
    t < o.durationMs;
    t = nextSendMs(t, intervalMs, o.arrival, random)
  ) out.push(t);
  return out;
}

/**
 * Whether request `n` of connection `index` is a SET. The mix is exact over every
 * `set + get` requests of a connection, and shifted by the connection index so the SETs of
 * different connections do not line up.
 *
 * @param n Request number on the connection (0-based).
 * @param index Global connection index.
 * @param mix SET:GET mix.
 * @returns true for SET, false for GET.
 *
 * @example
 * ```ts
 * import { isSetRequest } from "./schedule.ts";
 * import assert from "node:assert/strict";
 * const mix = { set: 1, get: 10 };
 * const sets = Array.from({ length: 110 }, (_, n) => isSetRequest(n, 4, mix)).filter(Boolean);
 * assert.equal(sets.length, 10);
 * assert.equal(isSetRequest(0, 0, { set: 0, get: 1 }), false);
 * ```
 */
export function isSetRequest(n: number, index: number, mix: RatioMix): boolean {
  return (n + index) % (mix.set + mix.get) < mix.set;
}

/**
 * The plan of one host's share of a run's connections (issue 35; `OpenLoopOptions.share`): its connections
 * keep their global indices (phases and key choices as in the whole run), its request budget
 * is in proportion.
 *
 * @param plan The whole run.
 * @param share Which share, or none for the whole run.
 * @returns The share's plan.
 * @throws {RangeError} For a share that is not one of `of`, or one with no connection.
 *
 * @example
 * ```ts
 * import { openLoopPlan } from "./open_loop.ts";
 * import { shareOf } from "./schedule.ts";
 * import assert from "node:assert/strict";
 * const p = openLoopPlan({ port: 1, requestedOpsPerSec: 900, connections: 6, durationS: 1 });
 * assert.deepEqual(shareOf(p, { index: 1, of: 3 }).indices, [1, 4]);
 * assert.throws(() => shareOf(p, { index: 3, of: 3 }), RangeError);
 * ```
 */
export function shareOf<T extends { indices: number[]; connections: number; maxRequests: number }>(
  plan: T,
  share?: { index: number; of: number },
): T {
  if (share === undefined) return plan;
  const { index, of } = share;
  if (!Number.isInteger(of) || of < 1 || !Number.isInteger(index) || index < 0 || index >= of) {
    throw new RangeError(`share must be 0 ≤ index < of: ${index} of ${of}`);
  }
  const indices = plan.indices.filter((i) => i % of === index);
  if (indices.length === 0) {
    throw new RangeError(`share ${index} of ${of} has no connection (${plan.connections} in all)`);
  }
  const maxRequests = Math.ceil((plan.maxRequests * indices.length) / plan.indices.length);
  return { ...plan, indices, maxRequests };
}
