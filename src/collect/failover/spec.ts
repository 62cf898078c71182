/**
 * What a failover run does, checked against the topology it runs on (pure): one action at a set
 * time, on one node, and how it completes.
 *
 * @module
 */

import { nodeCount, type TopologySpec } from "../topology/spec.ts";

/** The actions a failover run can take. */
export const FAILOVER_ACTIONS = ["kill", "stop", "cluster-failover", "reshard", "none"] as const;

/** One of {@link FAILOVER_ACTIONS}. */
export type FailoverActionName = typeof FAILOVER_ACTIONS[number];

/** The action of a failover run. */
export interface FailoverAction {
  /**
   * `kill`: kill -9 the node's process; `stop`: SIGSTOP it for `stopS`, then SIGCONT;
   * `cluster-failover`: `CLUSTER FAILOVER` on its replica (a cluster only); `reshard`: a slot
   * migration, `valkey-cli`/`redis-cli --cluster reshard` moving `slots` of its slots to the
   * master `to` (a cluster only; no node fails); `none`: the same run with no action (an A/A
   * run: what the report calls noise, for calibration; the action event is still stored).
   */
  action: FailoverActionName;
  /** When, seconds after the load started. */
  atS: number;
  /**
   * The node (`node 2`, as kvlab names the processes it starts, in start order). Default: the
   * primary that serves slot 0 (a cluster), the primary (a standalone topology).
   */
  node?: string;
  /** `stop`: how long it stays stopped, seconds. @default {2} */
  stopS?: number;
  /**
   * `kill` of a standalone primary: seconds after the kill when kvlab promotes the replica
   * (`REPLICAOF NO ONE`) and points the generator at it (what a client of Sentinel sees, with
   * the detection time chosen). @default {1}
   */
  promoteAfterS?: number;
  /** `reshard`: how many slots move (the cli takes the node's lowest first). @default {1000} */
  slots?: number;
  /** `reshard`: the master they move to (`node N`). Default: the first other master. */
  to?: string;
}

/** The slots a `reshard` moves by default. */
export const DEFAULT_RESHARD_SLOTS = 1000;

/**
 * Why an action cannot run on a topology, or null when it can.
 *
 * @param a The action.
 * @param t The topology.
 * @param durationS The load's length, seconds.
 * @returns The reason, or null.
 *
 * @example
 * ```ts
 * import { failoverProblem } from "./spec.ts";
 * import assert from "node:assert/strict";
 * const cluster = { engine: "valkey" as const, cluster: { shards: 3, replicas: 1 } };
 * assert.equal(failoverProblem({ action: "kill", atS: 2 }, cluster, 8), null);
 * assert.match(failoverProblem({ action: "kill", atS: 2 }, { engine: "redis" }, 8)!,
 *   /needs a replica/);
 * assert.match(failoverProblem({ action: "cluster-failover", atS: 2 },
 *   { engine: "redis", replicas: 1 }, 8)!, /a cluster only/);
 * assert.match(failoverProblem({ action: "kill", atS: 9 }, cluster, 8)!, /before the load ends/);
 * assert.match(failoverProblem({ action: "kill", atS: 1 }, { ...cluster, tls: true }, 8)!,
 *   /plaintext only/);
 * // a slot migration needs a cluster, not a replica
 * const bare = { engine: "valkey" as const, cluster: { shards: 3, replicas: 0 } };
 * assert.equal(failoverProblem({ action: "reshard", atS: 1, slots: 300 }, bare, 4), null);
 * assert.match(failoverProblem({ action: "reshard", atS: 1 }, { engine: "redis", replicas: 1 }, 4)!,
 *   /a cluster only/);
 * assert.match(failoverProblem({ action: "reshard", atS: 1, slots: 0 }, bare, 4)!, /slots: expected/);
 * // a node the topology does not start, a stop longer than the load
 * assert.match(failoverProblem({ action: "kill", atS: 2, node: "node 99" }, cluster, 8)!,
 *   /node: expected "node N", 1 ≤ N ≤ 6 .*: node 99/);
 * assert.match(failoverProblem({ action: "reshard", atS: 1, to: "node 7" }, bare, 4)!,
 *   /to: expected "node N", 1 ≤ N ≤ 3/);
 * assert.match(failoverProblem({ action: "stop", atS: 2, stopS: 1e9 }, cluster, 8)!,
 *   /stop_s: expected 0 ≤ stop_s ≤ 3600 seconds: 1000000000/);
 * // an A/A run (no action) needs nothing of the topology
 * assert.equal(failoverProblem({ action: "none", atS: 2 }, { engine: "redis" }, 8), null);
 * ```
 */
export function failoverProblem(
  a: FailoverAction,
  t: TopologySpec,
  durationS: number,
): string | null {
  if (!(FAILOVER_ACTIONS as readonly string[]).includes(a.action)) {
    return `action: expected ${FAILOVER_ACTIONS.join(", ")}: ${a.action}`;
  }
  if (t.tls) {
    return "a failover run is plaintext only (its generator and its CLUSTER SHARDS refresh do " +
      "not take the topology's TLS files yet): leave tls out";
  }
  const replicas = t.cluster ? t.cluster.replicas : t.replicas ?? 0;
  if ((a.action === "cluster-failover" || a.action === "reshard") && !t.cluster) {
    return `action ${a.action} is for a cluster only (start: { cluster: { … } })`;
  }
  if (a.action === "reshard") {
    if (a.slots !== undefined && !(Number.isInteger(a.slots) && a.slots >= 1 && a.slots < 16384)) {
      return `slots: expected an integer from 1 to 16383: ${a.slots}`;
    }
    const to = nodeProblem("to", a.to, t);
    if (to) return to;
  } else if (a.action !== "none" && replicas < 1) {
    return `action ${a.action} needs a replica to take over (start: { replicas: 1 } or ` +
      "cluster: { replicas: 1 })";
  }
  if (!(a.atS >= 0) || !(a.atS < durationS)) {
    return `at_s: expected a time before the load ends (0 ≤ at_s < ${durationS}): ${a.atS}`;
  }
  for (const [k, v] of [["stop_s", a.stopS], ["promote_after_s", a.promoteAfterS]] as const) {
    // bounded as a plan's duration_s is (a stop past the load's end is resumed as it ends)
    if (v !== undefined && !(v >= 0 && v <= 3600)) {
      return `${k}: expected 0 ≤ ${k} ≤ 3600 seconds: ${v}`;
    }
  }
  return nodeProblem("node", a.node, t);
}

/** A `node N` field that names no process of the topology, or null. */
function nodeProblem(field: string, name: string | undefined, t: TopologySpec): string | null {
  if (name === undefined) return null;
  const n = /^node (\d+)$/.exec(name);
  const count = nodeCount(t);
  if (!n || Number(n[1]) < 1 || Number(n[1]) > count) {
    return `${field}: expected "node N", 1 ≤ N ≤ ${count} (the topology's processes in start ` +
      `order): ${name}`;
  }
  return null;
}
