/**
 * Process facts kvlab checks before it kills a process or takes over a lock: whether a pid is
 * running (a zombie is not), and when it started, so that a pid the system gave to another
 * process since is told apart. Deno refuses `/proc/<pid>` without `--allow-all`, so `ps` is
 * asked (which `--allow-run` allows); the start time is `ps -o lstart=` (to the second).
 *
 * @module
 */

/**
 * What is known of a process: `running` with its start time, `gone` (no such pid, or a
 * zombie), or `unknown` when `ps` could not be run.
 */
export type ProcessState =
  | { state: "running"; start: string }
  | { state: "gone" }
  | { state: "unknown"; reason: string };

/**
 * Whether a process runs, and its start time.
 *
 * @param pid The process id.
 * @returns Its state.
 *
 * @example
 * ```ts
 * import { processState } from "./pids.ts";
 * import assert from "node:assert/strict";
 * const me = processState(Deno.pid);
 * assert.equal(me.state, "running");
 * assert.deepEqual(processState(2 ** 22 + 1), { state: "gone" });
 * ```
 */
export function processState(pid: number): ProcessState {
  if (!Number.isInteger(pid) || pid <= 0) return { state: "gone" };
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("ps", {
      args: ["-o", "stat=,lstart=", "-p", String(pid)],
      env: { LC_ALL: "C", TZ: "UTC" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
  } catch (e) {
    return { state: "unknown", reason: `cannot run ps: ${(e as Error).message}` };
  }
  const line = new TextDecoder().decode(out.stdout).trim();
  // ps exits 1 for a pid it does not find
  if (!out.success || line === "") return { state: "gone" };
  const [stat, ...start] = line.split(/\s+/);
  if (stat.startsWith("Z") || stat.startsWith("X")) return { state: "gone" };
  return { state: "running", start: start.join(" ") };
}

/**
 * The start time of a running process, as {@link processState} reads it.
 *
 * @param pid The process id.
 * @returns The start time, or null when the process is gone or cannot be checked.
 *
 * @example
 * ```ts
 * import { processStart } from "./pids.ts";
 * import assert from "node:assert/strict";
 * assert.match(processStart(Deno.pid) ?? "", /\d\d:\d\d:\d\d/);
 * ```
 */
export function processStart(pid: number): string | null {
  const s = processState(pid);
  return s.state === "running" ? s.start : null;
}

/**
 * Whether `pid` is still the process that started at `start` (not gone, not a reused pid).
 *
 * @param pid The process id.
 * @param start Its start time when it was recorded ({@link processStart}).
 * @returns `true` or `false`, or `undefined` when it cannot be told.
 *
 * @example
 * ```ts
 * import { processStart, sameProcess } from "./pids.ts";
 * import assert from "node:assert/strict";
 * assert.equal(sameProcess(Deno.pid, processStart(Deno.pid)), true);
 * assert.equal(sameProcess(Deno.pid, "Thu Jan  1 00:00:00 1970"), false);
 * ```
 */
export function sameProcess(pid: number, start: string | null): boolean | undefined {
  const s = processState(pid);
  if (s.state === "unknown") return undefined;
  if (s.state === "gone") return false;
  return start === null ? undefined : s.start === start;
}

/**
 * Sends a signal to a process group (a child kvlab started with its own group), or to the
 * process alone when the group is gone.
 *
 * @param pid The group leader's pid.
 * @param signal The signal.
 * @returns Whether a signal was delivered.
 */
export function killGroup(pid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pid, signal);
    return true;
  } catch {
    try {
      Deno.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * This host's name (as `Deno.hostname()`), or `"localhost"` when it cannot be read.
 *
 * @returns The host name.
 */
export function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "localhost";
  }
}

/** What a child's pid file holds. */
export interface ChildPidFile {
  /** The child's pid, also its process group. */
  pid: number;
  /** Its start time (`ps -o lstart=`), to tell a reused pid apart. */
  start: string | null;
  /** The program's file name (no arguments: they may hold a password). */
  program: string;
  /** The kvlab process that started it. */
  kvlab_pid: number;
  /** kvlab's start time. */
  kvlab_start: string | null;
  /** The host both run on. */
  hostname: string;
  /** When the child started (ISO 8601). */
  started_at: string;
}
