/**
 * A Redis Cluster as kvlab meets it live: whether a server is a cluster node (INFO
 * `cluster_enabled:1`), its slot map (`CLUSTER SHARDS`, else `CLUSTER SLOTS`), each master's
 * command counts (INFO commandstats), and the cross-check of a tool's total against the sum
 * over the nodes.
 *
 * @module
 */

import type { Redis } from "ioredis";
import { connect, ServerUnreachableError } from "../server.ts";
import type { ServerTarget } from "../target.ts";
import { type InfoField, infoNumber } from "../formats/info/info.ts";
import {
  type ClusterNode,
  type SlotMap,
  slotMapFromShards,
  slotMapFromSlots,
  uncoveredSlots,
} from "./slots.ts";

/** Whether an INFO reply says the server runs in cluster mode. */
export function clusterEnabled(info: readonly InfoField[] | undefined): boolean {
  return infoNumber(info, "cluster_enabled") === 1;
}

/** The target of one node of a cluster, reached as the seed target is (TLS, password). */
export function nodeTarget(seed: ServerTarget, node: ClusterNode): ServerTarget {
  const scheme = seed.tls ? "rediss" : "redis";
  const host = node.host.includes(":") ? `[${node.host}]` : node.host;
  return { ...seed, host: node.host, port: node.port, display: `${scheme}://${host}:${node.port}` };
}

async function withClient<T>(t: ServerTarget, fn: (c: Redis) => Promise<T>): Promise<T> {
  const client = await connect(t);
  try {
    return await fn(client);
  } finally {
    client.disconnect();
  }
}

/**
 * The slot map of the cluster a node belongs to: `CLUSTER SHARDS` (Redis 7+, Valkey), else
 * `CLUSTER SLOTS`.
 *
 * @param seed A node.
 * @returns The map.
 * @throws {ServerUnreachableError} When the node cannot be reached, answers neither, or leaves
 * slots without a master (the cluster is not ready: `cluster_state:fail`).
 */
export async function readSlotMap(seed: ServerTarget): Promise<SlotMap> {
  const map = await withClient(seed, async (c) => {
    try {
      return slotMapFromShards(await c.call("CLUSTER", "SHARDS"), {
        tls: seed.tls,
        host: seed.host,
      });
    } catch (e) {
      if (e instanceof TypeError) throw new ServerUnreachableError(e.message);
      try {
        return slotMapFromSlots(await c.call("CLUSTER", "SLOTS"), seed.host);
      } catch (e2) {
        throw new ServerUnreachableError(
          `${seed.display}: neither CLUSTER SHARDS nor CLUSTER SLOTS answered: ` +
            `${(e as Error).message}; ${(e2 as Error).message}`,
        );
      }
    }
  });
  const missing = uncoveredSlots(map);
  if (missing) {
    throw new ServerUnreachableError(
      `${seed.display}: the cluster serves no master for slots ${missing.slice(0, 80)} ` +
        "(not ready: wait for cluster_state:ok)",
    );
  }
  return map;
}

/** The calls of some commands one node answered so far (INFO commandstats). */
export interface NodeCalls {
  /** `host:port`. */
  node: string;
  /** Calls of the commands asked for, summed. */
  calls: number;
}

/**
 * Each master's calls of `commands` so far (INFO commandstats `cmdstat_<name>:calls=`).
 *
 * @param seed A node (its TLS and password reach the others).
 * @param map The slot map.
 * @param commands Lower-case command names. @default {["get", "set"]}
 * @returns One count per master, in the map's order; null for one that did not answer.
 */
export async function nodeCalls(
  seed: ServerTarget,
  map: SlotMap,
  commands: readonly string[] = ["get", "set"],
): Promise<(NodeCalls | null)[]> {
  return await Promise.all(map.nodes.map(async (n) => {
    try {
      const text = await withClient(nodeTarget(seed, n), (c) => c.info("commandstats"));
      return { node: `${n.host}:${n.port}`, calls: commandCalls(text, commands) };
    } catch {
      return null;
    }
  }));
}

/**
 * The calls of some commands in an INFO commandstats reply.
 *
 * @example
 * ```ts
 * import { commandCalls } from "./nodes.ts";
 * import assert from "node:assert/strict";
 * const text = "# Commandstats\r\ncmdstat_get:calls=10,usec=5\r\ncmdstat_set:calls=3,usec=1\r\n" +
 *   "cmdstat_getset:calls=99,usec=1\r\n";
 * assert.equal(commandCalls(text, ["get", "set"]), 13);
 * ```
 */
export function commandCalls(text: string, commands: readonly string[]): number {
  const calls = commandStats(text);
  return commands.reduce((n, c) => n + (calls.get(c) ?? 0), 0);
}

/**
 * Every command's calls in an INFO commandstats reply, by lower-case name.
 *
 * @example
 * ```ts
 * import { commandStats } from "./nodes.ts";
 * import assert from "node:assert/strict";
 * const calls = commandStats("# Commandstats\r\ncmdstat_GET:calls=10,usec=5\r\ncmdstat_set:calls=3\r\n");
 * assert.deepEqual([...calls], [["get", 10], ["set", 3]]);
 * ```
 */
export function commandStats(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls.set(m[1].toLowerCase(), (calls.get(m[1].toLowerCase()) ?? 0) + Number(m[2]));
  }
  return calls;
}

/** Each node's calls over a run, the sum, and the cross-check against the tool's total. */
export interface NodeCrossCheck {
  nodes: NodeCalls[];
  /** The sum over the nodes (null when a node did not answer before or after). */
  sum: number | null;
  /** The tool's total. */
  tool: number;
  /** A disagreement above 1 %, in words with both numbers; null when they agree. */
  warning: string | null;
}

/**
 * The per-node deltas of a run and the cross-check of the tool's total against their sum: a
 * disagreement above 1 % is a warning with both numbers.
 *
 * @param before Each node's counts before the run.
 * @param after After it.
 * @param tool The tool's total (requests it sent that the servers executed).
 * @returns The check.
 *
 * @example
 * ```ts
 * import { crossCheckNodes } from "./nodes.ts";
 * import assert from "node:assert/strict";
 * const b = [{ node: "a:1", calls: 100 }, { node: "b:2", calls: 0 }];
 * const ok = crossCheckNodes(b, [{ node: "a:1", calls: 600 }, { node: "b:2", calls: 502 }], 1000);
 * assert.deepEqual([ok.sum, ok.warning], [1002, null]);
 * const off = crossCheckNodes(b, [{ node: "a:1", calls: 600 }, { node: "b:2", calls: 300 }], 1000);
 * assert.equal(off.warning, "the tool counted 1,000 GET/SET executed, the nodes' commandstats " +
 *   "800 (a:1 500, b:2 300): 20.0 % apart (more than 1 %)");
 * ```
 */
export function crossCheckNodes(
  before: readonly (NodeCalls | null)[],
  after: readonly (NodeCalls | null)[],
  tool: number,
): NodeCrossCheck {
  const nodes: NodeCalls[] = [];
  let complete = true;
  before.forEach((b, i) => {
    const a = after[i];
    if (b === null || a === null || a === undefined) complete = false;
    else nodes.push({ node: b.node, calls: a.calls - b.calls });
  });
  const sum = complete ? nodes.reduce((s, n) => s + n.calls, 0) : null;
  const apart = sum === null ? 0 : Math.abs(sum - tool) / Math.max(1, tool);
  const list = nodes.map((n) => `${n.node} ${n.calls.toLocaleString("en")}`).join(", ");
  const warning = sum !== null && apart > 0.01
    ? `the tool counted ${tool.toLocaleString("en")} GET/SET executed, the nodes' commandstats ` +
      `${sum.toLocaleString("en")} (${list}): ${(100 * apart).toFixed(1)} % apart (more than 1 %)`
    : sum === null
    ? "a node did not answer INFO commandstats before or after the run: no cross-check"
    : null;
  return { nodes, sum, tool, warning };
}

/** Each master's calls before and after an external tool's run. */
export interface ToolNodeCalls {
  before: (NodeCalls | null)[];
  after: (NodeCalls | null)[];
}

/**
 * What a tool's run against a server learns of its cluster before the tool starts: nothing for
 * a plain server; for a cluster node the tool is told about (`cluster: true`), each master's
 * calls so far and how to read them again after; for a cluster node it is not told about, why
 * the run must not start (the tool would store MOVED errors as its results).
 *
 * @param target The server.
 * @param info Its INFO before the run.
 * @returns `{ after }` (null for a plain server), or `{ reason }`.
 */
export async function toolClusterFacts(
  target: ServerTarget,
  info: readonly InfoField[] | undefined,
): Promise<{ reason: string } | { after: () => Promise<ToolNodeCalls | null> }> {
  const enabled = clusterEnabled(info);
  if (!target.cluster) {
    if (!enabled) return { after: () => Promise.resolve(null) };
    return {
      reason:
        `${target.display} is a Redis Cluster node (INFO cluster_enabled:1): the tool would ` +
        "store MOVED replies as errors; say cluster: true in the plan's server entry",
    };
  }
  if (info !== undefined && !enabled) {
    return { reason: `${target.display} is not a cluster node (INFO cluster_enabled:0)` };
  }
  try {
    const map = await readSlotMap(target);
    const before = await nodeCalls(target, map);
    return { after: async () => ({ before, after: await nodeCalls(target, map) }) };
  } catch (e) {
    return { reason: (e as Error).message };
  }
}

/**
 * The cross-check of an external tool's run against a cluster: its SET and GET requests (the
 * `requests` of its `SET` and `GET` rows, a summary of several runs left out) against the
 * nodes' calls of `set` and `get`; nothing to check when it ran other tests.
 *
 * @param calls The nodes' calls before and after.
 * @param results The run's results rows.
 * @returns The check, or a warning saying why there is none.
 *
 * @example
 * ```ts
 * import { toolNodeCheck } from "./nodes.ts";
 * import assert from "node:assert/strict";
 * const calls = { before: [{ node: "a:1", calls: 0 }], after: [{ node: "a:1", calls: 2000 }] };
 * const rows = [{ test: "SET", requests: 1000 }, { test: "GET", requests: 1000 },
 *   { test: "TOTALS", requests: 2000 }];
 * assert.equal(toolNodeCheck(calls, rows).sum, 2000);
 * assert.equal(toolNodeCheck(calls, rows).warning, null);
 * assert.match(toolNodeCheck(calls, [{ test: "INCR", requests: 5 }]).warning ?? "", /INCR/);
 * ```
 */
export function toolNodeCheck(
  calls: ToolNodeCalls,
  results: readonly { test: string; requests?: number | null; aggregate?: string | null }[],
): NodeCrossCheck {
  const own = results.filter((r) => !r.aggregate && r.test !== "TOTALS");
  const other = [...new Set(own.map((r) => r.test).filter((t) => t !== "SET" && t !== "GET"))];
  const tool = own.reduce((n, r) => n + (r.requests ?? 0), 0);
  const check = crossCheckNodes(calls.before, calls.after, tool);
  if (other.length === 0) return check;
  return {
    ...check,
    warning: `no cross-check of the nodes' commandstats: the run has tests other than SET and ` +
      `GET (${other.join(", ")})`,
  };
}
