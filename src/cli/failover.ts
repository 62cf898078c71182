/**
 * `kvlab failover`: a failover study on a topology kvlab starts (`--engine`, `--shards` or
 * `--replicas`, `--config`), one action at `--at` under a fixed-rate load, stored as one run;
 * then (or with `--show`, for a stored run) its report: the node that failed and the one that
 * took over, time to the first error, the unavailable window, the time back to the target rate,
 * the errors by kind (`failoverReport`, the one function every view uses), and `--chart FILE`
 * writes its timeline (Vega-Lite JSON).
 *
 * @module
 */

import type { Command, OptionValues } from "commander";
import type { Dataset } from "../store/dataset.ts";
import { DenoProcessRunner } from "../collect/process.ts";
import {
  FAILOVER_ACTIONS,
  type FailoverAction,
  type FailoverActionName,
  failoverProblem,
  runFailover,
} from "../collect/failover/mod.ts";
import { settingAllowed, type TopologySpec } from "../collect/topology/spec.ts";
import {
  failoverChart,
  type FailoverReport,
  failoverReport,
  readFailover,
} from "../analyze/mod.ts";
import { exitWith, type Output, readOptions, UsageError, withStopSignals } from "./_exit.ts";
import { datasetOption, optionalString } from "./_options.ts";
import { terminalText } from "../text/safe.ts";
import { redactText } from "../text/redact.ts";

/** What `kvlab failover` does: the action's fields are the plan kind's (`FailoverAction`). */
export interface FailoverCommandOptions extends FailoverAction {
  data: Dataset;
  /** Show a stored run (its id, or the newest) instead of running one. */
  show?: string | true;
  topology: TopologySpec;
  /** SET:GET, key count and key prefix of the load. */
  ratio?: string;
  keys?: number;
  keyPrefix?: string;
  rate: number;
  durationS: number;
  connections: number;
  requestTimeoutMs: number;
  format: "text" | "json";
  chart?: string;
  label?: string;
}

function num(name: string, v: unknown, o: { min?: number; integer?: boolean } = {}): number {
  const n = Number(v);
  if (
    typeof v !== "string" || !Number.isFinite(n) || n < (o.min ?? 0) ||
    (o.integer && !Number.isInteger(n))
  ) {
    throw new UsageError(
      `invalid ${name}: ${v} (expected ${o.integer ? "an integer" : "a number"} ≥ ${o.min ?? 0})`,
    );
  }
  return n;
}

/**
 * Reads `kvlab failover`'s options.
 *
 * @param raw Commander's option values (defaults filled in).
 * @returns The typed options.
 * @throws {UsageError} For a value kvlab cannot read.
 *
 * @example
 * ```ts
 * import { failoverOptions } from "./failover.ts";
 * import assert from "node:assert/strict";
 * const base = { data: "ds", engine: "valkey", action: "kill", at: "2", rate: "1000",
 *   duration: "8", connections: "8", requestTimeoutMs: "1000", format: "text", config: [] };
 * const o = failoverOptions({ ...base, shards: "3", replicas: "1", config: ["cluster-node-timeout=1000"] });
 * assert.deepEqual(o.topology, { engine: "valkey", cluster: { shards: 3, replicas: 1 },
 *   config: { "cluster-node-timeout": "1000" } });
 * assert.deepEqual(failoverOptions({ ...base, replicas: "1" }).topology,
 *   { engine: "valkey", replicas: 1 });
 * assert.throws(() => failoverOptions({ ...base, action: "explode" }), /invalid --action: explode/);
 * assert.throws(() => failoverOptions({ ...base, config: ["port=1"] }), /--config port: kvlab sets it/);
 * // the action checked against the topology here, in the options' names
 * assert.throws(() => failoverOptions({ ...base, replicas: "0" }), /needs a replica .*\(--replicas 1\)/);
 * assert.throws(() => failoverOptions({ ...base, shards: "3", node: "node 99" }),
 *   /--node: expected "node N", 1 ≤ N ≤ 6/);
 * assert.throws(() => failoverOptions({ ...base, at: "9" }), /--at: expected a time before/);
 * assert.throws(() => failoverOptions({ ...base, action: "stop", stopS: "4000" }), /--stop-s: expected/);
 * // what a plan's config: refuses (settingAllowed), refused at once, the value not echoed
 * assert.throws(() => failoverOptions({ ...base, config: ["requirepass=hunter2"] }),
 *   (e: Error) => /^--config requirepass: kvlab sets it/.test(e.message) && !/hunter2/.test(e.message));
 * assert.throws(() => failoverOptions({ ...base, config: ["masterauth=x"] }), /--config masterauth/);
 * ```
 */
export function failoverOptions(raw: OptionValues): FailoverCommandOptions {
  const engine = String(raw.engine);
  if (engine !== "redis" && engine !== "valkey") {
    throw new UsageError(`invalid --engine: ${engine} (expected redis or valkey)`);
  }
  const action = String(raw.action);
  if (!(FAILOVER_ACTIONS as readonly string[]).includes(action)) {
    throw new UsageError(`invalid --action: ${action} (expected ${FAILOVER_ACTIONS.join(", ")})`);
  }
  const config: Record<string, string> = {};
  for (const kv of (raw.config as string[] | undefined) ?? []) {
    const at = kv.indexOf("=");
    const k = kv.slice(0, at), v = kv.slice(at + 1);
    if (at <= 0 || !/^[a-z][a-z0-9-]*$/.test(k) || /[\0\n\r]/.test(v)) {
      throw new UsageError(`invalid --config: ${kv} (expected name=value)`);
    }
    // the check a plan's config: makes (ports, files, TLS, wiring, passwords are kvlab's)
    if (!settingAllowed(k)) {
      throw new UsageError(
        `--config ${k}: kvlab sets it on the servers it starts (ports, files, TLS, cluster and ` +
          "replication wiring, passwords)",
      );
    }
    config[k] = v;
  }
  const replicas = num("--replicas", raw.replicas ?? "1", { integer: true });
  const topology: TopologySpec = raw.shards !== undefined
    ? {
      engine,
      cluster: { shards: num("--shards", raw.shards, { min: 3, integer: true }), replicas },
    }
    : { engine, replicas };
  if (Object.keys(config).length) topology.config = config;
  const format = String(raw.format ?? "text");
  if (format !== "text" && format !== "json") {
    throw new UsageError(`invalid --format: ${format} (expected text or json)`);
  }
  const o: FailoverCommandOptions = {
    data: datasetOption(raw.data),
    ...(raw.show !== undefined ? { show: raw.show === true ? true : String(raw.show) } : {}),
    topology,
    action: action as FailoverActionName,
    atS: num("--at", raw.at),
    node: optionalString(raw.node),
    ...(raw.stopS !== undefined ? { stopS: num("--stop-s", raw.stopS) } : {}),
    ...(raw.promoteAfterS !== undefined
      ? { promoteAfterS: num("--promote-after-s", raw.promoteAfterS) }
      : {}),
    ...(raw.slots !== undefined ? { slots: num("--slots", raw.slots, { integer: true }) } : {}),
    ...(raw.to !== undefined ? { to: String(raw.to) } : {}),
    ...(raw.ratio !== undefined ? { ratio: ratioOption(raw.ratio) } : {}),
    ...(raw.keys !== undefined ? { keys: num("--keys", raw.keys, { min: 1, integer: true }) } : {}),
    ...(raw.keyPrefix !== undefined ? { keyPrefix: String(raw.keyPrefix) } : {}),
    rate: num("--rate", raw.rate, { min: 1 }),
    durationS: num("--duration", raw.duration, { min: 1 }),
    connections: num("--connections", raw.connections, { min: 1, integer: true }),
    requestTimeoutMs: num("--request-timeout-ms", raw.requestTimeoutMs, { min: 1 }),
    format,
    chart: optionalString(raw.chart),
    label: optionalString(raw.label),
  };
  // what runFailover would refuse, refused here in the options' own names (not --show's)
  const why = o.show === undefined ? failoverProblem(actionOf(o), topology, o.durationS) : null;
  if (why) {
    throw new UsageError(
      why.replace(/\(start: \{ replicas: 1 \} or cluster: \{ replicas: 1 \}\)/, "(--replicas 1)")
        .replace(/\(start: \{ cluster: \{ … \} \}\)/, "(--shards N)")
        .replace(
          /^(at_s|stop_s|promote_after_s|node|to|slots)\b/,
          (k) => k === "at_s" ? "--at" : `--${k.replaceAll("_", "-")}`,
        ),
    );
  }
  return o;
}

/** The action of a run, from the options. */
function actionOf(o: FailoverCommandOptions): FailoverAction {
  return {
    action: o.action,
    atS: o.atS,
    ...(o.node ? { node: o.node } : {}),
    ...(o.stopS !== undefined ? { stopS: o.stopS } : {}),
    ...(o.promoteAfterS !== undefined ? { promoteAfterS: o.promoteAfterS } : {}),
    ...(o.slots !== undefined ? { slots: o.slots } : {}),
    ...(o.to !== undefined ? { to: o.to } : {}),
  };
}

function ratioOption(v: unknown): string {
  if (typeof v !== "string" || !/^\d+:\d+$/.test(v) || /^0+:0+$/.test(v)) {
    throw new UsageError(`invalid --ratio: ${v} (expected SET:GET, e.g. 1:1)`);
  }
  return v;
}

const ms = (v: number | null) => (v === null ? "–" : `${Math.round(v)} ms`);

/**
 * A failover report as text: one line per figure, the errors by kind.
 *
 * @param runId The run.
 * @param r Its report.
 * @returns The lines (text from the dataset made safe for a terminal).
 *
 * @example
 * ```ts
 * import { failoverReportText } from "./failover.ts";
 * import { failoverReport } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const rows = Array.from({ length: 30 }, (_, i) => ({ interval: i, start_ms: i * 100, width_ms: 100,
 *   requested_ops_per_sec: 1000, sent: 100, completed: i >= 10 && i < 15 ? 0 : 100,
 *   errors: i >= 10 && i < 15 ? 100 : 0, refused: i >= 10 && i < 15 ? 100 : 0 }));
 * const text = failoverReportText("r1", failoverReport(rows, [{ event: "action", elapsed_ms: 1000,
 *   action: "kill", node: "node 1\u001b[2J" }]));
 * assert.match(text, /unavailable window +500 ms/);
 * assert.match(text, /refused +500/);
 * assert.doesNotMatch(text, /\u001b/);
 * assert.match(text, /redirections +MOVED 0, ASK 0 \(not errors\)/);
 * // a slot migration's own words: from one master to another
 * const moved = failoverReportText("r2", failoverReport(rows, [{ event: "action", elapsed_ms: 1000,
 *   action: "reshard", node: "node 1" }, { event: "took_over", action: "reshard", node: "node 2" }]));
 * assert.match(moved, /slots from +node 1\n/);
 * assert.match(moved, /slots to +node 2\n/);
 * // a replica acted on: nobody took over, and the text says why
 * const none = failoverReportText("r3", failoverReport(rows, [{ event: "action", elapsed_ms: 1000,
 *   action: "kill", node: "node 4" }, { event: "took_over", action: "kill", node: null,
 *   detail: "node 4 served no slots (a replica)" }]));
 * assert.match(none, /took over +none \(node 4 served no slots \(a replica\)\)\n/);
 * ```
 */
export function failoverReportText(runId: string, r: FailoverReport): string {
  const safe = (s: string | null) => (s === null ? "–" : terminalText(s));
  // a slot migration: no node fails, the slots go from one master to another
  const moving = r.action === "reshard";
  const lines: [string, string][] = [
    ["run", safe(runId)],
    ["verdict", r.verdict + (r.reason ? ` (${safe(r.reason)})` : "")],
    ["action", `${safe(r.action)} at ${ms(r.actionMs)}, done at ${ms(r.actionDoneMs)}`],
    [moving ? "slots from" : "failed node", safe(r.failedNode)],
    [
      moving ? "slots to" : "took over",
      r.tookOver === null && r.tookOverDetail
        ? `none (${safe(r.tookOverDetail)})`
        : safe(r.tookOver),
    ],
    ["target", `${r.requestedOpsPerSec ?? "–"}/s in ${r.widthMs ?? "–"} ms intervals`],
    ["time to first error", ms(r.timeToFirstErrorMs)],
    [
      "unavailable window",
      r.unavailable
        ? `${ms(r.windowMs)} (from ${ms(r.windowStartMs)})`
        : r.withinNoise
        ? `no outage (within noise: an error-free dip of ${ms(r.dipMs)}, the longest before ` +
          `the action ${ms(r.noise?.longestDipMs ?? null)})`
        : r.dipMs !== null
        ? `– (an error-free dip of ${ms(r.dipMs)}: inconclusive)`
        : "none",
    ],
    [
      "noise before action",
      r.noise === null
        ? "–"
        : `${r.noise.short} of ${r.noise.intervals} intervals short, longest dip ` +
          `${ms(r.noise.longestDipMs)}; ${r.shortAfterAction ?? "–"} short from the action on`,
    ],
    ["back to target rate", `${ms(r.backToTargetMs)} after the action`],
    ["requests failed", String(r.failed)],
    ["short of target", r.shortOfTarget === null ? "–" : String(Math.round(r.shortOfTarget))],
    ...Object.entries(r.failedByKind).map(([k, n]) => [`  ${k}`, String(n)] as [string, string]),
    ["redirections", `MOVED ${r.moved}, ASK ${r.asked} (not errors)`],
  ];
  const w = Math.max(...lines.map(([k]) => k.length));
  return lines.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join("\n") + "\n" +
    `(short: an interval under ${Math.round(r.threshold * 100)} % of its target; back at the ` +
    `rate: ${r.sustained} intervals in a row not short)\n`;
}

/**
 * A line of a run's progress or outcome as printed: it carries a server's words (a CLUSTER
 * FAILOVER reply, the reshard cli's output, an error), so redacted and made safe for a terminal.
 *
 * @param line The line.
 * @returns It, printable.
 *
 * @example
 * ```ts
 * import { shownLine } from "./failover.ts";
 * import assert from "node:assert/strict";
 * assert.equal(shownLine("CLUSTER FAILOVER on node 4: OK\u001b]0;x\u0007"),
 *   "CLUSTER FAILOVER on node 4: OK\\x1b]0;x\\x07");
 * assert.equal(shownLine("the action failed: $ valkey-cli -a pw --cluster reshard"),
 *   "the action failed: $ valkey-cli -a *** --cluster reshard");
 * ```
 */
export function shownLine(line: string): string {
  return terminalText(redactText(line));
}

/**
 * Runs a failover study (or reads a stored one with `--show`) and prints its report.
 *
 * @param o The options.
 * @param out Where to print.
 */
export async function failoverCommand(o: FailoverCommandOptions, out: Output): Promise<void> {
  let runId: string | undefined;
  if (o.show === undefined) {
    const r = await withStopSignals((signal) =>
      runFailover({
        data: o.data,
        topology: o.topology,
        action: actionOf(o),
        ...(o.ratio ? { ratio: o.ratio } : {}),
        ...(o.keys ? { keys: o.keys } : {}),
        ...(o.keyPrefix ? { keyPrefix: o.keyPrefix } : {}),
        requestedOpsPerSec: o.rate,
        durationS: o.durationS,
        connections: o.connections,
        requestTimeoutMs: o.requestTimeoutMs,
        runner: new DenoProcessRunner(),
        signal,
        label: o.label,
        onMessage: (l) => out.printErr(`${shownLine(l)}\n`),
      })
    );
    out.printErr(
      `${r.status}: run ${shownLine(r.runId)}${r.reason ? ` (${shownLine(r.reason)})` : ""}\n`,
    );
    for (const p of r.stopProblems) out.printErr(`stop: ${shownLine(p)}\n`);
    if (r.status === "failed") exitWith(1, "failover");
    runId = r.runId;
  } else if (o.show !== true) runId = o.show;
  const stored = readFailover(o.data, runId);
  if (stored === null) {
    out.printErr(`no failover run in ${o.data.dir}${runId ? ` with id ${runId}` : ""}\n`);
    exitWith(1, "failover");
  }
  const report = failoverReport(stored.intervals, stored.events);
  if (o.chart) {
    // an existing file is replaced, and said so (a chart is derived: the run is the record)
    const existed = (() => {
      try {
        return Deno.statSync(o.chart).isFile;
      } catch {
        return false;
      }
    })();
    if (existed) out.printErr(`--chart: replaced ${shownLine(o.chart)}\n`);
    Deno.writeTextFileSync(
      o.chart,
      JSON.stringify(failoverChart(stored.intervals, stored.events), null, 2) + "\n",
    );
  }
  out.print(
    o.format === "json"
      ? JSON.stringify({ run_id: stored.runId, ...report }, null, 2) + "\n"
      : failoverReportText(stored.runId, report),
  );
}

/** Declares `kvlab failover` for the registry of `src/cli.ts`; {@link failoverCommand} works. */
export function declareFailover(program: Command, out: Output): void {
  program.command("failover")
    .description(
      "A failover study: start a topology (--engine, --shards N for a cluster, --replicas), " +
        "load it at --rate for --duration seconds with kvlab's open-loop generator, take one " +
        "--action at --at seconds, store the run (100 ms intervals, errors by kind, events) and " +
        "print its report; --show [RUN] prints a stored one.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option("--show [run]", "print the report of a stored failover run (the newest by default)")
    .option("--engine <name>", "redis or valkey (the installed binary)", "redis")
    .option("--shards <n>", "a cluster of N shards (at least 3)")
    .option("--replicas <r>", "replicas per primary", "1")
    .option("--config <name=value...>", "server settings (cluster-node-timeout=1000)", [])
    .option(
      "--action <a>",
      "kill, stop, cluster-failover, reshard, or none (the same run, no action: an A/A run " +
        "that calibrates the report's noise)",
      "kill",
    )
    .option("--at <s>", "seconds after the load starts", "2")
    .option("--node <name>", "the node acted on (node N; default: the primary of slot 0)")
    .option("--stop-s <s>", "stop: seconds before SIGCONT (default 2)")
    .option("--promote-after-s <s>", "a standalone kill: seconds before REPLICAOF NO ONE (1)")
    .option("--slots <n>", "reshard: slots moved (1000)")
    .option("--to <name>", "reshard: the master they go to (node N; default: the next master)")
    .option("--ratio <set:get>", "the load's SET:GET (0:1)")
    .option("--keys <n>", "the load's key count (1000)")
    .option(
      "--key-prefix <p>",
      "the load's key names' prefix (key:; a {tag} keeps them in one slot)",
    )
    .option("--rate <n>", "requests per second", "1000")
    .option("--duration <s>", "seconds of load", "8")
    .option("--connections <n>", "connections", "8")
    .option("--request-timeout-ms <ms>", "a request without a reply after it is an error", "1000")
    .option("--format <f>", "text or json", "text")
    .option("--chart <file>", "write the timeline (Vega-Lite JSON)")
    .option("--label <label>", "label stored on the run")
    .action((opts) => failoverCommand(readOptions(() => failoverOptions(opts)), out));
}
