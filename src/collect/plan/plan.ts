/**
 * Study plans (YAML or JSON): a name, a kind, servers, repetitions, pauses and tags, then the
 * kind's own fields; expanded into cells run interleaved across servers (A B A B …) so drift
 * does not favour one side. Each kind is one module in `kinds/`, found through
 * {@link PLAN_KINDS}. Parsing and expansion are pure; `examples/plan.yaml` documents every field.
 *
 * @module
 */

import { LineCounter, parseDocument } from "yaml";
import { parseServerUrl, type ServerTarget } from "../target.ts";
import { readTargetOptions, TARGET_OPTION_FIELDS } from "./target_options.ts";
import {
  MAX_PLAN_CELLS,
  type PlanCommon,
  PlanError,
  type PlanKind,
  PlanReader,
  type PlanServer,
} from "./kind.ts";
import { parseCpuList } from "./cpus.ts";
import { readAgents } from "./agents.ts";
import { readServerStart } from "./start.ts";
import { readUntilDecided } from "./until.ts";
import { memoryKind } from "./kinds/memory.ts";
import { memtierKind } from "./kinds/memtier.ts";
import { pubSubKind } from "./kinds/pubsub.ts";
import { latencySweepKind } from "./kinds/latency_sweep.ts";
import { redisBenchmarkKind } from "./kinds/redis_benchmark.ts";
import { failoverKind } from "./kinds/failover.ts";

export { MAX_PLAN_CELLS, PlanError, type PlanServer } from "./kind.ts";
export type { MemoryPlan } from "./kinds/memory.ts";
export type { PlanMatrix } from "./kinds/redis_benchmark.ts";

/**
 * The plan kinds: a plan's `kind:` → the module that reads, expands and runs it. Adding a kind
 * is a module in `src/collect/plan/kinds/` and one line here.
 */
export const PLAN_KINDS = {
  "redis-benchmark": redisBenchmarkKind,
  memory: memoryKind,
  memtier: memtierKind,
  pubsub: pubSubKind,
  "latency-sweep": latencySweepKind,
  failover: failoverKind,
} as const;

type Kinds = typeof PLAN_KINDS;
type KindName = keyof Kinds;
type PlanOfKind<K> = K extends PlanKind<infer P, infer _C> ? P : never;
type CellOfKind<K> = K extends PlanKind<infer _P, infer C> ? C : never;

/** A checked study plan: one of the kinds in {@link PLAN_KINDS}, told apart by `kind`. */
export type StudyPlan = { [K in KindName]: PlanOfKind<Kinds[K]> }[KindName];

/** One run to make, of any kind: an id, a server, a label, a repetition and the kind's parameters. */
export type PlanCell = { [K in KindName]: CellOfKind<Kinds[K]> }[KindName];

/** The cell type of a plan type. */
export type CellOf<P extends StudyPlan> = CellOfKind<Kinds[P["kind"]]>;

const COMMON_FIELDS = [
  "name",
  "kind",
  "servers",
  "repetitions",
  "pause_s",
  "timeout_s",
  "tags",
  "cpus",
  "until_decided",
];
const SERVER_FIELDS = ["name", "url", "container", "start", "params", ...TARGET_OPTION_FIELDS];
/** Tags every run of a plan sets itself: a plan's `tags:` may not use them. */
const RUN_TAGS = ["plan", "server_name", "client_cpus", "server_cpus"];
/** Where a plan pins its servers: one list for all, in the plan's `cpus:`. */
const SERVER_NOT_PINNED = "a plan pins its servers with the plan's cpus: { server: LIST } " +
  "(local servers only), or pin the server where it is started (`taskset -c 1 redis-server …`)";
/** The longest pause between cells, seconds (one day). */
export const MAX_PAUSE_S = 86_400;
/** The longest time limit of one run, seconds (one week). */
export const MAX_TIMEOUT_S = 604_800;

/**
 * The module of a plan's kind.
 *
 * @param plan A checked plan.
 * @returns Its kind's parser, cell expansion and cell runner.
 *
 * @example
 * ```ts
 * import { parsePlan, planKind } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan("name: p\nservers: [{name: a, url: 'redis://h'}]\ntests: [set]\n", "p.yaml");
 * assert.deepEqual(planKind(plan).fields, [
 *   "tool",
 *   "tests",
 *   "requests",
 *   "matrix",
 *   "warmup_requests",
 *   "keep_alive",
 * ]);
 * ```
 */
export function planKind<P extends StudyPlan>(plan: P): PlanKind<P, CellOf<P>> {
  // TypeScript cannot tie PLAN_KINDS[plan.kind] to P: the registry is typed by construction.
  return PLAN_KINDS[plan.kind as KindName] as unknown as PlanKind<P, CellOf<P>>;
}

/**
 * Parses and checks a plan.
 *
 * @param text YAML or JSON.
 * @param file Its name, for errors.
 * @returns The plan, of the kind its `kind:` names (default `redis-benchmark`).
 * @throws {PlanError} For any missing or bad field, with its line; for YAML that does not
 * parse, at the line and column of the error; for a plan of more than {@link MAX_PLAN_CELLS}
 * cells (counted before any is built). Messages never show a password of a server URL.
 *
 * @example
 * ```ts
 * import { parsePlan } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan(`
 * name: demo
 * servers:
 *   - { name: redis, url: "redis://127.0.0.1:6379" }
 * tests: [set, get]
 * matrix: { clients: [1, 50] }
 * repetitions: 2
 * `, "plan.yaml");
 * assert.ok(plan.kind === "redis-benchmark");
 * assert.equal(plan.requests, 100000);
 * assert.deepEqual(plan.matrix.clients, [1, 50]);
 * assert.throws(() => parsePlan("name: x\nservers: []\n", "p.yaml"), /p\.yaml:2:\d+: servers: expected at least one server/);
 * assert.throws(() => parsePlan("name: x\nkind: nope\n", "p.yaml"), /p\.yaml:2:\d+: kind: expected redis-benchmark, memory, memtier, pubsub, latency-sweep or failover/);
 * assert.throws(() => parsePlan("name: x\nservers: [\n", "p.yaml"), /p\.yaml:3:1: expected YAML or JSON/);
 * ```
 */
export function parsePlan(text: string, file: string): StudyPlan {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0] ?? lc.linePos(e.pos[0]);
    throw new PlanError(`expected YAML or JSON: ${e.message.split("\n")[0]}`, {
      file,
      line: pos.line,
      column: pos.col,
      text: "",
    });
  }
  const read = new PlanReader(doc, lc, file);
  const root = read.mapping([], "expected a mapping with name, servers, tests, matrix");
  const name = read.string(["kind"], "redis-benchmark");
  if (!Object.hasOwn(PLAN_KINDS, name)) read.fail(["kind"], `expected ${kindNames()}`);
  const kind = PLAN_KINDS[name as KindName];
  for (const k of Object.keys(root)) {
    if (COMMON_FIELDS.includes(k) || kind.fields.includes(k)) continue;
    const owner = Object.entries(PLAN_KINDS).find(([, o]) => o.fields.includes(k))?.[0];
    if (owner) read.fail([k], `only for kind: ${owner}`);
    read.fail([k], `unknown field (known: ${[...COMMON_FIELDS, ...kind.fields].join(", ")})`);
  }
  const agents = readAgents(read, name);
  const plan = kind.parse(read, {
    ...readCommon(read, kind.tags ?? []),
    ...(agents && { agents }),
  });
  checkCellCount(read, plan, kind);
  return plan;
}

/** Refuses a plan of more than {@link MAX_PLAN_CELLS} cells, counted without building them. */
function checkCellCount(read: PlanReader, plan: StudyPlan, kind: Kinds[KindName]): void {
  const count = (kind as PlanKind<StudyPlan, PlanCell>).count;
  const n = count ? count(plan) : plan.repetitions * plan.servers.length;
  if (n <= MAX_PLAN_CELLS) return;
  const path = read.value(["matrix"]) !== undefined && plan.repetitions * plan.servers.length <=
      MAX_PLAN_CELLS
    ? ["matrix"]
    : ["repetitions"];
  read.fail(
    path,
    `the plan has ${n.toLocaleString("en")} cells (repetitions × parameter sets × servers); ` +
      `at most ${MAX_PLAN_CELLS.toLocaleString("en")} are allowed: split it into several plans`,
    "",
  );
}

/** `a or b`, `a, b or c`. */
function kindNames(): string {
  const names = Object.keys(PLAN_KINDS);
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
}

/** The fields every plan has; `kindTags` are the tags the kind's cells set themselves. */
function readCommon(read: PlanReader, kindTags: readonly string[]): PlanCommon {
  const name = read.string(["name"]);
  if (!/^[\w.-]+$/.test(name)) read.fail(["name"], "expected letters, digits, '.', '_' or '-'");
  const names = new Set<string>();
  const servers = read.list(["servers"], "expected at least one server").map(
    (_, i): PlanServer => {
      const fields = read.mapping(["servers", i], "expected { name, url } or { name, start }");
      if (read.value(["servers", i, "cpus"]) !== undefined) {
        read.fail(["servers", i, "cpus"], SERVER_NOT_PINNED);
      }
      for (const k of Object.keys(fields)) {
        if (!SERVER_FIELDS.includes(k)) {
          read.fail(["servers", i, k], `unknown field (known: ${SERVER_FIELDS.join(", ")})`, "");
        }
      }
      const n = read.string(["servers", i, "name"]);
      if (names.has(n)) read.fail(["servers", i, "name"], `duplicate server name ${n}`);
      names.add(n);
      if (read.value(["servers", i, "start"]) !== undefined) {
        const params = readServerParams(read, i, kindTags);
        return { ...readStartedServer(read, i, n), ...(params ? { params } : {}) };
      }
      const url = read.string(["servers", i, "url"]);
      let target: ServerTarget;
      try {
        target = parseServerUrl(url);
      } catch (e) {
        // the message shows the URL with its credentials redacted; the raw value never
        return read.fail(["servers", i, "url"], (e as Error).message, "");
      }
      target = readTargetOptions(read, ["servers", i], target);
      const container = read.value(["servers", i, "container"]) === undefined
        ? undefined
        : read.string(["servers", i, "container"]);
      const params = readServerParams(read, i, kindTags); // issue 36: arms by a tool parameter
      return {
        name: n,
        url: target.display,
        target,
        ...(container ? { container } : {}),
        ...(params ? { params } : {}),
      };
    },
  );
  const cpus = readCpus(read);
  const tags = readTags(read, [...RUN_TAGS, ...kindTags]);
  const untilDecided = readUntilDecided(read); // issue 36: kvlab run --until-decided
  return {
    name,
    servers,
    ...(cpus ? { cpus } : {}),
    ...(untilDecided ? { untilDecided } : {}),
    repetitions: read.integer(["repetitions"], 1),
    pauseS: read.number(["pause_s"], 0, { max: MAX_PAUSE_S }),
    timeoutS: read.number(["timeout_s"], 600, { max: MAX_TIMEOUT_S, positive: true }),
    // every run records the CPUs its client was pinned to
    tags: {
      ...tags,
      ...(cpus?.client ? { client_cpus: cpus.client.list } : {}),
      ...(cpus?.server ? { server_cpus: cpus.server.list } : {}),
    },
  };
}

/** A server the plan has kvlab start (`start:`): no `url:` or `container:` of its own. */
function readStartedServer(read: PlanReader, i: number, name: string): PlanServer {
  for (const k of ["url", "container", ...TARGET_OPTION_FIELDS]) {
    if (read.value(["servers", i, k]) !== undefined) {
      read.fail(
        ["servers", i, k],
        k === "url"
          ? "give url: or start:, not both (kvlab picks the port of a server it starts)"
          : k === "container"
          ? "kvlab names the containers it starts: leave container: out"
          : `${k}: is for a url: entry (a server kvlab starts says start: { tls: true } or ` +
            "start: { cluster: { shards, replicas } }, and has no password)",
      );
    }
  }
  const start = readServerStart(read, ["servers", i, "start"]);
  // the port is picked when the server starts (`servers.ts`); --dry-run shows 0
  const scheme = start.tls ? "rediss" : "redis";
  const target = { ...parseServerUrl(`${scheme}://127.0.0.1`), port: 0 };
  target.display = `${scheme}://127.0.0.1:0`;
  if (start.cluster) target.cluster = true;
  return { name, url: target.display, target, start };
}

/**
 * A server's own tool parameters (`params: { pipeline: 16 }`): each one of the kind's cell
 * parameters (its tags), an integer (threads may be 0), replacing the matrix's value for the
 * server's cells.
 */
function readServerParams(
  read: PlanReader,
  i: number,
  kindTags: readonly string[],
): Record<string, number> | undefined {
  const path = ["servers", i, "params"];
  if (read.value(path) === undefined) return undefined;
  // the kinds that cross a matrix of these (redis-benchmark, memtier) apply them per server
  const known = kindTags.filter((t) =>
    ["clients", "threads", "pipeline", "data_size_bytes", "keyspace"].includes(t)
  );
  if (known.length === 0) read.fail(path, "this plan kind takes no per-server parameters");
  const out: Record<string, number> = {};
  for (const k of Object.keys(read.mapping(path, `expected { ${known[0]}: N, … }`))) {
    if (!known.includes(k)) {
      read.fail([...path, k], `unknown parameter (known: ${known.join(", ")})`);
    }
    out[k] = read.integer([...path, k], undefined, k === "threads" ? 0 : 1);
  }
  return out;
}

/**
 * `cpus: { client: LIST, server: LIST }` (either or both): the CPUs the client and the plan's
 * local servers run on.
 */
function readCpus(read: PlanReader): PlanCommon["cpus"] {
  if (read.value(["cpus"]) === undefined) return undefined;
  const expected = 'expected { client: CPU list, server: CPU list }, e.g. { client: "1" }';
  const fields = read.mapping(["cpus"], expected);
  for (const k of Object.keys(fields)) {
    if (k !== "client" && k !== "server") {
      read.fail(["cpus", k], "unknown field (known: client, server)");
    }
  }
  const set = (k: "client" | "server") => {
    const raw = read.value(["cpus", k]);
    if (raw === undefined) return undefined;
    const list = typeof raw === "number" ? String(raw) : raw;
    if (typeof list !== "string") read.fail(["cpus", k], "expected a CPU list: 0, 2-3 or 0,2");
    try {
      return {
        list: list.replace(/\s+/g, ""),
        cpus: parseCpuList(list),
        at: read.where(["cpus", k]),
      };
    } catch (e) {
      return read.fail(["cpus", k], (e as Error).message);
    }
  };
  const client = set("client"), server = set("server");
  if (!client && !server) read.fail(["cpus"], expected);
  return { ...(client ? { client } : {}), ...(server ? { server } : {}) };
}

/** `tags:`: names to strings, numbers or booleans; none of the names runs set themselves. */
function readTags(read: PlanReader, reserved: readonly string[]): Record<string, string> {
  const tags: Record<string, string> = {};
  if (read.value(["tags"]) === undefined) return tags;
  for (const [k, v] of Object.entries(read.mapping(["tags"]))) {
    if (reserved.includes(k)) {
      read.fail(
        ["tags", k],
        `reserved tag name: every run sets it (reserved: ${reserved.join(", ")})`,
      );
    }
    if (!["string", "number", "boolean"].includes(typeof v)) {
      read.fail(["tags", k], "expected a string, number or boolean");
    }
    tags[k] = String(v);
  }
  return tags;
}

/**
 * The cells of a plan in run order: repetition, then parameters, then server, so servers
 * alternate (A B A B …) and no side gets all the early or late slots.
 *
 * @param plan A checked plan.
 * @returns Its cells, typed by its kind.
 *
 * @example
 * ```ts
 * import { parsePlan, planCells } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan(
 *   "name: p\nservers: [{name: a, url: 'redis://h:1'}, {name: b, url: 'redis://h:2'}]\ntests: [set]\n" +
 *     "matrix: {clients: [1, 8]}\nrepetitions: 2\n",
 *   "p.yaml",
 * );
 * assert.ok(plan.kind === "redis-benchmark");
 * assert.deepEqual(planCells(plan).map((c) => `${c.server.name}${c.clients}r${c.repetition}`), [
 *   "a1r1", "b1r1", "a8r1", "b8r1", "a1r2", "b1r2", "a8r2", "b8r2",
 * ]);
 * assert.equal(planCells(plan)[0].id, "p/a/c1-d3-P1-t0-r0/rep1");
 * ```
 */
export function planCells<P extends StudyPlan>(plan: P): CellOf<P>[] {
  return planKind(plan).cells(plan);
}
