/**
 * The control protocol between `kvlab run` (the coordinator) and `kvlab agent` (one per client
 * host), as pure, checked messages: an agent's registration (host facts, CPUs, tool versions,
 * clock offset against the control server), a work item (plan data only: a latency-sweep
 * section, one server URL without credentials, the agent's share and a start time: never shell
 * text), and what an agent posts back (a result, an error or a refusal). Each message is one JSON
 * text in the field `msg` of a Redis stream entry; {@link parseAgentMessage} checks every field
 * and throws {@link AgentProtocolError} naming the entry and the field.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";

/** The protocol version every message carries (`v`). */
export const AGENT_PROTOCOL_VERSION = 1;

/** The stream agents register on (and repeat their registration every few seconds). */
export const REGISTRY_STREAM = "kvlab:agents";
/** The stream of an agent's work items (a consumer group `kvlab` reads it). */
export const workStream = (agent: string): string => `kvlab:work:${agent}`;
/** The stream an agent posts its results, errors and refusals on. */
export const RESULT_STREAM = "kvlab:results";
/** The consumer group of every work stream. */
export const WORK_GROUP = "kvlab";

/** An agent's clock against the control server's `TIME`. */
export interface ClockOffset {
  /** Control clock − this host's clock, ms (add it to a local time to get a control time). */
  offsetMs: number;
  /** Half the round trip of the best sample, ms: the offset is within ± this. */
  uncertaintyMs: number;
  /** Round trips measured. */
  roundTrips: number;
}

/** What an agent says about itself. */
export interface Registration {
  type: "register";
  v: 1;
  agent: string;
  host: string;
  cpuModel: string | null;
  cpuCount: number;
  memoryBytes: number | null;
  kernel: string;
  /** Tools the agent can run and their versions (`kvlab-loadgen`, `memtier_benchmark`). */
  tools: Record<string, string | null>;
  clock: ClockOffset;
  /** When it registered, control clock, epoch ms. */
  atMs: number;
}

/** The plan data of a work item: one server and a latency-sweep section, as a plan file has it. */
export interface WorkPlan {
  kind: string;
  /**
   * The server: its URL never with credentials; for one with a password, the NAME of the
   * environment variable holding it on each agent's host (`kvlab agent --password-env NAME`).
   */
  server: { name: string; url: string; password_env?: string };
  /** The `sweep:` section, with `rates: [total rate]`. */
  sweep: Record<string, unknown>;
}

/** One agent's share of a step. */
export interface WorkItem {
  type: "work";
  v: 1;
  /** Unique id of this item (the coordinator's), echoed in the result. */
  item: string;
  /** The plan cell the step belongs to. */
  cell: string;
  agent: string;
  plan: WorkPlan;
  /** Connections `i` with `i % of === index` of the step's. */
  share: { index: number; of: number };
  /** When the step's schedule starts, control clock, epoch ms. */
  startAtMs: number;
  /** The cell's limit, seconds. */
  timeoutS: number;
}

/** What an agent posts back for a work item. */
export interface AgentResult {
  type: "result";
  v: 1;
  item: string;
  agent: string;
  host: string;
  /** ok (measured), error (it ran and failed), refused (not run: the item was not allowed). */
  status: "ok" | "error" | "refused";
  /** Why, for error and refused (never a password). */
  error: string | null;
  clock: ClockOffset;
  /** When its schedule started, control clock, epoch ms (null when it did not). */
  startedAtMs: number | null;
  /** The measured step (`./merge.ts`'s encoded form), or null. */
  step: Record<string, unknown> | null;
  /** The noise columns of the agent's host over its step (schema 1.4 names), or null. */
  noise: Record<string, string | number | boolean | null> | null;
}

/**
 * An agent's sign of life while it holds an item (about once a second, on the result stream):
 * a coordinator that hears none for {@link HEARTBEAT_LOST_MS} counts the agent lost mid-step.
 */
export interface Heartbeat {
  type: "heartbeat";
  v: 1;
  item: string;
  agent: string;
  /** Control clock, epoch ms. */
  atMs: number;
}

/** The coordinator withdraws an item (Ctrl-C): posted on the agent's work stream. */
export interface Cancel {
  type: "cancel";
  v: 1;
  item: string;
  agent: string;
}

/** Without a heartbeat this long, an agent holding an item is counted lost, ms. */
export const HEARTBEAT_LOST_MS = 10_000;

/** Any message of the protocol. */
export type AgentMessage = Registration | WorkItem | AgentResult | Heartbeat | Cancel;

/** A message that is not one of the protocol's: names the stream entry and the field. */
export class AgentProtocolError extends ParseError {
  /**
   * @param expected What the field should be.
   * @param where The entry (`kvlab:work:a#1700000000000-0`) and the field.
   */
  constructor(expected: string, where: { entry: string; field: string; text?: string }) {
    super(`${where.field}: ${expected}`, {
      file: where.entry,
      line: 1,
      column: 1,
      text: where.text ?? "",
    });
    this.name = "AgentProtocolError";
  }
}

/** Reads the fields of one message, each check naming its field. */
class Fields {
  constructor(readonly o: Record<string, unknown>, readonly entry: string, readonly at = "") {}
  fail(field: string, expected: string): never {
    throw new AgentProtocolError(expected, { entry: this.entry, field: this.at + field });
  }
  string(k: string, max = 200): string {
    const v = this.o[k];
    if (typeof v !== "string" || v.length === 0 || v.length > max) {
      this.fail(k, `expected a string of 1–${max} characters`);
    }
    return v;
  }
  name(k: string): string {
    const v = this.string(k, 64);
    if (!/^[\w.-]+$/.test(v)) this.fail(k, "expected letters, digits, '.', '_' or '-'");
    return v;
  }
  number(k: string, o: { min?: number; integer?: boolean } = {}): number {
    const v = this.o[k];
    if (typeof v !== "number" || !Number.isFinite(v) || v < (o.min ?? -Infinity)) {
      this.fail(k, `expected a number${o.min !== undefined ? ` ≥ ${o.min}` : ""}`);
    }
    if (o.integer && !Number.isInteger(v)) this.fail(k, "expected an integer");
    return v;
  }
  nullable<T>(k: string, read: (k: string) => T): T | null {
    return this.o[k] === null || this.o[k] === undefined ? null : read(k);
  }
  object(k: string): Fields {
    const v = this.o[k];
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail(k, "expected an object");
    return new Fields(v as Record<string, unknown>, this.entry, `${this.at}${k}.`);
  }
  only(keys: readonly string[]): void {
    for (const k of Object.keys(this.o)) {
      if (!keys.includes(k)) this.fail(k, `unknown field (known: ${keys.join(", ")})`);
    }
  }
}

const CLOCK_FIELDS = ["offsetMs", "uncertaintyMs", "roundTrips"];

function clockOf(f: Fields): ClockOffset {
  const c = f.object("clock");
  c.only(CLOCK_FIELDS);
  return {
    offsetMs: c.number("offsetMs"),
    uncertaintyMs: c.number("uncertaintyMs", { min: 0 }),
    roundTrips: c.number("roundTrips", { min: 1, integer: true }),
  };
}

/** The name of an environment variable a work item may name (`password_env`). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Whether a URL carries credentials (`user:password@`, or a password alone). */
function hasCredentials(url: string): boolean {
  return /^[a-z]+:\/\/[^/@]*@/i.test(url);
}

/**
 * Reads one message of the protocol (the `msg` field of a stream entry) and checks it: its
 * type, version and every field; unknown fields are refused, and so is a server URL with
 * credentials (passwords never travel on the control stream).
 *
 * @param text The JSON text.
 * @param entry The stream entry it came from, for errors (`kvlab:results#1-0`).
 * @returns The message.
 * @throws {AgentProtocolError} For anything else, naming the entry and the field.
 *
 * @example
 * ```ts
 * import { parseAgentMessage } from "./protocol.ts";
 * import assert from "node:assert/strict";
 * const work = {
 *   type: "work", v: 1, item: "i1", cell: "p/a/r100/rep1", agent: "a1",
 *   plan: { kind: "latency-sweep", server: { name: "a", url: "redis://10.0.0.1:6379" },
 *     sweep: { rates: [100] } },
 *   share: { index: 0, of: 2 }, startAtMs: 1e12, timeoutS: 60,
 * };
 * assert.equal(parseAgentMessage(JSON.stringify(work), "w#1-0").type, "work");
 * const secret = { ...work, plan: { ...work.plan, server: { name: "a", url: "redis://:pw@h:1" } } };
 * assert.throws(() => parseAgentMessage(JSON.stringify(secret), "w#1-0"),
 *   /w#1-0:1:1: plan\.server\.url: expected a URL without credentials/);
 * assert.throws(() => parseAgentMessage(JSON.stringify({ ...work, shell: "rm -rf /" }), "w#2-0"),
 *   /shell: unknown field/);
 * // a password only as the name of a variable on the agent's host
 * const named = (password_env: string) =>
 *   JSON.stringify({ ...work, plan: { ...work.plan, server: { ...work.plan.server, password_env } } });
 * const item = parseAgentMessage(named("BENCH_PW"), "w#3-0");
 * assert.ok(item.type === "work" && item.plan.server.password_env === "BENCH_PW");
 * assert.throws(() => parseAgentMessage(named("$(id)"), "w#4-0"), /password_env: expected/);
 * // heartbeats and cancels
 * const cancel = { type: "cancel", v: 1, item: "i1", agent: "a1" };
 * assert.deepEqual(parseAgentMessage(JSON.stringify(cancel), "w#5-0"), cancel);
 * assert.throws(() => parseAgentMessage(JSON.stringify({ ...cancel, type: "heartbeat" }), "r#1-0"),
 *   /atMs: expected a number/);
 * ```
 */
export function parseAgentMessage(text: string, entry: string): AgentMessage {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw new AgentProtocolError("expected a JSON object", { entry, field: "msg" });
  }
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    throw new AgentProtocolError("expected a JSON object", { entry, field: "msg" });
  }
  const f = new Fields(o as Record<string, unknown>, entry);
  if (f.o.v !== AGENT_PROTOCOL_VERSION) f.fail("v", `expected ${AGENT_PROTOCOL_VERSION}`);
  switch (f.o.type) {
    case "register":
      return registrationOf(f);
    case "work":
      return workOf(f);
    case "result":
      return resultOf(f);
    case "heartbeat":
      f.only(["type", "v", "item", "agent", "atMs"]);
      return {
        type: "heartbeat",
        v: 1,
        item: f.string("item", 100),
        agent: f.name("agent"),
        atMs: f.number("atMs", { min: 0 }),
      };
    case "cancel":
      f.only(["type", "v", "item", "agent"]);
      return { type: "cancel", v: 1, item: f.string("item", 100), agent: f.name("agent") };
    default:
      return f.fail("type", "expected register, work, result, heartbeat or cancel");
  }
}

function registrationOf(f: Fields): Registration {
  f.only([
    "type",
    "v",
    "agent",
    "host",
    "cpuModel",
    "cpuCount",
    "memoryBytes",
    "kernel",
    "tools",
    "clock",
    "atMs",
  ]);
  const tools = f.object("tools");
  const versions: Record<string, string | null> = {};
  for (const k of Object.keys(tools.o)) versions[k] = tools.nullable(k, (x) => tools.string(x));
  return {
    type: "register",
    v: 1,
    agent: f.name("agent"),
    host: f.string("host"),
    cpuModel: f.nullable("cpuModel", (k) => f.string(k)),
    cpuCount: f.number("cpuCount", { min: 1, integer: true }),
    memoryBytes: f.nullable("memoryBytes", (k) => f.number(k, { min: 0 })),
    kernel: f.string("kernel"),
    tools: versions,
    clock: clockOf(f),
    atMs: f.number("atMs", { min: 0 }),
  };
}

function workOf(f: Fields): WorkItem {
  f.only(["type", "v", "item", "cell", "agent", "plan", "share", "startAtMs", "timeoutS"]);
  const plan = f.object("plan");
  plan.only(["kind", "server", "sweep"]);
  const server = plan.object("server");
  server.only(["name", "url", "password_env"]);
  const url = server.string("url", 500);
  if (hasCredentials(url)) {
    server.fail("url", "expected a URL without credentials (no password on the control stream)");
  }
  const passwordEnv = server.nullable("password_env", (k) => server.string(k, 64));
  if (passwordEnv !== null && !ENV_NAME.test(passwordEnv)) {
    server.fail("password_env", "expected an environment variable's name (A-Z, 0-9, _)");
  }
  const share = f.object("share");
  share.only(["index", "of"]);
  const of = share.number("of", { min: 1, integer: true });
  const index = share.number("index", { min: 0, integer: true });
  if (index >= of) share.fail("index", `expected 0 ≤ index < ${of}`);
  plan.object("sweep");
  return {
    type: "work",
    v: 1,
    item: f.string("item", 100),
    cell: f.string("cell", 500),
    agent: f.name("agent"),
    plan: {
      kind: plan.string("kind", 40),
      server: {
        name: server.name("name"),
        url,
        ...(passwordEnv !== null ? { password_env: passwordEnv } : {}),
      },
      sweep: plan.o.sweep as Record<string, unknown>,
    },
    share: { index, of },
    startAtMs: f.number("startAtMs", { min: 0 }),
    timeoutS: f.number("timeoutS", { min: 0 }),
  };
}

function resultOf(f: Fields): AgentResult {
  f.only([
    "type",
    "v",
    "item",
    "agent",
    "host",
    "status",
    "error",
    "clock",
    "startedAtMs",
    "step",
    "noise",
  ]);
  const status = f.o.status;
  if (status !== "ok" && status !== "error" && status !== "refused") {
    f.fail("status", "expected ok, error or refused");
  }
  const error = f.nullable("error", (k) => f.string(k, 4000));
  if (status !== "ok" && error === null) f.fail("error", `expected the reason of a ${status} item`);
  const step = f.nullable("step", (k) => f.object(k).o);
  if (status === "ok" && step === null) f.fail("step", "expected the measured step");
  const noise = f.nullable("noise", (k) => f.object(k).o) as AgentResult["noise"];
  return {
    type: "result",
    v: 1,
    item: f.string("item", 100),
    agent: f.name("agent"),
    host: f.string("host"),
    status,
    error,
    clock: clockOf(f),
    startedAtMs: f.nullable("startedAtMs", (k) => f.number(k, { min: 0 })),
    step,
    noise,
  };
}

/**
 * The text of a message, as it goes on a stream: refused when it carries a server URL with
 * credentials or a field named `password` anywhere.
 *
 * @param m The message.
 * @returns JSON.
 * @throws {TypeError} When the message would carry a secret.
 *
 * @example
 * ```ts
 * import { encodeAgentMessage, parseAgentMessage } from "./protocol.ts";
 * import assert from "node:assert/strict";
 * const clock = { offsetMs: 0.2, uncertaintyMs: 0.05, roundTrips: 8 };
 * const r = { type: "result" as const, v: 1 as const, item: "i", agent: "a", host: "h",
 *   status: "refused" as const, error: "engine: expected kvlab", clock, startedAtMs: null,
 *   step: null, noise: null };
 * assert.deepEqual(parseAgentMessage(encodeAgentMessage(r), "x"), r);
 * assert.throws(() => encodeAgentMessage({ ...r, noise: { password: "x" } }), TypeError);
 * ```
 */
export function encodeAgentMessage(m: AgentMessage): string {
  const text = JSON.stringify(m, (k, v) => {
    if (k.toLowerCase() === "password") throw new TypeError("a message may not carry a password");
    if (k === "url" && typeof v === "string" && hasCredentials(v)) {
      throw new TypeError("a message may not carry a URL with credentials");
    }
    return v;
  });
  return text;
}
