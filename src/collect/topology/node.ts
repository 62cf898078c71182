/**
 * One server process of a topology: started through the plan's {@link ProcessRunner} (its own
 * process group, killed with kvlab even by `kill -9` where `setpriv` is, a pid file the next
 * run reaps), on a free loopback port, in its own folder; ready once its port takes a
 * connection; stopped by its PID (SIGTERM, SIGKILL 2 s later) and waited for.
 *
 * @module
 */

import { freePort } from "../redis_server.ts";
import type { ProcessResult, ProcessRunner } from "../process.ts";
import { type NodeArgs, nodeArgs } from "./spec.ts";

/** A server process that runs. */
export interface RunningNode {
  /** `node 1` … in start order. */
  name: string;
  pid: number;
  port: number;
  /** The cluster bus port of a cluster node. */
  busPort?: number;
  /** Its folder. */
  dir: string;
  /** Ends the process (SIGTERM to its group, SIGKILL 2 s later) and waits for it. */
  stop(): Promise<void>;
  /** How it ended, once it has (on its own, or by stop()). */
  readonly ended: ProcessResult | undefined;
  /** The last lines it printed (its log), for a reason. */
  log(): string;
}

/** Options of {@link startNode}. */
export interface StartNodeOptions extends Omit<NodeArgs, "port" | "busPort"> {
  /** Starts the server (the plan's runner: pid files, death with kvlab). */
  runner: ProcessRunner;
  /** The server program (`/usr/bin/redis-server`). */
  program: string;
  name: string;
  /** A cluster node (a bus port is picked too). */
  cluster?: boolean;
  /** Aborting stops the start (the process is stopped). */
  signal?: AbortSignal;
  /** @default {15000} */
  readyTimeoutMs?: number;
}

/** The most a server runs: setTimeout's longest delay (24.8 days); the plan stops it first. */
const SERVER_LIFE_MS = 2 ** 31 - 1;

/** The log lines kept for a reason: the last 40. */
const LOG_LINES = 40;

/**
 * Starts one server process and waits until its port takes a connection. A port taken between
 * kvlab's pick and the server's bind is picked again (three tries).
 *
 * @param o The node and how to start it.
 * @returns The running node.
 * @throws {Error} When it exits or does not listen in time, with the last lines of its log.
 */
export async function startNode(o: StartNodeOptions): Promise<RunningNode> {
  Deno.mkdirSync(o.dir, { recursive: true });
  for (let attempt = 1;; attempt++) {
    const port = freePort();
    const busPort = o.cluster ? freePort() : undefined;
    const ctrl = new AbortController();
    let tail = "";
    const keep = (chunk: Uint8Array) => {
      tail = (tail + new TextDecoder().decode(chunk)).split("\n").slice(-LOG_LINES).join("\n");
    };
    let ended: ProcessResult | undefined;
    const running = o.runner.run({
      argv: [o.program, ...nodeArgs({ ...o, port, busPort })],
      timeoutMs: SERVER_LIFE_MS,
      signal: ctrl.signal,
      onStdout: keep,
      onStderr: keep,
    }).then((r) => (ended = r), (e: Error) => {
      ended = {
        code: null,
        signal: null,
        timedOut: false,
        interrupted: false,
        durationMs: 0,
        pid: 0,
      };
      tail += `\n${e.message}`;
      return ended;
    });
    const stop = async () => {
      ctrl.abort();
      await running;
    };
    const pid = await listening({ port, pidFile: `${o.dir}/server.pid`, o, ended: () => ended });
    if (pid !== null) {
      return {
        name: o.name,
        pid,
        port,
        ...(busPort === undefined ? {} : { busPort }),
        dir: o.dir,
        stop,
        get ended() {
          return ended;
        },
        log: () => tail,
      };
    }
    const own = ended; // it ended on its own (before the stop below)
    await stop();
    const why = lastLines(tail);
    if (attempt < 3 && /address already in use/i.test(why)) continue;
    const how = own
      ? `exited at start (${own.code === null ? own.signal : `exit code ${own.code}`})`
      : o.signal?.aborted
      ? "was stopped while starting"
      : `did not listen on 127.0.0.1:${port} in ${(o.readyTimeoutMs ?? 15_000) / 1000} s`;
    throw new Error(`${o.name} (${o.program.split("/").pop()}) ${how}${why ? `: ${why}` : ""}`);
  }
}

/** The pid once the port takes a connection and the pid file is written; null if it ended. */
async function listening(
  { port, pidFile, o, ended }: {
    port: number;
    pidFile: string;
    o: StartNodeOptions;
    ended: () => ProcessResult | undefined;
  },
): Promise<number | null> {
  const deadline = Date.now() + (o.readyTimeoutMs ?? 15_000);
  while (Date.now() < deadline && !ended() && !o.signal?.aborted) {
    try {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      c.close();
      const pid = Number(Deno.readTextFileSync(pidFile).trim());
      if (Number.isInteger(pid) && pid > 0) return pid;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

/**
 * The lines of a server's log that say why it stopped: its `#` (warning) lines, else its last
 * three, joined; the banner's ASCII art left out.
 *
 * @example
 * ```ts
 * import { lastLines } from "./node.ts";
 * import assert from "node:assert/strict";
 * assert.equal(lastLines("1:C 03 Dec * starting\n\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n" +
 *   "Reading the configuration file, at line 2\n>>> 'maxmemory-policy \"bogus\"'\nargument(s) must be one of the following: volatile-lru\n"),
 *   "*** FATAL CONFIG FILE ERROR (Redis 7.0.15) *** / Reading the configuration file, at line 2 / " +
 *   ">>> 'maxmemory-policy \"bogus\"' / argument(s) must be one of the following: volatile-lru");
 * assert.equal(lastLines("1:M 03 Dec * Ready\n1:M 03 Dec # Failed finding TLS support.\n"),
 *   "1:M 03 Dec # Failed finding TLS support.");
 * ```
 */
export function lastLines(log: string): string {
  const lines = log.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const fatal = lines.findIndex((l) => /FATAL CONFIG/.test(l));
  if (fatal >= 0) return lines.slice(fatal, fatal + 4).join(" / ");
  const warnings = lines.filter((l) =>
    /^\d+:[A-Z] .* # /.test(l) && !/WARNING Memory overcommit/.test(l)
  );
  return (warnings.length ? warnings.slice(-3) : lines.slice(-3)).join(" / ");
}
