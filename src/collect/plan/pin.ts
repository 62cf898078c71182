/**
 * Pinning the processes of a plan's `cpus:` that kvlab does not start: kvlab itself, when its
 * own engine is the client (`latency-sweep` with `engine: kvlab`, `pubsub`), and the plan's
 * local servers (`cpus: { server: LIST }`). Each is moved with `taskset -a -p -c LIST PID`
 * (util-linux: every thread; threads started later inherit it) and put back afterwards to the
 * list it had. The client tools kvlab starts are pinned differently, by starting them under
 * `taskset -c` (`pinnedRunner`).
 *
 * A server is pinned only when it is certainly the process listening on the plan's port: a
 * loopback URL, no `container:`, and the `process_id` its INFO gives is a process that holds
 * the socket listening on that port (or, where its sockets cannot be read, whose title,
 * `/proc/PID/cmdline`: `redis-server 127.0.0.1:6379`, names that port). A server in a container
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
import {
  holdsListeningPort,
  hostName,
  processStart,
  sameProcess,
  titleNames,
} from "../../system/pids.ts";
import { PlanError, type PlanServer } from "./kind.ts";
import { type CpuPinningOptions, cpuPinningProblem } from "./cpus.ts";
import type { StudyPlan } from "./plan.ts";

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
  // another process than kvlab: its CPUs are written down first, so that a kvlab killed
  // before it puts them back (kill -9) leaves them for the next run or `kvlab doctor`
  if (pid !== Deno.pid) writePinRecord({ pid, what, previous });
  try {
    await taskset(runner, ["-a", "-p", "-c", cpus, `${pid}`]);
  } catch (e) {
    removePinRecord(pid);
    throw e;
  }
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
      if (p.pid !== Deno.pid) removePinRecord(p.pid);
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
 * @param listens Whether a process holds the listening port (null: cannot tell).
 * @returns The pid.
 * @throws {Error} Saying why kvlab cannot pin this server.
 */
export async function localServerPid(
  server: PlanServer,
  readFile: (path: string) => string | null = (p) => readSystemFiles([p])[p],
  listens: (pid: number, port: number) => boolean | null = (pid, port) =>
    holdsListeningPort(pid, { port }),
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
  // the process holds the listening port; where that cannot be told (another user's process),
  // its title names the port (`redis-server 127.0.0.1:6379`). Its command line is never shown:
  // it may be another program's, with its own secrets (issue 30)
  const holds = listens(pid, t.port) ??
    titleNames(readFile(`/proc/${pid}/cmdline`), { port: t.port });
  if (!holds) {
    throw new Error(
      `server ${server.name} (${t.display}) says its pid is ${pid}, but that process does not ` +
        `listen on port ${t.port}: ${hint}`,
    );
  }
  return pid;
}

/** What a pin record holds: a process kvlab moved, the CPUs it had, and which kvlab moved it. */
interface PinRecord extends ProcessPin {
  /** The process's start time (`ps -o lstart=`), to tell a reused pid apart. */
  start: string | null;
  kvlab_pid: number;
  kvlab_start: string | null;
  hostname: string;
  pinned_at: string;
}

/**
 * Where the CPUs of pinned processes are written down while a plan runs: `$KVLAB_PINS_DIR`, else
 * `$XDG_CACHE_HOME/kvlab/pins`, else `~/.cache/kvlab/pins` (per machine, not per dataset: a
 * later run into any dataset, or `kvlab doctor`, puts them back).
 *
 * @param env The environment.
 * @returns The folder, or null when there is no home to keep it in.
 *
 * @example
 * ```ts
 * import { pinsDir } from "./pin.ts";
 * import assert from "node:assert/strict";
 * assert.equal(pinsDir({ HOME: "/home/a" }), "/home/a/.cache/kvlab/pins");
 * assert.equal(pinsDir({ HOME: "/home/a", KVLAB_PINS_DIR: "/p" }), "/p");
 * ```
 */
export function pinsDir(
  env: { KVLAB_PINS_DIR?: string; XDG_CACHE_HOME?: string; HOME?: string } = Deno.env.toObject(),
): string | null {
  if (env.KVLAB_PINS_DIR) return env.KVLAB_PINS_DIR;
  if (env.XDG_CACHE_HOME) return `${env.XDG_CACHE_HOME}/kvlab/pins`;
  return env.HOME ? `${env.HOME}/.cache/kvlab/pins` : null;
}

/** Writes a pin's record (atomically: a reader sees all of it or none). */
function writePinRecord(pin: ProcessPin): void {
  const dir = pinsDir();
  if (dir === null) return;
  const record: PinRecord = {
    ...pin,
    start: processStart(pin.pid),
    kvlab_pid: Deno.pid,
    kvlab_start: processStart(Deno.pid),
    hostname: hostName(),
    pinned_at: new Date().toISOString(),
  };
  Deno.mkdirSync(dir, { recursive: true });
  const tmp = `${dir}/.${pin.pid}.${Deno.pid}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(record) + "\n");
  Deno.renameSync(tmp, `${dir}/${pin.pid}.json`);
}

function removePinRecord(pid: number): void {
  const dir = pinsDir();
  try {
    if (dir !== null) Deno.removeSync(`${dir}/${pid}.json`);
  } catch { /* never written, or gone */ }
}

/**
 * Puts back the processes a kvlab that is gone left pinned (killed with `kill -9` while a plan
 * with `cpus: { server: … }` ran): each pin record whose kvlab no longer runs on this host, and
 * whose process is still the one it pinned, is restored to the CPUs it had, and the record
 * removed (a record of a process that is gone is removed too). `kvlab run` does it before its
 * plan's cells, `kvlab doctor` when asked.
 *
 * @param runner Starts taskset.
 * @returns What was done, one line each (also what could not be done).
 */
export async function restoreLeftPins(runner: ProcessRunner): Promise<string[]> {
  const dir = pinsDir();
  const out: string[] = [];
  let names: string[];
  try {
    names = [...Deno.readDirSync(dir ?? "")].map((e) => e.name).filter((n) =>
      /^\d+\.json$/.test(n)
    );
  } catch {
    return out; // no record: nothing was left pinned
  }
  for (const name of names) {
    let r: PinRecord;
    try {
      r = JSON.parse(Deno.readTextFileSync(`${dir}/${name}`));
    } catch {
      continue; // being written, or not ours
    }
    if (r.hostname !== hostName() || sameProcess(r.kvlab_pid, r.kvlab_start) !== false) continue;
    const same = sameProcess(r.pid, r.start);
    if (same === undefined) continue; // cannot tell: left for a later look
    if (same) {
      try {
        await taskset(runner, ["-a", "-p", "-c", r.previous, `${r.pid}`]);
        out.push(
          `put ${r.what} (pid ${r.pid}) back on CPUs ${r.previous}: kvlab pid ${r.kvlab_pid} ` +
            "pinned it and is gone",
        );
      } catch (e) {
        out.push(
          `${r.what} (pid ${r.pid}) not put back on CPUs ${r.previous}: ${(e as Error).message}`,
        );
        continue;
      }
    }
    removePinRecord(r.pid);
  }
  return out;
}

/**
 * Throws a {@link PlanError} at a `cpus:` list this machine cannot pin to.
 *
 * @param plan The plan (its `cpus:`).
 * @param pinning Where the check looks (`cpuPinningProblem`'s options).
 * @throws {PlanError} At the field's line, saying what stops the pinning.
 *
 * @example
 * ```ts
 * import { checkPinning } from "./pin.ts";
 * import assert from "node:assert/strict";
 * const at = { file: "plan.yaml", line: 9, column: 11, text: "4" };
 * const plan = { cpus: { client: { list: "4", cpus: [4], at } } } as never;
 * const pinning = {
 *   findTool: () => "/usr/bin/taskset",
 *   readFile: (p: string) => p.endsWith("/online") ? "0-1\n" : null,
 * };
 * assert.throws(() => checkPinning(plan, pinning), /cpus\.client: CPU 4 is not online/);
 * checkPinning({ cpus: { client: { list: "1", cpus: [1], at } } } as never, pinning);
 * ```
 */
export function checkPinning(plan: StudyPlan, pinning: CpuPinningOptions | undefined): void {
  for (const [field, set] of Object.entries(plan.cpus ?? {})) {
    const problem = cpuPinningProblem(set.cpus, pinning);
    if (problem) throw new PlanError(`cpus.${field}: ${problem}`, set.at);
  }
}

/**
 * Pins what a plan's `cpus:` names that kvlab does not start: kvlab itself when `client` is
 * given and no tool takes it, and each server when `server` is given (a server kvlab starts in a
 * container is started on the list). Tested against real processes in `test/collect/plan/`.
 *
 * @param plan The plan (its `cpus:` and servers).
 * @param pinSelf Whether kvlab pins itself (no tool process takes the client list).
 * @param runner Runs `taskset`.
 * @returns The pins made, to put back after the plan.
 * @throws {PlanError} At the field, saying what could not be pinned (nothing stays pinned).
 *
 * @example
 * ```ts
 * import { pinPlanProcesses } from "./pin.ts";
 * import { DenoProcessRunner } from "../process.ts";
 * import assert from "node:assert/strict";
 * // a plan without cpus: pins nothing
 * const plan = { servers: [] } as never;
 * assert.deepEqual(await pinPlanProcesses(plan, true, new DenoProcessRunner()), []);
 * ```
 */
export async function pinPlanProcesses(
  plan: StudyPlan,
  pinSelf: boolean,
  runner: ProcessRunner,
): Promise<ProcessPin[]> {
  const pins: ProcessPin[] = [];
  const { client, server } = plan.cpus ?? {};
  let at = client?.at;
  try {
    if (client && pinSelf) {
      pins.push(await pinProcess(runner, { pid: Deno.pid, cpus: client.list, what: "kvlab" }));
    }
    at = server?.at;
    // a server kvlab started is in a container on the CPU list (`--cpuset-cpus`) already
    for (const s of server ? plan.servers.filter((x) => !x.start) : []) {
      const pid = await localServerPid(s);
      pins.push(await pinProcess(runner, { pid, cpus: server!.list, what: `server ${s.name}` }));
    }
  } catch (e) {
    await restorePins(runner, pins);
    if (at && !(e instanceof PlanError)) throw new PlanError((e as Error).message, at);
    throw e;
  }
  return pins;
}
