/**
 * What one timed sleep costs on this machine: the floor under any generator that sends each
 * request at its own intended time (issue 20). The calling thread sleeps `gapUs` at a time in
 * `epoll_pwait2` on an empty epoll set, as the `ffi` engine does between sends (timer slack
 * 1 ns), for `seconds`, and reads its own CPU time (`getrusage(RUSAGE_THREAD)`) around it.
 *
 * On bare metal a sleep and its wake-up cost a few microseconds; in a virtual machine the timer
 * and the halt go through the hypervisor and can cost ten times that. A precise generator
 * sleeps once per send while sends are further apart than that cost, so at R requests per
 * second its sleeps alone use R × cost of CPU, whatever else it does.
 *
 * @module
 */

import { K, openLibc } from "../src/collect/loadgen/libc.ts";

/** What {@link timedSleepCost} measured. */
export interface SleepCost {
  /** Sleeps done. */
  sleeps: number;
  /** The thread's CPU time (user + system) per sleep, µs. */
  cpuUsPerSleep: number;
  /** How much longer than asked a sleep took, on average, µs (the wake-up's delay). */
  overshootUs: number;
  /** The same, 99th percentile, µs: the timer lateness no generator that sleeps can beat. */
  overshootP99Us: number;
}

/**
 * Sleeps `gapUs` at a time for `seconds` on this thread and returns the CPU each sleep cost.
 *
 * @param gapUs Length of each sleep, µs (200: the gap between sends at 5,000/s over 50
 *   connections with spread phases).
 * @param seconds How long to keep sleeping.
 * @returns The cost per sleep.
 */
export function timedSleepCost(gapUs = 200, seconds = 1): SleepCost {
  const lib = Deno.dlopen("libc.so.6", {
    getrusage: { parameters: ["i32", "buffer"], result: "i32" },
  });
  const libc = openLibc();
  const C = libc.symbols;
  try {
    C.prctl(K.PR_SET_TIMERSLACK, 1n, 0n, 0n, 0n);
    const ep = C.epoll_create1(0);
    // struct rusage starts with ru_utime and ru_stime, two struct timevals (64-bit fields)
    const ru = new BigInt64Array(18);
    const ruBytes = new Uint8Array(ru.buffer);
    const cpuUs = () => {
      lib.symbols.getrusage(1, /* RUSAGE_THREAD */ ruBytes);
      return Number(ru[0] * 1_000_000n + ru[1] + ru[2] * 1_000_000n + ru[3]);
    };
    const ts = new BigInt64Array([0n, BigInt(gapUs * 1000)]);
    const tsBytes = new Uint8Array(ts.buffer);
    const events = new Uint8Array(16);
    const t0 = performance.now();
    const cpu0 = cpuUs();
    let sleeps = 0;
    const took: number[] = [];
    for (let t = t0; t - t0 < seconds * 1000;) {
      C.epoll_pwait2(ep, events, 1, tsBytes, null);
      const after = performance.now();
      took.push(after - t);
      t = after;
      sleeps++;
    }
    const cpu = cpuUs() - cpu0;
    const wallUs = (performance.now() - t0) * 1000;
    C.close(ep);
    return {
      sleeps,
      cpuUsPerSleep: cpu / sleeps,
      overshootUs: wallUs / sleeps - gapUs,
      overshootP99Us: took.sort((a, b) => a - b)[Math.floor(0.99 * (took.length - 1))] * 1000 -
        gapUs,
    };
  } finally {
    libc.close();
    lib.close();
  }
}
