/**
 * A plan's `cpus:` field: the CPU list the client tools run on (`taskset -c`). Reading the list
 * is pure ({@link parseCpuList}); {@link cpuPinningProblem} checks, before any cell runs, that
 * this machine can pin to it (util-linux `taskset` installed, every CPU online and allowed to
 * kvlab).
 *
 * @module
 */

import { readSystemFiles } from "../../system/proc.ts";
import { findTool } from "../tools.ts";

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
 * import { parseCpuList } from "@kvlab/kvlab/collect";
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

/** Where {@link cpuPinningProblem} looks (tests hand it other files and tools). */
export interface CpuPinningOptions {
  /** Finds a program; null when it is not installed. @default {`findTool`} */
  findTool?: (name: string) => string | null;
  /**
   * Reads a text file, null when it cannot be read. @default {`readSystemFiles` (through `sh`
   * where Deno may not read `/sys` or `/proc` itself)}
   */
  readFile?: (path: string) => string | null;
}

/**
 * Whether this machine can run a client pinned to `cpus`: `taskset` installed, each CPU online
 * (`/sys/devices/system/cpu/online`) and allowed to kvlab (`Cpus_allowed_list` of
 * `/proc/self/status`, kvlab's own: a container's cpuset may be smaller than the machine).
 *
 * @param cpus The CPUs (from {@link parseCpuList}).
 * @param options Where to look.
 * @returns What stops the pinning, or null when nothing does.
 *
 * @example
 * ```ts
 * import { cpuPinningProblem } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const files: Record<string, string> = {
 *   "/sys/devices/system/cpu/online": "0-1\n",
 *   "/proc/self/status": "Cpus_allowed_list:\t0-1\n",
 * };
 * const o = { findTool: () => "/usr/bin/taskset", readFile: (p: string) => files[p] ?? null };
 * assert.equal(cpuPinningProblem([1], o), null);
 * assert.match(cpuPinningProblem([3], o)!, /CPU 3 is not online \(online: 0-1\)/);
 * assert.match(cpuPinningProblem([0], { ...o, findTool: () => null })!, /taskset: not found/);
 * ```
 */
export function cpuPinningProblem(
  cpus: readonly number[],
  options: CpuPinningOptions = {},
): string | null {
  const find = options.findTool ?? ((name: string) => findTool(name));
  const read = options.readFile ?? ((path: string) => {
    // kvlab's own status: under `sh`, /proc/self would be the shell's
    const real = path === "/proc/self/status" ? `/proc/${Deno.pid}/status` : path;
    return readSystemFiles([real])[real];
  });
  if (find("taskset") === null) {
    return "taskset: not found on PATH (it is in util-linux: apt-get install util-linux)";
  }
  const online = read("/sys/devices/system/cpu/online")?.trim();
  if (online) {
    const set = new Set(parseCpuList(online));
    const off = cpus.filter((c) => !set.has(c));
    if (off.length) return `${cpuWord(off)} not online (online: ${online})`;
  }
  const allowed = /^Cpus_allowed_list:\s*(\S+)/m.exec(read("/proc/self/status") ?? "")?.[1];
  if (allowed) {
    const set = new Set(parseCpuList(allowed));
    const off = cpus.filter((c) => !set.has(c));
    if (off.length) return `${cpuWord(off)} not allowed to kvlab (its CPUs: ${allowed})`;
  }
  return null;
}

function cpuWord(cpus: number[]): string {
  return cpus.length === 1 ? `CPU ${cpus[0]} is` : `CPUs ${cpus.join(", ")} are`;
}
