/**
 * A private Docker engine: Debian's `dockerd` started by kvlab, on its own data root, exec root
 * and socket in a folder of kvlab's cache (`engine-<kvlab pid>-<hex>/`, see
 * {@link dockerCacheDir}), with no iptables rules and no bridge (containers use the host's
 * network), and an empty configuration file (a system `/etc/docker/daemon.json` does not apply).
 * It is stopped by its PID (SIGTERM, then SIGKILL) and its folder removed. The folders of engines
 * whose kvlab died are cleaned up the next time one starts ({@link reapEngines}).
 *
 * @module
 */

import { processStart, processState, sameProcess } from "../../system/pids.ts";
import { readSystemFiles } from "../../system/proc.ts";
import { findTool } from "../tools/find.ts";
import type { ProcessRunner } from "../process.ts";
import { connectEngine, type DockerEngine, DockerUnavailableError, findEngine } from "./engine.ts";
import { pathExists } from "../../system/disk.ts";

/** The environment variables the cache folder is read from. */
export interface DockerDirEnv {
  HOME?: string;
  XDG_CACHE_HOME?: string;
  /** Overrides the folder. */
  KVLAB_DOCKER_DIR?: string;
}

/**
 * The folder of kvlab's private engines and image builds.
 *
 * @param env The environment.
 * @returns `$KVLAB_DOCKER_DIR`, else `$XDG_CACHE_HOME/kvlab/docker`, else `~/.cache/kvlab/docker`
 * (null without a home).
 *
 * @example
 * ```ts
 * import { dockerCacheDir } from "./private_engine.ts";
 * import assert from "node:assert/strict";
 * assert.equal(dockerCacheDir({ HOME: "/root" }), "/root/.cache/kvlab/docker");
 * assert.equal(dockerCacheDir({ HOME: "/root", KVLAB_DOCKER_DIR: "/d" }), "/d");
 * assert.equal(dockerCacheDir({}), null);
 * ```
 */
export function dockerCacheDir(env: DockerDirEnv): string | null {
  if (env.KVLAB_DOCKER_DIR) return env.KVLAB_DOCKER_DIR;
  if (env.XDG_CACHE_HOME) return `${env.XDG_CACHE_HOME}/kvlab/docker`;
  if (env.HOME) return `${env.HOME}/.cache/kvlab/docker`;
  return null;
}

/** The longest unix socket path Linux takes (108 bytes with its NUL), with a margin. */
const MAX_SOCKET_PATH = 100;

/** A private engine, running. */
export interface PrivateEngine extends DockerEngine {
  /** dockerd's pid. */
  readonly pid: number;
  /** Its folder (data root, exec root, socket, log). */
  readonly dir: string;
  /** How long it took to answer, ms. */
  readonly startMs: number;
  /**
   * Stops dockerd by its PID (SIGTERM, SIGKILL after 30 s) and removes its folder.
   * @returns What could not be done (a folder left), or null.
   */
  stop(): Promise<string | null>;
}

/** Options of {@link startPrivateEngine}. */
export interface PrivateEngineOptions {
  /** Starts the docker client. */
  runner: ProcessRunner;
  /** Aborting stops a start in progress (the engine is stopped). */
  signal?: AbortSignal;
  /** @default {60000} */
  startTimeoutMs?: number;
  /** @default {Deno.env.toObject()} */
  env?: DockerDirEnv & { PATH?: string };
}

/**
 * Why this machine cannot start a private engine, or null when it can.
 *
 * @param dockerd dockerd's path, or null when it is not installed.
 * @param uid This process's user id.
 * @returns The reason, with what to do.
 *
 * @example
 * ```ts
 * import { privateEngineProblem } from "./private_engine.ts";
 * import assert from "node:assert/strict";
 * assert.equal(privateEngineProblem("/usr/sbin/dockerd", 0), null);
 * assert.match(privateEngineProblem(null, 0)!, /apt-get install docker\.io/);
 * assert.match(privateEngineProblem("/usr/sbin/dockerd", 1000)!, /needs root/);
 * ```
 */
export function privateEngineProblem(dockerd: string | null, uid: number | null): string | null {
  const or = "or start an engine yourself and set DOCKER_HOST";
  if (dockerd === null) {
    return `dockerd is not installed (Debian: sudo apt-get install docker.io), ${or}`;
  }
  if (uid !== 0) return `starting a private dockerd needs root (uid ${uid ?? "unknown"}), ${or}`;
  return null;
}

/** dockerd on PATH, or in /usr/sbin and /usr/bin (not on a user's PATH). */
function findDockerd(env: { PATH?: string }): string | null {
  const found = findTool("dockerd", { env: { PATH: env.PATH } });
  if (found) return found;
  for (const p of ["/usr/sbin/dockerd", "/usr/bin/dockerd"]) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch { /* not there */ }
  }
  return null;
}

/** This process's uid, or null when it cannot be read. */
function uid(): number | null {
  try {
    return Deno.uid();
  } catch {
    return null;
  }
}

/**
 * A folder for one engine: in the cache, or in /tmp when the socket path would be too long (/tmp
 * itself, not TMPDIR, which may be as long as the cache: a test suite's own folder).
 */
function engineFolder(cache: string | null): string {
  const name = `engine-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  if (
    cache !== null &&
    `${cache}/${name}/exec/containerd/containerd.sock.ttrpc`.length < MAX_SOCKET_PATH
  ) {
    Deno.mkdirSync(`${cache}/${name}`, { recursive: true, mode: 0o700 });
    return `${cache}/${name}`;
  }
  return Deno.makeTempDirSync({ dir: "/tmp", prefix: `kvlab-docker-${name}-` });
}

/** The dockerd argv of an engine folder. */
export function dockerdArgs(dir: string): string[] {
  return [
    `--data-root=${dir}/data`,
    `--exec-root=${dir}/exec`,
    `--pidfile=${dir}/dockerd.pid`,
    `--host=unix://${dir}/docker.sock`,
    `--config-file=${dir}/daemon.json`,
    "--iptables=false",
    "--ip-masq=false",
    "--bridge=none",
  ];
}

/**
 * Starts a private dockerd and waits until it answers. Folders of engines left by a kvlab that
 * died are cleaned up first ({@link reapEngines}).
 *
 * @param o The runner, a stop signal, the time limit.
 * @returns The running engine; stop it with {@link PrivateEngine.stop}.
 * @throws {DockerUnavailableError} When this machine cannot start one (dockerd missing, not
 * root), or it did not answer in time (with the end of its log).
 */
export async function startPrivateEngine(o: PrivateEngineOptions): Promise<PrivateEngine> {
  const env = o.env ?? Deno.env.toObject();
  const dockerd = findDockerd(env);
  const problem = privateEngineProblem(dockerd, uid());
  if (problem) throw new DockerUnavailableError(problem);
  const cache = dockerCacheDir(env);
  if (cache) await reapEngines(cache, o.runner);
  const dir = engineFolder(cache);
  Deno.writeTextFileSync(`${dir}/daemon.json`, "{}\n");
  // whose engine this is: the reaper of a later kvlab tells a reused pid apart by its start
  const owner = { kvlab_pid: Deno.pid, kvlab_start: processStart(Deno.pid) };
  Deno.writeTextFileSync(`${dir}/owner.json`, JSON.stringify(owner) + "\n");
  const keyBefore = pathExists(KEY_FILE);
  const t0 = performance.now();
  const log = Deno.openSync(`${dir}/dockerd.log`, { write: true, create: true, append: true });
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(dockerd!, {
      args: dockerdArgs(dir),
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      detached: true, // its own group: a Ctrl-C reaches kvlab, which stops it
    }).spawn();
  } catch (e) {
    log.close();
    await removeFolder(dir, o.runner);
    throw new DockerUnavailableError(`dockerd could not be started: ${(e as Error).message}`);
  }
  const logged = child.stderr.pipeTo(log.writable).catch(() => {});
  const stop = async () => {
    await stopEngine(child, logged);
    if (!keyBefore) removeKey(); // the daemon's identity key it made on its first start
    return await removeFolder(dir, o.runner);
  };
  try {
    const engine = await waitForEngine(o, dir, child);
    const startMs = performance.now() - t0;
    return { ...engine, pid: child.pid, dir, startMs, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Polls the new engine until it answers, it exits, the time is up or the start is stopped. */
async function waitForEngine(
  o: PrivateEngineOptions,
  dir: string,
  child: Deno.ChildProcess,
): Promise<DockerEngine> {
  const ended: { status: Deno.CommandStatus | null } = { status: null };
  child.status.then((s) => ended.status = s);
  const deadline = Date.now() + (o.startTimeoutMs ?? 60_000);
  const socket = `${dir}/docker.sock`;
  let last = "";
  while (Date.now() < deadline && ended.status === null && !o.signal?.aborted) {
    if (pathExists(socket)) {
      try {
        return await connectEngine(o.runner, `unix://${socket}`, true);
      } catch (e) {
        if (!(e instanceof DockerUnavailableError)) throw e;
        last = e.message;
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const exited = ended.status;
  const why = o.signal?.aborted
    ? "interrupted"
    : exited
    ? `dockerd exited (${exited.signal ?? `code ${exited.code}`})`
    : `no answer in ${o.startTimeoutMs ?? 60_000} ms${last ? ` (${last})` : ""}`;
  throw new DockerUnavailableError(`private dockerd: ${why}; its log ends: ${logTail(dir)}`);
}

/** The last lines of an engine's log, on one line. */
function logTail(dir: string): string {
  try {
    const lines = Deno.readTextFileSync(`${dir}/dockerd.log`).trim().split("\n");
    return lines.slice(-3).map((l) => l.replace(/^time="[^"]*"\s*/, "")).join(" | ") || "(empty)";
  } catch {
    return "(no log)";
  }
}

/**
 * The key dockerd 20.10 writes on its first start, whatever its data root (there is no flag for
 * it): removed again when the engine that made it stops.
 */
const KEY_FILE = "/etc/docker/key.json";

function removeKey(): void {
  try {
    Deno.removeSync(KEY_FILE);
  } catch { /* not there */ }
}

/** Stops dockerd by PID (SIGTERM; SIGKILL after 30 s) and waits for it. */
async function stopEngine(child: Deno.ChildProcess, logged: Promise<void>): Promise<void> {
  try {
    Deno.kill(child.pid, "SIGTERM");
  } catch { /* gone already */ }
  const kill = setTimeout(() => {
    try {
      Deno.kill(child.pid, "SIGKILL");
    } catch { /* gone */ }
  }, 30_000);
  await child.status;
  clearTimeout(kill);
  await logged;
}

/**
 * The mount points under a folder, deepest first, from `/proc/self/mountinfo` (its fifth field;
 * spaces in it are written `\040`).
 *
 * @param mountinfo The file's text.
 * @param dir The folder.
 * @returns The mount points inside it.
 *
 * @example
 * ```ts
 * import { mountsUnder } from "./private_engine.ts";
 * import assert from "node:assert/strict";
 * const info = "36 25 0:4 net:[4026532285] /d/exec/netns/default rw shared:1 - nsfs nsfs rw\n" +
 *   "37 25 0:5 / /dx rw - tmpfs tmpfs rw\n38 36 0:6 / /d/exec/netns rw - tmpfs t rw\n";
 * assert.deepEqual(mountsUnder(info, "/d"), ["/d/exec/netns/default", "/d/exec/netns"]);
 * ```
 */
export function mountsUnder(mountinfo: string, dir: string): string[] {
  const points = mountinfo.split("\n").map((l) => l.split(" ")[4])
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/\\(\d{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === dir || p.startsWith(dir + "/"));
  return points.sort((a, b) => b.length - a.length);
}

/**
 * Removes an engine's folder, after unmounting what dockerd left mounted in it (the network
 * namespace file it binds under its exec root stays mounted after it exits); what was left, or
 * null.
 */
async function removeFolder(dir: string, runner: ProcessRunner): Promise<string | null> {
  // Deno reads /proc only with --allow-all: readSystemFiles asks `sh` otherwise
  const info = readSystemFiles(["/proc/self/mountinfo"])["/proc/self/mountinfo"] ?? "";
  for (const point of mountsUnder(info, dir)) {
    await runner.run({ argv: ["umount", point], timeoutMs: 10_000, capture: true }).catch(() => {});
  }
  try {
    Deno.removeSync(dir, { recursive: true });
    return null;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    return `the private Docker engine's folder ${dir} could not be removed: ${
      (e as Error).message
    }`;
  }
}

/**
 * Cleans up the folders of private engines and image builds whose kvlab is gone (killed by
 * SIGKILL, or a crash):
 * a dockerd still running there is asked to remove its containers and stopped; a folder whose
 * dockerd is gone is started once more, so that it removes the containers it left, then stopped;
 * then the folder is removed.
 *
 * @param cache The folder of private engines ({@link dockerCacheDir}).
 * @param runner Starts the docker client.
 * @returns What was cleaned up, one line each.
 */
export async function reapEngines(cache: string, runner: ProcessRunner): Promise<string[]> {
  const done: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(cache)];
  } catch {
    return done;
  }
  for (const e of entries) {
    const build = /^build-(\d+)-/.exec(e.name);
    if (build && Number(build[1]) !== Deno.pid && processState(Number(build[1])).state === "gone") {
      const left = await removeFolder(`${cache}/${e.name}`, runner);
      done.push(left ?? `removed an image build folder left by kvlab pid ${build[1]}`);
      continue;
    }
    const m = /^engine-(\d+)-[0-9a-f]+$/.exec(e.name);
    if (!m || !e.isDirectory || Number(m[1]) === Deno.pid) continue;
    const dir = `${cache}/${e.name}`;
    if (sameProcess(Number(m[1]), ownerStart(dir)) !== false) continue; // alive, or cannot tell
    await removeLeftContainers(dir, runner);
    const left = await removeFolder(dir, runner);
    done.push(left ?? `removed the private Docker engine left by kvlab pid ${m[1]} (${dir})`);
  }
  return done;
}

/** The start time of the kvlab that started an engine, as its folder records it. */
function ownerStart(dir: string): string | null {
  try {
    return JSON.parse(Deno.readTextFileSync(`${dir}/owner.json`)).kvlab_start ?? null;
  } catch {
    return null;
  }
}

/** Stops a left engine's containers and the engine (starting it once when it is gone). */
async function removeLeftContainers(dir: string, runner: ProcessRunner): Promise<void> {
  let pid = NaN;
  try {
    pid = Number(Deno.readTextFileSync(`${dir}/dockerd.pid`).trim());
  } catch { /* never wrote one */ }
  const running = Number.isInteger(pid) && processState(pid).state === "running";
  let child: Deno.ChildProcess | undefined;
  if (!running) {
    const dockerd = findDockerd(Deno.env.toObject());
    if (!dockerd || !pathExists(`${dir}/data`)) return;
    child = new Deno.Command(dockerd, {
      args: dockerdArgs(dir),
      stdin: "null",
      stdout: "null",
      stderr: "null",
      detached: true,
    }).spawn();
    pid = child.pid;
  }
  try {
    const engine = await waitForEngine(
      { runner, startTimeoutMs: 30_000 },
      dir,
      child ?? {
        status: new Promise<Deno.CommandStatus>(() => {}),
      } as Deno.ChildProcess,
    );
    const ids = (await engine.run(["ps", "-aq"])).split("\n").filter((x) => x.trim() !== "");
    if (ids.length > 0) await engine.run(["rm", "-f", ...ids]);
  } catch { /* the folder goes anyway */ }
  try {
    Deno.kill(pid, "SIGTERM");
  } catch { /* gone */ }
  for (let i = 0; i < 300 && processState(pid).state === "running"; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* gone */ }
  await child?.status;
}

/** An engine for a session of several plans (a notebook, a test), and what stops it. */
export interface OpenEngine {
  engine: DockerEngine;
  /** Stops the engine when kvlab started it (nothing otherwise); what was left, or null. */
  stop(): Promise<string | null>;
}

/**
 * The engine `DOCKER_HOST` or the default socket names, else a private one kvlab starts: for
 * several plans in a row (hand it to each as `runPlan`'s `docker`), stopped once at the end.
 *
 * @param runner Starts docker and dockerd.
 * @param signal Aborting stops the start of a private engine.
 * @returns The engine and its stop.
 * @throws {DockerUnavailableError} When none answers and none can be started here (both why).
 */
export async function openEngine(runner: ProcessRunner, signal?: AbortSignal): Promise<OpenEngine> {
  try {
    return { engine: await findEngine(runner), stop: () => Promise.resolve(null) };
  } catch (e) {
    if (!(e instanceof DockerUnavailableError)) throw e;
    try {
      const engine = await startPrivateEngine({ runner, signal });
      return { engine, stop: engine.stop };
    } catch (why) {
      if (!(why instanceof DockerUnavailableError)) throw why;
      throw new DockerUnavailableError(
        `${e.message}; and kvlab cannot start one here: ${why.message}`,
      );
    }
  }
}
