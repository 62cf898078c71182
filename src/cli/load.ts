/**
 * `kvlab load`: one open-loop step against a server (kvlab's generator, latency from the
 * intended send time), stored as a run, with a one-paragraph summary.
 *
 * @module
 */

import type { Dataset } from "../store/dataset.ts";
import { datasetOption } from "./_options.ts";
import { serverWatch } from "../collect/cluster/node_stats.ts";
import type { Command, OptionValues } from "commander";
import { type CollectedStep, type OpenLoopCall, runOpenLoopStep } from "../collect/loadgen/step.ts";
import type { LoadgenEngine } from "../collect/loadgen/open_loop.ts";
import { parseServerUrl, withTargetOptions } from "../collect/target.ts";
import { engineLine, stepLines } from "./_step_line.ts";
import {
  checkOpenFiles,
  checkServerConnections,
  limited,
  LIMITS,
  openFilesLimit,
} from "../collect/limits.ts";
import {
  exitWith,
  type Output,
  readOptions,
  stopSignalOf,
  UsageError,
  withStopSignals,
} from "./_exit.ts";
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
      target: targetOption(raw),
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

/**
 * `--url` with `--cluster`, `--tls-ca-file`, `--tls-cert-file`, `--tls-key-file`,
 * `--tls-insecure` and `--password-env NAME` (`kvlab load` and `kvlab pubsub`).
 *
 * @example
 * ```ts
 * import { targetOption } from "./load.ts";
 * import assert from "node:assert/strict";
 * const t = targetOption({ url: "rediss://127.0.0.1:7000", cluster: true, tlsCaFile: "ca.crt" });
 * assert.deepEqual([t.cluster, t.tlsFiles], [true, { caFile: "ca.crt" }]);
 * assert.throws(() => targetOption({ url: "redis://h", tlsCaFile: "ca.crt" }), /needs a rediss/);
 * ```
 */
export function targetOption(raw: OptionValues): ServerTarget {
  const str = (v: unknown) => (v === undefined ? undefined : String(v));
  const files = {
    caFile: str(raw.tlsCaFile),
    certFile: str(raw.tlsCertFile),
    keyFile: str(raw.tlsKeyFile),
    insecure: raw.tlsInsecure ? true : undefined,
  };
  const tls = Object.values(files).some((v) => v !== undefined)
    ? Object.fromEntries(Object.entries(files).filter(([, v]) => v !== undefined))
    : undefined;
  return withTargetOptions(parseServerUrl(String(raw.url)), {
    cluster: raw.cluster ? true : undefined,
    tls,
    passwordEnv: str(raw.passwordEnv),
  });
}

/** `--engine`: auto, ffi or deno (`kvlab load` and `kvlab pubsub`). */
export function engineOption(raw: unknown): LoadgenEngine {
  const e = String(raw ?? "auto");
  if (e !== "auto" && e !== "ffi" && e !== "deno") {
    throw new TypeError(`invalid --engine: ${e} (expected auto, ffi or deno)`);
  }
  return e;
}

/**
 * Runs the step, stores it, and prints achieved rate and latencies (from the rows it stored,
 * without reading the dataset).
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
      // a cluster's nodes over the step (node_stats)
      const watch = serverWatch({ target: o.call.target });
      return await runOpenLoopStep(o.call, { data: o.data, label: o.label, signal, ...watch });
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
  // from the rows the step stored, as they were committed (never read back)
  out.print(stepLines(run.results, { detail: true, timer: run.timer }));
  if (run.engine !== null) {
    // the threads that ran, and why fewer than asked, said once (issue 30)
    out.print(
      engineLine({ engine: run.engine, note: run.engineNote, threads: run.threads ?? undefined }),
    );
    if (run.threadsNote) out.print(`  (${run.threadsNote})\n`);
  }
  out.print(topologyLines(run));
  out.print(`stored run ${run.runId} in ${o.data.dir}\n`);
  if (run.status !== "complete") {
    out.printErr(`kvlab load: ${run.status}: ${run.reason}\n`);
    stopped();
    throw new CommanderError(1, "kvlab.load", run.reason ?? run.status);
  }
}

/**
 * What `kvlab load` says of a cluster: cluster mode detected, redirections followed (not
 * errors), each master's GET/SET calls over the run and the cross-check with the generator's
 * total.
 *
 * @example
 * ```ts
 * import { topologyLines } from "./load.ts";
 * import assert from "node:assert/strict";
 * assert.equal(topologyLines({ notes: [], redirects: { moved: 0, asked: 0 }, nodes: null }), "");
 * assert.equal(
 *   topologyLines({ notes: [], redirects: { moved: 3, asked: 1 }, nodes: {
 *     nodes: [{ node: "a:1", calls: 10 }], sum: 10, tool: 10, warning: null } }),
 *   "cluster: redirections followed (not errors): MOVED 3, ASK 1\n" +
 *     "cluster: GET/SET per node: a:1 10; sum 10, the generator's 10\n",
 * );
 * ```
 */
export function topologyLines(
  run: Pick<CollectedStep, "notes" | "redirects" | "nodes">,
): string {
  const lines = run.notes.map((n) => `${n}\n`);
  const r = run.redirects;
  if (r && (r.moved > 0 || r.asked > 0 || run.nodes)) {
    lines.push(`cluster: redirections followed (not errors): MOVED ${r.moved}, ASK ${r.asked}\n`);
  }
  const n = run.nodes;
  if (n) {
    const each = n.nodes.map((x) => `${x.node} ${x.calls.toLocaleString("en")}`).join(", ");
    lines.push(
      `cluster: GET/SET per node: ${each}; sum ${n.sum?.toLocaleString("en") ?? "unknown"}, ` +
        `the generator's ${n.tool.toLocaleString("en")}\n`,
    );
    if (n.warning) lines.push(`warning: ${n.warning}\n`);
  }
  return lines.join("");
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

/** Declares `kvlab load` for `COMMANDS` (`src/cli.ts`); {@link loadCommand} does the work. */
export function declareLoad(program: Command, out: Output): void {
  program.command("load")
    .description(
      "Run one open-loop step with kvlab's generator (latency from the intended send time, " +
        "phases spread) and store it as a run.",
    )
    .requiredOption("--url <url>", "redis://[:password@]host[:port]")
    .requiredOption("--rate <r>", "requested total rate, requests per second")
    .requiredOption("--connections <n>", "connections")
    .requiredOption("--duration <s>", "measured seconds")
    .requiredOption("--data <dir>", "dataset directory (created if missing)")
    .option("--warmup <s>", "seconds of load before, not measured", "0")
    .option("--ratio <set:get>", "SET:GET mix (0:1 = GET only)", "0:1")
    .option("--data-size <bytes>", "value size of SETs", "256")
    .option("--keys <n>", "key space (key:0 … key:n-1)", "1000")
    .option("--pipeline <n>", "requests in flight per connection", "1")
    .option("--arrivals <mode>", "uniform (spread phases) or poisson", "uniform")
    .option("--threads <n>", "Worker threads sharing the connections", "1")
    .option("--engine <engine>", "auto (epoll by FFI where it can run), ffi or deno", "auto")
    .option("--label <label>", "label stored on the run")
    .option("--cluster", "the server is a Redis Cluster node (else detected from INFO)")
    .option("--tls-ca-file <file>", "rediss://: the CA that signed the server's certificate")
    .option("--tls-cert-file <file>", "rediss://: a client certificate")
    .option("--tls-key-file <file>", "rediss://: its key")
    .option("--password-env <name>", "the environment variable holding the password")
    .action((opts) => loadCommand(readOptions(() => loadOptions(opts)), out));
}
