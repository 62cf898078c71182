/**
 * A plan's `cpus:` field: the CPU list the client tools run on (`taskset -c`). Reading the list
 * is pure ({@link parseCpuList}); {@link cpuPinningProblem} checks, before any cell runs, that
 * this machine can pin to it (util-linux `taskset` installed, every CPU online and allowed to
 * kvlab).
 *
 * @module
 */

import { parseCpuList } from "../../system/cpu_list.ts";
import { readSystemFiles } from "../../system/proc.ts";
import { findTool } from "../tools/find.ts";

export { parseCpuList };

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
