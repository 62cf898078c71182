/**
 * An open-loop step measured on one host, as it travels on the control stream (its HdrHistograms
 * in their lossless compressed encoding), and the merge of several hosts' steps into one: counts
 * and rates summed, histograms added (the exact merge: percentiles read from the sum, never an
 * average of percentiles), summaries recomputed from the merged histograms. Pure.
 *
 * @module
 */

import {
  decodeHistogram,
  encodeHistogram,
  type Histogram,
  latencySummary,
  mergeHistograms,
} from "../loadgen/histogram.ts";
import type { CommandOutcome, OpenLoopResult } from "../loadgen/open_loop.ts";
import type { SecondBucket } from "../loadgen/series.ts";

const HISTOGRAMS = [
  "latencyFromIntended",
  "latencyFromSend",
  "sendLateness",
  "sendQueue",
  "sendDelay",
] as const;
const SUMMARIES = ["fromIntended", "fromSend", "lateness", "queue", "delay"] as const;

/**
 * A step as plain JSON: histograms encoded (`HISTF…`, values in ns), summaries left out (they
 * are recomputed from the histograms).
 *
 * @param r The step.
 * @returns A JSON-safe object.
 *
 * @example
 * ```ts
 * import { decodeStep, encodeStep } from "./merge.ts";
 * import { latencyHistogram } from "../loadgen/histogram.ts";
 * import assert from "node:assert/strict";
 * const h = latencyHistogram();
 * h.recordValueWithCount(250_000, 7);
 * const s = { count: 0, meanMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0 };
 * const r = { requestedOpsPerSec: 7, achievedOpsPerSec: 7, sentOpsPerSec: 7, durationS: 1,
 *   warmupS: 0, connections: 1, workers: 1, engine: "ffi" as const, engineNote: null,
 *   pipeline: 1, arrival: "uniform" as const, sent: 7, completed: 7, errors: 0, disconnects: 0,
 *   unsent: 0, unanswered: 0, errorSamples: [], latencyFromIntended: h, latencyFromSend: h,
 *   sendLateness: h, sendQueue: h, sendDelay: h, fromIntended: s, fromSend: s, lateness: s,
 *   queue: s, delay: s, perSecond: [], commands: [], clientCpuS: 0.1, clientRunQueueS: null,
 *   stampedReplies: 0, setupCpuS: 0, timer: null, requestsPerCpuS: 70,
 *   clientCpuUsPerRequest: 1, wallS: 1, interrupted: false, moved: 0, asked: 0 };
 * const back = decodeStep(JSON.parse(JSON.stringify(encodeStep(r))));
 * assert.equal(back.latencyFromIntended.totalCount, 7);
 * assert.ok(Math.abs(back.fromIntended.p50Ms - 0.25) < 0.001); // recomputed from the histogram
 * assert.throws(() => decodeStep({ ...encodeStep(r), sent: -1 }), /step\.sent: expected a number/);
 * ```
 */
export function encodeStep(r: OpenLoopResult): Record<string, unknown> {
  const o: Record<string, unknown> = { ...r };
  for (const k of SUMMARIES) delete o[k];
  for (const k of HISTOGRAMS) o[k] = encodeHistogram(r[k]);
  o.commands = r.commands.map((c) => ({
    ...c,
    latencyFromIntended: encodeHistogram(c.latencyFromIntended),
    latencyFromSend: encodeHistogram(c.latencyFromSend),
  }));
  return o;
}

/** A step's field that is not what it should be. */
export class StepDecodeError extends TypeError {
  constructor(field: string, expected: string) {
    super(`step.${field}: ${expected}`);
    this.name = "StepDecodeError";
  }
}

function histogram(v: unknown, field: string): Histogram {
  if (typeof v !== "string") throw new StepDecodeError(field, "expected an encoded histogram");
  try {
    return decodeHistogram(v);
  } catch {
    throw new StepDecodeError(field, "expected an encoded histogram (HISTF…)");
  }
}

const COUNTS = [
  "sent",
  "completed",
  "errors",
  "disconnects",
  "unsent",
  "unanswered",
  "moved",
  "asked",
] as const;
const NUMBERS = [
  ...COUNTS,
  "requestedOpsPerSec",
  "achievedOpsPerSec",
  "sentOpsPerSec",
  "durationS",
  "warmupS",
  "connections",
  "workers",
  "pipeline",
  "clientCpuS",
  "stampedReplies",
  "setupCpuS",
  "wallS",
] as const;

/**
 * Reads a step written by {@link encodeStep}, checking its counts and histograms.
 *
 * @param o The object.
 * @returns The step, summaries recomputed.
 * @throws {StepDecodeError} For a missing or bad field.
 */
export function decodeStep(o: Record<string, unknown>): OpenLoopResult {
  for (const k of NUMBERS) {
    const v = o[k];
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      throw new StepDecodeError(k, "expected a number ≥ 0");
    }
  }
  if (!Array.isArray(o.commands) || !Array.isArray(o.perSecond)) {
    throw new StepDecodeError("commands", "expected lists of commands and seconds");
  }
  const r = { ...o } as unknown as OpenLoopResult & Record<string, unknown>;
  for (const k of HISTOGRAMS) (r as Record<string, unknown>)[k] = histogram(o[k], k);
  r.commands = (o.commands as Record<string, unknown>[]).map((c, i) => {
    if (c.test !== "SET" && c.test !== "GET") {
      throw new StepDecodeError(`commands.${i}.test`, "expected SET or GET");
    }
    return {
      ...(c as unknown as CommandOutcome),
      latencyFromIntended: histogram(c.latencyFromIntended, `commands.${i}.latencyFromIntended`),
      latencyFromSend: histogram(c.latencyFromSend, `commands.${i}.latencyFromSend`),
    };
  });
  if (!Array.isArray(r.errorSamples)) r.errorSamples = [];
  r.errorSamples = r.errorSamples.map(String).slice(0, 5);
  summarize(r);
  return r;
}

function summarize(r: OpenLoopResult): void {
  r.fromIntended = latencySummary(r.latencyFromIntended);
  r.fromSend = latencySummary(r.latencyFromSend);
  r.lateness = latencySummary(r.sendLateness);
  r.queue = latencySummary(r.sendQueue);
  r.delay = latencySummary(r.sendDelay);
}

const sum = (parts: readonly OpenLoopResult[], k: (typeof NUMBERS)[number]) =>
  parts.reduce((n, p) => n + (p[k] as number), 0);

/**
 * One step from several hosts' shares of it: counts, rates, connections and client CPU summed;
 * every histogram the exact sum of the hosts' (so its percentiles are those of the union of
 * their samples); the window the shortest of theirs; per-second counts added second by second
 * (their per-second percentiles cannot be merged: left out, as NaN).
 *
 * @param parts The hosts' steps (at least one).
 * @returns The merged step.
 * @throws {RangeError} Without parts.
 *
 * @example
 * ```ts
 * import { mergeSteps } from "./merge.ts";
 * import { latencyHistogram } from "../loadgen/histogram.ts";
 * import assert from "node:assert/strict";
 * const step = (ms: number, rate: number) => {
 *   const h = latencyHistogram();
 *   h.recordValueWithCount(ms * 1e6, rate);
 *   const s = { count: 0, meanMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0 };
 *   return { requestedOpsPerSec: rate, achievedOpsPerSec: rate, sentOpsPerSec: rate, durationS: 1,
 *     warmupS: 0, connections: 2, workers: 1, engine: "ffi" as const, engineNote: null,
 *     pipeline: 1, arrival: "uniform" as const, sent: rate, completed: rate, errors: 0,
 *     disconnects: 0, unsent: 0, unanswered: 0, errorSamples: [], latencyFromIntended: h,
 *     latencyFromSend: h, sendLateness: h, sendQueue: h, sendDelay: h, fromIntended: s,
 *     fromSend: s, lateness: s, queue: s, delay: s, perSecond: [], commands: [],
 *     clientCpuS: 0.1, clientRunQueueS: null, stampedReplies: 0, setupCpuS: 0, timer: null,
 *     requestsPerCpuS: 0, clientCpuUsPerRequest: null, wallS: 1, interrupted: false, moved: 0,
 *     asked: 0 };
 * };
 * // 99 % of the requests at 1 ms on one host, 1 % at 9 ms on the other: p99 is 1 ms, p99.9 9 ms
 * const m = mergeSteps([step(1, 990), step(9, 10)]);
 * assert.equal(m.achievedOpsPerSec, 1000);
 * assert.equal(m.connections, 4);
 * assert.ok(Math.abs(m.fromIntended.p99Ms - 1) < 0.001);
 * assert.ok(Math.abs(m.fromIntended.p999Ms - 9) < 0.01);
 * ```
 */
export function mergeSteps(parts: readonly OpenLoopResult[]): OpenLoopResult {
  if (parts.length === 0) throw new RangeError("no step to merge");
  const first = parts[0];
  const m = { ...first } as OpenLoopResult;
  for (const k of NUMBERS) (m as unknown as Record<string, number>)[k] = sum(parts, k);
  m.durationS = Math.min(...parts.map((p) => p.durationS));
  m.warmupS = first.warmupS;
  m.pipeline = first.pipeline;
  m.wallS = Math.max(...parts.map((p) => p.wallS));
  for (const k of HISTOGRAMS) m[k] = mergeHistograms(parts.map((p) => p[k]));
  summarize(m);
  const engines = new Set(parts.map((p) => p.engine));
  m.engine = engines.has("deno") ? "deno" : first.engine;
  const notes = [...new Set(parts.map((p) => p.engineNote).filter((x) => x !== null))];
  m.engineNote = notes.length > 0 ? notes.join("; ") : null;
  m.errorSamples = [...new Set(parts.flatMap((p) => p.errorSamples))].slice(0, 5);
  m.commands = (["SET", "GET"] as const).flatMap((test) => {
    const of = parts.flatMap((p) => p.commands.filter((c) => c.test === test));
    if (of.length === 0) return [];
    return [{
      test,
      sent: of.reduce((n, c) => n + c.sent, 0),
      completed: of.reduce((n, c) => n + c.completed, 0),
      errors: of.reduce((n, c) => n + c.errors, 0),
      latencyFromIntended: mergeHistograms(of.map((c) => c.latencyFromIntended)),
      latencyFromSend: mergeHistograms(of.map((c) => c.latencyFromSend)),
    }];
  });
  m.perSecond = mergeSeconds(parts.map((p) => p.perSecond));
  const queues = parts.map((p) => p.clientRunQueueS);
  m.clientRunQueueS = queues.some((q) => q === null)
    ? null
    : queues.reduce((n: number, q) => n + q!, 0);
  m.requestsPerCpuS = m.clientCpuS > 0 ? m.completed / m.clientCpuS : 0;
  m.clientCpuUsPerRequest = m.sent > 0 ? (m.clientCpuS / m.sent) * 1e6 : null;
  m.interrupted = parts.some((p) => p.interrupted);
  const starts = parts.map((p) => p.startEpochMs).filter((x): x is number => typeof x === "number");
  m.startEpochMs = starts.length > 0 ? Math.min(...starts) : null;
  return m;
}

function mergeSeconds(series: readonly SecondBucket[][]): SecondBucket[] {
  const by = new Map<number, SecondBucket>();
  for (const s of series) {
    for (const b of s) {
      const at = by.get(b.second) ?? {
        second: b.second,
        sent: 0,
        completed: 0,
        errors: 0,
        p50FromIntendedMs: NaN,
        p99FromIntendedMs: NaN,
      };
      at.sent += b.sent;
      at.completed += b.completed;
      at.errors += b.errors;
      by.set(b.second, at);
    }
  }
  return [...by.values()].sort((a, b) => a.second - b.second);
}
