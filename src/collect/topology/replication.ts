/**
 * The watch of a primary's replicas over a run (a {@link RunWatch}): once a second (and as the
 * run starts and ends) the primary's `master_repl_offset`, then each replica's
 * `slave_repl_offset`, then the primary's again, each from INFO replication on a connection
 * kept open for the run. A replica's lag in bytes lies between the primary's first offset minus
 * its own (at least 0: the lower bound, which the summary's mean, largest and last take) and the
 * primary's second offset minus its own (the upper bound: the largest is kept too). The run's
 * manifest gets `replication` (per replica: those, and the largest `lag` the primary reports,
 * seconds since the replica's last ack; and the samples themselves), and its raw output every
 * INFO reply read (`replication-info.jsonl`).
 *
 * @module
 */

import type { RunWatch, RunWatching, Watched } from "../watch.ts";
import { connect } from "../server.ts";
import type { ServerTarget } from "../target.ts";

/** The raw file of a watched run: one JSON line per INFO reply read. */
export const REPLICATION_RAW = "replication-info.jsonl";

/** What INFO replication says, as the watch reads it. */
export interface ReplicationInfo {
  role: "master" | "slave" | null;
  /** `master_repl_offset` (a primary's; a replica has one too). */
  masterReplOffset: number | null;
  /** `slave_repl_offset` of a replica. */
  slaveReplOffset: number | null;
  /** A primary's replicas: `slaveN:ip=…,port=…,state=…,offset=…,lag=…`. */
  replicas: { port: number; state: string; offset: number; lagS: number }[];
}

/**
 * Reads an INFO replication reply.
 *
 * @param text The reply.
 * @returns Its fields (null where absent).
 *
 * @example
 * ```ts
 * import { parseReplicationInfo } from "./replication.ts";
 * import assert from "node:assert/strict";
 * const p = parseReplicationInfo("# Replication\r\nrole:master\r\nconnected_slaves:1\r\n" +
 *   "slave0:ip=127.0.0.1,port=7001,state=online,offset=4242,lag=0\r\nmaster_repl_offset:4300\r\n");
 * assert.deepEqual(p, { role: "master", masterReplOffset: 4300, slaveReplOffset: null,
 *   replicas: [{ port: 7001, state: "online", offset: 4242, lagS: 0 }] });
 * assert.equal(parseReplicationInfo("role:slave\r\nslave_repl_offset:99\r\n").slaveReplOffset, 99);
 * ```
 */
export function parseReplicationInfo(text: string): ReplicationInfo {
  const f = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(":");
    if (at > 0) f.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  const num = (k: string) => {
    const v = Number(f.get(k) ?? NaN);
    return Number.isFinite(v) ? v : null;
  };
  const role = f.get("role");
  const replicas: ReplicationInfo["replicas"] = [];
  for (const [k, v] of f) {
    if (!/^slave\d+$/.test(k)) continue;
    const kv = new Map(v.split(",").map((p) => p.split("=") as [string, string]));
    replicas.push({
      port: Number(kv.get("port")),
      state: kv.get("state") ?? "",
      offset: Number(kv.get("offset")),
      lagS: Number(kv.get("lag")),
    });
  }
  return {
    role: role === "master" || role === "slave" ? role : null,
    masterReplOffset: num("master_repl_offset"),
    slaveReplOffset: num("slave_repl_offset"),
    replicas,
  };
}

/** One sample: the primary's offset, each replica's, in the order of the watch's replicas. */
export interface ReplicationSample {
  /** Since the watch started. */
  elapsed_s: number;
  primary_offset: number | null;
  /** The primary's offset again, after the replicas were read. */
  primary_offset_after: number | null;
  replica_offsets: (number | null)[];
  /** The primary's `lag` of each replica (seconds since its last ack), null when not listed. */
  lag_s: (number | null)[];
}

/** Per replica, over a run. */
export interface ReplicaLag {
  /** `127.0.0.1:<port>`. */
  replica: string;
  samples: number;
  mean_lag_bytes: number | null;
  max_lag_bytes: number | null;
  last_lag_bytes: number | null;
  /** The largest upper bound (the primary's second offset minus the replica's). */
  max_lag_bytes_upper: number | null;
  max_lag_s: number | null;
}

/**
 * The lag of each replica over the samples (bytes: primary offset − replica offset, at least 0).
 *
 * @param replicas `127.0.0.1:<port>` of each, in the samples' order.
 * @param samples The samples.
 * @returns One summary per replica.
 *
 * @example
 * ```ts
 * import { replicaLags } from "./replication.ts";
 * import assert from "node:assert/strict";
 * const s = (t: number, p: number, r: number, lag: number) =>
 *   ({ elapsed_s: t, primary_offset: p, primary_offset_after: p + 50, replica_offsets: [r], lag_s: [lag] });
 * assert.deepEqual(replicaLags(["127.0.0.1:7001"], [s(0, 100, 100, 0), s(1, 900, 500, 1), s(2, 1000, 1010, 0)]), [
 *   { replica: "127.0.0.1:7001", samples: 3, mean_lag_bytes: 400 / 3, max_lag_bytes: 400,
 *     last_lag_bytes: 0, max_lag_bytes_upper: 450, max_lag_s: 1 },
 * ]);
 * ```
 */
export function replicaLags(
  replicas: readonly string[],
  samples: readonly ReplicationSample[],
): ReplicaLag[] {
  return replicas.map((replica, i) => {
    const lags = samples.flatMap((s) => {
      const r = s.replica_offsets[i];
      return s.primary_offset === null || r === null ? [] : [Math.max(0, s.primary_offset - r)];
    });
    const uppers = samples.flatMap((s) => {
      const r = s.replica_offsets[i];
      return s.primary_offset_after === null || r === null ? [] : [s.primary_offset_after - r];
    });
    const secs = samples.flatMap((s) => (s.lag_s[i] === null ? [] : [s.lag_s[i]!]));
    return {
      replica,
      samples: lags.length,
      mean_lag_bytes: lags.length ? lags.reduce((a, b) => a + b, 0) / lags.length : null,
      max_lag_bytes: lags.length ? Math.max(...lags) : null,
      last_lag_bytes: lags.at(-1) ?? null,
      max_lag_bytes_upper: uppers.length ? Math.max(...uppers) : null,
      max_lag_s: secs.length ? Math.max(...secs) : null,
    };
  });
}

/** Options of {@link replicationWatch}. */
export interface ReplicationWatchOptions {
  primary: ServerTarget;
  replicas: ServerTarget[];
  /** @default {1000} */
  intervalMs?: number;
  /** Samples kept in the manifest (the summary covers them all). @default {3600} */
  maxKeptSamples?: number;
  /** The longest run watched. @default {604800000} (a week) */
  maxMs?: number;
}

/**
 * The watch of a primary's replicas over each run (see the module's doc). What cannot be read
 * is a warning of the run, never its failure.
 *
 * @param o The primary, its replicas, the interval.
 * @returns The watch.
 */
export function replicationWatch(o: ReplicationWatchOptions): RunWatch {
  return { start: () => Promise.resolve(watching(o)) };
}

function watching(o: ReplicationWatchOptions): RunWatching {
  const t0 = performance.now();
  const samples: ReplicationSample[] = [];
  const raw: string[] = [];
  let warning: string | null = null;
  let stopped = false;
  let wake = () => {};
  // one connection per server for the run (opened again after a failure)
  const clients = new Map<ServerTarget, Awaited<ReturnType<typeof connect>>>();
  const info = async (t: ServerTarget, elapsed: number) => {
    let client = clients.get(t);
    if (!client) clients.set(t, client = await connect(t, 2000));
    try {
      const text = await client.info("replication");
      raw.push(JSON.stringify({ elapsed_s: elapsed, server: t.display, info: text }));
      return parseReplicationInfo(text);
    } catch (e) {
      client.disconnect();
      clients.delete(t);
      throw e;
    }
  };
  const sample = async () => {
    const elapsed = Math.round(performance.now() - t0) / 1000;
    try {
      const p = await info(o.primary, elapsed);
      const rs = [];
      for (const r of o.replicas) rs.push(await info(r, elapsed));
      const after = await info(o.primary, elapsed);
      samples.push({
        elapsed_s: elapsed,
        primary_offset: p.masterReplOffset,
        primary_offset_after: after.masterReplOffset,
        replica_offsets: rs.map((r) => r.slaveReplOffset),
        lag_s: o.replicas.map((r) => p.replicas.find((x) => x.port === r.port)?.lagS ?? null),
      });
    } catch (e) {
      warning ??= `replication not sampled at ${elapsed.toFixed(1)} s: ${(e as Error).message}`;
    }
  };
  const loop = (async () => {
    const maxMs = o.maxMs ?? 604_800_000;
    while (!stopped && performance.now() - t0 < maxMs) {
      await sample();
      await new Promise<void>((r) => {
        if (stopped) return r();
        const t = setTimeout(r, o.intervalMs ?? 1000);
        wake = () => {
          clearTimeout(t);
          r();
        };
      });
    }
  })();
  return {
    async stop(): Promise<Watched> {
      stopped = true;
      wake();
      await loop;
      await sample(); // as the run ends
      for (const c of clients.values()) c.disconnect();
      const names = o.replicas.map((r) => `${r.host}:${r.port}`);
      const kept = o.maxKeptSamples ?? 3600;
      return {
        tables: {},
        raw: [{ name: REPLICATION_RAW, bytes: new TextEncoder().encode(raw.join("\n") + "\n") }],
        columns: {},
        failure: null,
        warning,
        manifest: {
          replication: {
            primary: `${o.primary.host}:${o.primary.port}`,
            interval_s: (o.intervalMs ?? 1000) / 1000,
            replicas: replicaLags(names, samples),
            samples: samples.slice(0, kept),
            ...(samples.length > kept ? { samples_not_kept: samples.length - kept } : {}),
          },
        },
      };
    },
  };
}
