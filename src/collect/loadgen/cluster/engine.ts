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
import { type IntervalBucket, type IntervalCounts, intervalSeries } from "../series.ts";

/** What a failover run's result adds. */
export interface FailoverResult {
  /** A failover run's intervals (`failover.intervalMs` each), errors by kind. */
  perInterval?: IntervalBucket[];
}

/**
 * When a schedule starts (epoch ms, this clock): `leadMs` from now, or the common start if
 * later; the failover hook is told.
 */
export function scheduleStart(
  o: TopologyOptions & { startAtEpochMs?: number },
  leadMs: number,
): number {
  const at = Math.max(performance.timeOrigin + performance.now() + leadMs, o.startAtEpochMs ?? 0);
  o.onScheduleStart?.(at);
  return at;
}

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
  /**
   * A failover run (with `cluster`, which may be a one-node map of a standalone primary): see
   * `ShardOptions.failover`; the result gets `perInterval`.
   */
  failover?: { intervalMs: number; requestTimeoutMs: number };
  /** Called once the schedule's start is set (epoch ms, this clock), before it starts. */
  onScheduleStart?: (startEpochMs: number) => void;
}

/**
 * A step's shard options of its topology: the slot map, and a failover run's options, checked
 * (it runs on the cluster engine only).
 *
 * @example
 * ```ts
 * import { clusterOptions } from "./engine.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(clusterOptions({}), {});
 * assert.throws(() => clusterOptions({ failover: { intervalMs: 100, requestTimeoutMs: 1 } }),
 *   /needs a slot map/);
 * ```
 */
export function clusterOptions(o: TopologyOptions): Pick<ShardOptions, "cluster" | "failover"> {
  const f = o.failover;
  if (!f) return o.cluster ? { cluster: o.cluster } : {};
  if (!o.cluster) {
    throw new RangeError("failover: needs a slot map (cluster, or a one-node map of a primary)");
  }
  for (const [k, v] of Object.entries(f)) {
    if (!(v > 0) || !Number.isFinite(v)) throw new RangeError(`failover.${k} must be > 0: ${v}`);
  }
  return {
    cluster: o.cluster,
    failover: { intervalMs: f.intervalMs, requestTimeoutMs: f.requestTimeoutMs },
  };
}

/** A result's series: `perSecond`, and `perInterval` when the run counted intervals. */
export function intervalResult<S>(
  parts: IntervalCounts[],
  perSecond: S,
): FailoverResult & { perSecond: S } {
  return parts.length ? { perSecond, perInterval: intervalSeries(parts) } : { perSecond };
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
