/**
 * Process facts kvlab checks before it kills a process or takes over a lock: whether a pid is
 * running (a zombie is not), and when it started, so that a pid the system gave to another
 * process since is told apart. Deno refuses `/proc/<pid>` without `--allow-all`, so `ps` is
 * asked (which `--allow-run` allows); the start time is `ps -o lstart=` (to the second).
 *
 * @module
 */

import { readSystemFiles } from "./proc.ts";

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
 * The inodes of the TCP sockets listening on `port` (IPv4 and IPv6), from `/proc/net/tcp` and
 * `/proc/net/tcp6`'s text (state `0A`, LISTEN). Pure.
 *
 * @param tables The files' texts (null: unreadable).
 * @param port The port.
 * @returns The inodes.
 *
 * @example
 * ```ts
 * import { listeningInodes } from "./pids.ts";
 * import assert from "node:assert/strict";
 * const tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
 *   "   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1\n" +
 *   "   1: 0100007F:18EB 0100007F:C656 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1\n";
 * assert.deepEqual(listeningInodes([tcp, null], 6379), ["4242"]);
 * assert.deepEqual(listeningInodes([tcp], 6380), []);
 * ```
 */
export function listeningInodes(tables: readonly (string | null)[], port: number): string[] {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const out: string[] = [];
  for (const t of tables) {
    for (const line of (t ?? "").split("\n")) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[1].endsWith(`:${hex}`) && f[3] === "0A") out.push(f[9]);
    }
  }
  return out;
}

/**
 * The inodes of the unix sockets bound to `path`, from `/proc/net/unix`'s text. Pure.
 *
 * @example
 * ```ts
 * import { unixSocketInodes } from "./pids.ts";
 * import assert from "node:assert/strict";
 * const unix = "Num       RefCount Protocol Flags    Type St Inode Path\n" +
 *   "0000000000000000: 00000002 00000000 00010000 0001 01 5151 /tmp/redis.sock\n";
 * assert.deepEqual(unixSocketInodes(unix, "/tmp/redis.sock"), ["5151"]);
 * ```
 */
export function unixSocketInodes(table: string | null, path: string): string[] {
  return (table ?? "").split("\n").map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 8 && f.slice(7).join(" ") === path).map((f) => f[6]);
}

/**
 * Whether a process holds the socket a server listens on: TCP `port` of this machine (IPv4 or
 * IPv6), or the unix socket at `path`. A process a server names as itself (INFO's
 * `process_id`) is believed only when it does (issue 30: a server naming PID 1, or a busy
 * neighbour, had that process's memory stored as its own). Reads `/proc/net/*` and the links
 * of `/proc/PID/fd` (through `sh`: Deno refuses `/proc` without `--allow-all`).
 *
 * @param pid The process.
 * @param where The port, or the unix socket's path.
 * @returns true or false, or null when it cannot be told (no `/proc`, another user's process).
 *
 * @example
 * ```ts
 * import { holdsListeningPort } from "./pids.ts";
 * import assert from "node:assert/strict";
 * const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * const port = (server.addr as Deno.NetAddr).port;
 * assert.equal(holdsListeningPort(Deno.pid, { port }), true);
 * assert.equal(holdsListeningPort(Deno.pid, { port: port === 1 ? 2 : port - 1 }), false);
 * server.close();
 * ```
 */
export function holdsListeningPort(
  pid: number,
  where: { port: number } | { path: string },
): boolean | null {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const tables = "port" in where ? ["/proc/net/tcp", "/proc/net/tcp6"] : ["/proc/net/unix"];
  const files = readSystemFiles(tables);
  if (tables.every((t) => files[t] === null)) return null;
  const inodes = new Set(
    "port" in where
      ? listeningInodes(tables.map((t) => files[t]), where.port)
      : unixSocketInodes(files[tables[0]], where.path),
  );
  if (inodes.size === 0) return false;
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("sh", {
      // exit 3: the fd folder cannot be read (another user's process, or gone)
      args: [
        "-c",
        '[ -r "/proc/$1/fd" ] || exit 3; for f in /proc/"$1"/fd/*; do readlink "$f"; done',
        "sh",
        String(pid),
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
  } catch {
    return null;
  }
  if (out.code === 3) return processState(pid).state === "gone" ? false : null;
  const links = new TextDecoder().decode(out.stdout).split("\n");
  return links.some((l) => inodes.has(/^socket:\[(\d+)\]$/.exec(l)?.[1] ?? ""));
}

/**
 * Whether a process title (`/proc/PID/cmdline`, NULs between words) names a port
 * (`redis-server 127.0.0.1:6379`, `*:6379`) or a socket path: what is left to go by when a
 * process's sockets cannot be read (another user's server).
 *
 * @example
 * ```ts
 * import { titleNames } from "./pids.ts";
 * import assert from "node:assert/strict";
 * assert.equal(titleNames("redis-server 127.0.0.1:6379\0\0", { port: 6379 }), true);
 * assert.equal(titleNames("/sbin/init\0", { port: 6379 }), false);
 * assert.equal(titleNames("redis-server unixsocket:/tmp/r.sock", { path: "/tmp/r.sock" }), true);
 * ```
 */
export function titleNames(
  cmdline: string | null,
  where: { port: number } | { path: string },
): boolean {
  const title = (cmdline ?? "").replaceAll("\0", " ");
  return "port" in where
    ? new RegExp(`:${where.port}(\\s|$)`).test(title)
    : title.includes(where.path);
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
