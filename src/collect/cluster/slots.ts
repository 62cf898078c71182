/**
 * Redis Cluster's key space: the CRC16 of a key (XMODEM, as the cluster specification gives it),
 * its hash slot (the `{tag}` part when there is one), and a slot map read from `CLUSTER SHARDS`
 * (Redis 7+) or `CLUSTER SLOTS` (older servers): which node serves each of the 16,384 slots.
 * Pure functions of text and replies.
 *
 * @module
 */

/** The number of hash slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16384;

const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let b = 0; b < 8; b++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    t[i] = crc;
  }
  return t;
})();

/**
 * CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), the cluster's key hash.
 *
 * @param bytes The bytes.
 * @returns The checksum, 0–65535.
 *
 * @example
 * ```ts
 * import { crc16 } from "./slots.ts";
 * import assert from "node:assert/strict";
 * // the specification's test vector
 * assert.equal(crc16(new TextEncoder().encode("123456789")), 0x31c3);
 * ```
 */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < bytes.length; i++) {
    crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ bytes[i]) & 0xff];
  }
  return crc;
}

/**
 * The hash slot of a key: the CRC16 of its hash tag (the part between the first `{` and the
 * next `}`, when that part is not empty), else of the whole key, modulo 16,384.
 *
 * @param key The key (a string is hashed as its UTF-8 bytes).
 * @returns Its slot, 0–16383.
 *
 * @example
 * ```ts
 * import { keySlot } from "./slots.ts";
 * import assert from "node:assert/strict";
 * assert.equal(keySlot("foo"), 12182);
 * assert.equal(keySlot("bar"), 5061);
 * assert.equal(keySlot("{user1000}.following"), keySlot("{user1000}.followers"));
 * assert.equal(keySlot("foo{}{bar}"), keySlot("foo{}{bar}")); // an empty tag: the whole key
 * assert.notEqual(keySlot("foo{}{bar}"), keySlot("bar"));
 * assert.equal(keySlot("foo{{bar}}zap"), keySlot("{bar")); // the tag is "{bar"
 * assert.equal(keySlot("foo{bar}{zap}"), keySlot("bar")); // the first tag only
 * ```
 */
export function keySlot(key: string | Uint8Array): number {
  const b = typeof key === "string" ? new TextEncoder().encode(key) : key;
  const open = b.indexOf(0x7b);
  if (open >= 0) {
    const close = b.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16(b.subarray(open + 1, close)) % CLUSTER_SLOTS;
  }
  return crc16(b) % CLUSTER_SLOTS;
}

/**
 * The keys `prefix + 0 … keys − 1` grouped by the master that serves each one's slot (what a
 * preload of a cluster writes to each master).
 *
 * @param map The slot map.
 * @param keys How many keys.
 * @param prefix The keys' prefix.
 * @returns Per master (in the map's order), the key numbers it serves, ascending.
 *
 * @example
 * ```ts
 * import { emptySlotMap, keyNumbersByNode, keySlot } from "./slots.ts";
 * import assert from "node:assert/strict";
 * const map = emptySlotMap();
 * map.nodes.push({ host: "h", port: 1, id: null }, { host: "h", port: 2, id: null });
 * map.slotNode.fill(0, 0, 8192);
 * map.slotNode.fill(1, 8192);
 * const [a, b] = keyNumbersByNode(map, 100, "key:");
 * assert.equal(a.length + b.length, 100);
 * assert.ok(a.every((k) => keySlot(`key:${k}`) < 8192) && b.every((k) => keySlot(`key:${k}`) >= 8192));
 * ```
 */
export function keyNumbersByNode(map: SlotMap, keys: number, prefix: string): number[][] {
  const out: number[][] = map.nodes.map(() => []);
  for (let k = 0; k < keys; k++) {
    const node = map.slotNode[keySlot(prefix + k)];
    if (node < 0) throw new RangeError(`no master serves the slot of ${prefix}${k}`);
    out[node].push(k);
  }
  return out;
}

/** A cluster node as a client reaches it. */
export interface ClusterNode {
  host: string;
  port: number;
  /** Its node id, when the reply gave it. */
  id: string | null;
}

/** Which master serves each slot. */
export interface SlotMap {
  /** The masters. */
  nodes: ClusterNode[];
  /** Per slot, the index of its node in `nodes`, or -1 when no node serves it. */
  slotNode: Int16Array;
}

/** Slots no node serves, as ranges (`0-99, 200`), or "" when every slot is served. */
export function uncoveredSlots(map: SlotMap): string {
  const out: string[] = [];
  for (let s = 0; s < CLUSTER_SLOTS; s++) {
    if (map.slotNode[s] !== -1) continue;
    let e = s;
    while (e + 1 < CLUSTER_SLOTS && map.slotNode[e + 1] === -1) e++;
    out.push(e === s ? `${s}` : `${s}-${e}`);
    s = e;
  }
  return out.join(", ");
}

/** Adds a node (found by host and port) to a map, returning its index. */
function nodeIndex(map: SlotMap, node: ClusterNode): number {
  const i = map.nodes.findIndex((n) => n.host === node.host && n.port === node.port);
  if (i >= 0) return i;
  map.nodes.push(node);
  return map.nodes.length - 1;
}

/** An empty slot map. */
export function emptySlotMap(): SlotMap {
  return { nodes: [], slotNode: new Int16Array(CLUSTER_SLOTS).fill(-1) };
}

/**
 * Points a slot at a node (a MOVED redirection: `MOVED 3999 127.0.0.1:6381`).
 *
 * @returns The node's index.
 */
export function moveSlot(map: SlotMap, slot: number, node: ClusterNode): number {
  const i = nodeIndex(map, node);
  map.slotNode[slot] = i;
  return i;
}

/**
 * Reads a `MOVED slot host:port` or `ASK slot host:port` error reply.
 *
 * @example
 * ```ts
 * import { parseRedirect } from "./slots.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseRedirect("MOVED 3999 127.0.0.1:6381"),
 *   { kind: "moved", slot: 3999, host: "127.0.0.1", port: 6381 });
 * assert.equal(parseRedirect("ASK 1 :6381")?.host, ""); // an unknown endpoint: the caller's host
 * assert.equal(parseRedirect("ERR wrong"), null);
 * ```
 */
export function parseRedirect(
  text: string,
): { kind: "moved" | "ask"; slot: number; host: string; port: number } | null {
  const m = /^(MOVED|ASK) (\d+) (.*):(\d+)$/.exec(text);
  if (!m || Number(m[2]) >= CLUSTER_SLOTS) return null;
  return {
    kind: m[1] === "MOVED" ? "moved" : "ask",
    slot: Number(m[2]),
    host: m[3].replace(/^\[|\]$/g, ""),
    port: Number(m[4]),
  };
}

type Reply = unknown;

/** A RESP2 map (a flat array of names and values) or a RESP3 one, as an object. */
function asMap(v: Reply): Record<string, Reply> {
  if (Array.isArray(v)) {
    const o: Record<string, Reply> = {};
    for (let i = 0; i + 1 < v.length; i += 2) o[String(v[i])] = v[i + 1];
    return o;
  }
  if (v !== null && typeof v === "object") return v as Record<string, Reply>;
  return {};
}

/**
 * The slot map of a `CLUSTER SHARDS` reply (each shard's slot ranges, served by its master).
 *
 * @param reply The reply, as a client gives it (nested arrays).
 * @param o `tls`: take each node's `tls-port` (a TLS cluster), else its `port`; `host`: the
 * address for a node whose `ip` and `endpoint` say nothing usable (`?` or empty).
 * @returns The map.
 * @throws {TypeError} On a reply of another shape.
 *
 * @example
 * ```ts
 * import { slotMapFromShards } from "./slots.ts";
 * import assert from "node:assert/strict";
 * const shard = (a: number, b: number, port: number) => ["slots", [a, b], "nodes", [[
 *   "id", `n${port}`, "port", port, "ip", "127.0.0.1", "endpoint", "127.0.0.1", "role", "master",
 *   "health", "online"]]];
 * const m = slotMapFromShards([shard(0, 8191, 7000), shard(8192, 16383, 7001)],
 *   { tls: false, host: "127.0.0.1" });
 * assert.deepEqual(m.nodes.map((n) => n.port), [7000, 7001]);
 * assert.equal(m.slotNode[8192], 1);
 * // after a failover Valkey lists the failed primary as a master too: the online one serves
 * const failed = ["slots", [0, 16383], "nodes", [
 *   ["id", "old", "port", 7000, "ip", "127.0.0.1", "role", "master", "health", "fail"],
 *   ["id", "new", "port", 7003, "ip", "127.0.0.1", "role", "master", "health", "online"]]];
 * assert.equal(slotMapFromShards([failed], { tls: false, host: "h" }).nodes[0].port, 7003);
 * ```
 */
export function slotMapFromShards(reply: Reply, o: { tls: boolean; host: string }): SlotMap {
  if (!Array.isArray(reply)) throw new TypeError("CLUSTER SHARDS: expected an array of shards");
  const map = emptySlotMap();
  for (const s of reply) {
    const shard = asMap(s);
    const slots = shard.slots;
    const nodes = shard.nodes;
    if (!Array.isArray(slots) || !Array.isArray(nodes)) {
      throw new TypeError("CLUSTER SHARDS: a shard without slots or nodes");
    }
    // (after a failover Valkey lists the failed primary as a master too, with health fail)
    const masters = nodes.map(asMap).filter((n) => n.role === "master");
    const master = masters.find((n) => n.health !== "fail") ?? masters[0];
    if (!master || slots.length === 0) continue;
    const port = Number(o.tls ? master["tls-port"] ?? master.port : master.port);
    const ip = [master.endpoint, master.ip].map((x) =>
      String(x ?? "")
    ).find((x) => x !== "" && x !== "?") ?? o.host;
    const i = nodeIndex(map, { host: ip, port, id: master.id ? String(master.id) : null });
    for (let k = 0; k + 1 < slots.length; k += 2) {
      for (let slot = Number(slots[k]); slot <= Number(slots[k + 1]); slot++) {
        map.slotNode[slot] = i;
      }
    }
  }
  return map;
}

/**
 * The slot map of a `CLUSTER SLOTS` reply (`[[start, end, [ip, port, id], replicas…], …]`).
 *
 * @param reply The reply.
 * @param host The address for a node whose ip is empty.
 * @returns The map.
 * @throws {TypeError} On a reply of another shape.
 *
 * @example
 * ```ts
 * import { slotMapFromSlots } from "./slots.ts";
 * import assert from "node:assert/strict";
 * const m = slotMapFromSlots([[0, 100, ["", 7000, "a"]], [101, 16383, ["10.0.0.2", 7001, "b"]]],
 *   "127.0.0.1");
 * assert.deepEqual(m.nodes, [{ host: "127.0.0.1", port: 7000, id: "a" },
 *   { host: "10.0.0.2", port: 7001, id: "b" }]);
 * ```
 */
export function slotMapFromSlots(reply: Reply, host: string): SlotMap {
  if (!Array.isArray(reply)) throw new TypeError("CLUSTER SLOTS: expected an array of ranges");
  const map = emptySlotMap();
  for (const r of reply) {
    if (!Array.isArray(r) || r.length < 3 || !Array.isArray(r[2])) {
      throw new TypeError("CLUSTER SLOTS: expected [start, end, [ip, port, id], …]");
    }
    const [ip, port, id] = r[2];
    const i = nodeIndex(map, {
      host: ip && ip !== "?" ? String(ip) : host,
      port: Number(port),
      id: id ? String(id) : null,
    });
    for (let slot = Number(r[0]); slot <= Number(r[1]); slot++) map.slotNode[slot] = i;
  }
  return map;
}
