/**
 * kvlab's open-loop generator against a Redis Cluster and over TLS: the engine a step runs, and
 * what a step learns of its server's topology.
 *
 * @module
 */

export * from "./engine.ts";
export * from "./topology.ts";
