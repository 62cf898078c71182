/**
 * Failover studies (issue 33): under a fixed-rate load from kvlab's open-loop generator, one
 * action on a topology kvlab started (kill -9, SIGSTOP, `CLUSTER FAILOVER`), recorded per 100 ms
 * (`failover_intervals`) with what kvlab did and which node took over (`failover_events`).
 *
 * @module
 */

export * from "./spec.ts";
export * from "./run.ts";
