/**
 * A pub/sub step against a Redis Cluster: which master serves each channel (the slot of its
 * name, CRC16 with hash tags, as for a key), and what a `MOVED` reply to SPUBLISH or
 * SSUBSCRIBE means for the step.
 *
 * @module
 */

import { keySlot, parseRedirect, type SlotMap } from "../cluster/slots.ts";
import type { PubSubMode } from "./payload.ts";
import type { PubSubShard } from "./types.ts";

/**
 * Per channel, the index in `map.nodes` of the master serving its slot.
 *
 * @param map The slot map.
 * @param names The channels' names.
 * @returns One index per channel.
 * @throws {RangeError} When no master serves a channel's slot.
 *
 * @example
 * ```ts
 * import { channelNodes } from "./_cluster.ts";
 * import { emptySlotMap, keySlot } from "../cluster/slots.ts";
 * import assert from "node:assert/strict";
 * const map = emptySlotMap();
 * map.nodes.push({ host: "h", port: 1, id: null }, { host: "h", port: 2, id: null });
 * map.slotNode.fill(0, 0, 8192);
 * map.slotNode.fill(1, 8192);
 * const names = ["a", "b", "c"];
 * assert.deepEqual([...channelNodes(map, names)], names.map((n) => keySlot(n) < 8192 ? 0 : 1));
 * ```
 */
export function channelNodes(map: SlotMap, names: readonly string[]): Int32Array {
  return Int32Array.from(names, (name) => {
    const slot = keySlot(name);
    const node = map.slotNode[slot];
    if (node < 0) throw new RangeError(`no master serves slot ${slot} of channel ${name}`);
    return node;
  });
}

/**
 * What a `MOVED` (or `ASK`) error reply to a sharded command says, naming the slot and the
 * step's channels in it, or null for another error. The engine does not follow a channel
 * that moved during the step: its messages are publish errors (its subscribers were told
 * `sunsubscribe` by the server), and the step is to be run again.
 *
 * @param text The error reply.
 * @param names The step's channels.
 * @returns The explanation, or null.
 *
 * @example
 * ```ts
 * import { movedProblem } from "./_cluster.ts";
 * import { keySlot } from "../cluster/slots.ts";
 * import assert from "node:assert/strict";
 * const slot = keySlot("ch:1");
 * assert.equal(movedProblem(`MOVED ${slot} 127.0.0.1:7001`, ["ch:0", "ch:1"]),
 *   `MOVED: slot ${slot} (channel ch:1) is now served by 127.0.0.1:7001: the slot ` +
 *   "map changed during the step (the engine does not follow a moved channel; run the step " +
 *   "again)");
 * assert.equal(movedProblem("ERR other", ["ch:1"]), null);
 * ```
 */
export function movedProblem(text: string, names: readonly string[]): string | null {
  const r = parseRedirect(text);
  if (r === null) return null;
  const inSlot = names.filter((n) => keySlot(n) === r.slot);
  const shown = inSlot.slice(0, 3).join(", ") + (inSlot.length > 3 ? ", …" : "");
  const channels = inSlot.length === 1 ? `channel ${shown}` : `channels ${shown}`;
  return `${r.kind.toUpperCase()}: slot ${r.slot} (${channels}) is now served by ` +
    `${r.host}:${r.port}: the slot map changed during the step (the engine does not follow a ` +
    "moved channel; run the step again)";
}

/**
 * A subscriber's channels by the master it reaches them at: all at the one server (0); all at
 * master `s mod masters` of a cluster outside sharded mode (PUBLISH is broadcast over its bus);
 * sharded, each at its slot's master.
 *
 * @param o The step's mode and slot map, and per channel its master (`byNode`,
 * {@link channelNodes}; null without a cluster).
 * @param s The subscriber.
 * @param channels Its channels.
 * @returns Master → its channels there.
 *
 * @example
 * ```ts
 * import { subscriberGroups } from "./_cluster.ts";
 * import { emptySlotMap } from "../cluster/slots.ts";
 * import assert from "node:assert/strict";
 * const cluster = emptySlotMap();
 * cluster.nodes.push({ host: "h", port: 1, id: null }, { host: "h", port: 2, id: null });
 * const byNode = Int32Array.of(0, 1, 1);
 * assert.deepEqual([...subscriberGroups({ mode: "sharded", cluster, byNode }, 0, [0, 1, 2])],
 *   [[0, [0]], [1, [1, 2]]]);
 * assert.deepEqual([...subscriberGroups({ mode: "fan-out", cluster, byNode }, 3, [0])], [[1, [0]]]);
 * assert.deepEqual([...subscriberGroups({ mode: "sharded", byNode: null }, 3, [0, 1])], [[0, [0, 1]]]);
 * ```
 */
export function subscriberGroups(
  o: { mode: PubSubMode; cluster?: SlotMap; byNode: Int32Array | null },
  s: number,
  channels: number[],
): Map<number, number[]> {
  const byNode = o.byNode;
  if (!o.cluster || !byNode) return new Map([[0, channels]]);
  if (o.mode !== "sharded") return new Map([[s % o.cluster.nodes.length, channels]]);
  const groups = new Map<number, number[]>();
  for (const c of channels) groups.set(byNode[c], [...groups.get(byNode[c]) ?? [], c]);
  return groups;
}

/**
 * Sharded across a cluster: the masters each publisher connects to (those serving a channel)
 * and per channel the index of its master among them; null otherwise.
 *
 * @example
 * ```ts
 * import { publisherRoute } from "./_cluster.ts";
 * import assert from "node:assert/strict";
 * const r = publisherRoute("sharded", Int32Array.of(2, 0, 2));
 * assert.deepEqual([r?.nodes, [...r?.linkOf ?? []]], [[0, 2], [1, 0, 1]]);
 * assert.equal(publisherRoute("fan-out", Int32Array.of(0)), null);
 * ```
 */
export function publisherRoute(
  mode: PubSubMode,
  byNode: Int32Array | null,
): { nodes: number[]; linkOf: Int32Array } | null {
  if (mode !== "sharded" || !byNode) return null;
  const nodes = [...new Set(byNode)].sort((a, b) => a - b);
  return { nodes, linkOf: byNode.map((n) => nodes.indexOf(n)) };
}

/**
 * Each master's channels, subscriber connections and messages published through it.
 *
 * @param map The slot map.
 * @param o Per channel its master (`byNode`), subscriber connections per master (`subs`), the
 * publishers' links (each with its master and the messages it sent).
 * @returns One entry per master, in the map's order.
 *
 * @example
 * ```ts
 * import { shardCounts } from "./_cluster.ts";
 * import { emptySlotMap } from "../cluster/slots.ts";
 * import assert from "node:assert/strict";
 * const map = emptySlotMap();
 * map.nodes.push({ host: "h", port: 1, id: null }, { host: "h", port: 2, id: null });
 * const pubs = [{ links: [{ node: 0, published: 5 }, { node: 1, published: 7 }] }];
 * assert.deepEqual(shardCounts(map, { byNode: Int32Array.of(0, 1, 1), subs: [1, 2], pubs }), [
 *   { node: "h:1", channels: 1, subscriberConnections: 1, published: 5 },
 *   { node: "h:2", channels: 2, subscriberConnections: 2, published: 7 },
 * ]);
 * ```
 */
export function shardCounts(
  map: SlotMap,
  o: {
    byNode: Int32Array;
    subs: readonly number[];
    pubs: readonly { links: readonly { node: number; published: number }[] }[];
  },
): PubSubShard[] {
  return map.nodes.map((n, i) => ({
    node: `${n.host}:${n.port}`,
    channels: o.byNode.reduce((k, node) => k + (node === i ? 1 : 0), 0),
    subscriberConnections: o.subs[i],
    published: o.pubs.reduce(
      (k, p) => k + p.links.reduce((m, l) => m + (l.node === i ? l.published : 0), 0),
      0,
    ),
  }));
}
