/**
 * The one printer of fixed-rate step lines, from the `results` rows a step's collector returned
 * (never read back from the dataset): `kvlab run` after each latency-sweep or pub/sub step (the
 * short form), `kvlab load` and `kvlab pubsub` (the detailed form: the generator's own facts
 * too). The verdict is `fixed_rate.ts`'s sustained rule, the generator-bound line its generator
 * rule. Private to `src/cli/`.
 *
 * @module
 */

import type { ResultsRow } from "../schema.ts";
import {
  DEFAULT_GENERATOR_RULE,
  DEFAULT_SUSTAINED_RULE,
  generatorBound,
  generatorDelayMs,
  type SustainedRule,
  sustainedVerdict,
} from "../fixed_rate.ts";
import { P99_MIN_SLEEPS, type SleepCost } from "../system/timer.ts";

/** Options of {@link stepLines}. */
export interface StepLineOptions {
  /**
   * The sustained rule the verdict follows (a latency-sweep plan's `sustained:`).
   * @default {DEFAULT_SUSTAINED_RULE}
   */
  rule?: SustainedRule;
  /**
   * The detailed form (`kvlab load`, `kvlab pubsub`): latency from the actual send, the
   * generator's send delay, its CPU and errors, and a generator-bound line; pub/sub counts.
   * @default {false}
   */
  detail?: boolean;
  /** What a timed sleep cost on this machine, said beside a generator-bound step. */
  timer?: SleepCost | null;
  /** Pub/sub messages due but not published (the engine's count; not a column). */
  unsent?: number;
  /** Error texts the engine sampled, said after the error count. */
  errorSamples?: readonly string[];
  /**
   * Put before every line (`kvlab run` indents a step under its cell).
   * @default {""}
   */
  indent?: string;
}

const rate = (v: unknown) => typeof v === "number" ? Math.round(v).toLocaleString("en-US") : "-";
const ms = (v: unknown, digits = 3) => (typeof v === "number" ? v.toFixed(digits) : "-");
const num = (v: unknown) => (typeof v === "number" ? v : null);

/**
 * The step lines of a run's `results` rows: one per row with a requested rate, saying what it
 * achieved against what was asked, the sustained rule's verdict, and p50 and p99 (from the
 * intended send time for kvlab's generators). The detailed form adds the generator's facts.
 *
 * @param rows The rows the step's collector returned (`CollectedRun.results`).
 * @param options The rule, the form and what only the engine knows (see {@link StepLineOptions}).
 * @returns The lines, each with its newline; "" for rows without a requested rate.
 *
 * @example
 * ```ts
 * import { stepLines } from "./_step_line.ts";
 * import assert from "node:assert/strict";
 * const get = { run_id: "r", test_index: 0, test: "GET", test_title: "GET", complete: true,
 *   source_line: 0, requested_ops_per_sec: 2000, ops_per_sec: 1998.2, p50_latency_ms: 0.1312,
 *   p99_latency_ms: 0.402, latency_basis: "intended", p50_send_latency_ms: 0.1,
 *   p99_send_latency_ms: 0.3, send_delay_p99_ms: 0.03, send_queue_p99_ms: 0.01,
 *   send_lateness_p99_ms: 0.02, client_cpu_s: 0.4, client_cpu_us_per_request: 20,
 *   error_count: 0 };
 * assert.equal(stepLines([get]),
 *   "GET: 1,998/s of 2,000/s requested (sustained); p50 0.131 ms, p99 0.402 ms from the " +
 *   "intended send\n");
 * assert.equal(stepLines([get], { rule: { min: 1.01, max: 2 }, indent: "  " }).slice(0, 44),
 *   "  GET: 1,998/s of 2,000/s requested (NS); p5");
 * assert.match(stepLines([get], { detail: true }),
 *   /; from send p50 0\.100 ms, p99 0\.300 ms; send delay p99 0\.030 ms \(waiting for a busy connection 0\.010, timer lateness 0\.020\); client CPU 0\.40 s \(20\.0 µs per request\); errors 0\n$/);
 * // a delay above 10 % of p99: generator-bound
 * assert.match(stepLines([{ ...get, send_delay_p99_ms: 0.3 }], { detail: true }),
 *   /\nGET: generator-bound: send delay p99 0\.300 ms is above 10 % of the p99 latency/);
 * const pubsub = { ...get, test: "PUBSUB_FAN_OUT", ops_per_sec: 0, p50_latency_ms: null,
 *   p99_latency_ms: null, messages_published: 0, messages_delivered: 0, messages_lost: 0,
 *   messages_duplicated: 0, fan_out: 4 };
 * assert.equal(stepLines([pubsub], { detail: true, unsent: 3, errorSamples: ["ERR x"] }),
 *   "PUBSUB_FAN_OUT: 0/s of 2,000/s requested (NS); nothing delivered, no latency\n" +
 *   "  published 0, delivered 0 (fan-out 4), lost 0, duplicated 0, unsent 3, errors 0 (ERR x)\n" +
 *   "  client CPU 0.40 s, publisher lateness p99 0.020 ms\n");
 * assert.equal(stepLines([{ ...get, requested_ops_per_sec: null }]), "");
 * ```
 */
export function stepLines(rows: readonly ResultsRow[], options: StepLineOptions = {}): string {
  const indent = options.indent ?? "";
  const out: string[] = [];
  for (const r of rows) {
    const requested = num(r.requested_ops_per_sec);
    if (requested === null) continue;
    const pubsub = r.messages_published != null;
    const achieved = num(r.ops_per_sec);
    const verdict = requested > 0
      ? sustainedVerdict(
        { requestedOpsPerSec: requested, achievedOpsPerSec: achieved },
        options.rule ?? DEFAULT_SUSTAINED_RULE,
      )
      : "-";
    const errors = `errors ${num(r.error_count) ?? 0}` +
      (options.errorSamples?.length ? ` (${options.errorSamples.join("; ")})` : "");
    let line = `${r.test}: ${rate(achieved)}/s of ${rate(requested)}/s requested (${verdict}); ` +
      latency(r, pubsub);
    if (options.detail && pubsub) {
      line += `\n  published ${rate(r.messages_published)}, delivered ` +
        `${rate(r.messages_delivered)} (fan-out ${r.fan_out ?? 1}), lost ` +
        `${rate(r.messages_lost)}, duplicated ${rate(r.messages_duplicated)}` +
        (options.unsent === undefined ? "" : `, unsent ${rate(options.unsent)}`) +
        `, ${errors}\n  client CPU ${ms(r.client_cpu_s, 2)} s, publisher lateness p99 ` +
        `${ms(r.send_lateness_p99_ms)} ms`;
    } else if (options.detail) {
      line += generatorFacts(r) + `; ${errors}`;
      const bound = generatorLine(r, options.timer ?? null);
      if (bound) line += `\n${bound}`;
    }
    out.push(line.split("\n").map((l) => indent + l + "\n").join(""));
  }
  return out.join("");
}

/** `p50 … ms, p99 … ms` and the basis, or why there is no latency. */
function latency(r: ResultsRow, pubsub: boolean): string {
  if (r.p50_latency_ms == null && r.p99_latency_ms == null) {
    if (pubsub && !r.messages_delivered) return "nothing delivered, no latency";
    if (!pubsub && !r.requests) return "no reply, no latency";
  }
  const basis = r.latency_basis !== "intended"
    ? ""
    : pubsub
    ? " from the intended publish time"
    : " from the intended send";
  return `p50 ${ms(r.p50_latency_ms)} ms, p99 ${ms(r.p99_latency_ms)} ms${basis}`;
}

/** An open-loop step's own facts: latency from the send, send delay, client CPU. */
function generatorFacts(r: ResultsRow): string {
  let s = r.p50_send_latency_ms != null || r.p99_send_latency_ms != null
    ? `; from send p50 ${ms(r.p50_send_latency_ms)} ms, p99 ${ms(r.p99_send_latency_ms)} ms`
    : "";
  if (r.send_delay_p99_ms != null) {
    s += `; send delay p99 ${ms(r.send_delay_p99_ms)} ms (waiting for a busy connection ` +
      `${ms(r.send_queue_p99_ms)}, timer lateness ${ms(r.send_lateness_p99_ms)})`;
  } else if (r.send_lateness_p99_ms != null) {
    s += `; send lateness p99 ${ms(r.send_lateness_p99_ms)} ms`;
  }
  if (r.client_cpu_s != null) {
    s += `; client CPU ${ms(r.client_cpu_s, 2)} s` +
      (r.client_cpu_us_per_request != null
        ? ` (${ms(r.client_cpu_us_per_request, 1)} µs per request)`
        : "") +
      (r.client_run_queue_s != null ? `, ${ms(r.client_run_queue_s, 2)} s waiting for a CPU` : "");
  }
  return s;
}

/** The generator-bound line of `fixed_rate.ts`'s rule (as kvlab sweep and plot sweep apply it). */
function generatorLine(r: ResultsRow, timer: SleepCost | null): string | null {
  const facts = {
    p99LatencyMs: num(r.p99_latency_ms),
    sendDelayP99Ms: num(r.send_delay_p99_ms),
    sendLatenessP99Ms: num(r.send_lateness_p99_ms),
  };
  if (!generatorBound(facts)) return null;
  return `${r.test}: generator-bound: send delay p99 ${ms(generatorDelayMs(facts))} ms is above ` +
    `${DEFAULT_GENERATOR_RULE.maxShare * 100} % of the p99 latency: requests left later ` +
    "than scheduled (timer lateness: the client was late; waiting for a busy connection: too " +
    "few connections for the rate, or a stall), so this latency is not the server's alone" +
    timerNote(timer);
}

/** What this machine's timer allows, said beside a generator-bound step ("" when unknown). */
function timerNote(t: SleepCost | null): string {
  if (t === null) return "";
  const us = (v: number) => (v >= 999.5 ? `${(v / 1000).toFixed(2)} ms` : `${v.toFixed(0)} µs`);
  const tail = (v: number, n: number, what: string) =>
    n >= P99_MIN_SLEEPS ? `${us(v)} at p99` : `up to ${us(v)} in ${n} ${what}`;
  return `; on this machine a ${us(t.gapUs)} sleep wakes ${us(t.overshootUs)} late on ` +
    `average and ${tail(t.overshootP99Us, t.sleeps, "sleeps")}, and costs ` +
    `${t.cpuUsPerSleep.toFixed(0)} µs of CPU; sends paced every ${us(t.gapUs)} by such sleeps ` +
    `alone are late by ${tail(t.scheduleLatenessP99Us, t.dueTimes, "sends")}: a generator ` +
    "that sleeps between sends cannot be more punctual than that";
}

/**
 * The line saying which engine of kvlab's ran a step, and why not the epoll one when it could
 * not run.
 *
 * @param e The engine, why the other did not run (`engineNote`), and the step's threads (said
 * by `kvlab load`).
 * @returns The line, with its newline.
 *
 * @example
 * ```ts
 * import { engineLine } from "./_step_line.ts";
 * import assert from "node:assert/strict";
 * assert.equal(engineLine({ engine: "ffi", note: null, threads: 2 }),
 *   "engine ffi (epoll by FFI), 2 threads\n");
 * assert.equal(engineLine({ engine: "deno", note: "no FFI permission" }),
 *   "engine deno (Deno TCP) (the epoll engine cannot run: no FFI permission)\n");
 * ```
 */
export function engineLine(
  e: { engine: "ffi" | "deno"; note: string | null; threads?: number },
): string {
  return `engine ${e.engine === "ffi" ? "ffi (epoll by FFI)" : "deno (Deno TCP)"}` +
    (e.threads === undefined ? "" : `, ${e.threads} thread${e.threads === 1 ? "" : "s"}`) +
    (e.engine === "deno" && e.note !== "asked for"
      ? ` (the epoll engine cannot run: ${e.note})`
      : "") +
    "\n";
}
