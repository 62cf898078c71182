/**
 * Redis Cluster: its key space (CRC16, hash slots, slot maps) and its nodes (cluster mode from
 * INFO, per-node command counts, the cross-check of a tool's total).
 *
 * @module
 */

export * from "./slots.ts";
export * from "./nodes.ts";
