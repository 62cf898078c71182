/**
 * The limits of what kvlab's generators and the tools it drives are asked to do, checked once
 * before any load (by the CLI for its options, by the plan kinds for their fields): rates,
 * sizes, durations and connection counts. A value outside is refused naming the option as the
 * user typed it (`--rate`, `sweep.rates`), never an internal name.
 *
 * Why these bounds:
 * - **Rates of kvlab's engines** (`kvlab load`, `kvlab pubsub`, `engine: kvlab`): at most
 *   {@link KVLAB_MAX_RATE}, 10⁷ per second, about ten times what one JavaScript process sends;
 *   above it a step only schedules messages it cannot send (and 10¹² overflowed timers).
 * - **Rates given to a tool** (memtier's `--rate-limiting`): at most 10⁹ per second, the rate
 *   no result can believably show (`impossible.ts`); memtier's per-connection rate is a 32-bit
 *   integer that overflowed above it.
 * - **Durations**: above 0 and at most a week (604,800 s), what a plan's `timeout_s` allows;
 *   a timer longer than 2³¹ ms (24.8 days) fires at once in JavaScript.
 * - **Sizes** (`--data-size`, `--payload`): at most 16 MiB: every connection holds its values
 *   in memory, and a 600 MB value took 1.9 GB.
 * - **Connections** (connections, publishers, subscribers, threads × clients): at most
 *   {@link MAX_CONNECTIONS}, below a default `ulimit -n` of many systems' daemons and Redis'
 *   default `maxclients` (10,000) when the other side is one server.
 *
 * @module
 */

import { readSystemFiles } from "../system/proc.ts";
import { MAX_OPS_PER_SEC } from "./impossible.ts";
import { type ClientRoom, clientRoom, ServerUnreachableError, snapshotServer } from "./server.ts";
import type { ServerTarget } from "./target.ts";

/** Highest rate kvlab's own engines take, operations (or deliveries) per second. */
export const KVLAB_MAX_RATE = 1e7;
/** Highest rate kvlab asks a tool for, operations per second. */
export const TOOL_MAX_RATE = MAX_OPS_PER_SEC;
/** Longest step, seconds (a week). */
export const MAX_DURATION_S = 604_800;
/** Longest warm-up or grace, seconds (a day). */
export const MAX_EXTRA_S = 86_400;
/** Largest value or payload, bytes (16 MiB). */
export const MAX_VALUE_BYTES = 16 << 20;
/** Most connections of one step. */
export const MAX_CONNECTIONS = 10_000;
/** Largest key space. */
export const MAX_KEYS = 1e9;
/** Deepest pipeline. */
export const MAX_PIPELINE = 10_000;

/** One bound: what a value may be. */
export interface Limit {
  /** Lowest value. */
  min: number;
  /** Whether `min` itself is refused (a duration above 0). @default {false} */
  minExclusive?: boolean;
  /** Highest value. */
  max: number;
  /** Whole numbers only. @default {false} */
  integer?: boolean;
  /** What the value counts, for the message ("requests per second"). */
  unit: string;
}

/** The limits of each kind of parameter (see the module doc). */
export const LIMITS = {
  kvlabRate: { min: 0, minExclusive: true, max: KVLAB_MAX_RATE, unit: "per second" },
  toolRate: { min: 0, minExclusive: true, max: TOOL_MAX_RATE, unit: "per second" },
  duration: { min: 0, minExclusive: true, max: MAX_DURATION_S, unit: "seconds" },
  extra: { min: 0, max: MAX_EXTRA_S, unit: "seconds" },
  valueBytes: { min: 1, max: MAX_VALUE_BYTES, integer: true, unit: "bytes" },
  payloadBytes: { min: 16, max: MAX_VALUE_BYTES, integer: true, unit: "bytes" },
  connections: { min: 1, max: MAX_CONNECTIONS, integer: true, unit: "connections" },
  keys: { min: 1, max: MAX_KEYS, integer: true, unit: "keys" },
  /** `kvlab sample --duration`: above 0, at most a day. */
  sampleDuration: { min: 0, minExclusive: true, max: MAX_EXTRA_S, unit: "seconds" },
  /** `kvlab sample --interval`: at least 50 ms (INFO, DBSIZE, /proc), at most a day. */
  sampleInterval: { min: 0.05, max: MAX_EXTRA_S, unit: "seconds" },
  /** Keys a memory sweep fills a server with (every loop bounded). */
  memoryKeys: { min: 1, max: 20_000_000, integer: true, unit: "keys" },
  pipeline: { min: 1, max: MAX_PIPELINE, integer: true, unit: "requests" },
} as const satisfies Record<string, Limit>;

/**
 * Why a value is outside its limit, in words, or undefined when it is inside.
 *
 * @param value The value.
 * @param limit Its limit.
 * @returns E.g. `expected seconds above 0 and at most 604800`.
 *
 * @example
 * ```ts
 * import { LIMITS, limitProblem } from "./limits.ts";
 * import assert from "node:assert/strict";
 * assert.equal(limitProblem(1e12, LIMITS.kvlabRate), "expected a number per second above 0 and at most 10000000");
 * assert.equal(limitProblem(15, LIMITS.payloadBytes), "expected a whole number of bytes from 16 to 16777216");
 * assert.equal(limitProblem(5, LIMITS.duration), undefined);
 * ```
 */
export function limitProblem(value: number, limit: Limit): string | undefined {
  const low = limit.minExclusive ? value > limit.min : value >= limit.min;
  const whole = !limit.integer || Number.isInteger(value);
  if (Number.isFinite(value) && low && value <= limit.max && whole) return undefined;
  const what = limit.integer ? `a whole number of ${limit.unit}` : `a number ${limit.unit}`;
  const range = limit.minExclusive
    ? `above ${limit.min} and at most ${limit.max}`
    : `from ${limit.min} to ${limit.max}`;
  return `expected ${what.replace("a number seconds", "seconds")} ${range}`;
}

/**
 * Reads an option's text as a number within its limit.
 *
 * @param option The option as the user typed it (`--rate`, `sweep.rates[2]`).
 * @param text Its value.
 * @param limit Its limit.
 * @returns The number.
 * @throws {RangeError} `invalid --rate: 1e12 (expected … at most 10000000)`.
 *
 * @example
 * ```ts
 * import { limited, LIMITS } from "./limits.ts";
 * import assert from "node:assert/strict";
 * assert.equal(limited("--duration", "2.5", LIMITS.duration), 2.5);
 * assert.throws(() => limited("--duration", "0", LIMITS.duration), /invalid --duration: 0 \(expected seconds above 0/);
 * assert.throws(() => limited("--warmup", "-1", LIMITS.extra), /invalid --warmup: -1/);
 * assert.throws(() => limited("--rate", "fast", LIMITS.kvlabRate), /invalid --rate: fast/);
 * ```
 */
export function limited(option: string, text: unknown, limit: Limit): number {
  const s = String(text ?? "").trim();
  const value = s === "" ? NaN : Number(s);
  const why = limitProblem(value, limit);
  if (why) throw new RangeError(`invalid ${option}: ${s === "" ? '""' : s} (${why})`);
  return value;
}

/**
 * This process's open-file limit (`ulimit -n`, soft), read from `/proc/self/limits`: every
 * connection is a file. Null where there is no such file (not Linux) or it cannot be read.
 *
 * @returns The limit, or null.
 */
export function openFilesLimit(): number | null {
  try {
    // through readSystemFiles: Deno refuses /proc without --allow-all, which ./kvlab does not give
    const limits = `/proc/${Deno.pid}/limits`;
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readSystemFiles([limits])[limits] ?? "");
    return m && m[1] !== "unlimited" ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Files kept free for the dataset, the runtime and the tools besides the connections. */
const SPARE_FILES = 64;

/**
 * Refuses more connections than this machine lets one process open (`ulimit -n`).
 *
 * @param option The option as typed (`--connections`, `--subscribers`).
 * @param connections The connections the step opens in all.
 * @param limit The open-file limit (see {@link openFilesLimit}); null: not checked.
 * @throws {RangeError} Naming the option, the limit and how to raise it.
 *
 * @example
 * ```ts
 * import { checkOpenFiles } from "./limits.ts";
 * import assert from "node:assert/strict";
 * checkOpenFiles("--connections", 100, 1024);
 * assert.throws(() => checkOpenFiles("--connections", 5000, 1024), /invalid --connections: 5000 \(this machine lets a process open 1024 files/);
 * ```
 */
export function checkOpenFiles(option: string, connections: number, limit: number | null): void {
  if (limit === null || connections + SPARE_FILES <= limit) return;
  throw new RangeError(
    `invalid ${option}: ${connections} (this machine lets a process open ${limit} files, ` +
      `connections included: raise \`ulimit -n\` or open fewer)`,
  );
}

/**
 * Refuses more connections than the server has room for (its `maxclients` minus the clients
 * already connected, see `clientRoom` in `server.ts`): past it the server answers
 * `ERR max number of clients reached` and closes the extra connections, so the step would
 * measure refusals.
 *
 * @param option The option as typed (`--connections`, `--publishers + --subscribers`,
 * `sweep.clients`).
 * @param connections The connections the step opens in all.
 * @param at The server's room (null: not known, not checked) and the server as shown (its
 * redacted URL).
 * @throws {RangeError} Naming the option, the server, its `maxclients` and its clients.
 *
 * @example
 * ```ts
 * import { checkServerRoom } from "./limits.ts";
 * import assert from "node:assert/strict";
 * const at = { room: { maxClients: 100, connected: 10, room: 90 }, server: "redis://h:1" };
 * checkServerRoom("--connections", 90, at);
 * assert.throws(
 *   () => checkServerRoom("--connections", 91, at),
 *   /^RangeError: invalid --connections: 91 \(redis:\/\/h:1 takes 90 more clients: maxclients 100, 10 connected\)/,
 * );
 * ```
 */
export function checkServerRoom(
  option: string,
  connections: number,
  at: { room: ClientRoom | null; server: string },
): void {
  if (at.room === null || connections <= at.room.room) return;
  throw new RangeError(roomProblem(option, connections, { ...at, room: at.room }));
}

/**
 * The message of {@link checkServerRoom}, for a step that fails its cell instead of throwing.
 *
 * @param option The option as typed.
 * @param connections The connections the step opens in all.
 * @param at The server's room and the server as shown.
 * @returns `invalid --connections: 91 (redis://h:1 takes 90 more clients: …)`.
 */
export function roomProblem(
  option: string,
  connections: number,
  { room, server }: { room: ClientRoom; server: string },
): string {
  return `invalid ${option}: ${connections} (${server} takes ${room.room} more clients: ` +
    `maxclients ${room.maxClients}, ${room.connected} connected)`;
}

/** How `kvlab pubsub`'s connection count is named: publishers and subscribers together. */
export const PUBSUB_CONNECTIONS = "--publishers + --subscribers";

/**
 * Checks, before any load, that a server has room for a step's connections (one snapshot
 * connection, closed at once). A server that cannot be reached is not refused here: the step
 * stores that as its failure.
 *
 * @param target The server.
 * @param option The option as typed.
 * @param connections The connections the step opens in all.
 * @throws {RangeError} See {@link checkServerRoom}.
 */
export async function checkServerConnections(
  target: ServerTarget,
  option: string,
  connections: number,
): Promise<void> {
  let snapshot;
  try {
    snapshot = await snapshotServer(target);
  } catch (e) {
    if (e instanceof ServerUnreachableError) return;
    throw e;
  }
  checkServerRoom(option, connections, { room: clientRoom(snapshot), server: target.display });
}
