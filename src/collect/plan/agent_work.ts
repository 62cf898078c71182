/**
 * What an agent may run (issue 35): a work item's plan data is checked by the plan parser itself
 * (the item is read as a one-server, one-rate `latency-sweep` plan, so every rule a plan file
 * obeys holds for it, with errors naming the item and field), then by the agent's own rules: an
 * engine this agent runs, no `tool:` (an agent runs its own programs, never a path the stream
 * names), no CPU pinning, no credentials.
 *
 * @module
 */

import type { FixedRateStep } from "../tools/tool.ts";
import { parsePlan } from "./plan.ts";
import { planCells } from "./plan.ts";
import { type LatencySweepPlan, sweepStep } from "./kinds/latency_sweep.ts";

/** The plan kinds an agent runs. */
export const AGENT_KINDS: readonly string[] = ["latency-sweep"];

/** A work item an agent does not run: the refusal it posts back. */
export class WorkRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WorkRefused";
  }
}

/** The plan data of a work item (see `../agent/protocol.ts`). */
export interface WorkPlanData {
  kind: string;
  server: { name: string; url: string; password_env?: string };
  sweep: Record<string, unknown>;
}

/**
 * Checks a work item's plan data as a plan, and returns the fixed-rate step it asks for.
 *
 * @param data The item's plan data.
 * @param o `engines`: the engines this agent runs (`kvlab`, `memtier`); `where`: the item, for
 * errors.
 * @returns The plan and its one step.
 * @throws {WorkRefused} For anything a plan may not say, or an agent does not run.
 *
 * @example
 * ```ts
 * import { checkWorkPlan } from "./agent_work.ts";
 * import assert from "node:assert/strict";
 * const data = { kind: "latency-sweep", server: { name: "a", url: "redis://10.0.0.1:6379" },
 *   sweep: { engine: "kvlab", clients: 6, rates: [3000], step_s: 2 } };
 * const { step } = checkWorkPlan(data, { engines: ["kvlab"], where: "item i1" });
 * assert.equal(step.requestedOpsPerSec, 3000);
 * assert.throws(() => checkWorkPlan({ ...data, kind: "redis-benchmark" }, { engines: ["kvlab"],
 *   where: "item i1" }), /kind "redis-benchmark": agents run only latency-sweep/);
 * assert.throws(() => checkWorkPlan({ ...data, sweep: { ...data.sweep, tool: "/bin/sh" } },
 *   { engines: ["kvlab", "memtier"], where: "item i1" }), /sweep\.tool: an agent runs its own/);
 * assert.throws(() => checkWorkPlan({ ...data, sweep: { ...data.sweep, keys: 1e12 } },
 *   { engines: ["kvlab"], where: "item i1" }), /item i1:\d+:\d+: sweep\.keys/);
 * // a password only from a variable this agent was given, read from its own environment
 * const pw = { ...data, server: { ...data.server, password_env: "HOME" } };
 * assert.throws(() => checkWorkPlan(pw, { engines: ["kvlab"], where: "item i1" }),
 *   /password_env HOME: not a variable this agent was given/);
 * assert.ok(checkWorkPlan(pw, { engines: ["kvlab"], where: "i", passwordEnvs: ["HOME"] })
 *   .step.target.password !== undefined);
 * ```
 */
export function checkWorkPlan(
  data: WorkPlanData,
  o: {
    engines: readonly string[];
    where: string;
    /**
     * The variables of this host's environment a server's password may be read from
     * (`kvlab agent --password-env NAME`). @default {none}
     */
    passwordEnvs?: readonly string[];
  },
): { plan: LatencySweepPlan; step: FixedRateStep } {
  const pwEnv = data.server.password_env;
  if (pwEnv !== undefined && !(o.passwordEnvs ?? []).includes(pwEnv)) {
    // (else anyone who may write to the stream could have any variable of this host sent
    // to a server of their choice)
    throw new WorkRefused(
      `server.password_env ${pwEnv}: not a variable this agent was given (--password-env)`,
    );
  }
  if (!AGENT_KINDS.includes(data.kind)) {
    throw new WorkRefused(
      `kind ${JSON.stringify(data.kind).slice(0, 60)}: agents run only ${AGENT_KINDS.join(", ")}`,
    );
  }
  if (Object.hasOwn(data.sweep, "tool")) {
    throw new WorkRefused("sweep.tool: an agent runs its own programs, not one the stream names");
  }
  const engine = data.sweep.engine ?? "kvlab";
  if (typeof engine !== "string" || !o.engines.includes(engine)) {
    throw new WorkRefused(
      `sweep.engine ${JSON.stringify(engine).slice(0, 60)}: this agent runs ${
        o.engines.join(", ")
      }`,
    );
  }
  const rates = data.sweep.rates;
  if (!Array.isArray(rates) || rates.length !== 1) {
    throw new WorkRefused("sweep.rates: expected one rate (the step's total)");
  }
  // read as a plan file would be: the same fields, limits and located errors
  const text = JSON.stringify(
    { name: "agent-item", kind: data.kind, servers: [data.server], sweep: data.sweep },
    null,
    1,
  );
  let plan;
  try {
    // (a `password_env` is read here, from this host's environment, as a plan file's is)
    plan = parsePlan(text, o.where);
  } catch (e) {
    throw new WorkRefused((e as Error).message);
  }
  if (plan.kind !== "latency-sweep") throw new WorkRefused(`kind ${plan.kind}`);
  const t = plan.servers[0].target;
  if ((t.password !== undefined && pwEnv === undefined) || t.user !== undefined) {
    throw new WorkRefused("server url: credentials never travel on the control stream");
  }
  return { plan, step: sweepStep(plan, planCells(plan)[0]) };
}
