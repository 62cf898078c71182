/**
 * `kvlab pubsub`: one pub/sub delivery-latency step (one mode, one target delivery rate) against
 * a server, stored as one run; prints the step's counts, latencies and sustained verdict.
 *
 * @module
 */

import type { Dataset } from "../store/dataset.ts";
import type { Command, OptionValues } from "commander";
import { type PubSubCall, pubSubMode, pubSubPlan, runPubSubStep } from "../collect/pubsub/mod.ts";
import { exitWith, type Output, readOptions, stopSignalOf, withStopSignals } from "./_exit.ts";
import { datasetOption, optionalString } from "./_options.ts";
import {
  checkOpenFiles,
  limited,
  LIMITS,
  openFilesLimit,
  PUBSUB_CONNECTIONS,
} from "../collect/limits.ts";
import { engineOption, serverRoom, targetOption } from "./load.ts";
import { engineLine, stepLines } from "./_step_line.ts";
import { shardLines } from "./_pubsub_shards.ts";

/** What `kvlab pubsub` runs. */
export interface PubSubCommandOptions {
  call: PubSubCall;
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** Label stored on the run. */
  label?: string;
}

/** A positive integer option, or undefined when absent. */
function count(option: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new TypeError(`invalid ${option}: ${JSON.stringify(value)} (expected an integer ≥ 1)`);
  }
  return n;
}

/**
 * Reads `kvlab pubsub`'s options.
 *
 * @param raw Commander's option values (defaults filled in).
 * @returns The typed options.
 * @throws {TypeError} For a bad URL, mode, count or number of seconds.
 *
 * @example
 * ```ts
 * import { pubSubCommandOptions } from "./pubsub.ts";
 * import assert from "node:assert/strict";
 * const o = pubSubCommandOptions({ url: "redis://127.0.0.1:6379", data: "ds", mode: "fan-out",
 *   publishers: "4", subscribers: "16", rate: "20000", duration: "5", payload: "128" });
 * assert.deepEqual([o.call.mode, o.call.subscribers, o.call.requestedOpsPerSec], ["fan-out", 16, 20000]);
 * assert.equal(o.call.engine, "auto");
 * assert.throws(() => pubSubCommandOptions({ url: "redis://h", data: "d", mode: "sharded", rate: "1",
 *   engine: "uring" }),
 *   /invalid --engine: uring/);
 * assert.throws(() => pubSubCommandOptions({ url: "redis://h", data: "d", mode: "all", rate: "1" }),
 *   /invalid pub\/sub mode: all/);
 * assert.throws(() => pubSubCommandOptions({ url: "redis://h", data: "d", mode: "sharded",
 *   rate: "1", publishers: "0" }), /invalid --publishers: 0 \(expected a whole number of connections from 1 to 10000\)/);
 * ```
 */
export function pubSubCommandOptions(raw: OptionValues): PubSubCommandOptions {
  // every limit checked here, once, before any connection (`../collect/limits.ts`)
  const rate = limited("--rate", raw.rate, LIMITS.kvlabRate);
  const conns = (option: string, v: unknown) => limited(option, v, LIMITS.connections);
  const o: PubSubCommandOptions = {
    call: {
      target: targetOption(raw),
      mode: pubSubMode(String(raw.mode)),
      publishers: conns("--publishers", raw.publishers ?? "64"),
      subscribers: conns("--subscribers", raw.subscribers ?? "100"),
      channels: count("--channels", raw.channels),
      fanOut: count("--fan-out", raw.fanOut),
      payloadBytes: limited("--payload", raw.payload ?? "128", LIMITS.payloadBytes),
      requestedOpsPerSec: rate,
      durationS: limited("--duration", raw.duration ?? "10", LIMITS.duration),
      graceS: limited("--grace", raw.grace ?? "2", LIMITS.extra),
      engine: engineOption(raw.engine),
    },
    data: datasetOption(raw.data),
    label: optionalString(raw.label),
  };
  checkOpenFiles("--subscribers", o.call.publishers + o.call.subscribers, openFilesLimit());
  checkStepTopology(o.call, raw);
  return o;
}

/**
 * The step's topology, checked as the engine will (before any connection), its error naming the
 * option typed: `--fan-out`, else `--channels`, else `--subscribers`.
 */
function checkStepTopology(call: PubSubCommandOptions["call"], raw: OptionValues): void {
  try {
    const { target: _, ...engine } = call;
    pubSubPlan({ ...engine, port: 1 });
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    // too many subscriptions (channels × fan-out) names --channels when it was given
    const product = /channels × fan-out/.test(e.message);
    const [option, value] = /fan-out/.test(e.message) && raw.fanOut !== undefined &&
        !(product && raw.channels !== undefined)
      ? ["--fan-out", raw.fanOut]
      : raw.channels !== undefined
      ? ["--channels", raw.channels]
      : ["--subscribers", call.subscribers];
    throw new RangeError(`invalid ${option}: ${value} (${e.message})`);
  }
}

/**
 * Runs the step (Ctrl-C ends it, keeping what was counted), stores it, prints a summary (from
 * the rows it stored, without reading the dataset).
 *
 * @param o The step, the dataset.
 * @param out Where to print.
 * @throws {CommanderError} Exit code 1 when the step failed (or was skipped), or when it is
 * incomplete for lost connections or messages kvlab did not publish (issue 21); 130 when
 * Ctrl-C or SIGTERM ended it (129 for SIGHUP), what was counted stored as incomplete.
 */
export async function pubSubCommand(o: PubSubCommandOptions, out: Output): Promise<void> {
  await serverRoom(o.call.target, PUBSUB_CONNECTIONS, o.call.publishers + o.call.subscribers);
  let stop: Deno.Signal | undefined;
  const run = await withStopSignals(async (signal) => {
    try {
      return await runPubSubStep({ ...o.call, signal }, { data: o.data, label: o.label });
    } finally {
      stop = stopSignalOf(signal);
    }
  });
  const r = run.result;
  if (r) {
    // from the rows the step stored, as they were committed (never read back); the unsent
    // count and the error texts only the engine knows
    out.print(
      stepLines(run.results, { detail: true, unsent: r.unsent, errorSamples: r.errorSamples }),
    );
    out.print(engineLine({ engine: r.engine, note: r.engineNote }));
    out.print(shardLines(r.shards, run.notes));
  }
  out.print(`${run.status}: run ${run.runId}${run.reason ? ` (${run.reason})` : ""}\n`);
  // Ctrl-C / SIGTERM: what was counted is stored (incomplete); 130 (129 for SIGHUP), as `kvlab
  // load` (it exited 0)
  if (stop) exitWith(stop === "SIGHUP" ? 129 : 130, "pubsub");
  if (run.status === "failed") {
    out.printErr(`kvlab pubsub: ${run.reason ?? "failed"}\n`);
    exitWith(1, "pubsub");
  }
  // connections lost or protocol errors (not Ctrl-C): the step is stored, and it says so
  if (run.status === "incomplete" && !r?.interrupted) {
    out.printErr(`kvlab pubsub: incomplete: ${run.reason}\n`);
    exitWith(1, "pubsub");
  }
}

/**
 * Declares `kvlab pubsub` for `COMMANDS` (`src/cli.ts`); {@link pubSubCommand} does the work.
 */
export function declarePubSub(program: Command, out: Output): void {
  program.command("pubsub")
    .description("One pub/sub delivery-latency step (open-loop publishing at --rate deliveries/s).")
    .requiredOption("--url <url>", "redis://[:password@]host[:port] (plain TCP)")
    .option("--password-env <name>", "the environment variable holding the password")
    .requiredOption("--data <dir>", "dataset directory")
    .requiredOption("--rate <n>", "target delivery rate: messages × subscribers reached per second")
    .option("--mode <mode>", "one-to-one, fan-out or sharded", "one-to-one")
    .option("--publishers <n>", "publisher connections", "64")
    .option("--subscribers <n>", "subscriber connections", "100")
    .option("--channels <n>", "channels (default: subscribers ÷ fan-out)")
    .option("--fan-out <n>", "subscribers per channel (fan-out: all; else 1)")
    .option("--payload <bytes>", "payload size, at least 16", "128")
    .option("--duration <s>", "publishing window, seconds", "10")
    .option("--grace <s>", "seconds deliveries may still arrive after it", "2")
    .option("--engine <engine>", "auto (epoll by FFI where it can run), ffi or deno", "auto")
    .option("--label <label>", "label stored on the run")
    .action((opts) => pubSubCommand(readOptions(() => pubSubCommandOptions(opts)), out));
}
