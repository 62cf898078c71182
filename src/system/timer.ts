/**
 * What a timed sleep costs on this machine: the floor under any load generator that sends each
 * request at its own intended time. The calling thread keeps a schedule of one due time every
 * `gapUs`, sleeping until each in `epoll_pwait2` on an empty epoll set (timer slack 1 ns), as
 * the open loop's `ffi` engine sleeps until its next due send, and reads its own CPU time
 * (`getrusage(RUSAGE_THREAD)`) around it.
 *
 * On bare metal a sleep and its wake-up cost a few microseconds. In a virtual machine the timer
 * and the halt go through the hypervisor: on the 2-core development machines (KVM) a 200 µs
 * sleep cost 30–65 µs of CPU and woke 0.1–0.4 ms late at p99 (about 1 ms on a busy machine).
 * A precise generator sleeps once per send while sends are further apart than that, so its
 * sleeps alone cost about rate × CPU per sleep. Its send lateness is not expected below that
 * of the schedule the sleeps keep, where one late wake-up makes every send due meanwhile late:
 * at 200 µs between due times that p99 was 0.14–2.0 ms on the same machines (2026-12-02).
 *
 * @example
 * ```ts
 * import { timedSleepCost } from "./timer.ts";
 * import assert from "node:assert/strict";
 * const c = timedSleepCost(200, 0.05); // null without FFI (no --allow-ffi, no epoll_pwait2)
 * if (c !== null) {
 *   assert.equal(c.dueTimes, 250); // one every 200 µs, none skipped
 *   assert.ok(c.sleeps > 0 && c.sleeps <= c.dueTimes, `${c.sleeps} sleeps`);
 *   assert.ok(c.cpuUsPerSleep > 0);
 *   assert.ok(c.overshootP99Us > -5, "a sleep is never shorter than asked");
 * }
 * assert.throws(() => timedSleepCost(NaN), RangeError);
 * assert.throws(() => timedSleepCost(2e6, 1), RangeError); // not one due time in the time
 * ```
 *
 * @module
 */

/** What {@link timedSleepCost} measured. */
export interface SleepCost {
  /** Time between due times, µs (the longest sleep: after a late wake-up the next is shorter). */
  gapUs: number;
  /** Sleeps done (fewer than due times when a late wake-up passed several). */
  sleeps: number;
  /** The thread's CPU time (user + system) per sleep, µs: the sleep, its wake-up and the
   * bookkeeping of the due times it served. */
  cpuUsPerSleep: number;
  /** How much longer than asked a sleep took, on average, µs (the wake-up's delay). */
  overshootUs: number;
  /** The same, 99th percentile, µs (with fewer than {@link P99_MIN_SLEEPS} sleeps, the
   * largest: see `sleeps`). */
  overshootP99Us: number;
  /** Due times of the schedule the sleeps kept (one every `gapUs`). */
  dueTimes: number;
  /** Lateness of those due times, 99th percentile, µs, counted as an open loop counts its
   * sends: a wake-up late by L makes every due time it passed late, by up to L. While no
   * wake-up is later than one gap it equals `overshootP99Us`; it is the send lateness a
   * generator that sleeps between sends is not expected to beat here (with fewer than
   * {@link P99_MIN_SLEEPS} due times, the largest). */
  scheduleLatenessP99Us: number;
}

/** Fewest values whose 99th percentile is read as one (below it, the largest is given). */
export const P99_MIN_SLEEPS = 100;

/** The 99th percentile of `v` (nearest rank), or its largest when it has fewer than
 * {@link P99_MIN_SLEEPS} values. Sorts `v`. */
function p99(v: number[]): number {
  v.sort((a, b) => a - b);
  return v[v.length < P99_MIN_SLEEPS ? v.length - 1 : Math.ceil(0.99 * v.length) - 1];
}

/** A schedule of due times: due time `k` is at `k × gapMs`, the last is `lastK`; `k` is the
 * next one not yet served. */
export interface DueSchedule {
  k: number;
  readonly gapMs: number;
  readonly lastK: number;
}

/**
 * Serves the due times a wake-up at `nowMs` passed: each from `s.k` to `s.lastK` that is not
 * after `nowMs` gets its lateness (µs) pushed to `into`, and `s.k` moves to the next one. The
 * schedule's bookkeeping in {@link timedSleepCost}, apart so it can be checked without a clock.
 *
 * @example
 * ```ts
 * import { servePassed } from "./timer.ts";
 * import assert from "node:assert/strict";
 * const late: number[] = [];
 * const s = { k: 1, gapMs: 1, lastK: 10 }; // due every 1 ms, ten of them
 * servePassed(s, 4.5, late); // the wake-up meant for due time 1 came at 4.5 ms
 * assert.equal(s.k, 5);
 * assert.deepEqual(late, [3500, 2500, 1500, 500]);
 * servePassed(s, 4.9, late); // woke early (clock noise): none served
 * assert.equal(s.k, 5);
 * servePassed({ k: 9, gapMs: 1, lastK: 10 }, 50, late); // the schedule ends at due time 10
 * assert.deepEqual(late.slice(4), [41000, 40000]);
 * ```
 */
export function servePassed(s: DueSchedule, nowMs: number, into: number[]): void {
  for (; s.k <= s.lastK && s.k * s.gapMs <= nowMs; s.k++) into.push((nowMs - s.k * s.gapMs) * 1000);
}

const SYMBOLS = {
  epoll_create1: { parameters: ["i32"], result: "i32" },
  epoll_pwait2: { parameters: ["i32", "buffer", "i32", "buffer", "pointer"], result: "i32" },
  getrusage: { parameters: ["i32", "buffer"], result: "i32" },
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
} as const;

/**
 * Keeps a schedule of one due time every `gapUs` for `seconds` on this thread (blocking it),
 * sleeping until each, and returns what a sleep cost and how late the due times were served,
 * or null where it cannot measure: no FFI permission, no `libc.so.6`, a kernel without
 * `epoll_pwait2` (Linux < 5.11); or, with a gap of a few µs, when every due time had passed
 * before a sleep could begin.
 *
 * @param gapUs Time between due times, µs (200: the gap between sends at 5,000/s over 50
 *   connections with spread phases); at least 1, at most `seconds` × 10⁶.
 * @param seconds How long to keep the schedule.
 * @returns The cost per sleep, or null.
 * @throws {RangeError} On a gap or a time that is not a positive number, or a gap longer than
 *   the time.
 */
export function timedSleepCost(gapUs = 200, seconds = 1): SleepCost | null {
  if (!(gapUs >= 1 && gapUs <= seconds * 1e6) || !(seconds > 0 && seconds <= 3600)) {
    throw new RangeError(
      `timedSleepCost: gapUs ${gapUs}, seconds ${seconds} (expected 1 µs ≤ gap ≤ the time, ` +
        "and a time of at most an hour)",
    );
  }
  let lib: Deno.DynamicLibrary<typeof SYMBOLS>;
  try {
    lib = Deno.dlopen("libc.so.6", SYMBOLS);
  } catch {
    return null; // no --allow-ffi, or no glibc
  }
  const C = lib.symbols;
  const ep = C.epoll_create1(0o2000000 /* EPOLL_CLOEXEC */);
  // the thread's timer slack, set to 1 ns as the engine's, put back after: threads and
  // processes started from this one later inherit it
  const slack = C.prctl(30, /* PR_GET_TIMERSLACK */ 0n, 0n, 0n, 0n);
  try {
    if (ep < 0) return null;
    C.prctl(29, /* PR_SET_TIMERSLACK */ 1n, 0n, 0n, 0n);
    // struct rusage starts with ru_utime and ru_stime, two struct timevals (64-bit fields)
    const ru = new BigInt64Array(18);
    const ruBytes = new Uint8Array(ru.buffer);
    const cpuUs = () => {
      C.getrusage(1, /* RUSAGE_THREAD */ ruBytes);
      return Number(ru[0] * 1_000_000n + ru[1] + ru[2] * 1_000_000n + ru[3]);
    };
    // a fixed schedule, due time k at k × gap, each sleep until the next one (as the engine
    // sleeps until its next due send); after a late wake every due time it passed is served at
    // once and counted late, as an open loop counts the sends due meanwhile
    const ts = new BigInt64Array(2);
    const tsBytes = new Uint8Array(ts.buffer);
    const events = new Uint8Array(16);
    const overshoot: number[] = [];
    const lateness: number[] = [];
    const gapMs = gapUs / 1000;
    const lastK = Math.floor((seconds * 1e6) / gapUs + 1e-9);
    const schedule: DueSchedule = { k: 1, gapMs, lastK };
    const t0 = performance.now();
    const cpu0 = cpuUs();
    let failures = 0;
    while (schedule.k <= lastK) {
      const before = performance.now() - t0;
      const waitMs = schedule.k * gapMs - before;
      let slept = false;
      if (waitMs > 0) {
        const ns = Math.max(1, Math.round(waitMs * 1e6));
        ts[0] = BigInt(Math.floor(ns / 1e9));
        ts[1] = BigInt(ns % 1e9);
        // a signal (EINTR) cuts a sleep short: not counted as one; three failures in a row
        // before any sleep are a kernel without epoll_pwait2 (ENOSYS)
        slept = C.epoll_pwait2(ep, events, 1, tsBytes, null) >= 0;
        if (!slept && overshoot.length === 0 && ++failures === 3) return null;
      }
      const now = performance.now() - t0;
      if (slept) overshoot.push((now - before - waitMs) * 1000);
      servePassed(schedule, now, lateness);
    }
    const cpu = cpuUs() - cpu0;
    const sleeps = overshoot.length;
    if (sleeps === 0) return null;
    return {
      gapUs,
      sleeps,
      cpuUsPerSleep: cpu / sleeps,
      overshootUs: overshoot.reduce((a, b) => a + b, 0) / sleeps,
      overshootP99Us: p99(overshoot),
      dueTimes: lastK,
      scheduleLatenessP99Us: p99(lateness),
    };
  } finally {
    if (slack > 0) C.prctl(29, /* PR_SET_TIMERSLACK */ BigInt(slack), 0n, 0n, 0n);
    if (ep >= 0) C.close(ep);
    lib.close();
  }
}
