/**
 * Study plans (YAML or JSON): servers, the tool, tests, a parameter matrix, repetitions,
 * warm-up and pauses; expanded into cells run interleaved across servers (A B A B …) so drift
 * does not favour one side. Parsing and expansion are pure; `examples/plan.yaml` documents
 * every field.
 *
 * @module
 */

import { LineCounter, parseDocument } from "yaml";
import { ParseError } from "../errors.ts";
import { parseServerUrl, type ServerTarget } from "./target.ts";

/** A server of a plan. */
export interface PlanServer {
  /** Name of the arm (`redis`, `redis-io4`, `valkey`): stored as the runs' `label`. */
  name: string;
  /** `redis://[user:password@]host[:port][/db]`, `rediss://…` or `unix:///path`. */
  url: string;
  target: ServerTarget;
  /** Docker container of the server, for container memory in memory plans. */
  container?: string;
}

/** The `memory:` section of a memory plan. */
export interface MemoryPlan {
  /** Key counts to measure at, ascending. */
  keyCounts: number[];
  valueSizeBytes: number;
  /** FLUSHDB before each sweep. */
  flush: boolean;
}

/** The parameter matrix; each list is crossed with the others. */
export interface PlanMatrix {
  clients: number[];
  dataSizeBytes: number[];
  pipeline: number[];
  /** 0 = no `--threads`. */
  threads: number[];
  /** null = no `-r`. */
  keyspace: (number | null)[];
}

/** A checked study plan. */
export interface StudyPlan {
  name: string;
  kind: "redis-benchmark" | "memory";
  /** For `kind: memory`. */
  memory?: MemoryPlan;
  /** `redis-benchmark`, `valkey-benchmark` or a path. */
  tool: string;
  servers: PlanServer[];
  tests: string[];
  requests: number;
  matrix: PlanMatrix;
  repetitions: number;
  /** Requests of an unrecorded warm-up run before each cell (0: none). */
  warmupRequests: number;
  /** Pause between cells, seconds. */
  pauseS: number;
  /** Limit per run, seconds. */
  timeoutS: number;
  tags: Record<string, string>;
}

/** One run to make: a server, a parameter set and a repetition. */
export interface PlanCell {
  /** Stable id: `<plan>/<server>/c<clients>-d<size>-P<pipeline>-t<threads>-r<keyspace>/rep<k>`. */
  id: string;
  server: PlanServer;
  clients: number;
  dataSizeBytes: number;
  pipeline: number;
  threads: number;
  keyspace: number | null;
  repetition: number;
}

/** A plan that is not valid: names the file, line and field. */
export class PlanError extends ParseError {
  /**
   * @param expected What the field should be.
   * @param where Location and the offending text.
   */
  constructor(
    expected: string,
    where: { file: string; line: number; column: number; text: string },
  ) {
    super(expected, where);
    this.name = "PlanError";
  }
}

/**
 * Parses and checks a plan.
 *
 * @param text YAML or JSON.
 * @param file Its name, for errors.
 * @throws {PlanError} For any missing or bad field, with its line.
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
 * assert.equal(plan.requests, 100000);
 * assert.deepEqual(plan.matrix.clients, [1, 50]);
 * assert.throws(() => parsePlan("name: x\nservers: []\n", "p.yaml"), /p\.yaml:2:\d+: servers: expected at least one server/);
 * ```
 */
export function parsePlan(text: string, file: string): StudyPlan {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0] ?? { line: 1, col: 1 };
    throw new PlanError(`expected YAML or JSON: ${e.message.split("\n")[0]}`, {
      file,
      line: pos.line,
      column: pos.col,
      text: "",
    });
  }
  const fail = (path: (string | number)[], expected: string): never => {
    const node = doc.getIn(path, true) as { range?: [number, number] } | undefined ??
      doc.getIn(path.slice(0, -1), true) as { range?: [number, number] } | undefined;
    const at = node?.range ? lc.linePos(node.range[0]) : { line: 1, col: 1 };
    const value = doc.getIn(path);
    throw new PlanError(`${path.join(".")}: ${expected}`, {
      file,
      line: at.line,
      column: at.col,
      text: value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value),
    });
  };
  const root = doc.toJS() as Record<string, unknown> | null;
  if (root === null || typeof root !== "object" || Array.isArray(root)) {
    fail([], "expected a mapping with name, servers, tests, matrix");
  }
  const r = root!;
  const known = new Set([
    "name",
    "kind",
    "tool",
    "servers",
    "tests",
    "requests",
    "matrix",
    "repetitions",
    "warmup_requests",
    "pause_s",
    "timeout_s",
    "tags",
    "memory",
  ]);
  for (const k of Object.keys(r)) {
    if (!known.has(k)) fail([k], `unknown field (known: ${[...known].join(", ")})`);
  }

  const str = (path: string[], v: unknown, dflt?: string): string => {
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== "string" || v.trim() === "") fail(path, "expected a non-empty string");
    return v as string;
  };
  const posInt = (path: (string | number)[], v: unknown, dflt?: number, min = 1): number => {
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
      fail(path, `expected an integer ≥ ${min}`);
    }
    return v as number;
  };
  const num = (path: string[], v: unknown, dflt: number): number => {
    if (v === undefined) return dflt;
    if (typeof v !== "number" || !(v >= 0)) fail(path, "expected a number ≥ 0");
    return v as number;
  };

  const name = str(["name"], r.name);
  if (!/^[\w.-]+$/.test(name)) fail(["name"], "expected letters, digits, '.', '_' or '-'");
  const kind = str(["kind"], r.kind, "redis-benchmark");
  if (kind !== "redis-benchmark" && kind !== "memory") {
    fail(["kind"], "expected redis-benchmark or memory");
  }

  if (!Array.isArray(r.servers) || r.servers.length === 0) {
    fail(["servers"], "expected at least one server");
  }
  const names = new Set<string>();
  const servers = (r.servers as unknown[]).map((s, i): PlanServer => {
    if (s === null || typeof s !== "object") fail(["servers", i], "expected { name, url }");
    const o = s as Record<string, unknown>;
    const n = str(["servers", String(i), "name"], o.name);
    if (names.has(n)) fail(["servers", i, "name"], `duplicate server name ${n}`);
    names.add(n);
    const url = str(["servers", String(i), "url"], o.url);
    let target: ServerTarget;
    try {
      target = parseServerUrl(url);
    } catch (e) {
      return fail(["servers", i, "url"], (e as Error).message);
    }
    const container = o.container === undefined
      ? undefined
      : str(["servers", String(i), "container"], o.container);
    return { name: n, url: target.display, target, ...(container ? { container } : {}) };
  });

  let memory: MemoryPlan | undefined;
  if (kind === "memory") {
    const mm = r.memory as Record<string, unknown> | undefined;
    if (!mm || typeof mm !== "object") {
      fail(["memory"], "expected { key_counts: [...], value_size_bytes, flush }");
    }
    const kc = mm!.key_counts;
    if (!Array.isArray(kc) || kc.length === 0) {
      fail(["memory", "key_counts"], "expected a list of key counts");
    }
    const keyCounts = (kc as unknown[]).map((x, i) => posInt(["memory", "key_counts", i], x));
    keyCounts.forEach((c, i) => {
      if (i > 0 && c <= keyCounts[i - 1]) {
        fail(["memory", "key_counts", i], "expected ascending key counts");
      }
    });
    if (mm!.flush !== undefined && typeof mm!.flush !== "boolean") {
      fail(["memory", "flush"], "expected true or false");
    }
    memory = {
      keyCounts,
      valueSizeBytes: posInt(["memory", "value_size_bytes"], mm!.value_size_bytes, 3),
      flush: (mm!.flush as boolean | undefined) ?? false,
    };
  } else if (r.memory !== undefined) fail(["memory"], "only for kind: memory");
  if (kind !== "memory" && (!Array.isArray(r.tests) || r.tests.length === 0)) {
    fail(["tests"], "expected a list of tests (set, get, …)");
  }
  const tests = ((r.tests ?? []) as unknown[]).map((t, i) =>
    str(["tests", String(i)], t).toLowerCase()
  );

  const m = (r.matrix ?? {}) as Record<string, unknown>;
  if (typeof m !== "object" || Array.isArray(m)) fail(["matrix"], "expected a mapping of lists");
  const mKnown = new Set(["clients", "data_size_bytes", "pipeline", "threads", "keyspace"]);
  for (const k of Object.keys(m)) {
    if (!mKnown.has(k)) {
      fail(["matrix", k], `unknown parameter (known: ${[...mKnown].join(", ")})`);
    }
  }
  const list = (
    k: string,
    dflt: (number | null)[],
    min: number,
    nullable = false,
  ): (number | null)[] => {
    const v = m[k];
    if (v === undefined) return dflt;
    const arr = Array.isArray(v) ? v : [v];
    if (arr.length === 0) fail(["matrix", k], "expected at least one value");
    return arr.map((
      x,
      i,
    ) => (nullable && x === null ? null : posInt(
      ["matrix", k, Array.isArray(v) ? i : 0].slice(0, Array.isArray(v) ? 3 : 2),
      x,
      undefined,
      min,
    )));
  };
  const matrix: PlanMatrix = {
    clients: list("clients", [50], 1) as number[],
    dataSizeBytes: list("data_size_bytes", [3], 1) as number[],
    pipeline: list("pipeline", [1], 1) as number[],
    threads: list("threads", [0], 0) as number[],
    keyspace: list("keyspace", [null], 1, true),
  };

  const tags: Record<string, string> = {};
  if (r.tags !== undefined) {
    if (r.tags === null || typeof r.tags !== "object" || Array.isArray(r.tags)) {
      fail(["tags"], "expected a mapping");
    }
    for (const [k, v] of Object.entries(r.tags as Record<string, unknown>)) tags[k] = String(v);
  }

  return {
    name,
    kind: kind as StudyPlan["kind"],
    ...(memory ? { memory } : {}),
    tool: str(["tool"], r.tool, "redis-benchmark"),
    servers,
    tests,
    requests: posInt(["requests"], r.requests, 100000),
    matrix,
    repetitions: posInt(["repetitions"], r.repetitions, 1),
    warmupRequests: posInt(["warmup_requests"], r.warmup_requests, 0, 0),
    pauseS: num(["pause_s"], r.pause_s, 0),
    timeoutS: num(["timeout_s"], r.timeout_s, 600),
    tags,
  };
}

/**
 * The cells of a plan in run order: repetition, then parameters, then server, so servers
 * alternate (A B A B …) and no side gets all the early or late slots.
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
 * assert.deepEqual(planCells(plan).map((c) => `${c.server.name}${c.clients}r${c.repetition}`), [
 *   "a1r1", "b1r1", "a8r1", "b8r1", "a1r2", "b1r2", "a8r2", "b8r2",
 * ]);
 * assert.equal(planCells(plan)[0].id, "p/a/c1-d3-P1-t0-r0/rep1");
 * ```
 */
export function planCells(plan: StudyPlan): PlanCell[] {
  const cells: PlanCell[] = [];
  const m = plan.matrix;
  if (plan.kind === "memory") {
    // one sweep per server and repetition, interleaved
    for (let rep = 1; rep <= plan.repetitions; rep++) {
      for (const server of plan.servers) {
        cells.push({
          id: `${plan.name}/${server.name}/memory/rep${rep}`,
          server,
          clients: 0,
          dataSizeBytes: plan.memory!.valueSizeBytes,
          pipeline: 0,
          threads: 0,
          keyspace: null,
          repetition: rep,
        });
      }
    }
    return cells;
  }
  for (let rep = 1; rep <= plan.repetitions; rep++) {
    for (const clients of m.clients) {
      for (const dataSizeBytes of m.dataSizeBytes) {
        for (const pipeline of m.pipeline) {
          for (const threads of m.threads) {
            for (const keyspace of m.keyspace) {
              for (const server of plan.servers) {
                cells.push({
                  id:
                    `${plan.name}/${server.name}/c${clients}-d${dataSizeBytes}-P${pipeline}-t${threads}-r${
                      keyspace ?? 0
                    }/rep${rep}`,
                  server,
                  clients,
                  dataSizeBytes,
                  pipeline,
                  threads,
                  keyspace,
                  repetition: rep,
                });
              }
            }
          }
        }
      }
    }
  }
  return cells;
}
