/**
 * Topologies kvlab starts from installed server binaries on loopback ports: a standalone
 * primary with replicas or a Redis Cluster, plaintext or TLS with a throwaway CA; each process
 * stopped by its PID and every file removed when the plan ends.
 *
 * @module
 */

export * from "./spec.ts";
export * from "./certs.ts";
export * from "./node.ts";
export * from "./local.ts";
export * from "./replication.ts";
