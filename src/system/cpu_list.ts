/**
 * CPU lists as Linux writes them (`taskset -c`, `/sys/devices/system/cpu/online`,
 * `Cpus_allowed_list:` of `/proc/<pid>/status`): `0`, `2-3`, `0,2,4-5`. Pure.
 *
 * @module
 */

/** The largest CPU number a list may name (Linux's NR_CPUS limit is 8192). */
const MAX_CPU = 8191;

/**
 * The CPUs of a list as `taskset -c` and `/sys/devices/system/cpu/online` write them.
 *
 * @param text `0`, `2-3`, `0,2,4-5` (spaces around commas allowed).
 * @returns The CPU numbers, ascending, each once.
 * @throws {RangeError} For anything else (`a`, `3-1`, `-1`, an empty list).
 *
 * @example
 * ```ts
 * import { parseCpuList } from "./cpu_list.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseCpuList("0"), [0]);
 * assert.deepEqual(parseCpuList("4-5, 0"), [0, 4, 5]);
 * assert.throws(() => parseCpuList("3-1"), RangeError);
 * assert.throws(() => parseCpuList("all"), RangeError);
 * ```
 */
export function parseCpuList(text: string): number[] {
  const cpus = new Set<number>();
  const parts = text.trim() === "" ? [] : text.split(",").map((p) => p.trim());
  if (parts.length === 0) throw new RangeError("invalid CPU list: empty");
  for (const part of parts) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    const lo = m ? Number(m[1]) : NaN;
    const hi = m?.[2] === undefined ? lo : Number(m[2]);
    if (!m || hi < lo || hi > MAX_CPU) {
      throw new RangeError(
        `invalid CPU list: ${JSON.stringify(text)} (expected e.g. 0, 2-3 or 0,2)`,
      );
    }
    for (let c = lo; c <= hi; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
}
