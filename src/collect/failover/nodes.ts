/**
 * What a failover run asks the nodes of its topology (`../topology/`): a node's INFO
 * replication and the primary a replica follows, one command, SIGCONT; the generator's slot map
 * kept current; which node took over after the run; the stored interval rows.
 *
 * @module
 */

import { connect } from "../server.ts";
import type { RunningTopology } from "../topology/mod.ts";
import { parseReplicationInfo } from "../topology/replication.ts";
import { readSlotMap } from "../cluster/nodes.ts";
import { CLUSTER_SLOTS, moveSlot, type SlotMap } from "../cluster/slots.ts";
import type { IntervalBucket } from "../loadgen/series.ts";
import type { FailoverEventsRow, FailoverIntervalsRow } from "../../schema.ts";
import { redactText } from "../../text/redact.ts";
import type { FailoverAction } from "./spec.ts";

/** A node of a running topology. */
export type Node = RunningTopology["nodes"][number];

/** Its `host:port`. */
export const addr = (n: Node): string => `127.0.0.1:${n.port}`;

/** SIGCONT, ignoring a process that is gone. */
export function resume(n: Node): void {
  try {
    Deno.kill(n.pid, "SIGCONT");
  } catch { /* gone */ }
}

/** The primary a replica follows (its INFO replication `master_port`). */
export async function masterPort(r: Node): Promise<number | null> {
  try {
    const c = await connect(r.target, 1000);
    try {
      const m = /master_port:(\d+)/.exec(await c.info("replication"));
      return m ? Number(m[1]) : null;
    } finally {
      c.disconnect();
    }
  } catch {
    return null;
  }
}

/**
 * The first slot a node serves in a slot map, or null when it serves none (a replica).
 *
 * @param map The slot map read before the action.
 * @param port The node's port.
 * @returns The slot, or null.
 *
 * @example
 * ```ts
 * import { servedSlot } from "./nodes.ts";
 * import { emptySlotMap } from "../cluster/slots.ts";
 * import assert from "node:assert/strict";
 * const map = emptySlotMap();
 * map.nodes.push({ host: "127.0.0.1", port: 7001, id: null }, { host: "127.0.0.1", port: 7002, id: null });
 * map.slotNode.fill(0, 0, 8192);
 * map.slotNode.fill(1, 8192);
 * assert.equal(servedSlot(map, 7002), 8192);
 * assert.equal(servedSlot(map, 7004), null); // a replica serves none
 * ```
 */
export function servedSlot(map: SlotMap, port: number): number | null {
  const i = map.nodes.findIndex((n) => n.port === port);
  const slot = i < 0 ? -1 : map.slotNode.indexOf(i);
  return slot < 0 ? null : slot;
}

/**
 * Who took over a node's slot, from the owner read after the run: nobody when the node served
 * no slots, or when the same node still serves it (no failover).
 *
 * @param node The node acted on.
 * @param slot The first slot it served before (null: none).
 * @param after The node serving that slot after the run (`owner`, undefined: unknown) and the
 *   node the slot map was read from (`from`).
 * @returns The node that took over (undefined: none) and the words stored with it.
 *
 * @example
 * ```ts
 * import { takeOverOf } from "./nodes.ts";
 * import assert from "node:assert/strict";
 * const n = (i: number) => ({ name: `node ${i}`, port: 7000 + i });
 * assert.deepEqual(takeOverOf(n(4), null, { owner: n(1), from: "node 2" }),
 *   { node: undefined, detail: "node 4 served no slots (a replica)" });
 * assert.equal(takeOverOf(n(1), 0, { owner: n(1), from: "node 2" }).detail,
 *   "no failover: still served by node 1 (slot 0, CLUSTER SHARDS from node 2 after the run)");
 * assert.equal(takeOverOf(n(1), 0, { owner: n(4), from: "node 2" }).node?.name, "node 4");
 * ```
 */
export function takeOverOf<N extends { name: string; port: number }>(
  node: N,
  slot: number | null,
  { owner, from }: { owner: N | undefined; from: string },
): { node: N | undefined; detail: string } {
  if (slot === null) return { node: undefined, detail: `${node.name} served no slots (a replica)` };
  const read = `CLUSTER SHARDS from ${from} after the run`;
  if (owner?.port === node.port) {
    return {
      node: undefined,
      detail: `no failover: still served by ${node.name} (slot ${slot}, ${read})`,
    };
  }
  return {
    node: owner,
    detail: owner
      ? `serves slot ${slot}, which ${node.name} served before (${read})`
      : `no node serves slot ${slot}, which ${node.name} served before (${read})`,
  };
}

/** Which node took over, read after the run (none: the detail says why). */
export async function tookOver(
  o: { topology: { cluster?: unknown }; action: FailoverAction },
  { topo, node, replica, slot }: {
    topo: RunningTopology;
    node: Node;
    replica?: Node;
    /** The first slot the node served before (null: none, a replica). */
    slot: number | null;
  },
): Promise<{ node: Node | undefined; detail: string }> {
  if (!o.topology.cluster) {
    const info = replica ? await replication(replica) : null;
    if (replica && info?.role === "master") {
      return { node: replica, detail: "INFO replication: role:master (promoted)" };
    }
    const back = await replication(node);
    return {
      node: undefined,
      detail: back?.role === "master"
        ? `no failover: still served by ${node.name} (the primary serves again, no promotion)`
        : "no primary answers after the run",
    };
  }
  if (slot === null) return takeOverOf(node, null, { owner: undefined, from: "" });
  // the slots the acted-on node served before: who serves the first of them now
  for (const n of topo.nodes) {
    if (n === node && o.action.action !== "cluster-failover") continue;
    try {
      const map = await readSlotMap(n.target);
      const owner = map.nodes[map.slotNode[slot]];
      const by = owner ? topo.nodes.find((x) => x.port === owner.port) : undefined;
      return takeOverOf(node, slot, { owner: by, from: n.name });
    } catch { /* the next node */ }
  }
  return { node: undefined, detail: "no node answered CLUSTER SHARDS after the run" };
}

/**
 * A stored interval (its run id filled in when stored).
 *
 * @param b The generator's interval.
 * @param rate The run's fixed rate, requests per second.
 * @returns The `failover_intervals` row.
 *
 * @example
 * ```ts
 * import { intervalRow } from "./nodes.ts";
 * import { countKind, countReply, countSent, emptyIntervalCounts, intervalSeries } from "../loadgen/series.ts";
 * import assert from "node:assert/strict";
 * const c = emptyIntervalCounts(100);
 * for (let ms = 0; ms < 100; ms += 10) countSent(c, ms);
 * for (let ms = 5; ms < 50; ms += 10) countReply(c, ms, 1);
 * countKind(c, 60, "refused");
 * const row = intervalRow(intervalSeries([c])[0], 100);
 * assert.deepEqual([row.start_ms, row.width_ms, row.sent, row.completed, row.refused],
 *   [0, 100, 10, 5, 1]);
 * assert.equal(row.achieved_ops_per_sec, 50); // 5 in 100 ms
 * ```
 */
export function intervalRow(b: IntervalBucket, rate: number): FailoverIntervalsRow {
  return {
    run_id: "",
    interval: b.interval,
    start_ms: b.startMs,
    width_ms: b.widthMs,
    requested_ops_per_sec: rate,
    sent: b.sent,
    completed: b.completed,
    achieved_ops_per_sec: (b.completed * 1000) / b.widthMs,
    errors: b.errors,
    refused: b.refused,
    reset: b.reset,
    timeout: b.timeout,
    clusterdown: b.clusterdown,
    readonly: b.readonly,
    other: b.other,
    moved: b.moved,
    asked: b.asked,
    p50_latency_ms: b.p50FromIntendedMs,
    p99_latency_ms: b.p99FromIntendedMs,
    max_latency_ms: b.maxFromIntendedMs,
  };
}

/** Reads INFO replication of a node (null when it does not answer). */
export async function replication(n: Node) {
  try {
    const c = await connect(n.target, 1000);
    try {
      return parseReplicationInfo(await c.info("replication"));
    } finally {
      c.disconnect();
    }
  } catch {
    return null;
  }
}

/** Sends one command to a node. */
export async function call(n: Pick<Node, "target">, ...args: string[]): Promise<unknown> {
  const c = await connect(n.target, 2000);
  try {
    return await c.call(args[0], ...args.slice(1));
  } finally {
    c.disconnect();
  }
}

/**
 * Points every slot of `map` where `fresh` does (new nodes appended: indices stay).
 *
 * @param map The generator's slot map, updated in place.
 * @param fresh A slot map just read.
 * @returns How many slots moved.
 *
 * @example
 * ```ts
 * import { mergeMap } from "./nodes.ts";
 * import { emptySlotMap } from "../cluster/slots.ts";
 * import assert from "node:assert/strict";
 * const a = { host: "127.0.0.1", port: 7001, id: null }, b = { ...a, port: 7004 };
 * const map = emptySlotMap();
 * map.nodes.push(a);
 * map.slotNode.fill(0);
 * // node 4 took over slots 0–99; a slot the fresh map does not cover keeps its node
 * const fresh = emptySlotMap();
 * fresh.nodes.push(a, b);
 * fresh.slotNode.fill(0, 200);
 * fresh.slotNode.fill(1, 0, 100);
 * assert.equal(mergeMap(map, fresh), 100);
 * assert.deepEqual(map.nodes.map((n) => n.port), [7001, 7004]); // appended: index 0 stays
 * assert.deepEqual([map.slotNode[0], map.slotNode[150], map.slotNode[300]], [1, 0, 0]);
 * ```
 */
export function mergeMap(map: SlotMap, fresh: SlotMap): number {
  let moved = 0;
  for (let s = 0; s < CLUSTER_SLOTS; s++) {
    const f = fresh.nodes[fresh.slotNode[s]];
    const now = map.nodes[map.slotNode[s]];
    if (f && (!now || now.host !== f.host || now.port !== f.port)) {
      moveSlot(map, s, { ...f });
      moved++;
    }
  }
  return moved;
}

/**
 * A run's raw `failover.json`: its action, its events and the load's error samples (a
 * server's words: redacted, as the manifest's copy is).
 *
 * @param run The action, the events, the error samples.
 * @returns The raw file.
 *
 * @example
 * ```ts
 * import { failoverJson } from "./nodes.ts";
 * import assert from "node:assert/strict";
 * const f = failoverJson({ action: { action: "kill", atS: 2 }, events: [],
 *   errors: ["127.0.0.1:6379> AUTH alice pw"] });
 * assert.equal(f.name, "failover.json");
 * const text = new TextDecoder().decode(f.bytes);
 * assert.doesNotMatch(text, /alice pw/);
 * assert.deepEqual(JSON.parse(text).action, { action: "kill", atS: 2 });
 * ```
 */
export function failoverJson(
  run: { action: FailoverAction; events: FailoverEventsRow[]; errors: string[] },
): { name: string; bytes: Uint8Array } {
  const errors = run.errors.map((e) => redactText(e));
  return {
    name: "failover.json",
    bytes: new TextEncoder().encode(
      JSON.stringify({ action: run.action, events: run.events, errors }, null, 2) + "\n",
    ),
  };
}
