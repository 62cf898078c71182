/**
 * A failover run: kvlab starts a topology (`../topology/`: a cluster with replicas, or a
 * standalone primary with a replica), drives it with its open-loop generator at a fixed rate
 * (the cluster engine in its failover mode: a lost socket opened again, a request timeout,
 * 100 ms intervals with errors by kind), takes one action at a set time (kill -9 or SIGSTOP of a
 * node by its PID, `CLUSTER FAILOVER` on its replica, a reshard, or none: an A/A run), completes it (SIGCONT after a stop;
 * for a standalone primary killed, `REPLICAOF NO ONE` on its replica and the generator pointed
 * at it), keeps the generator's slot map current (`CLUSTER SHARDS` from a live node every
 * 100 ms, as a cluster client refreshing on errors would), reads which node took over, stores
 * the run (`results` as any open-loop step, `failover_intervals`, `failover_events`) and stops
 * every process it started by its PID.
 *
 * @module
 */

import { type CollectOptions, collectRun, snapshotAfter, snapshotBefore } from "../collector.ts";
import type { CollectedRun, Measurement } from "../collector.ts";
import type { ProcessRunner } from "../process.ts";
import {
  describeTopology,
  prepareTopology,
  removeLeftTopologyDirs,
  type RunningTopology,
  startTopology,
  type TopologySpec,
} from "../topology/mod.ts";
import { readSlotMap } from "../cluster/nodes.ts";
import { emptySlotMap, moveSlot, type SlotMap } from "../cluster/slots.ts";
import { runOpenLoop } from "../loadgen/open_loop.ts";
import type { OpenLoopResult } from "../loadgen/open_loop.ts";
import { openLoopRows } from "../loadgen/rows.ts";
import { KVLAB_VERSION } from "../../version.ts";
import { redactText } from "../../text/redact.ts";
import type { FailoverEventsRow, FailoverIntervalsRow } from "../../schema.ts";
import { type FailoverAction, failoverProblem } from "./spec.ts";
import { type MasterCalls, mastersAfter, mastersBefore, reshardAction } from "./reshard.ts";
import type { NodeCrossCheck } from "../cluster/nodes.ts";
import {
  addr,
  call,
  failoverJson,
  intervalRow,
  masterPort,
  mergeMap,
  type Node,
  resume,
  servedSlot,
  tookOver,
} from "./nodes.ts";

/** Options of {@link runFailover}. */
export interface FailoverRunOptions extends CollectOptions {
  /** The topology kvlab starts (a plan's `start:` without `engine`'s container). */
  topology: TopologySpec;
  action: FailoverAction;
  /** The fixed rate, requests per second. */
  requestedOpsPerSec: number;
  /** The load's length, seconds. */
  durationS: number;
  /** @default {8} */
  connections?: number;
  /** SET:GET. @default {"0:1"} */
  ratio?: string;
  /** @default {1000} */
  keys?: number;
  /** Key names: `keyPrefix + 0 … keys − 1` (a hash tag keeps them in one slot). @default {"key:"} */
  keyPrefix?: string;
  /** A request without a reply after this is an error (`timeout`). @default {1000} */
  requestTimeoutMs?: number;
  /** @default {100} */
  intervalMs?: number;
  /** Starts the servers. */
  runner: ProcessRunner;
  /** Aborting ends the load early (the run is kept, interrupted) and stops everything. */
  signal?: AbortSignal;
  /** What kvlab does, line by line (the topology, the action, who took over). */
  onMessage?: (line: string) => void;
}

/** What {@link runFailover} did. */
export interface FailoverRun extends CollectedRun {
  /** The events stored (action, action_done, took_over). */
  events: FailoverEventsRow[];
  /** The intervals stored. */
  intervals: FailoverIntervalsRow[];
  /** What stopping the topology found (the killed node's own end left out). */
  stopProblems: string[];
}

const epochNow = () => performance.timeOrigin + performance.now();

/**
 * Runs one failover study (see the module's doc) and stores it.
 *
 * @param o The topology, the action, the load.
 * @returns The stored run and its events and intervals.
 * @throws {RangeError} When the action cannot run on the topology (before anything starts).
 * @throws {TopologyError} When the topology cannot start (nothing is left running).
 */
export async function runFailover(o: FailoverRunOptions): Promise<FailoverRun> {
  const problem = failoverProblem(o.action, o.topology, o.durationS);
  if (problem) throw new RangeError(problem);
  const say = (line: string) => o.onMessage?.(line);
  for (const line of removeLeftTopologyDirs()) say(line);
  const prepared = await prepareTopology(o.topology, o.runner);
  const topo = await startTopology(prepared, { runner: o.runner, signal: o.signal });
  say(
    `started ${prepared.spec.engine} ${prepared.version} as ${describeTopology(o.topology)}: ` +
      topo.nodes.map((n) => `${n.name} ${n.role} ${addr(n)} pid ${n.pid}`).join(", "),
  );
  let events: FailoverEventsRow[] = [];
  let intervals: FailoverIntervalsRow[] = [];
  let run: CollectedRun;
  let stopped: Node | null = null;
  let stopProblems: string[] = [];
  try {
    run = await collectRun<Measured>(o, {
      target: topo.target,
      command: `kvlab failover (${o.action.action} at ${o.action.atS} s, ` +
        `${o.requestedOpsPerSec}/s for ${o.durationS} s, ${describeTopology(o.topology)})`,
      measure: async (writer) => {
        const m = await measure(o, topo, {
          cli: prepared.cli,
          runId: writer.runId,
          say,
          onStop: (n) => (stopped = n),
        });
        events = m.events;
        intervals = m.intervals;
        return m;
      },
      store: (m, runId) => ({
        // an action that failed (its words in the reason): the run did not do what it says
        status: m.result === undefined || m.actionFailed
          ? "failed"
          : m.result.interrupted
          ? "incomplete"
          : "complete",
        reason: m.reason,
        tests: m.rows?.results.length ?? 0,
        interrupted: m.result?.interrupted ?? o.signal?.aborted ?? false,
        columns: {
          tool: "kvlab-loadgen",
          tool_version: KVLAB_VERSION,
          output_format: m.result ? "kvlab" : "none",
          tool_exit_code: null,
        },
        tables: {
          results: m.rows?.results ?? [],
          time_series: m.rows?.time_series ?? [],
          hdr_histograms: m.rows?.hdr_histograms ?? [],
          failover_intervals: m.intervals.map((r) => ({ ...r, run_id: runId })),
          failover_events: m.events.map((r) => ({ ...r, run_id: runId })),
        },
        raw: [
          ...(m.reshard
            ? [{ name: "reshard.txt", bytes: new TextEncoder().encode(m.reshard) }]
            : []),
          failoverJson({ action: o.action, events: m.events, errors: m.errorSamples }),
        ],
        manifest: {
          failover: {
            topology: describeTopology(o.topology),
            action: o.action,
            request_timeout_ms: o.requestTimeoutMs ?? 1000,
            interval_ms: o.intervalMs ?? 100,
          },
          ...(m.nodes === undefined
            ? {}
            : "none" in m.nodes
            ? { cluster_nodes: null, cluster_nodes_none: m.nodes.none }
            : { cluster_nodes: m.nodes }),
          warnings: [
            ...m.errorSamples.map((e) => `error: ${redactText(e)}`),
            ...(m.nodes && "warning" in m.nodes && m.nodes.warning ? [m.nodes.warning] : []),
          ],
        },
      }),
    });
  } finally {
    if (stopped) resume(stopped);
    // the node killed on purpose had exited before the end: that is no problem
    const killed = events.find((e) => e.event === "action" && e.action === "kill");
    stopProblems = (await topo.stop()).filter((p) =>
      !(killed && p.startsWith(`${killed.node} (pid ${killed.pid}) had exited`))
    );
  }
  return { ...run, events, intervals, stopProblems };
}

interface Measured extends Measurement {
  result?: OpenLoopResult;
  rows?: ReturnType<typeof openLoopRows>;
  reason: string | null;
  events: FailoverEventsRow[];
  intervals: FailoverIntervalsRow[];
  errorSamples: string[];
  /** The action failed (the reason says how). */
  actionFailed?: boolean;
  /** A reshard's cli output (the raw `reshard.txt`). */
  reshard?: string;
  /** A cluster's per-master cross-check, or why there is none. */
  nodes?: NodeCrossCheck | { none: string };
}

// one run's steps in order (snapshot, slot map, the action and its timers, the map's refresh,
// the load, who took over): long, as they read best together
async function measure(
  o: FailoverRunOptions,
  topo: RunningTopology,
  { cli, runId, say, onStop }: {
    cli: string;
    runId: string;
    say: (l: string) => void;
    onStop: (n: Node) => void;
  },
): Promise<Measured> {
  const events: FailoverEventsRow[] = [];
  const before = await snapshotBefore(topo.target);
  if ("reason" in before) return { reason: before.reason, events, intervals: [], errorSamples: [] };
  const cluster = !!o.topology.cluster;
  const byPort = (port: number) => topo.nodes.find((n) => n.port === port);
  let map: SlotMap;
  let masters: MasterCalls | null = null;
  if (cluster) {
    map = await readSlotMap(topo.target);
    masters = await mastersBefore(topo.target);
  } else {
    map = emptySlotMap();
    map.nodes.push({ host: "127.0.0.1", port: topo.target.port, id: null });
    map.slotNode.fill(0);
  }
  const first = map.nodes[map.slotNode[0]];
  const node = o.action.node
    ? topo.nodes.find((n) => n.name === o.action.node)
    : byPort(first.port);
  // the first slot it serves (null: none, a replica)
  const slot = node ? servedSlot(map, node.port) : null;
  if (!node) {
    return {
      before,
      reason: `node: no ${o.action.node} (this topology has ${topo.nodes.length} processes)`,
      events,
      intervals: [],
      errorSamples: [],
    };
  }
  // its replica (the one CLUSTER FAILOVER goes to, or the standalone one promoted)
  const replicas = topo.nodes.filter((n) => n.role === "replica");
  let replica: Node | undefined;
  for (const r of replicas) {
    if ((await masterPort(r)) === node?.port) {
      replica = r;
      break;
    }
  }
  // positional: a local row maker, called with literal values
  const row = (
    event: string,
    at: number | null,
    n: Node | undefined,
    detail: string,
  ): FailoverEventsRow => ({
    run_id: "",
    event,
    elapsed_ms: at,
    action: o.action.action,
    node: n?.name ?? null,
    address: n ? addr(n) : null,
    pid: n?.pid ?? null,
    detail,
  });
  let t0 = 0;
  const since = () => epochNow() - t0;
  const timers: ReturnType<typeof setTimeout>[] = [];
  const later = (ms: number, f: () => void | Promise<void>) =>
    timers.push(setTimeout(() => void Promise.resolve(f()).catch(failed), Math.max(0, ms)));
  let actionError: string | null = null;
  let reshardOutput: string | undefined;
  let acting: Promise<void> | null = null;
  const failed = (e: unknown) => (actionError ??= (e as Error).message ?? String(e));
  const act = async () => {
    const a = o.action;
    if (a.action === "kill") {
      events.push(row("action", since(), node, `kill -9 ${node.pid} (${node.role})`));
      Deno.kill(node.pid, "SIGKILL");
      say(`${since().toFixed(0)} ms: kill -9 ${node.name} (${addr(node)}, pid ${node.pid})`);
      if (!cluster) {
        later((a.promoteAfterS ?? 1) * 1000, async () => {
          if (!replica) throw new Error("no replica of the primary to promote");
          await call(replica, "REPLICAOF", "NO", "ONE");
          const i = moveSlot(map, 0, { host: "127.0.0.1", port: replica.port, id: null });
          map.slotNode.fill(i);
          events.push(
            row(
              "action_done",
              since(),
              replica,
              "REPLICAOF NO ONE answered; the generator sends to it",
            ),
          );
          say(`${since().toFixed(0)} ms: ${replica.name} promoted, the generator sends to it`);
        });
      }
    } else if (a.action === "stop") {
      events.push(row("action", since(), node, `SIGSTOP ${node.pid} for ${a.stopS ?? 2} s`));
      Deno.kill(node.pid, "SIGSTOP");
      onStop(node);
      stoppedNow = true;
      say(`${since().toFixed(0)} ms: SIGSTOP ${node.name} (${addr(node)}, pid ${node.pid})`);
      later((a.stopS ?? 2) * 1000, () => {
        stoppedNow = false;
        resume(node);
        events.push(row("action_done", since(), node, `SIGCONT ${node.pid}`));
        say(`${since().toFixed(0)} ms: SIGCONT ${node.name}`);
      });
    } else if (a.action === "none") {
      events.push(row("action", since(), undefined, "no action (an A/A run, for calibration)"));
      say(`${since().toFixed(0)} ms: no action (an A/A run)`);
    } else if (a.action === "reshard") {
      acting = reshard(a);
      await acting;
    } else {
      if (!replica) throw new Error(`no replica of ${node.name} for CLUSTER FAILOVER`);
      events.push(
        row("action", since(), node, `CLUSTER FAILOVER sent to its replica ${replica.name}`),
      );
      const reply = await call(replica, "CLUSTER", "FAILOVER");
      // the server's words: redacted where they are stored and said
      const answer = redactText(String(reply));
      events.push(row("action_done", since(), replica, `CLUSTER FAILOVER answered ${answer}`));
      say(`${since().toFixed(0)} ms: CLUSTER FAILOVER on ${replica.name}: ${answer}`);
    }
  };
  // a slot migration: the cli runs while the load goes on; its end is `action_done`
  const reshard = (a: FailoverAction) =>
    reshardAction({
      cli,
      runner: o.runner,
      signal: o.signal,
      map,
      nodes: topo.nodes,
      node,
      action: a,
      mark: (event, n, words) => {
        const detail = redactText(words);
        events.push(row(event, since(), n, detail));
        say(`${since().toFixed(0)} ms: ${n.name}: ${detail}`);
      },
      keep: (text) => (reshardOutput = redactText(text)),
    });
  // a node still stopped when the load ends (interrupted before stop_s) resumes then
  let stoppedNow = false;
  const resumeAtEnd = () => {
    if (!stoppedNow) return;
    stoppedNow = false;
    resume(node);
    events.push(row("action_done", since(), node, `SIGCONT ${node.pid} as the load ended`));
  };
  // the generator's slot map kept current from a live node (not the one acted on)
  let refreshing = cluster;
  const refresh = (async () => {
    while (refreshing) {
      await new Promise((r) => setTimeout(r, 100));
      for (const n of topo.nodes) {
        if (!refreshing || n === node) continue;
        try {
          mergeMap(map, await readSlotMap(n.target));
          break;
        } catch { /* not this one, or the cluster not covered yet */ }
      }
    }
  })();
  let result: OpenLoopResult;
  try {
    result = await runOpenLoop({
      hostname: "127.0.0.1",
      port: topo.target.port,
      requestedOpsPerSec: o.requestedOpsPerSec,
      connections: o.connections ?? 8,
      durationS: o.durationS,
      ratio: o.ratio ?? "0:1",
      keys: o.keys ?? 1000,
      ...(o.keyPrefix ? { keyPrefix: o.keyPrefix } : {}),
      engine: "deno",
      cluster: map,
      failover: { intervalMs: o.intervalMs ?? 100, requestTimeoutMs: o.requestTimeoutMs ?? 1000 },
      drainS: Math.max(2, (o.requestTimeoutMs ?? 1000) / 1000 + 0.5),
      signal: o.signal,
      onScheduleStart: (epoch) => {
        t0 = epoch;
        later(epoch + o.action.atS * 1000 - epochNow(), act);
      },
    });
  } catch (e) {
    refreshing = false;
    timers.forEach(clearTimeout);
    resumeAtEnd();
    await refresh;
    await Promise.resolve(acting).catch(() => {});
    if (e instanceof RangeError || e instanceof TypeError) throw e;
    return {
      before,
      reason: redactText(e instanceof Error ? `${e.name}: ${e.message}` : String(e)),
      events,
      intervals: [],
      errorSamples: [],
    };
  }
  timers.forEach(clearTimeout);
  resumeAtEnd();
  // a reshard still running when the load ends: kvlab waits for its cli (its end is recorded)
  await Promise.resolve(acting).catch(() => {});
  refreshing = false;
  await refresh;
  // which node serves the acted-on node's slots now (or the promoted replica)
  if (o.action.action !== "none") {
    const took = await tookOver(o, { topo, node, replica, slot });
    events.push(row("took_over", null, took.node, took.detail));
    say(
      `took over: ${took.node ? `${took.node.name} (${addr(took.node)})` : "none"}: ${took.detail}`,
    );
  }
  const after = await snapshotAfter(topo.target).catch(() => undefined);
  const answered = (result.perInterval ?? []).reduce((n, b) => n + b.completed, 0);
  const nodes = masters ? await mastersAfter(topo.target, masters, answered) : undefined;
  const rows = openLoopRows(result, runId, {
    ratio: o.ratio ?? "0:1",
    valueSize: 256,
    keys: o.keys ?? 1000,
    startedAt: new Date(t0),
  });
  // lost connections are what a failover run measures, not a cut result (a step's rule)
  rows.results = rows.results.map((x) => ({ ...x, complete: !result.interrupted }));
  return {
    before,
    after,
    result,
    rows,
    reason: actionError ? redactText(`the action failed: ${actionError}`) : null,
    events,
    intervals: (result.perInterval ?? []).map((b) => intervalRow(b, o.requestedOpsPerSec)),
    errorSamples: result.errorSamples,
    actionFailed: actionError !== null,
    reshard: reshardOutput,
    nodes: cluster
      ? nodes ?? { none: "the masters' commandstats could not be read before the run" }
      : undefined,
  };
}
