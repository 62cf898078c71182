/**
 * Topologies measured per node (issue 33): the balance across a cluster's shards from the
 * `node_stats` table, each run's shape (shards, replicas), the cost of replicas on a primary's
 * throughput, and throughput against shard count beside one io-threads server.
 *
 * @module
 */

export * from "./topology.ts";
