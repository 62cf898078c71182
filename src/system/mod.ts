/**
 * Facts about processes and disks kvlab checks: whether a pid still runs (and is the same
 * process), killing a process group, and a full disk said once with its path.
 *
 * @module
 */

export * from "./pids.ts";
export * from "./disk.ts";
export * from "./cpu_list.ts";
