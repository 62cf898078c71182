/**
 * What a topology kvlab starts is made of, and the command line of each of its server
 * processes. Pure: no process, clock or file here (`./start.ts` runs them).
 *
 * @module
 */

/** The servers kvlab starts from installed binaries. */
export type TopologyEngine = "redis" | "valkey";

/** A cluster: `shards` primaries, each with `replicas` replicas. */
export interface ClusterSpec {
  /** Primaries, the slots split evenly between them (at least 3: `--cluster create`'s least). */
  shards: number;
  /** Replicas per primary. */
  replicas: number;
}

/** The topology of one plan server. */
export interface TopologySpec {
  engine: TopologyEngine;
  /** The version the installed binary must have: `7`, `7.0`, `7.0.15` (a dotted prefix). */
  version?: string;
  /** Server settings, passed as `--name value` after kvlab's own (see {@link OWNED_SETTINGS}). */
  config?: Record<string, string>;
  /** TLS only (no plaintext port), with a throwaway CA, server and client certificates. */
  tls?: boolean;
  /** Replicas of a standalone primary. */
  replicas?: number;
  /** A Redis Cluster instead of a standalone primary. */
  cluster?: ClusterSpec;
}

/** Redis Cluster's least number of primaries for `redis-cli --cluster create`. */
export const MIN_CLUSTER_SHARDS = 3;

/** The most server processes one plan server may start. */
export const MAX_TOPOLOGY_NODES = 64;

/**
 * Settings kvlab sets itself on every process it starts (where it listens, its files, its
 * TLS, its cluster and replication wiring, its password): a plan's `config:` may not give them.
 */
export const OWNED_SETTINGS: readonly string[] = [
  "port",
  "bind",
  "unixsocket",
  "dir",
  "daemonize",
  "pidfile",
  "logfile",
  "include",
  "cluster-enabled",
  "cluster-config-file",
  "cluster-port",
  "replicaof",
  "slaveof",
  "requirepass",
  "masterauth",
  "masteruser",
  "aclfile",
  "user",
];

/** Whether `config:` may set a setting (see {@link OWNED_SETTINGS}; every `tls-*` is kvlab's). */
export function settingAllowed(name: string): boolean {
  return !OWNED_SETTINGS.includes(name) && !name.startsWith("tls-");
}

/** How many processes a topology starts. */
export function nodeCount(spec: Pick<TopologySpec, "replicas" | "cluster">): number {
  return spec.cluster
    ? spec.cluster.shards * (1 + spec.cluster.replicas)
    : 1 + (spec.replicas ?? 0);
}

/** Whether an installed version (`7.0.15`) is the one a plan asks for (`7`, `7.0`, `7.0.15`). */
export function versionMatches(installed: string, wanted: string): boolean {
  const a = installed.split("."), b = wanted.split(".");
  return b.length <= a.length && b.every((x, i) => x === a[i]);
}

/** The files of a TLS topology (a throwaway CA and certificates signed by it). */
export interface TlsPaths {
  caFile: string;
  /** The servers' certificate (for 127.0.0.1 and localhost) and key. */
  certFile: string;
  keyFile: string;
  /** The clients' certificate and key (servers ask for one: `tls-auth-clients yes`). */
  clientCertFile: string;
  clientKeyFile: string;
}

/** One server process of a topology. */
export interface NodeArgs {
  /** Its folder (cluster config, pid file). */
  dir: string;
  port: number;
  /** The cluster bus port, for a cluster node. */
  busPort?: number;
  /** The port of the primary it replicates (a standalone replica). */
  replicaOf?: number;
  tls?: TlsPaths;
  config?: Record<string, string>;
}

/**
 * The arguments of one server process: loopback only, no persistence, its pid file in its
 * folder, then TLS, cluster and replication wiring, then the plan's `config:` (which may
 * override the persistence defaults, not the wiring).
 *
 * @param a The node.
 * @returns The arguments after the program.
 *
 * @example
 * ```ts
 * import { nodeArgs } from "./spec.ts";
 * import assert from "node:assert/strict";
 * const args = nodeArgs({ dir: "/t/n1", port: 7001, busPort: 7002, config: { "io-threads": "2" } });
 * assert.deepEqual(args.slice(0, 4), ["--port", "7001", "--bind", "127.0.0.1"]);
 * assert.ok(args.join(" ").includes("--cluster-enabled yes --cluster-config-file nodes.conf --cluster-port 7002"));
 * assert.deepEqual(args.slice(-2), ["--io-threads", "2"]);
 * const tls = { caFile: "ca", certFile: "c", keyFile: "k", clientCertFile: "cc", clientKeyFile: "ck" };
 * const t = nodeArgs({ dir: "/t/n2", port: 7003, replicaOf: 7001, tls }).join(" ");
 * assert.ok(t.startsWith("--port 0 --tls-port 7003 --bind 127.0.0.1"));
 * assert.ok(t.includes("--tls-replication yes") && t.includes("--replicaof 127.0.0.1 7001"));
 * ```
 */
export function nodeArgs(a: NodeArgs): string[] {
  const listen = a.tls ? ["--port", "0", "--tls-port", String(a.port)] : ["--port", String(a.port)];
  const tls = a.tls
    ? [
      ["--tls-cert-file", a.tls.certFile],
      ["--tls-key-file", a.tls.keyFile],
      ["--tls-ca-cert-file", a.tls.caFile],
      // a replica and a cluster bus connect as clients: the same certificate serves
      ["--tls-client-cert-file", a.tls.clientCertFile],
      ["--tls-client-key-file", a.tls.clientKeyFile],
      ["--tls-auth-clients", "yes"],
      ["--tls-replication", "yes"],
      ...(a.busPort === undefined ? [] : [["--tls-cluster", "yes"]]),
    ].flat()
    : [];
  const cluster = a.busPort === undefined ? [] : [
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    // (not port + 10000: that may be past 65535 for an ephemeral port)
    "--cluster-port",
    String(a.busPort),
  ];
  return [
    ...listen,
    "--bind",
    "127.0.0.1",
    "--dir",
    a.dir,
    "--pidfile",
    `${a.dir}/server.pid`,
    "--daemonize",
    "no",
    "--logfile",
    "",
    "--save",
    "",
    "--appendonly",
    "no",
    // a replica's first sync at once (the default waits 5 s for more replicas to share it)
    "--repl-diskless-sync-delay",
    "0",
    ...tls,
    ...cluster,
    ...(a.replicaOf === undefined ? [] : ["--replicaof", "127.0.0.1", String(a.replicaOf)]),
    ...Object.entries(a.config ?? {}).flatMap(([k, v]) => [`--${k}`, v]),
  ];
}

/**
 * The topology in words, for the start line and `--dry-run`.
 *
 * @example
 * ```ts
 * import { describeTopology } from "./spec.ts";
 * import assert from "node:assert/strict";
 * assert.equal(describeTopology({ engine: "valkey", tls: true, cluster: { shards: 3, replicas: 1 } }),
 *   "a cluster of 3 shards (1 primary + 1 replica each, 6 processes), TLS");
 * assert.equal(describeTopology({ engine: "redis", replicas: 2 }), "a primary with 2 replicas");
 * assert.equal(describeTopology({ engine: "redis" }), "a standalone server");
 * assert.equal(describeTopology({ engine: "redis", cluster: { shards: 4, replicas: 0 } }),
 *   "a cluster of 4 shards (4 processes)");
 * ```
 */
export function describeTopology(spec: TopologySpec): string {
  const c = spec.cluster;
  const shape = c
    ? `a cluster of ${c.shards} shards (${
      c.replicas ? `1 primary + ${c.replicas} replica${c.replicas === 1 ? "" : "s"} each, ` : ""
    }${nodeCount(spec)} processes)`
    : spec.replicas
    ? `a primary with ${spec.replicas} replica${spec.replicas === 1 ? "" : "s"}`
    : "a standalone server";
  return shape + (spec.tls ? ", TLS" : "");
}
