/**
 * `kvlab load`: one open-loop step against a server (kvlab's generator, latency from the
 * intended send time), stored as a run, with a one-paragraph summary.
 *
 * @module
 */

import type { Dataset } from "../store/dataset.ts";
import { datasetOption } from "./_options.ts";
import type { OptionValues } from "commander";
import { type OpenLoopCall, runOpenLoopStep } from "../collect/loadgen/step.ts";
import type { LoadgenEngine } from "../collect/loadgen/open_loop.ts";
import { P99_MIN_SLEEPS, type SleepCost } from "../system/timer.ts";
import { parseServerUrl } from "../collect/target.ts";
import { loadResults } from "../analyze/load.ts";
import pl from "nodejs-polars";
import {
  DEFAULT_GENERATOR_RULE,
  generatorBound,
  generatorDelayMs,
  sustainedVerdict,
} from "../fixed_rate.ts";
import {
  checkOpenFiles,
  checkServerConnections,
  limited,
  LIMITS,
  openFilesLimit,
} from "../collect/limits.ts";
import { exitWith, type Output, stopSignalOf, UsageError, withStopSignals } from "./_exit.ts";
import type { ServerTarget } from "../collect/target.ts";
import { CommanderError } from "commander";

/** What `kvlab load` runs. */
export interface LoadCommandOptions {
  call: OpenLoopCall;
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  label?: string;
}

/**
 * Reads `kvlab load`'s options.
 *
 * @param raw Commander's option values.
 * @returns The typed options.
 * @throws {TypeError} For a bad URL, rate, count, ratio or arrival mode.
 *
 * @example
 * ```ts
 * import { loadOptions } from "./load.ts";
 * import assert from "node:assert/strict";
 * const o = loadOptions({ url: "redis://127.0.0.1:6379", rate: "5000", connections: "48",
 *   duration: "10", ratio: "1:10", dataSize: "256", keys: "1000000", arrivals: "poisson",
 *   data: "ds" });
 * assert.deepEqual([o.call.requestedOpsPerSec, o.call.connections, o.call.durationS, o.call.arrival],
 *   [5000, 48, 10, "poisson"]);
 * assert.throws(() => loadOptions({ url: "redis://h", rate: "0", connections: "1", duration: "1",
 *   data: "d" }), /invalid --rate/);
 * assert.throws(() => loadOptions({ url: "redis://h", rate: "1", connections: "1", duration: "1",
 *   arrivals: "bursty", data: "d" }), /invalid --arrivals: bursty/);
 * ```
 */
export function loadOptions(raw: OptionValues): LoadCommandOptions {
  // every limit checked here, once, before any connection (`../collect/limits.ts`)
  const rate = limited("--rate", raw.rate, LIMITS.kvlabRate);
  const arrival = String(raw.arrivals ?? "uniform");
  if (arrival !== "uniform" && arrival !== "poisson") {
    throw new TypeError(`invalid --arrivals: ${arrival} (expected uniform or poisson)`);
  }
  const ratio = String(raw.ratio ?? "0:1");
  if (!/^\d+:\d+$/.test(ratio) || /^0+:0+$/.test(ratio)) {
    throw new TypeError(`invalid --ratio: ${ratio} (expected SET:GET, e.g. 1:10 or 0:1)`);
  }
  const o: LoadCommandOptions = {
    call: {
      target: parseServerUrl(String(raw.url)),
      requestedOpsPerSec: rate,
      connections: limited("--connections", raw.connections, LIMITS.connections),
      durationS: limited("--duration", raw.duration, LIMITS.duration),
      warmupS: raw.warmup === undefined ? 0 : limited("--warmup", raw.warmup, LIMITS.extra),
      ratio,
      valueSize: limited("--data-size", raw.dataSize ?? 256, LIMITS.valueBytes),
      keys: limited("--keys", raw.keys ?? 1000, LIMITS.keys),
      pipeline: limited("--pipeline", raw.pipeline ?? 1, LIMITS.pipeline),
      arrival,
      threads: limited("--threads", raw.threads ?? 1, LIMITS.connections),
      engine: engineOption(raw.engine),
    },
    data: datasetOption(raw.data),
    label: raw.label === undefined ? undefined : String(raw.label),
  };
  checkOpenFiles("--connections", o.call.connections, openFilesLimit());
  return o;
}

/** `--engine`: auto, ffi or deno (`kvlab load` and `kvlab pubsub`). */
export function engineOption(raw: unknown): LoadgenEngine {
  const e = String(raw ?? "auto");
  if (e !== "auto" && e !== "ffi" && e !== "deno") {
    throw new TypeError(`invalid --engine: ${e} (expected auto, ffi or deno)`);
  }
  return e;
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
 * Runs the step, stores it, and prints achieved rate and latencies.
 *
 * @param o The step and the dataset.
 * @param out Where to print.
 * @throws {CommanderError} Exit code 1 when the step failed (the run is stored with the reason);
 * 130 when Ctrl-C or SIGTERM ended it (129 for SIGHUP), its partial step stored as incomplete.
 */
export async function loadCommand(o: LoadCommandOptions, out: Output): Promise<void> {
  await serverRoom(o.call.target, "--connections", o.call.connections);
  let stop: Deno.Signal | undefined;
  const run = await withStopSignals(async (signal) => {
    try {
      return await runOpenLoopStep(o.call, { data: o.data, label: o.label, signal });
    } finally {
      stop = stopSignalOf(signal);
    }
  });
  // Ctrl-C / SIGTERM: the partial step is stored (incomplete); 130 (129 for SIGHUP)
  const stopped = () => {
    if (stop) exitWith(stop === "SIGHUP" ? 129 : 130, "load");
  };
  if (run.status === "failed") {
    out.printErr(`kvlab load: ${run.reason}\n`);
    stopped();
    throw new CommanderError(1, "kvlab.load", run.reason ?? "failed");
  }
  const rows = loadResults(o.data).filter(pl.col("run_id").eq(pl.lit(run.runId)));
  const f = (v: unknown, d = 3) => (typeof v === "number" ? v.toFixed(d) : "-");
  for (const r of rows.toRecords()) {
    if (r.p50_latency_ms === null && !r.requests) {
      // no reply: no latency to print
      out.print(
        `${r.test}: ${f(r.ops_per_sec, 0)}/s of ${f(r.requested_ops_per_sec, 0)}/s ` +
          `requested; no reply, no latency${r.error_count ? `; ${r.error_count} errors` : ""}\n`,
      );
      continue;
    }
    // the sustained rule's verdict, as kvlab sweep and kvlab pubsub say it
    const verdict = typeof r.requested_ops_per_sec === "number" && r.requested_ops_per_sec > 0
      ? ` (${
        sustainedVerdict({
          requestedOpsPerSec: r.requested_ops_per_sec,
          achievedOpsPerSec: typeof r.ops_per_sec === "number" ? r.ops_per_sec : null,
        })
      })`
      : "";
    out.print(
      `${r.test}: ${f(r.ops_per_sec, 0)}/s of ${f(r.requested_ops_per_sec, 0)}/s requested` +
        `${verdict}; ` +
        `from intended send p50 ${f(r.p50_latency_ms)} ms, p99 ${f(r.p99_latency_ms)} ms; ` +
        `from send p50 ${f(r.p50_send_latency_ms)} ms, p99 ${f(r.p99_send_latency_ms)} ms` +
        (r.send_delay_p99_ms !== null
          ? `; send delay p99 ${f(r.send_delay_p99_ms)} ms (waiting for a busy connection ` +
            `${f(r.send_queue_p99_ms)}, timer lateness ${f(r.send_lateness_p99_ms)})`
          : r.send_lateness_p99_ms !== null
          ? `; send lateness p99 ${f(r.send_lateness_p99_ms)} ms`
          : "") +
        (r.client_cpu_s !== null
          ? `; client CPU ${f(r.client_cpu_s, 2)} s` +
            (typeof r.client_cpu_us_per_request === "number"
              ? ` (${f(r.client_cpu_us_per_request, 1)} µs per request)`
              : "") +
            (typeof r.client_run_queue_s === "number"
              ? `, ${f(r.client_run_queue_s, 2)} s waiting for a CPU`
              : "")
          : "") +
        `; errors ${typeof r.error_count === "number" ? r.error_count : 0}` + "\n",
    );
    // fixed_rate.ts's rule, as kvlab sweep and plot sweep apply it
    const num = (v: unknown) => (typeof v === "number" ? v : null);
    const facts = {
      p99LatencyMs: num(r.p99_latency_ms),
      sendDelayP99Ms: num(r.send_delay_p99_ms),
      sendLatenessP99Ms: num(r.send_lateness_p99_ms),
    };
    if (generatorBound(facts)) {
      out.print(
        `${r.test}: generator-bound: send delay p99 ${f(generatorDelayMs(facts))} ms is above ` +
          `${DEFAULT_GENERATOR_RULE.maxShare * 100} % of the p99 latency: requests left later ` +
          "than scheduled (timer lateness: the " +
          "client was late; waiting for a busy connection: too few connections for the rate, " +
          "or a stall), so this latency is not the server's alone" + timerNote(run.timer) + "\n",
      );
    }
  }
  if (run.engine !== null) {
    const threads = o.call.threads ?? 1;
    out.print(
      `engine ${run.engine === "ffi" ? "ffi (epoll by FFI)" : "deno (Deno TCP)"}, ` +
        `${threads} thread${threads === 1 ? "" : "s"}` +
        (run.engine === "deno" && run.engineNote !== "asked for"
          ? ` (the epoll engine cannot run: ${run.engineNote})`
          : "") +
        "\n",
    );
  }
  out.print(`stored run ${run.runId} in ${o.data.dir}\n`);
  if (run.status !== "complete") {
    out.printErr(`kvlab load: ${run.status}: ${run.reason}\n`);
    stopped();
    throw new CommanderError(1, "kvlab.load", run.reason ?? run.status);
  }
}

/**
 * Refuses (exit 2) more connections than the server has room for, before any load and before
 * anything is stored.
 *
 * @param target The server.
 * @param option The option as typed.
 * @param connections The connections of the step.
 * @throws {UsageError} Naming the option, the server's `maxclients` and its clients.
 */
export async function serverRoom(
  target: ServerTarget,
  option: string,
  connections: number,
): Promise<void> {
  try {
    await checkServerConnections(target, option, connections);
  } catch (e) {
    throw e instanceof RangeError ? new UsageError(e.message) : e;
  }
}
