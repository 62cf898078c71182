/**
 * Plan kind `failover` (issue 33): per server with a `start:` topology (a cluster with
 * replicas, or a primary with `replicas: 1`) and repetition, one failover run
 * (`../../failover/`): kvlab starts the topology afresh for the run (a killed node leaves it
 * broken for the next), loads it at a fixed rate with its open-loop generator, takes the
 * `failover:` action at `at_s`, stores the run and stops every process by its PID. So the plan's
 * own start of its servers is skipped for this kind (`../servers.ts` `startsServers`).
 *
 * @module
 */

import { FAILOVER_ACTIONS, failoverProblem, runFailover } from "../../failover/mod.ts";
import type { FailoverAction, FailoverActionName } from "../../failover/mod.ts";
import type { TopologySpec } from "../../topology/spec.ts";
import { cellRecord, interleavedCells, type PlanKind, type PlanReader } from "../kind.ts";
import type { CellRunner, KindContext, PlanBase, PlanCellBase, PlanCommon } from "../kind.ts";

/** The `failover:` section. */
export interface FailoverPlanSection extends FailoverAction {
  /** The fixed rate, requests per second. */
  rate: number;
  durationS: number;
  connections: number;
  requestTimeoutMs: number;
  /** The load's SET:GET, key count and key prefix (the run's defaults when absent). */
  ratio?: string;
  keys?: number;
  keyPrefix?: string;
}

/** A checked plan of kind `failover`. */
export interface FailoverStudyPlan extends PlanBase {
  kind: "failover";
  failover: FailoverPlanSection;
}

/** One failover run: a server and a repetition (id `<plan>/<server>/failover/rep<k>`). */
export type FailoverCell = PlanCellBase;

const FIELDS = [
  "action",
  "at_s",
  "node",
  "stop_s",
  "promote_after_s",
  "rate",
  "duration_s",
  "connections",
  "request_timeout_ms",
  "slots",
  "to",
  "ratio",
  "keys",
  "key_prefix",
] as const;

/**
 * The `failover` plan kind.
 *
 * @example
 * ```ts
 * import { parsePlan, planCells } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const text = (start: string, f: string) => "name: f\nkind: failover\nservers:\n" +
 *   `  - { name: v, start: ${start} }\nfailover: ${f}\n`;
 * const cluster = "{ engine: valkey, cluster: { shards: 3, replicas: 1 } }";
 * const plan = parsePlan(text(cluster, "{ action: kill, at_s: 2, rate: 1000, duration_s: 8 }"), "f.yaml");
 * assert.ok(plan.kind === "failover");
 * assert.deepEqual(plan.failover, { action: "kill", atS: 2, rate: 1000, durationS: 8,
 *   connections: 8, requestTimeoutMs: 1000 });
 * assert.deepEqual(planCells(plan).map((c) => c.id), ["f/v/failover/rep1"]);
 * assert.throws(() => parsePlan(text("{ engine: redis }", "{ action: kill, at_s: 2, rate: 10, " +
 *   "duration_s: 8 }"), "f.yaml"), /f\.yaml:4:\d+: servers\.0\.start: action kill needs a replica/);
 * assert.throws(() => parsePlan(text(cluster, "{ action: nap, at_s: 2, rate: 10, duration_s: 8 }"),
 *   "f.yaml"), /failover\.action: expected kill, stop, cluster-failover, reshard, none/);
 * // an A/A run: the same run with no action, on any topology (calibrates the report's noise)
 * const aa = parsePlan(text("{ engine: redis }", "{ action: none, at_s: 2, rate: 1000, " +
 *   "duration_s: 8 }"), "f.yaml");
 * assert.ok(aa.kind === "failover" && aa.failover.action === "none");
 * // a slot migration: 300 slots from the master of slot 0 to node 3, keys SET and read
 * const moving = parsePlan(text(cluster, "{ action: reshard, at_s: 1, slots: 300, to: node 3, " +
 *   "ratio: '1:1', keys: 2000, rate: 800, duration_s: 4 }"), "f.yaml");
 * assert.ok(moving.kind === "failover");
 * assert.deepEqual(moving.failover, { action: "reshard", atS: 1, slots: 300, to: "node 3",
 *   rate: 800, durationS: 4, connections: 8, requestTimeoutMs: 1000, ratio: "1:1", keys: 2000 });
 * assert.throws(() => parsePlan(text("{ engine: redis, replicas: 1 }", "{ action: reshard, " +
 *   "at_s: 1, rate: 10, duration_s: 8 }"), "f.yaml"), /action reshard is for a cluster only/);
 * ```
 */
export const failoverKind: PlanKind<FailoverStudyPlan, FailoverCell> = {
  fields: ["failover"],
  parse: parseFailoverPlan,
  cells: (plan) => interleavedCells(plan, [{}], () => "failover"),
  describe: (plan, cell) => ({
    command: `kvlab failover --action ${plan.failover.action} --at ${plan.failover.atS} ` +
      `--rate ${plan.failover.rate} --duration ${plan.failover.durationS} (server ${cell.label})`,
    requests: Math.round(plan.failover.rate * plan.failover.durationS),
  }),
  open: openFailover,
};

function parseFailoverPlan(read: PlanReader, common: PlanCommon): FailoverStudyPlan {
  const f = ["failover"];
  read.section(f, FIELDS, "expected { action, at_s, rate, duration_s, … }");
  const action = read.string([...f, "action"]);
  if (!(FAILOVER_ACTIONS as readonly string[]).includes(action)) {
    read.fail([...f, "action"], `expected ${FAILOVER_ACTIONS.join(", ")}`);
  }
  const opt = (k: string) =>
    read.value([...f, k]) === undefined ? undefined : read.number([...f, k], 0);
  const section: FailoverPlanSection = {
    action: action as FailoverActionName,
    atS: read.number([...f, "at_s"], 0),
    ...(read.value([...f, "node"]) !== undefined ? { node: read.string([...f, "node"]) } : {}),
    ...(opt("stop_s") !== undefined ? { stopS: opt("stop_s") } : {}),
    ...(opt("promote_after_s") !== undefined ? { promoteAfterS: opt("promote_after_s") } : {}),
    ...(read.value([...f, "slots"]) !== undefined
      ? { slots: read.integer([...f, "slots"], 1000) }
      : {}),
    ...(read.value([...f, "to"]) !== undefined ? { to: read.string([...f, "to"]) } : {}),
    rate: read.number([...f, "rate"], NaN, { positive: true, max: 1e6 }),
    durationS: read.number([...f, "duration_s"], NaN, { positive: true, max: 3600 }),
    connections: read.integer([...f, "connections"], 8),
    requestTimeoutMs: read.number([...f, "request_timeout_ms"], 1000, { positive: true }),
    ...loadFields(read, f),
  };
  for (const k of ["rate", "duration_s"]) {
    if (read.value([...f, k]) === undefined) read.fail([...f, k], "expected a number > 0");
  }
  common.servers.forEach((s, i) => {
    if (!s.start || s.start.container) {
      read.fail(
        ["servers", i],
        "a failover plan's server is a topology kvlab starts (start: " +
          "{ engine, cluster: { shards, replicas } } or { engine, replicas: 1 }, no container)",
      );
    }
    const why = failoverProblem(section, s.start as TopologySpec, section.durationS);
    if (why) read.fail(["servers", i, "start"], why);
  });
  return { ...common, kind: "failover", failover: section };
}

/** The load's `ratio` (SET:GET), `keys` and `key_prefix`, when the plan says them. */
function loadFields(read: PlanReader, f: string[]): Partial<FailoverPlanSection> {
  const out: Partial<FailoverPlanSection> = {};
  if (read.value([...f, "ratio"]) !== undefined) {
    const r = read.string([...f, "ratio"]);
    if (!/^\d+:\d+$/.test(r) || /^0+:0+$/.test(r)) {
      read.fail([...f, "ratio"], "expected SET:GET (1:1, 0:1)");
    }
    out.ratio = r;
  }
  if (read.value([...f, "keys"]) !== undefined) {
    out.keys = read.integer([...f, "keys"], 1000);
  }
  if (read.value([...f, "key_prefix"]) !== undefined) {
    out.keyPrefix = read.string([...f, "key_prefix"]);
  }
  return out;
}

/** Prepares the plan's runs once; returns the function that runs one cell. */
function openFailover(
  plan: FailoverStudyPlan,
  ctx: KindContext,
): Promise<CellRunner<FailoverCell>> {
  const f = plan.failover;
  return Promise.resolve((cell) =>
    runFailover({
      data: ctx.data,
      runner: ctx.runner,
      signal: ctx.signal,
      host: ctx.host,
      now: ctx.now,
      label: cell.label,
      ...cellRecord(plan, cell),
      topology: cell.server.start as TopologySpec,
      action: {
        action: f.action,
        atS: f.atS,
        ...(f.node ? { node: f.node } : {}),
        ...(f.stopS !== undefined ? { stopS: f.stopS } : {}),
        ...(f.promoteAfterS !== undefined ? { promoteAfterS: f.promoteAfterS } : {}),
        ...(f.slots !== undefined ? { slots: f.slots } : {}),
        ...(f.to !== undefined ? { to: f.to } : {}),
      },
      ...(f.ratio ? { ratio: f.ratio } : {}),
      ...(f.keys ? { keys: f.keys } : {}),
      ...(f.keyPrefix ? { keyPrefix: f.keyPrefix } : {}),
      requestedOpsPerSec: f.rate,
      durationS: f.durationS,
      connections: f.connections,
      requestTimeoutMs: f.requestTimeoutMs,
    })
  );
}
