/**
 * The plan field `agents:` (issue 35): the step of each cell runs on several client hosts, each
 * a `kvlab agent` reached through a control Redis server, and is stored as one merged run.
 * `agents: { control: URL, count: N }` waits for any N registered agents; `agents: { control:
 * URL, names: [a, b, c] }` for those agents. Only `kind: latency-sweep` runs on agents.
 *
 * @module
 */

import type { PlanReader } from "./reader.ts";
import { parseServerUrl, type ServerTarget } from "../target.ts";

/** A plan's `agents:`. */
export interface PlanAgents {
  /** The control server (`redis://`, `rediss://`, with an ACL user). */
  control: ServerTarget;
  /** How many agents share each step. */
  count: number;
  /** The agents required by name, or null for any `count` registered ones. */
  names: string[] | null;
  /** Time from posting the items to the common start, ms. */
  leadMs: number;
  /**
   * Each server's `password_env:` by server name: the variable's NAME is posted to the agents,
   * which read it on their own hosts (never the password).
   */
  passwordEnvs: Record<string, string>;
}

/** The most agents one step may use. */
export const MAX_AGENTS = 64;

/**
 * Reads `agents:` (absent: undefined). Errors carry the plan's file:line.
 *
 * @param read The plan's reader.
 * @param kind The plan's kind.
 * @returns The agents, or undefined.
 *
 * @example
 * ```ts
 * import { parsePlan } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const text = (agents: string) =>
 *   "name: s\nkind: latency-sweep\nservers: [{name: a, url: 'redis://h:1'}]\n" +
 *   `sweep: {rates: [1000], step_s: 2}\nagents: ${agents}\n`;
 * const plan = parsePlan(text("{control: 'redis://c:6379', count: 3}"), "s.yaml");
 * assert.equal(plan.agents?.count, 3);
 * assert.deepEqual(parsePlan(text("{control: 'redis://c', names: [x, y]}"), "s.yaml").agents?.names,
 *   ["x", "y"]);
 * assert.throws(() => parsePlan(text("{control: 'redis://c', count: 0}"), "s.yaml"),
 *   /s\.yaml:5:\d+: agents\.count/);
 * assert.throws(() => parsePlan(text("{count: 2}"), "s.yaml"), /agents\.control/);
 * ```
 */
export function readAgents(read: PlanReader, kind: string): PlanAgents | undefined {
  if (read.value(["agents"]) === undefined) return undefined;
  if (kind !== "latency-sweep") read.fail(["agents"], "only for kind: latency-sweep");
  read.section(["agents"], ["control", "count", "names", "lead_ms"], "expected { control, count }");
  let control: ServerTarget;
  try {
    control = parseServerUrl(read.string(["agents", "control"]));
  } catch (e) {
    return read.fail(["agents", "control"], (e as Error).message, "");
  }
  if (control.socket !== undefined) {
    read.fail(["agents", "control"], "expected redis:// or rediss:// (agents are other hosts)", "");
  }
  let names: string[] | null = null;
  if (read.value(["agents", "names"]) !== undefined) {
    const list = read.list(["agents", "names"], "expected a list of agent names");
    names = list.map((_, i) => {
      const n = read.string(["agents", "names", i]);
      if (!/^[\w.-]{1,64}$/.test(n)) {
        read.fail(["agents", "names", i], "expected letters, digits, '.', '_' or '-'");
      }
      return n;
    });
    if (new Set(names).size !== names.length) read.fail(["agents", "names"], "duplicate name");
  }
  const count = read.integer(["agents", "count"], names?.length ?? undefined);
  if (count > MAX_AGENTS) read.fail(["agents", "count"], `at most ${MAX_AGENTS}`);
  if (names && count !== names.length) {
    read.fail(["agents", "count"], `expected ${names.length} (the names listed)`);
  }
  const leadMs = read.number(["agents", "lead_ms"], 3000, { max: 60_000, positive: true });
  const engine = read.value(["sweep", "engine"]) ?? "kvlab";
  if (engine !== "kvlab" && engine !== "memtier") {
    read.fail(["agents"], "agents run sweep engine kvlab or memtier");
  }
  // passwords never travel on the control stream: a server's password is `password_env:`, the
  // variable's name posted, read by each agent on its host
  const servers = read.value(["servers"]);
  const passwordEnvs: Record<string, string> = {};
  (Array.isArray(servers) ? servers : []).forEach((x, i) => {
    const o = x as Record<string, unknown> | null;
    if (typeof o?.url === "string" && /^[a-z]+:\/\/[^/@]*@/i.test(o.url)) {
      read.fail(
        ["servers", i, "url"],
        "with agents:, a URL without credentials (give password_env: NAME)",
        "",
      );
    }
    if (typeof o?.password_env === "string" && typeof o.name === "string") {
      passwordEnvs[o.name] = o.password_env;
    }
  });
  return { control, count, names, leadMs, passwordEnvs };
}
