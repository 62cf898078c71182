/**
 * `kvlab agent`: one client host of a step run from several (issue 35). It registers on the
 * control server (host facts, CPUs, tool versions, clock offset), reads its work stream as a
 * consumer of a group, checks each item (the caller's `check`: the plan parser's rules), runs
 * its share of the step from the common start with kvlab's open-loop engine or memtier_benchmark
 * (`./memtier.ts`), a heartbeat posted about once a second meanwhile (and the step stopped at the
 * coordinator's `cancel`), and posts back the measured step (its HdrHistograms encoded, or
 * memtier's files), its noise columns, or why it refused or failed. It
 * reconnects to a control server that restarted (for at most `reconnectForS`), and ends cleanly
 * when its signal aborts (SIGTERM): a step then running ends at once and is posted as an error.
 *
 * @module
 */

import type { HostFacts } from "../host.ts";
import type { FixedRateStep } from "../tools/tool.ts";
import type { ServerTarget } from "../target.ts";
import { runOpenLoop } from "../loadgen/open_loop.ts";
import { openLoopRunOptions } from "../loadgen/step.ts";
import { openLoopStepCall } from "../loadgen/tool.ts";
import { noiseRunColumns, readNoiseSnapshot } from "../noise.ts";
import { redactText } from "../../text/redact.ts";
import { KVLAB_VERSION } from "../../version.ts";
import { BLOCK_MS, ControlConnection, controlProblem } from "./control.ts";
import { encodeStep } from "./merge.ts";
import { type MemtierShare, memtierShare, runMemtierShare } from "./memtier.ts";
import type { ProcessRunner } from "../process.ts";
import {
  type AgentResult,
  type ClockOffset,
  REGISTRY_STREAM,
  RESULT_STREAM,
  WORK_GROUP,
  type WorkItem,
  workStream,
} from "./protocol.ts";

/** The furthest ahead a work item may start, ms (a plan's `lead_ms` is at most 60 s). */
const MAX_LEAD_MS = 120_000;

/** What an agent reports to whoever runs it (the CLI prints these). */
export type AgentEvent =
  | { kind: "registered"; clock: ClockOffset }
  | {
    kind: "item";
    item: string;
    cell: string;
    status: AgentResult["status"];
    error: string | null;
  }
  | { kind: "disconnected"; problem: string }
  | { kind: "reconnected" };

/** Options of {@link runAgent}. */
export interface AgentOptions {
  /** The control server. */
  control: ServerTarget;
  /** This agent's name (its consumer name and work stream). */
  name: string;
  host: HostFacts;
  /** Checks an item's plan data and gives its step; throws (with the reason) to refuse it. */
  check: (item: WorkItem) => { step: FixedRateStep; engine: string };
  /** The engines it runs (`kvlab`), as registered. */
  tools: Record<string, string | null>;
  /** memtier_benchmark, when this host has it: the program and the runner that starts it. */
  memtier?: { program: string; runner: ProcessRunner };
  /** Aborting (SIGTERM) ends the agent: a running step stops and is posted as an error. */
  signal: AbortSignal;
  /** Seconds between registrations (each with a fresh clock offset). @default {5} */
  registerEveryS?: number;
  /** How long it keeps trying to reach a control server that went away, s. @default {300} */
  reconnectForS?: number;
  /** Ends after this many items (tests). @default {Infinity} */
  maxItems?: number;
  onEvent?: (e: AgentEvent) => void;
}

/**
 * Runs an agent until its signal aborts (or `maxItems` items were answered).
 *
 * @param o Control server, name, checks, signal.
 * @returns How many items it answered.
 * @throws {ServerUnreachableError} When the control server cannot be reached at the start, or
 * stays away longer than `reconnectForS`.
 */
export async function runAgent(o: AgentOptions): Promise<number> {
  const every = (o.registerEveryS ?? 5) * 1000;
  const reconnectMs = (o.reconnectForS ?? 300) * 1000;
  const maxItems = o.maxItems ?? Infinity;
  let conn: ControlConnection | null = await ControlConnection.open(o.control);
  let clock = await register(conn, o);
  let registeredAt = performance.now();
  let answered = 0;
  let awaySince: number | null = null;
  // results not yet posted (the control server went away after the step)
  const outbox: AgentResult[] = [];
  try {
    while (!o.signal.aborted && answered < maxItems) {
      try {
        if (conn === null) {
          conn = await ControlConnection.open(o.control);
          awaySince = null;
          o.onEvent?.({ kind: "reconnected" });
          registeredAt = -Infinity;
        }
        while (outbox.length > 0) {
          await conn.post(RESULT_STREAM, outbox[0]);
          outbox.shift();
        }
        if (performance.now() - registeredAt >= every) {
          clock = await register(conn, o);
          registeredAt = performance.now();
        }
        const stream = workStream(o.name);
        await conn.ensureGroup(stream, WORK_GROUP);
        const entries = await conn.readGroup({ stream, group: WORK_GROUP, consumer: o.name });
        for (const e of entries) {
          // a withdrawal of an item no longer running: nothing to answer
          if (e.message?.type === "cancel") {
            await conn.ack(stream, WORK_GROUP, e.id);
            continue;
          }
          const result = e.message?.type === "work"
            ? await answer(e.message, o, { conn, afterId: e.id, clock })
            : refusal(e.message?.type === undefined ? e.problem!.message : "not a work item", {
              item: e.id,
              clock,
              o,
            });
          o.onEvent?.({
            kind: "item",
            item: result.item,
            cell: e.message?.type === "work" ? e.message.cell : "?",
            status: result.status,
            error: result.error,
          });
          outbox.push(result);
          await conn.ack(stream, WORK_GROUP, e.id);
          answered++;
          while (outbox.length > 0) {
            await conn.post(RESULT_STREAM, outbox[0]);
            outbox.shift();
          }
        }
      } catch (e) {
        if (o.signal.aborted) break;
        if (e instanceof RangeError || e instanceof TypeError) throw e;
        // the control server went away: try again, for a bounded time
        conn?.close();
        conn = null;
        awaySince ??= performance.now();
        o.onEvent?.({ kind: "disconnected", problem: controlProblem(e) });
        if (performance.now() - awaySince > reconnectMs) throw e;
        await sleep(Math.min(BLOCK_MS, reconnectMs), o.signal);
      }
    }
    // a result measured before the stop is still posted, when the server is there
    if (conn !== null) {
      for (const r of outbox) await conn.post(RESULT_STREAM, r).catch(() => {});
    }
  } finally {
    conn?.close();
  }
  return answered;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

async function register(conn: ControlConnection, o: AgentOptions): Promise<ClockOffset> {
  const clock = await conn.clock();
  await conn.post(REGISTRY_STREAM, {
    type: "register",
    v: 1,
    agent: o.name,
    host: o.host.hostname,
    cpuModel: o.host.cpuModel,
    cpuCount: o.host.cpuCount,
    memoryBytes: o.host.memoryBytes,
    kernel: o.host.kernel,
    tools: o.tools,
    clock,
    atMs: await conn.timeMs(),
  });
  o.onEvent?.({ kind: "registered", clock });
  return clock;
}

function refusal(
  why: string,
  { item, clock, o, status = "refused" }: {
    item: string;
    clock: ClockOffset;
    o: AgentOptions;
    status?: "refused" | "error";
  },
): AgentResult {
  return {
    type: "result",
    v: 1,
    item: item.slice(0, 100),
    agent: o.name,
    host: o.host.hostname,
    status,
    error: redactText(why).slice(0, 4000),
    clock,
    startedAtMs: null,
    step: null,
    noise: null,
  };
}

/**
 * While an item runs: a heartbeat on the result stream about once a second, and the item's
 * work stream read for the coordinator's `cancel` of it (its signal then aborts). `stop` ends
 * the watch.
 */
function watchItem(
  item: WorkItem,
  { conn, afterId, clock, o }: {
    conn: ControlConnection;
    afterId: string;
    clock: ClockOffset;
    o: AgentOptions;
  },
): { signal: AbortSignal; stop: () => Promise<void> } {
  const cancel = new AbortController();
  let done = false;
  const loop = (async () => {
    let after = afterId;
    while (!done && !o.signal.aborted) {
      try {
        await conn.post(RESULT_STREAM, {
          type: "heartbeat",
          v: 1,
          item: item.item,
          agent: o.name,
          atMs: Date.now() + clock.offsetMs,
        });
        if (done) break;
        // (blocks up to BLOCK_MS: the heartbeat's pace)
        for (const e of await conn.readAfter(workStream(o.name), after)) {
          after = e.id;
          const m = e.message;
          if (m?.type === "cancel" && m.item === item.item && m.agent === o.name) {
            cancel.abort("cancelled by the coordinator");
          }
        }
      } catch {
        // the control server away: the step goes on; its result waits in the outbox
        await sleep(BLOCK_MS, o.signal);
      }
    }
  })();
  return {
    signal: AbortSignal.any([o.signal, cancel.signal]),
    stop: async () => {
      done = true;
      await loop;
    },
  };
}

/** Checks an item, runs it (heartbeats meanwhile), and says what happened. */
async function answer(
  item: WorkItem,
  o: AgentOptions,
  at: { conn: ControlConnection; afterId: string; clock: ClockOffset },
): Promise<AgentResult> {
  const clock = at.clock;
  let step: FixedRateStep, engine: string;
  let share: MemtierShare | null = null;
  try {
    if (item.agent !== o.name) throw new Error(`addressed to agent ${item.agent}, not ${o.name}`);
    ({ step, engine } = o.check(item));
    if (engine !== "kvlab" && !(engine === "memtier" && o.memtier)) {
      throw new Error(
        `engine ${engine}: this agent runs ${o.memtier ? "kvlab, memtier" : "kvlab"}`,
      );
    }
    if (engine === "memtier") share = memtierShare(step, item.share);
  } catch (e) {
    return refusal((e as Error).message, { item: item.item, clock, o });
  }
  const localStart = item.startAtMs - clock.offsetMs;
  const late = Date.now() - localStart;
  // (a plan's lead is at most 60 s, plus twice an offset's uncertainty: a start further ahead
  // would park the agent, heartbeating, until someone cancels it)
  if (-late > MAX_LEAD_MS) {
    return refusal(`its start is ${(-late / 1000).toFixed(0)} s ahead (at most 120 s): not run`, {
      item: item.item,
      clock,
      o,
    });
  }
  if (late > 1000) {
    return refusal(`its start passed ${(late / 1000).toFixed(1)} s ago: not run`, {
      item: item.item,
      clock,
      o,
    });
  }
  const watch = watchItem(item, { ...at, o });
  try {
    return await runItem(item, {
      step,
      share,
      clock,
      o: { ...o, signal: watch.signal },
      localStart,
    });
  } finally {
    await watch.stop();
  }
}

/** Runs a checked item with the agent's engine for it. */
async function runItem(
  item: WorkItem,
  { step, share, clock, o, localStart }: {
    step: FixedRateStep;
    share: MemtierShare | null;
    clock: ClockOffset;
    o: AgentOptions;
    localStart: number;
  },
): Promise<AgentResult> {
  const before = safeNoise();
  if (share !== null) {
    return await answerMemtier(item, { step, share, clock, o, localStart, before });
  }
  try {
    const r = await runOpenLoop({
      ...openLoopRunOptions(openLoopStepCall(step)),
      share: item.share,
      startAtEpochMs: localStart,
      signal: o.signal,
    });
    const after = safeNoise();
    const startedAtMs = typeof r.startEpochMs === "number" ? r.startEpochMs + clock.offsetMs : null;
    const stopped = r.interrupted ? `interrupted (${o.signal.reason ?? "stop"}) mid-step` : null;
    return {
      type: "result",
      v: 1,
      item: item.item,
      agent: o.name,
      host: o.host.hostname,
      status: stopped ? "error" : "ok",
      error: stopped,
      clock,
      startedAtMs,
      step: { ...encodeStep(r), kvlabVersion: KVLAB_VERSION },
      noise: { ...noiseRunColumns(before, after, {}) },
    };
  } catch (e) {
    return refusal(controlProblem(e), { item: item.item, clock, o, status: "error" });
  }
}

/** Runs an agent's share of a memtier step and says what happened. */
async function answerMemtier(
  item: WorkItem,
  { step, share, clock, o, localStart, before }: {
    step: FixedRateStep;
    share: MemtierShare;
    clock: ClockOffset;
    o: AgentOptions;
    localStart: number;
    before: ReturnType<typeof safeNoise>;
  },
): Promise<AgentResult> {
  try {
    const r = await runMemtierShare({
      step,
      share,
      program: o.memtier!.program,
      startAtMs: localStart,
      runner: o.memtier!.runner,
      timeoutMs: Math.max(1, item.timeoutS) * 1000,
      signal: o.signal,
    });
    const after = safeNoise();
    const s = r.step;
    const stopped = s.interrupted
      ? `interrupted (${o.signal.reason ?? "stop"}) mid-step`
      : s.timedOut
      ? `memtier timed out after the cell's ${item.timeoutS} s`
      : s.exitCode !== 0
      ? `memtier exited with ${s.exitCode}`
      : null;
    return {
      type: "result",
      v: 1,
      item: item.item,
      agent: o.name,
      host: o.host.hostname,
      status: stopped ? "error" : "ok",
      error: stopped,
      clock,
      startedAtMs: r.startedAtMs === null ? null : r.startedAtMs + clock.offsetMs,
      step: { ...s, toolVersion: o.tools.memtier_benchmark ?? null },
      noise: { ...noiseRunColumns(before, after, {}) },
    };
  } catch (e) {
    return refusal(controlProblem(e), { item: item.item, clock, o, status: "error" });
  }
}

function safeNoise() {
  try {
    return readNoiseSnapshot([Deno.pid]);
  } catch {
    return null;
  }
}
