/**
 * Pinning the processes of a plan's `cpus:` that kvlab does not start: kvlab itself, when its
 * own engine is the client (`latency-sweep` with `engine: kvlab`, `pubsub`), and the plan's
 * local servers (`cpus: { server: LIST }`). Each is moved with `taskset -a -p -c LIST PID`
 * (util-linux: every thread; threads started later inherit it) and put back afterwards to the
 * list it had. The client tools kvlab starts are pinned differently, by starting them under
 * `taskset -c` (`pinnedRunner`).
 *
 * A server is pinned only when it is certainly the process listening on the plan's port: a
 * loopback URL, no `container:`, and the `process_id` its INFO gives is a process whose title
 * (`/proc/PID/cmdline`: `redis-server 127.0.0.1:6379`) names that port. A server in a container
 * reports its own namespace's pid, which on the host is another process.
 *
 * @module
 */

import type { ProcessRunner } from "../process.ts";
import { connect } from "../server.ts";
import { isLocal } from "../target.ts";
import { infoNumber } from "../formats/info/info.ts";
import { parseInfo } from "../formats/info/info.ts";
import { readSystemFiles } from "../../system/proc.ts";
import type { PlanServer } from "./kind.ts";

/** One process moved to other CPUs, and the CPUs it had before. */
export interface ProcessPin {
  pid: number;
  /** What the process is, for messages (`kvlab`, `server redis`). */
  what: string;
  /** Its CPU list before (`0-1`). */
  previous: string;
}

/**
 * The CPU list of a process, from `taskset -p -c PID`'s `pid 1234's current affinity list: 0-1`.
 *
 * @param text taskset's output.
 * @returns The list, or null when the text is not taskset's answer.
 *
 * @example
 * ```ts
 * import { affinityList } from "./pin.ts";
 * import assert from "node:assert/strict";
 * assert.equal(affinityList("pid 4242's current affinity list: 0,2-3\n"), "0,2-3");
 * assert.equal(affinityList("taskset: failed to get pid 1's affinity"), null);
 * ```
 */
export function affinityList(text: string): string | null {
  return /current affinity list:\s*(\S+)/.exec(text)?.[1] ?? null;
}

/** Runs taskset; its stdout, or an Error saying what it printed. */
async function taskset(runner: ProcessRunner, args: string[]): Promise<string> {
  const r = await runner.run({ argv: ["taskset", ...args], timeoutMs: 10_000, capture: true });
  const out = new TextDecoder().decode(r.stdout ?? new Uint8Array());
  if (r.code === 0) return out;
  const err = new TextDecoder().decode(r.stderr ?? new Uint8Array()).trim();
  throw new Error(`taskset ${args.join(" ")} failed: ${err || `exit ${r.code ?? r.signal}`}`);
}

/**
 * Moves every thread of a process to `cpus`.
 *
 * @param runner Starts taskset.
 * @param target The process (`pid`), the CPU list (`1`, `2-3`) and what it is, for messages.
 * @returns The pin, to {@link restorePins} afterwards.
 * @throws {Error} Saying what taskset printed, when it failed (no permission, no such pid).
 */
export async function pinProcess(
  runner: ProcessRunner,
  { pid, cpus, what }: { pid: number; cpus: string; what: string },
): Promise<ProcessPin> {
  const previous = affinityList(await taskset(runner, ["-p", "-c", `${pid}`]));
  if (previous === null) throw new Error(`taskset -p -c ${pid}: no affinity list in its answer`);
  await taskset(runner, ["-a", "-p", "-c", cpus, `${pid}`]);
  return { pid, what, previous };
}

/**
 * Puts pinned processes back on the CPUs they had, the last pinned first.
 *
 * @returns What could not be put back (a server that has exited meanwhile, for one).
 */
export async function restorePins(runner: ProcessRunner, pins: ProcessPin[]): Promise<string[]> {
  const problems: string[] = [];
  for (const p of [...pins].reverse()) {
    try {
      await taskset(runner, ["-a", "-p", "-c", p.previous, `${p.pid}`]);
    } catch (e) {
      problems.push(
        `${p.what} (pid ${p.pid}) not put back on CPUs ${p.previous}: ` +
          (e as Error).message,
      );
    }
  }
  return problems;
}

/**
 * The pid of a plan's server, when it is certainly on this machine (see the module doc).
 *
 * @param server The plan's server.
 * @param readFile Reads `/proc/PID/cmdline` (null when it cannot).
 * @returns The pid.
 * @throws {Error} Saying why kvlab cannot pin this server.
 */
export async function localServerPid(
  server: PlanServer,
  readFile: (path: string) => string | null = (p) => readSystemFiles([p])[p],
): Promise<number> {
  const t = server.target;
  const hint = "start it pinned instead (`taskset -c LIST redis-server …`, docker `--cpuset-cpus`)";
  if (server.container) {
    throw new Error(`server ${server.name} runs in container ${server.container}: ${hint}`);
  }
  if (!isLocal(t) || t.socket) {
    throw new Error(`server ${server.name} (${t.display}) is not on loopback TCP: ${hint}`);
  }
  const client = await connect(t);
  let info: string;
  try {
    info = String(await client.call("INFO", "server"));
  } finally {
    client.disconnect();
  }
  const pid = infoNumber(parseInfo(info), "process_id") ?? NaN;
  if (!Number.isInteger(pid) || pid <= 1) {
    throw new Error(`server ${server.name} (${t.display}) gives no usable process_id: ${hint}`);
  }
  const title = (readFile(`/proc/${pid}/cmdline`) ?? "").replaceAll("\0", " ");
  if (!new RegExp(`:${t.port}(\\s|$)`).test(title)) {
    throw new Error(
      `server ${server.name} (${t.display}) says its pid is ${pid}, but that process ` +
        `(${JSON.stringify(title.trim().slice(0, 80))}) does not name port ${t.port}: ${hint}`,
    );
  }
  return pid;
}
