/**
 * The coordinator of `kvlab run` for a plan with `agents:` (issue 35): one step run from several
 * client hosts and stored as ONE run. It picks the registered agents, splits the step's
 * connections (and so its rate) into interleaved shares, posts each agent its work item with a
 * common start far enough ahead for every agent's clock, waits for their results within the
 * cell's limit, and stores the merge (`./merge.ts`: counts summed, histograms added) with one
 * `agent_steps` row per agent and each agent's result as a raw file. No silent partial result:
 * an agent that does not answer (or falls silent: no heartbeat), fails or refuses makes the run
 * incomplete (failed when none measured), its reason naming the agent and what was seen; the
 * others' data is kept. Ctrl-C cancels the agents' items. A memtier step is merged by
 * `./memtier.ts`.
 *
 * @module
 */

import {
  type CollectedRun,
  type CollectOptions,
  collectRun,
  type Measurement,
  snapshotAfter,
  snapshotBefore,
  stepFaults,
  type StoredRun,
} from "../collector.ts";
import type { FixedRateStep } from "../tools/tool.ts";
import type { ServerTarget } from "../target.ts";
import type { OpenLoopResult } from "../loadgen/open_loop.ts";
import { openLoopRows } from "../loadgen/rows.ts";
import { openLoopCommand } from "../loadgen/step.ts";
import { openLoopStepCall } from "../loadgen/tool.ts";
import type { AgentStepsRow } from "../../schema.ts";
import { KVLAB_VERSION } from "../../version.ts";
import { commonStartMs, skewWarning } from "./clock.ts";
import { ControlConnection, controlProblem } from "./control.ts";
import { decodeStep, mergeSteps } from "./merge.ts";
import { mergeMemtierAgents, readMemtierAgentStep } from "./memtier.ts";
import type { MemtierRows } from "../formats/memtier/rows.ts";
import { memtierStepCall, memtierTool } from "../memtier/tool.ts";
import { agentFiles, agentRow, type Answer, chooseAgents, skewDisturbance } from "./_answers.ts";
import {
  HEARTBEAT_LOST_MS,
  REGISTRY_STREAM,
  RESULT_STREAM,
  WORK_GROUP,
  type WorkPlan,
  workStream,
} from "./protocol.ts";

/** How long a cancelled step's agents are awaited for their partial results, ms. */
const CANCEL_WAIT_MS = 5000;

/** A step to run on agents. */
export interface AgentsStep {
  /** The control server, the agents wanted and the lead before the common start. */
  agents: { control: ServerTarget; count: number; names: string[] | null; leadMs: number };
  /** The step (its server, rate, connections, workload). */
  step: FixedRateStep;
  /** The plan data each agent is sent (its `rates` the step's total). */
  plan: WorkPlan;
  /** The cell id. */
  cell: string;
  /** The cell's limit, seconds: agents that have not answered by then count as not answering. */
  timeoutS: number;
  signal?: AbortSignal;
}

/** A stored step of several agents, with its rates (as a latency sweep notes them). */
export interface AgentsCollectedStep extends CollectedRun {
  requestedOpsPerSec: number;
  achievedOpsPerSec: number | null;
}

interface Measured extends Measurement {
  reason: string | null;
  answers: Answer[];
  merged: OpenLoopResult | null;
  /** engine memtier: the agents' rows merged (null for engine kvlab, or none measured). */
  memtier: ReturnType<typeof mergeMemtierAgents> | null;
  /** Refusals and stray messages the coordinator saw on the result stream, not its own. */
  strays: string[];
  startAtMs: number | null;
}

/**
 * Runs one step on agents and stores it as one run. Throws only for bad options or a dataset
 * that cannot be written; a control server or agents that cannot be reached give a failed run.
 *
 * @param s The step and its agents.
 * @param options Dataset, labels, plan reference.
 * @returns The stored run, with the requested and merged achieved rates.
 */
export async function runAgentsStep(
  s: AgentsStep,
  options: CollectOptions,
): Promise<AgentsCollectedStep> {
  const memtier = isMemtier(s);
  const command = memtier
    ? memtierTool.command(memtierStepCall(s.step, "memtier_benchmark"), false)
    : openLoopCommand(openLoopStepCall(s.step));
  const names = s.agents.names?.join(", ") ?? `${s.agents.count} agents`;
  const { measured: m, ...run } = await collectRun(options, {
    target: s.step.target,
    command: `${command} (on agents: ${names}, control ${s.agents.control.display})`,
    measure: (writer) => measure(s, writer.runId),
    store: (m, runId) => memtier ? storedMemtier(m, runId, s) : stored(m, runId, s),
  });
  return {
    ...run,
    requestedOpsPerSec: s.step.requestedOpsPerSec,
    achievedOpsPerSec: memtier
      ? m.memtier?.results.find((r) => r.test === "TOTALS")?.ops_per_sec ?? null
      : m.merged?.achievedOpsPerSec ?? null,
  };
}

async function measure(s: AgentsStep, runId: string): Promise<Measured> {
  const none = { answers: [], merged: null, memtier: null, strays: [], startAtMs: null };
  const before = await snapshotBefore(s.step.target);
  if ("reason" in before) return { ...before, ...none };
  let conn: ControlConnection;
  try {
    conn = await ControlConnection.open(s.agents.control);
  } catch (e) {
    return { before, reason: `control server: ${controlProblem(e)}`, ...none };
  }
  try {
    const nowMs = await conn.timeMs();
    const picked = chooseAgents(await conn.latest(REGISTRY_STREAM, 1000), {
      nowMs,
      count: s.agents.count,
      names: s.agents.names,
    });
    if ("reason" in picked) return { before, reason: picked.reason, ...none };
    const startAtMs = commonStartMs(nowMs, picked.map((r) => r.clock), s.agents.leadMs);
    const after = await conn.lastId(RESULT_STREAM);
    const answers: Answer[] = picked.map((r, index) => ({
      registration: r,
      item: `${runId}-${index}`,
      share: { index, of: picked.length },
      result: null,
    }));
    for (const a of answers) {
      const stream = workStream(a.registration.agent);
      await conn.ensureGroup(stream, WORK_GROUP);
      await conn.post(stream, {
        type: "work",
        v: 1,
        item: a.item,
        cell: s.cell,
        agent: a.registration.agent,
        plan: s.plan,
        share: a.share,
        startAtMs,
        timeoutS: s.timeoutS,
      });
    }
    // the results, until every agent answered, was lost, or the cell's limit passed
    const strays = await awaitAnswers(conn, { s, answers, after });
    const parts: OpenLoopResult[] = [];
    const memtierParts: MemtierRows[] = [];
    for (const a of answers) {
      if (a.result?.status !== "ok") continue;
      if (isMemtier(s)) {
        try {
          a.memtier = readMemtierAgentStep(a.result.step!, runId);
          if (a.memtier.problem === null) memtierParts.push(a.memtier.rows);
          else a.result = { ...a.result, status: "error", error: a.memtier.problem };
        } catch (e) {
          a.result = { ...a.result, status: "error", error: `its step: ${(e as Error).message}` };
        }
        continue;
      }
      try {
        a.step = decodeStep(a.result.step!);
        parts.push(a.step);
      } catch (e) {
        a.result = { ...a.result, status: "error", error: `its step: ${(e as Error).message}` };
      }
    }
    const merged = parts.length > 0 ? mergeSteps(parts) : null;
    return {
      before,
      after: await snapshotAfter(s.step.target),
      reason: null,
      answers,
      merged,
      memtier: memtierParts.length > 0 ? mergeMemtierAgents(memtierParts, runId) : null,
      strays,
      startAtMs,
    };
  } catch (e) {
    return { before, reason: `control server: ${controlProblem(e)}`, ...none };
  } finally {
    conn.close();
  }
}

/**
 * Reads the result stream until every agent answered or was lost (no heartbeat for
 * HEARTBEAT_LOST_MS), or the cell's limit passed (reads block ≤ 1 s); on Ctrl-C posts each
 * agent still running a `cancel` of its item and awaits their partial answers a few seconds.
 *
 * @returns The stray messages seen (others' refusals, messages not of the protocol).
 */
async function awaitAnswers(
  conn: ControlConnection,
  { s, answers, after }: { s: AgentsStep; answers: Answer[]; after: string },
): Promise<string[]> {
  const strays: string[] = [];
  const deadline = performance.now() + s.timeoutS * 1000;
  const byItem = new Map(answers.map((a) => [a.item, a]));
  // when each agent was last heard of (its heartbeats while it holds its item)
  const heard = new Map(answers.map((a) => [a.item, performance.now()]));
  const read = async () => {
    for (const e of await conn.readAfter(RESULT_STREAM, after)) {
      after = e.id;
      if (e.problem) {
        if (strays.length < 20) strays.push(e.problem.message);
        continue;
      }
      const r = e.message;
      const mine = r.type === "result" || r.type === "heartbeat" ? byItem.get(r.item) : undefined;
      if (r.type === "heartbeat") {
        if (mine?.registration.agent === r.agent) heard.set(r.item, performance.now());
      } else if (
        r.type === "result" && mine && mine.registration.agent === r.agent &&
        mine.result === null
      ) {
        mine.result = r;
      } else if (r.type === "result" && r.status !== "ok" && strays.length < 20) {
        strays.push(`agent ${r.agent} ${r.status} item ${r.item}: ${r.error}`);
      }
    }
  };
  const waiting = () => answers.filter((a) => a.result === null && a.lost === undefined);
  while (waiting().length > 0 && performance.now() < deadline) {
    if (s.signal?.aborted) break;
    await read();
    // an agent silent for HEARTBEAT_LOST_MS is lost (it died or its host did): not waited for
    for (const a of waiting()) {
      const silentMs = performance.now() - heard.get(a.item)!;
      if (silentMs > HEARTBEAT_LOST_MS) {
        a.lost = `lost mid-step (no heartbeat for ${Math.round(silentMs / 1000)} s)`;
      }
    }
  }
  // Ctrl-C: the agents still running are told to stop, and their partial steps awaited
  // (a few seconds at most)
  if (s.signal?.aborted && waiting().length > 0) {
    for (const a of waiting()) {
      await conn.post(workStream(a.registration.agent), {
        type: "cancel",
        v: 1,
        item: a.item,
        agent: a.registration.agent,
      });
    }
    const until = performance.now() + CANCEL_WAIT_MS;
    while (waiting().length > 0 && performance.now() < until) await read();
  }
  return strays;
}

/** How a step of agents is stored: the merge, one row per agent, their raw results. */
function stored(m: Measured, runId: string, s: AgentsStep): StoredRun {
  const r = m.merged;
  const server = s.step.target.display;
  const missing = m.answers.filter((a) => a.result?.status !== "ok").map((a) =>
    `agent ${a.registration.agent}: ${
      a.result === null
        ? a.lost ?? `no answer within the cell's ${s.timeoutS} s`
        : `${a.result.status}: ${a.result.error}`
    }`
  );
  const lost = r ? stepFaults(r, server) : null;
  // Ctrl-C / SIGTERM while waiting: the agents not heard from are named with it
  if (s.signal?.aborted && missing.length > 0) missing.unshift("interrupted while waiting");
  const status = m.reason !== null || r === null
    ? "failed"
    : missing.length > 0 || lost !== null || r.interrupted
    ? "incomplete"
    : "complete";
  const reason = m.reason ?? ([...missing, ...(lost ? [lost] : [])].join("; ") || null);
  const rows = r
    ? openLoopRows(r, runId, {
      ratio: s.step.ratio,
      valueSize: s.step.dataSizeBytes,
      keys: s.step.keys,
      startedAt: m.startAtMs === null ? null : new Date(m.startAtMs + s.step.warmupS * 1000),
    })
    : null;
  // per-second percentiles of several hosts cannot be merged: left out (null), counts kept
  for (const t of rows?.time_series ?? []) {
    t.p50_latency_ms = null;
    t.p99_latency_ms = null;
  }
  const agentRows: AgentStepsRow[] = m.answers.map((a) => agentRow(a, runId, m.startAtMs));
  const warnings = [
    ...m.answers.flatMap((a) => {
      const row = agentRows.find((x) => x.agent === a.registration.agent)!;
      const w = row.start_skew_ms == null
        ? null
        : skewWarning(a.registration.agent, row.start_skew_ms, row.clock_uncertainty_ms ?? 0);
      return w ? [w] : [];
    }),
    ...m.strays.map((x) => `control stream: ${x}`),
  ];
  return {
    status,
    reason,
    tests: rows?.results.length ?? 0,
    interrupted: (r?.interrupted || s.signal?.aborted) ?? false,
    columns: {
      tool: "kvlab-loadgen",
      tool_version: KVLAB_VERSION,
      output_format: r ? "kvlab" : "none",
      tool_exit_code: null,
      warning_count: warnings.length,
    },
    tables: {
      results: rows?.results ?? [],
      time_series: rows?.time_series ?? [],
      hdr_histograms: rows?.hdr_histograms ?? [],
      agent_steps: agentRows,
    },
    raw: agentFiles(m.answers, s.step.target),
    // a start skew over its bound is a warning in the run, and a disturbance `compare` shows
    disturbance: skewDisturbance(agentRows),
    manifest: {
      step: r
        ? {
          requested_ops_per_sec: s.step.requestedOpsPerSec,
          achieved_ops_per_sec: r.achievedOpsPerSec,
          engine: r.engine,
          agents: m.answers.length,
        }
        : null,
      warnings,
    },
  };
}

/** Whether a step runs memtier on its agents. */
function isMemtier(s: AgentsStep): boolean {
  return s.plan.sweep.engine === "memtier";
}

/** Why each agent that did not measure did not, naming it (empty: every agent measured). */
function missingOf(m: Measured, s: AgentsStep): string[] {
  const missing = m.answers.filter((a) => a.result?.status !== "ok").map((a) =>
    `agent ${a.registration.agent}: ${
      a.result === null
        ? a.lost ?? `no answer within the cell's ${s.timeoutS} s`
        : `${a.result.status}: ${a.result.error}`
    }`
  );
  if (s.signal?.aborted && missing.length > 0) missing.unshift("interrupted while waiting");
  return missing;
}

/**
 * How a memtier step of agents is stored: the merged rows (`./memtier.ts`), one `agent_steps`
 * row per agent, each agent's result (memtier's files) as a raw file, and each agent's own
 * warnings (memtier's printed totals against its series, as for one host) named with it.
 */
function storedMemtier(m: Measured, runId: string, s: AgentsStep): StoredRun {
  const merged = m.memtier;
  const missing = missingOf(m, s);
  const totals = merged?.results.find((r) => r.test === "TOTALS");
  const status = m.reason !== null || !totals
    ? "failed"
    : missing.length > 0
    ? "incomplete"
    : "complete";
  const reason = m.reason ?? (missing.join("; ") || (totals ? null : "no merged TOTALS"));
  const agentRows: AgentStepsRow[] = m.answers.map((a) => {
    const row = agentRow(a, runId, m.startAtMs);
    const own = a.memtier;
    if (!own) return row;
    const t = own.rows.results.findLast((r) => r.test === "TOTALS" && r.complete);
    return {
      ...row,
      connections: own.step.share.connections,
      requested_ops_per_sec: own.step.share.requestedOpsPerSec,
      ops_per_sec: own.opsPerSec,
      error_count: t?.error_count ?? null,
    };
  });
  const warnings = [
    ...m.answers.flatMap((a) =>
      (a.memtier?.rows.warnings ?? []).map((w) => `agent ${a.registration.agent}: ${w}`)
    ),
    ...(merged?.warnings ?? []),
    ...agentRows.flatMap((row) => {
      const w = row.start_skew_ms == null
        ? null
        : skewWarning(row.agent, row.start_skew_ms, row.clock_uncertainty_ms ?? 0);
      return w ? [w] : [];
    }),
    ...m.strays.map((x) => `control stream: ${x}`),
  ];
  const version = m.answers.map((a) => a.result?.step?.toolVersion).find((v) =>
    typeof v === "string"
  ) as string | undefined;
  return {
    status,
    reason,
    tests: merged?.results.length ?? 0,
    interrupted: s.signal?.aborted ?? false,
    columns: {
      tool: "memtier_benchmark",
      tool_version: version ?? null,
      output_format: merged ? "json" : "none",
      tool_exit_code: null,
      warning_count: warnings.length,
    },
    tables: {
      results: merged?.results ?? [],
      hdr_histograms: merged?.hdr_histograms ?? [],
      agent_steps: agentRows,
    },
    raw: agentFiles(m.answers, s.step.target),
    disturbance: skewDisturbance(agentRows),
    manifest: {
      step: totals
        ? {
          requested_ops_per_sec: s.step.requestedOpsPerSec,
          achieved_ops_per_sec: totals.ops_per_sec,
          engine: "memtier",
          agents: m.answers.length,
        }
        : null,
      warnings,
    },
  };
}
