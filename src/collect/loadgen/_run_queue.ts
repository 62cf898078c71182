/**
 * How long the calling thread waited for a CPU: the second field of Linux's
 * `/proc/thread-self/schedstat` (time spent runnable on a run queue but not running, ns). A
 * generator that shares its CPU with another busy process is starved without using more CPU
 * itself; this wait shows it.
 *
 * @module
 */

/**
 * Seconds the calling thread has waited on a run queue since it started, or null where the
 * kernel does not say (not Linux, no schedstat, no read permission).
 */
export function runQueueWaitS(): number | null {
  try {
    const f = Deno.readTextFileSync("/proc/thread-self/schedstat").trim().split(/\s+/);
    const ns = Number(f[1]);
    return Number.isFinite(ns) ? ns / 1e9 : null;
  } catch {
    return null;
  }
}
