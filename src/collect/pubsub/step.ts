/**
 * Live collection of one pub/sub step: snapshots the server (INFO, CONFIG, DBSIZE) before and
 * after, runs {@link runPubSub}, and stores one run: the step's `results`, `time_series` and
 * `hdr_histograms` rows ({@link pubSubRows}), the server's CPU time over the step on the `runs`
 * row, and the step's counts as `raw/pubsub.json`. A server without sharded pub/sub, a server
 * that is down, or a failed step is stored as a failed run with its reason.
 *
 * @module
 */

import { hostFacts } from "../host.ts";
import type { PubSubOptions, PubSubResult } from "./mod.ts";
import { PubSubUnsupportedError, runPubSub } from "./mod.ts";
import { pubSubRows } from "./rows.ts";
import {
  collectedRunColumns,
  type CollectedStepOptions,
  runRow,
  serverColumns,
  snapshotRows,
} from "../_rows.ts";
import { redactArgv } from "../../text/redact.ts";
import { argvToCommand, type CollectedRun } from "../redis_benchmark/run.ts";
import { type ServerSnapshot, ServerUnreachableError, snapshotServer } from "../server.ts";
import { KVLAB_VERSION, newRunId, RunWriter } from "../../store/writer.ts";
import type { ServerTarget } from "../target.ts";
import { type SustainedVerdict, sustainedVerdict } from "../../fixed_rate.ts";

export * from "./mod.ts";
export * from "./rows.ts";

/** One pub/sub step to run: the server and the engine's options other than the endpoint. */
export interface PubSubCall extends Omit<PubSubOptions, "hostname" | "port" | "password"> {
  target: ServerTarget;
}

/** Options of {@link runPubSubStep}. */
export type PubSubStepOptions = CollectedStepOptions;

/** A stored step: the run, and how the step went against its target. */
export interface PubSubStepRun extends CollectedRun {
  /** The sustained verdict (null when the step did not run). */
  verdict: SustainedVerdict | null;
  /** What the engine measured (absent when the step did not run). */
  result?: PubSubResult;
}

/**
 * The `kvlab pubsub` command line of a step (secrets redacted), as stored on the run.
 *
 * @param call The step.
 * @returns The command.
 *
 * @example
 * ```ts
 * import { parseServerUrl, pubSubCommand } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   pubSubCommand({ target: parseServerUrl("redis://:pw@127.0.0.1:6379"), mode: "fan-out",
 *     publishers: 2, subscribers: 8, requestedOpsPerSec: 1000, durationS: 5 }),
 *   "kvlab pubsub --url redis://:***@127.0.0.1:6379 --mode fan-out --publishers 2 " +
 *     "--subscribers 8 --rate 1000 --duration 5",
 * );
 * ```
 */
export function pubSubCommand(call: PubSubCall): string {
  const argv = ["kvlab", "pubsub", "--url", call.target.display, "--mode", call.mode];
  const opt = (flag: string, v: number | undefined) => {
    if (v !== undefined) argv.push(flag, String(v));
  };
  opt("--publishers", call.publishers);
  opt("--subscribers", call.subscribers);
  opt("--channels", call.channels);
  opt("--fan-out", call.fanOut);
  opt("--payload", call.payloadBytes);
  opt("--rate", call.requestedOpsPerSec);
  opt("--duration", call.durationS);
  opt("--grace", call.graceS);
  return argvToCommand(redactArgv(argv));
}

/** Why a target cannot be driven by the engine (raw RESP over plain TCP), or null. */
function unsupportedTarget(t: ServerTarget): string | null {
  if (t.socket !== undefined) return "the pub/sub engine speaks TCP only, not a unix socket";
  if (t.tls) return "the pub/sub engine does not speak TLS";
  if (t.user !== undefined) return "the pub/sub engine sends AUTH with a password only, not a user";
  return null;
}

/**
 * Runs one pub/sub step and stores it as one run. Does not throw for a server that is down,
 * one without sharded pub/sub, or a step that fails: those become a failed run with a reason.
 *
 * @param call The step: server, mode, counts, rate, duration.
 * @param options Dataset, labels, plan reference.
 * @returns The stored run and the step's verdict.
 */
export async function runPubSubStep(
  call: PubSubCall,
  options: PubSubStepOptions,
): Promise<PubSubStepRun> {
  const now = options.now ?? (() => new Date());
  const host = options.host ?? hostFacts();
  const command = pubSubCommand(call);
  const writer = new RunWriter(options.data, newRunId(now()));
  const startedAt = now();
  let before: ServerSnapshot | undefined;
  let after: ServerSnapshot | undefined;
  let result: PubSubResult | undefined;
  let reason: string | null = unsupportedTarget(call.target);
  let window = { start: startedAt, end: startedAt };
  if (reason === null) {
    try {
      before = await snapshotServer(call.target);
      const { target, ...engine } = call;
      const start = now();
      result = await runPubSub({
        ...engine,
        port: target.port,
        hostname: target.host,
        password: target.password,
      });
      window = { start, end: now() };
      after = await snapshotServer(call.target).catch(() => undefined);
    } catch (e) {
      if (e instanceof PubSubUnsupportedError) {
        reason = `skipped: ${call.mode} needs SSUBSCRIBE, which this server lacks (${e.message})`;
      } else if (
        e instanceof ServerUnreachableError || e instanceof Deno.errors.TimedOut ||
        e instanceof Deno.errors.ConnectionRefused || e instanceof Deno.errors.ConnectionReset ||
        e instanceof Deno.errors.PermissionDenied || e instanceof Deno.errors.Interrupted
      ) {
        reason = e.message;
      } else {
        writer.abort();
        throw e;
      }
    }
  }
  const rows = result ? pubSubRows(writer.runId, result, window) : undefined;
  const verdict = result ? sustainedVerdict(result) : null;
  const status: CollectedRun["status"] = !result
    ? "failed"
    : result.interrupted
    ? "incomplete"
    : "complete";
  if (result?.interrupted) reason = "interrupted (Ctrl-C / SIGTERM); partial counts kept";
  const snaps = snapshotRows(writer.runId, [["before", before], ["after", after]]);
  const finishedAt = now();
  const counts = result ? stepFacts(result, verdict) : null;
  writer.commit({
    run: runRow({
      ...collectedRunColumns(options, writer.runId, call.target, startedAt, finishedAt),
      tool: "kvlab",
      tool_version: KVLAB_VERSION,
      command,
      status,
      output_format: counts ? "json" : "none",
      error: reason,
      ...serverColumns(before, after),
    }, host),
    tables: {
      results: rows?.results ?? [],
      time_series: rows?.time_series ?? [],
      hdr_histograms: rows?.hdr_histograms ?? [],
      server_info: snaps.info,
      server_config: snaps.config,
    },
    raw: counts
      ? [{
        name: "pubsub.json",
        bytes: new TextEncoder().encode(JSON.stringify(counts, null, 2) + "\n"),
      }]
      : [],
    manifest: { host, pubsub: counts, server_config_error: before?.configError ?? null },
  });
  return {
    runId: writer.runId,
    status,
    tests: rows?.results.length ?? 0,
    reason,
    command,
    interrupted: result?.interrupted ?? false,
    verdict,
    result,
  };
}

/** The counts of a step, kept as `raw/pubsub.json` and in run.json (resume reads the verdict). */
function stepFacts(r: PubSubResult, verdict: SustainedVerdict | null) {
  const { latency: _l, sendLateness: _s, perSecond: _p, ...facts } = r;
  return { ...facts, verdict };
}
