/**
 * Which engine drives a step against a Redis Cluster, and why.
 *
 * @module
 */

import type { EngineName, ShardOptions } from "../_outcome.ts";
import type { EndpointTls } from "../wire.ts";
import type { SlotMap } from "../../cluster/slots.ts";
import { chooseFfiEngine } from "../libc.ts";
import { connectShard, type Shard } from "../_shard.ts";
import { type ClusterShard, connectClusterShard } from "./_shard.ts";

/** What a step is told of the server's topology. */
export interface TopologyOptions {
  /** TLS: the CA (and client certificate) PEM texts; engine `deno` only. */
  tls?: EndpointTls;
  /**
   * A Redis Cluster's slot map: each request goes to its key's master, `MOVED` and `ASK`
   * followed (counted in `moved` and `asked`, not as errors). Engine `deno`, one thread,
   * pipeline 1.
   */
  cluster?: SlotMap;
}

/** The engine of a step: {@link clusterEngine} against a cluster, else `chooseFfiEngine`. */
export function stepEngine(
  wanted: "auto" | EngineName,
  plan: ShardOptions,
): { engine: EngineName; note: string | null } {
  return plan.cluster ? clusterEngine(wanted, plan.pipeline) : chooseFfiEngine(wanted, plan);
}

/** Connects the one shard of a step run on the main thread (a cluster's, or the usual one). */
export function connectMainShard(o: ShardOptions): Promise<Shard | ClusterShard> {
  return o.cluster ? connectClusterShard(o, o.cluster) : connectShard(o);
}

/**
 * The engine of a step against a cluster: `deno` on one thread (the epoll engine does not
 * follow redirections), at pipeline 1.
 *
 * @example
 * ```ts
 * import { clusterEngine } from "./engine.ts";
 * import assert from "node:assert/strict";
 * assert.equal(clusterEngine("auto", 1).engine, "deno");
 * assert.throws(() => clusterEngine("ffi", 1), /engine ffi: .*cluster/);
 * assert.throws(() => clusterEngine("auto", 4), /pipeline 1/);
 * ```
 */
export function clusterEngine(
  wanted: "auto" | EngineName,
  pipeline: number,
): { engine: EngineName; note: string | null } {
  if (pipeline !== 1) {
    throw new RangeError(`against a cluster the generator sends at pipeline 1 only: ${pipeline}`);
  }
  const why = "a cluster (the epoll engine does not follow MOVED and ASK redirections)";
  if (wanted === "ffi") throw new Deno.errors.NotSupported(`engine ffi: ${why}`);
  return { engine: "deno", note: wanted === "deno" ? "asked for" : why };
}
