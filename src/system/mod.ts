/**
 * Facts about processes and disks kvlab checks: whether a pid still runs (and is the same
 * process), killing a process group, a full disk said once with its path, and keeping a long
 * read's memory flat (garbage collected as it goes), and what a timed sleep costs here.
 *
 * @module
 */

export * from "./pids.ts";
export * from "./disk.ts";
export * from "./cpu_list.ts";
export * from "./memory.ts";
export * from "./timer.ts";
