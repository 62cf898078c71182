/**
 * A plan's servers for the plan's duration: the ones kvlab starts as processes
 * (`./processes.ts`), then the Docker side: the engine (the one given, else
 * `DOCKER_HOST` or the default socket, else a private `dockerd` kvlab starts when the plan starts
 * servers itself), the image and container of each server with `start:`, and the watch of every
 * server's container over each run (`container:` names one someone else runs). Afterwards, and
 * after an error or Ctrl-C, the containers kvlab started are removed and the engine it started is
 * stopped by its PID.
 *
 * @module
 */

import type { ProcessRunner } from "../process.ts";
import { processState } from "../../system/pids.ts";
import { parseServerUrl } from "../target.ts";
import { type DockerEngine, DockerUnavailableError, findEngine } from "../docker/engine.ts";
import { type OpenEngine, openEngine, type PrivateEngine } from "../docker/private_engine.ts";
import { type ServerEngine, type ServerImage, serverImage } from "../docker/image.ts";
import { type ServerContainer, startServerContainer } from "../docker/container.ts";
import { containerWatch } from "../docker/watch.ts";
import type { PlanServer } from "./kind.ts";
import type { StudyPlan } from "./plan.ts";
import { startServerProcesses, startsProcesses } from "./processes.ts";
import { describeTopology, type TopologySpec } from "../topology/spec.ts";

/** A plan with its servers as they run. */
export interface PlanServers {
  /** The plan, its servers with the URLs kvlab gave them and the watches of their containers. */
  plan: StudyPlan;
  /** The runner of the plan's tools: `DOCKER_HOST` set for an engine kvlab started. */
  runner: ProcessRunner;
  /**
   * Removes the containers kvlab started, then stops the engine it started.
   * @returns What could not be done, one line each.
   */
  stop(): Promise<string[]>;
}

/** Options of {@link startPlanServers}. */
export interface PlanServersOptions {
  /** Starts docker, dockerd and the rest. */
  runner: ProcessRunner;
  /** Aborting stops the start (what was started is removed). */
  signal?: AbortSignal;
  /** The engine to use; without it kvlab finds one, or starts one for `start:` servers. */
  engine?: DockerEngine;
  /** Told what was started, one line each (`engine: …`, `image …`, `server …`). */
  onMessage?: (line: string) => void;
}

/**
 * Whether a plan has servers in containers (started by kvlab, or named).
 *
 * @param plan The plan.
 * @returns True when some server has `start: { container: true }` or `container:`.
 */
export function usesDocker(plan: Pick<StudyPlan, "servers">): boolean {
  return plan.servers.some((s) => s.start?.container || s.container);
}

/**
 * Whether a plan has servers kvlab starts or watches (`start:` or `container:`).
 *
 * @param plan The plan.
 * @returns True when some server has `start:` or `container:`.
 */
export function startsServers(plan: Pick<StudyPlan, "servers"> & { kind?: string }): boolean {
  if (plan.kind === "failover") return false; // it starts a topology per run (kinds/failover.ts)
  return plan.servers.some((s) => s.start || s.container);
}

/**
 * A container name for a plan's server: `kvlab-<plan>-<server>-<kvlab pid>`, with what docker
 * refuses in a name turned into `-`.
 *
 * @example
 * ```ts
 * import { containerName } from "./servers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(containerName("seed-002", "redis 7/x", 42), "kvlab-seed-002-redis-7-x-42");
 * ```
 */
export function containerName(plan: string, server: string, pid: number): string {
  return `kvlab-${plan}-${server}-${pid}`.replace(/[^a-zA-Z0-9_.-]/g, "-");
}

/**
 * Removes the containers kvlab started whose kvlab is gone (killed by SIGKILL, or a crash): the
 * ones labelled `kvlab.pid` with a pid that no longer runs.
 *
 * @param engine The engine.
 * @returns What was removed, one line each.
 */
export async function removeLeftContainers(engine: DockerEngine): Promise<string[]> {
  let listed: string;
  try {
    listed = await engine.run([
      "ps",
      "--all",
      "--filter",
      "label=kvlab.pid",
      "--format",
      '{{.Names}} {{.Label "kvlab.pid"}}',
    ]);
  } catch {
    return []; // a client that cannot list them: nothing to do here
  }
  const done: string[] = [];
  for (const line of listed.split("\n")) {
    const [name, pid] = line.trim().split(" ");
    if (!name || !/^\d+$/.test(pid ?? "") || Number(pid) === Deno.pid) continue;
    if (processState(Number(pid)).state !== "gone") continue;
    try {
      await engine.run(["rm", "--force", "--volumes", name]);
      done.push(`removed container ${name}, left by kvlab pid ${pid} which is gone`);
    } catch (e) {
      done.push(
        `container ${name}, left by kvlab pid ${pid}, could not be removed: ${
          (e as Error).message
        }`,
      );
    }
  }
  return done;
}

/**
 * What a plan would start, for `--dry-run`: one line per server with `start:`.
 *
 * @param plan The plan.
 * @returns The lines.
 *
 * @example
 * ```ts
 * import { parsePlan, startLines } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan("name: p\nkind: memory\nservers: [{ name: r, start: { engine: redis, " +
 *   "container: true, memory_limit: 64m, cpus: 1 } }]\nmemory: { key_counts: [10] }\n", "p.yaml");
 * assert.deepEqual(startLines(plan), [
 *   "server r: a container of kvlab/redis (the installed redis-server), memory limit 64 MiB, " +
 *     "1 CPUs, on a free loopback port (port 0 until it runs)",
 * ]);
 * ```
 */
export function startLines(plan: Pick<StudyPlan, "servers">): string[] {
  return plan.servers.flatMap((s) => {
    if (!s.start) return [];
    if (startsProcesses(s)) {
      return [
        `server ${s.name}: the installed ${s.start.engine}-server as ` +
        `${
          describeTopology(s.start as TopologySpec)
        }, on free loopback ports (port 0 until it runs)`,
      ];
    }
    const limits = [
      s.start.memoryLimitBytes === undefined
        ? ""
        : `, memory limit ${Number((s.start.memoryLimitBytes / 2 ** 20).toFixed(1))} MiB`,
      s.start.cpus === undefined ? "" : `, ${s.start.cpus} CPUs`,
    ].join("");
    return [
      `server ${s.name}: a container of kvlab/${s.start.engine} (the installed ` +
      `${s.start.engine}-server)${limits}, on a free loopback port (port 0 until it runs)`,
    ];
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Starts what a plan's servers need: the processes of the ones started from installed binaries,
 * then the engine, the images and the containers, and sets the watch of every container. A plan
 * without either is returned as it is.
 *
 * @param plan The plan.
 * @param o The runner, a stop signal, an engine to use.
 * @returns The plan as it runs, its runner, and what stops it all.
 * @throws {DockerUnavailableError} When a server is to be started and no engine answers nor can
 * be started here (saying why); nothing is left running.
 * @throws {ToolNotFoundError} When a server's engine (`redis-server`, `valkey-server`) is not
 * installed.
 * @throws {TopologyError} When a topology cannot be started here or does not come up (naming
 * the server and why); nothing is left running.
 */
export async function startPlanServers(
  plan: StudyPlan,
  o: PlanServersOptions,
): Promise<PlanServers> {
  const processes = await startServerProcesses(plan, o);
  if (!usesDocker(plan)) return processes;
  try {
    const docker = await startContainers(processes.plan, { ...o, runner: processes.runner });
    return {
      ...docker,
      stop: async () => [...await docker.stop(), ...await processes.stop()],
    };
  } catch (e) {
    await processes.stop();
    throw e;
  }
}

/** The Docker side of {@link startPlanServers}. */
async function startContainers(plan: StudyPlan, o: PlanServersOptions): Promise<PlanServers> {
  const say = (line: string) => o.onMessage?.(line);
  const containers: ServerContainer[] = [];
  let ownEngine: (() => Promise<string | null>) | undefined;
  const stop = async () => {
    const problems: string[] = [];
    for (const c of containers.reverse()) {
      const left = await c.remove();
      if (left) problems.push(left);
    }
    if (ownEngine) {
      const left = await ownEngine();
      if (left) problems.push(left);
    }
    return problems;
  };
  try {
    const engine = o.engine ?? await chooseEngine(plan, o, (s) => ownEngine = s);
    if (engine === null) return { plan, runner: o.runner, stop };
    for (const line of await removeLeftContainers(engine)) say(line);
    const images = new Map<ServerEngine, ServerImage>();
    const servers: PlanServer[] = [];
    for (const s of plan.servers) {
      if (!s.start?.container) {
        servers.push(
          s.container ? { ...s, watch: containerWatch({ engine, name: s.container }) } : s,
        );
        continue;
      }
      let image = images.get(s.start.engine);
      if (!image) {
        image = await serverImage(engine, s.start.engine);
        images.set(s.start.engine, image);
        say(
          `image ${image.tag}: ${image.built ? `made from ${image.binary}` : "reused"} ` +
            `(sha256 ${image.sha256.slice(0, 12)}…, ${seconds(image.ms)})`,
        );
      }
      const c = await startServerContainer(engine, {
        image,
        name: containerName(plan.name, s.name, Deno.pid),
        memoryLimitBytes: s.start.memoryLimitBytes,
        cpus: s.start.cpus,
        cpusetCpus: plan.cpus?.server?.list,
        signal: o.signal,
      });
      containers.push(c);
      say(`server ${s.name}: container ${c.name} on ${c.url} (${seconds(c.startMs)})`);
      const target = parseServerUrl(c.url);
      servers.push({
        ...s,
        url: c.url,
        target,
        container: c.name,
        watch: containerWatch({ engine, name: c.name }),
      });
    }
    return { plan: { ...plan, servers } as StudyPlan, runner: engine.runner, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * The engine of a plan: `DOCKER_HOST` or the default socket, else (when the plan starts servers)
 * a private dockerd; null when only named containers would be watched and none answers.
 */
async function chooseEngine(
  plan: StudyPlan,
  o: PlanServersOptions,
  owned: (stop: () => Promise<string | null>) => void,
): Promise<DockerEngine | null> {
  const say = (line: string) => o.onMessage?.(line);
  const starts = plan.servers.filter((s) => s.start?.container).map((s) => s.name);
  let open: OpenEngine;
  try {
    open = starts.length
      ? await openEngine(o.runner, o.signal)
      : { engine: await findEngine(o.runner), stop: () => Promise.resolve(null) };
  } catch (e) {
    if (!(e instanceof DockerUnavailableError)) throw e;
    if (starts.length === 0) {
      say(`containers not watched: ${e.message}`);
      return null;
    }
    throw new DockerUnavailableError(
      `server ${starts.join(", ")}: start: { container: true } needs a Docker engine: ${e.message}`,
    );
  }
  const { engine } = open;
  if (engine.private) {
    owned(open.stop);
    const p = engine as PrivateEngine;
    say(
      `engine: a private dockerd ${engine.version} (pid ${p.pid}, ${p.dir}, ${
        seconds(p.startMs)
      }; ` +
        `no engine answered at ${Deno.env.get("DOCKER_HOST") ?? "the default socket"})`,
    );
  } else {
    say(
      `engine: Docker ${engine.version} (${Deno.env.get("DOCKER_HOST") ?? "the default socket"})`,
    );
  }
  return engine;
}
