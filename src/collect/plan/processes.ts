/**
 * The servers of a plan that kvlab starts as processes (`start:` without `container: true`):
 * every one checked first (installed, its version, TLS), then each topology started, its
 * server's target set (cluster and TLS options as a `url:` entry's), and all stopped by PID
 * when the plan ends. The commands runs store show `<kvlab temp>` for the topology's folder.
 *
 * @module
 */

import { bothWatches, nodeStatsWatch } from "../cluster/node_stats.ts";
import { pinnedRunner, type ProcessRunner } from "../process.ts";
import {
  describeTopology,
  prepareTopology,
  removeLeftTopologyDirs,
  replicationWatch,
  type RunningTopology,
  startTopology,
  type TopologySpec,
} from "../topology/mod.ts";
import type { PlanServer } from "./kind.ts";
import type { StudyPlan } from "./plan.ts";

/** What a run's stored command shows in place of a started topology's temporary folder. */
export const HIDDEN_DIR = "<kvlab temp>";

/** Options of {@link startServerProcesses}. */
export interface ServerProcessesOptions {
  /** Starts the servers and the plan's tools. */
  runner: ProcessRunner;
  /** Aborting stops the start (what was started is stopped). */
  signal?: AbortSignal;
  /** Told what was started and stopped, one line each. */
  onMessage?: (line: string) => void;
}

/** A plan's started processes. */
export interface ServerProcesses {
  /** The plan with the started servers' URLs and targets. */
  plan: StudyPlan;
  /** The plan's runner, its shown commands without the topologies' folders. */
  runner: ProcessRunner;
  /** Stops them all. @returns What went wrong, one line each. */
  stop(): Promise<string[]>;
}

/** Whether a plan server is started as processes. */
export function startsProcesses(s: PlanServer): boolean {
  return s.start !== undefined && !s.start.container;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * A runner whose shown commands (the ones runs store) name `HIDDEN_DIR` for each folder.
 *
 * @example
 * ```ts
 * import { hidingRunner } from "./processes.ts";
 * import assert from "node:assert/strict";
 * const inner = { run: () => Promise.reject(new Error("unused")) };
 * const r = hidingRunner(inner, ["/tmp/kvlab-start-1-x"]);
 * assert.deepEqual(r.shown?.(["memtier_benchmark", "--cacert=/tmp/kvlab-start-1-x/ca.crt"]),
 *   ["memtier_benchmark", "--cacert=<kvlab temp>/ca.crt"]);
 * ```
 */
export function hidingRunner(inner: ProcessRunner, dirs: readonly string[]): ProcessRunner {
  return {
    run: (o) => inner.run(o),
    shown: (argv) =>
      (inner.shown?.(argv) ?? [...argv]).map((a) =>
        dirs.reduce((s, d) => s.replaceAll(d, HIDDEN_DIR), a)
      ),
  };
}

/**
 * Starts the plan's servers that run as processes (none: the plan as it is).
 *
 * @param plan The plan.
 * @param o The runner, a stop signal, a listener.
 * @returns The plan as it runs and what stops it.
 * @throws {ToolNotFoundError} When a server or its client is not installed (nothing started).
 * @throws {TopologyError} When one cannot be started here (a version, TLS) or does not come up
 * (naming the server); nothing is left running.
 */
export async function startServerProcesses(
  plan: StudyPlan,
  o: ServerProcessesOptions,
): Promise<ServerProcesses> {
  const wanted = plan.servers.filter(startsProcesses);
  if (wanted.length === 0) return { plan, runner: o.runner, stop: () => Promise.resolve([]) };
  const say = (line: string) => o.onMessage?.(line);
  // the servers on the plan's server CPUs (pinned when they start)
  const serverRunner = plan.cpus?.server ? pinnedRunner(o.runner, plan.cpus.server.list) : o.runner;
  const prepared = new Map<string, Awaited<ReturnType<typeof prepareTopology>>>();
  for (const s of wanted) {
    try {
      prepared.set(s.name, await prepareTopology(s.start as TopologySpec, o.runner));
    } catch (e) {
      (e as Error).message = `server ${s.name}: ${(e as Error).message}`;
      throw e;
    }
  }
  for (const line of removeLeftTopologyDirs()) say(line);
  const running = new Map<string, RunningTopology>();
  const stop = async () => {
    const problems: string[] = [];
    for (const [name, t] of [...running].reverse()) {
      const t0 = performance.now();
      problems.push(...(await t.stop()).map((p) => `server ${name}: ${p}`));
      say(
        `server ${name}: stopped ${t.nodes.length} process${t.nodes.length === 1 ? "" : "es"} ` +
          `by PID (${t.nodes.map((n) => n.pid).join(", ")}) and removed its folder ` +
          `(${seconds(performance.now() - t0)})`,
      );
    }
    running.clear();
    return problems;
  };
  try {
    const servers: PlanServer[] = [];
    for (const s of plan.servers) {
      const p = prepared.get(s.name);
      if (!p) {
        servers.push(s);
        continue;
      }
      let t: RunningTopology;
      try {
        t = await startTopology(p, { runner: serverRunner, signal: o.signal });
      } catch (e) {
        (e as Error).message = `server ${s.name}: ${(e as Error).message}`;
        throw e;
      }
      running.set(s.name, t);
      say(
        `server ${s.name}: ${p.spec.engine}-server ${p.version} (${p.program}), ` +
          `${describeTopology(p.spec)}, on ${t.target.display} (${seconds(t.startMs)})`,
      );
      for (const n of t.nodes) {
        say(`server ${s.name}: ${n.name} (${n.role}) pid ${n.pid} on 127.0.0.1:${n.port}`);
      }
      servers.push({ ...s, url: t.target.display, target: t.target, ...lagWatch(t) });
    }
    const dirs = [...running.values()].map((t) => t.dir);
    return { plan: { ...plan, servers } as StudyPlan, runner: hidingRunner(o.runner, dirs), stop };
  } catch (e) {
    for (const problem of await stop()) say(problem);
    throw e;
  }
}

/**
 * The watch of a topology's nodes (`node_stats`: role, CPU, commands, keys over each run), and
 * of a standalone primary's replicas (their lag), when it has some.
 */
function lagWatch(t: RunningTopology): Pick<PlanServer, "watch"> {
  const nodes = nodeStatsWatch({ target: t.target, nodes: t.nodes.map((n) => n.target) });
  const replicas = t.nodes.filter((n) => n.role === "replica").map((n) => n.target);
  if (t.spec.cluster || replicas.length === 0) return { watch: nodes };
  return { watch: bothWatches(replicationWatch({ primary: t.target, replicas }), nodes) };
}
