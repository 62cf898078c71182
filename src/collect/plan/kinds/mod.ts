/**
 * Plan kinds: one module per `kind:` of a study plan, each reading its section, expanding its
 * cells and running a cell (`kind.ts` is the contract they share). The registry is `PLAN_KINDS`
 * in `../plan.ts`.
 *
 * @module
 */

export * from "./latency_sweep.ts";
export * from "./memory.ts";
export * from "./memtier.ts";
export * from "./redis_benchmark.ts";
export * from "./pubsub.ts";
export * from "./failover.ts";
