/**
 * Study plans: the plan reader and its kinds (one module each in `kinds/`, the contract in
 * `kind.ts`), and {@link runPlan}, which runs any kind's cells interleaved and resumably.
 *
 * @module
 */

export * from "./plan.ts";
export * from "./kind.ts";
export * from "./cpus.ts";
export * from "./kinds/mod.ts";
export * from "./study.ts";
export * from "./start.ts";
export * from "./servers.ts";
export * from "./until.ts";
