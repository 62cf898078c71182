/**
 * Per-node facts of a run against a cluster or a replicated primary (issue 33 item 4), a
 * {@link RunWatch}: as the run starts and as it ends, each node's INFO (replication, cpu,
 * commandstats, keyspace) on a connection of its own; the run gets one `node_stats` row per
 * node: its role (master or replica) and its primary, its CPU over the run (the deltas of
 * `used_cpu_sys` and `used_cpu_user`, which any server reports, so this works for servers
 * someone else runs too), the commands it executed over the run (every command's calls but
 * {@link WATCH_COMMANDS}: connection setup, replication's and cluster clients' own), and its keys
 * as the run ends.
 *
 * The nodes are found as the run starts: a cluster's masters from its slot map, a standalone
 * server as its own master; then each master's replicas from its INFO replication, those on the
 * target's own host only (a server is untrusted: see {@link checkedReplica}).
 *
 * @module
 */

import { isIP } from "node:net";
import type { Redis } from "ioredis";
import type { NodeStatsRow } from "../../schema.ts";
import { keyspaceKeys, parseInfo } from "../formats/info/info.ts";
import { connect } from "../server.ts";
import type { ServerTarget } from "../target.ts";
import type { RunWatch, RunWatching, Watched } from "../watch.ts";
import { commandStats, nodeTarget, readSlotMap } from "./nodes.ts";

/**
 * Commands not counted as the run's: what the watch and any client send to set up a connection
 * (`info`, `auth`, `hello`, `client`, `select`, `readonly`, `readwrite`), replication's own
 * (`replconf`: a replica's ack every second; `psync`, `sync`), a cluster client's topology
 * discovery and redirections (`cluster`, `asking`), and a tool's look at the server's settings
 * (`config`: redis-benchmark's `CONFIG GET`). `ping` counts: it can be a benchmark's own test
 * (a master's ping to its replicas, one per 10 s by default, is in there too).
 */
export const WATCH_COMMANDS: readonly string[] = [
  "info",
  "auth",
  "hello",
  "client",
  "select",
  "readonly",
  "readwrite",
  "replconf",
  "psync",
  "sync",
  "cluster",
  "asking",
  "config",
];

/** One node's counters at one moment. */
export interface NodeSnapshot {
  /** `host:port`. */
  node: string;
  role: "master" | "replica" | null;
  /** The master's `host:port` (itself for a master). */
  primary: string | null;
  cpuSysS: number | null;
  cpuUserS: number | null;
  /** Calls of every command but {@link WATCH_COMMANDS}. */
  commands: number | null;
  keys: number | null;
  /** Its replicas (`ip:port`), as a master lists them. */
  replicas: string[];
}

/**
 * One node's counters from its INFO text (any sections; those absent are null).
 *
 * @param node `host:port` of the node.
 * @param text INFO replies, concatenated.
 * @returns The snapshot.
 *
 * @example
 * ```ts
 * import { nodeSnapshot } from "./node_stats.ts";
 * import assert from "node:assert/strict";
 * const text = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nmaster_port:7001\r\n" +
 *   "# CPU\r\nused_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n# Commandstats\r\n" +
 *   "cmdstat_set:calls=10,usec=5\r\ncmdstat_info:calls=7,usec=1\r\ncmdstat_get:calls=4,usec=1\r\n" +
 *   "# Keyspace\r\ndb0:keys=42,expires=0,avg_ttl=0\r\n";
 * assert.deepEqual(nodeSnapshot("127.0.0.1:7002", text), { node: "127.0.0.1:7002", role: "replica",
 *   primary: "127.0.0.1:7001", cpuSysS: 1.5, cpuUserS: 2.25, commands: 14, keys: 42, replicas: [] });
 * const m = nodeSnapshot("h:1", "role:master\r\nslave0:ip=h,port=2,state=online,offset=1,lag=0\r\n");
 * assert.deepEqual([m.role, m.primary, m.replicas, m.commands], ["master", "h:1", ["h:2"], null]);
 * ```
 */
export function nodeSnapshot(node: string, text: string): NodeSnapshot {
  const info = parseInfo(text);
  const field = (k: string) => info.find((f) => f.key === k);
  const num = (k: string) => field(k)?.valueNum ?? null;
  const role = field("role")?.value;
  const replicas: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^slave\d+:(.*)$/.exec(line.trim());
    if (!m) continue;
    const kv = new Map(m[1].split(",").map((p) => p.split("=") as [string, string]));
    if (kv.get("ip") && kv.get("port")) replicas.push(`${kv.get("ip")}:${kv.get("port")}`);
  }
  let commands: number | null = null;
  for (const [name, calls] of commandStats(text)) {
    if (WATCH_COMMANDS.includes(name)) continue;
    commands = (commands ?? 0) + calls;
  }
  if (commands === null && /^# Commandstats/m.test(text)) commands = 0;
  const master = field("master_host")?.value;
  return {
    node,
    role: role === "master" ? "master" : role === "slave" ? "replica" : null,
    primary: role === "master" ? node : master ? `${master}:${num("master_port")}` : null,
    cpuSysS: num("used_cpu_sys"),
    cpuUserS: num("used_cpu_user"),
    commands,
    keys: keyspaceKeys(info, text),
    replicas,
  };
}

/**
 * The `node_stats` rows of a run from its nodes' snapshots before and after it (matched by
 * node; a node missing on either side gets nulls for what it could not tell). A counter that
 * went down over the run (`CONFIG RESETSTAT`, a restart) tells nothing of it: null, and a
 * warning naming the node.
 *
 * @param runId The run.
 * @param o The snapshots as the run started (`before`) and as it ended (`after`), and the
 * seconds between them.
 * @returns One row per node of `before`, masters first, and the warnings.
 *
 * @example
 * ```ts
 * import { nodeSnapshot, nodeStatsRows } from "./node_stats.ts";
 * import assert from "node:assert/strict";
 * const snap = (cpu: number, calls: number, keys: number) => nodeSnapshot("h:1",
 *   `role:master\r\nused_cpu_sys:${cpu}\r\nused_cpu_user:${cpu * 2}\r\n# Commandstats\r\n` +
 *   `cmdstat_set:calls=${calls},usec=1\r\n# Keyspace\r\ndb0:keys=${keys},expires=0\r\n`);
 * const { rows: [row], warnings } = nodeStatsRows("r1", { before: [snap(1, 100, 0)],
 *   after: [snap(1.5, 1100, 900)], elapsedS: 2 });
 * assert.deepEqual(row, { run_id: "r1", node: "h:1", role: "master", primary: "h:1",
 *   elapsed_s: 2, cpu_sys_s: 0.5, cpu_user_s: 1, commands: 1000, keys: 900 });
 * assert.deepEqual(warnings, []);
 * // the stats reset during the run: no negative commands
 * const reset = nodeStatsRows("r1", { before: [snap(1, 100, 0)], after: [snap(1.5, 40, 9)],
 *   elapsedS: 2 });
 * assert.equal(reset.rows[0].commands, null);
 * assert.match(reset.warnings[0], /^node h:1: commands went down/);
 * ```
 */
export function nodeStatsRows(
  runId: string,
  o: { before: readonly NodeSnapshot[]; after: readonly NodeSnapshot[]; elapsedS: number },
): { rows: NodeStatsRow[]; warnings: string[] } {
  const { before, after, elapsedS } = o;
  const warnings: string[] = [];
  const rows = before.map((b): NodeStatsRow => {
    const a = after.find((x) => x.node === b.node);
    const down: string[] = [];
    const diff = (what: string, x: number | null | undefined, y: number | null) => {
      if (x === null || x === undefined || y === null) return null;
      if (x < y) {
        down.push(`${what} went down (${y} to ${x})`);
        return null;
      }
      return Math.round((x - y) * 1e6) / 1e6;
    };
    const row: NodeStatsRow = {
      run_id: runId,
      node: b.node,
      role: a?.role ?? b.role ?? "unknown",
      primary: a?.primary ?? b.primary,
      elapsed_s: elapsedS,
      cpu_sys_s: diff("used_cpu_sys", a?.cpuSysS, b.cpuSysS),
      cpu_user_s: diff("used_cpu_user", a?.cpuUserS, b.cpuUserS),
      commands: diff("commands", a?.commands, b.commands),
      keys: a?.keys ?? null,
    };
    if (down.length) {
      warnings.push(
        `node ${b.node}: ${down.join(", ")} over the run (CONFIG RESETSTAT or a restart?): ` +
          "stored as null",
      );
    }
    return row;
  });
  const rank = (r: NodeStatsRow) => (r.role === "master" ? 0 : 1);
  return { rows: rows.sort((x, y) => rank(x) - rank(y)), warnings };
}

/** Options of {@link nodeStatsWatch}. */
export interface NodeStatsWatchOptions {
  /** The server a plan names (a cluster node when `target.cluster`, else a primary). */
  target: ServerTarget;
  /** The nodes, when known (a topology kvlab started); else found as each run starts. */
  nodes?: readonly ServerTarget[];
}

/**
 * The watch of a topology's nodes over each run (see the module's doc). What it cannot read is
 * a warning of the run, never its failure.
 *
 * @param o The server, and its nodes when known.
 * @returns The watch.
 *
 * @example
 * ```ts
 * import { nodeStatsWatch } from "./node_stats.ts";
 * import assert from "node:assert/strict";
 * // a server that is not there: no rows, a warning naming it (the run goes on)
 * const target = { host: "127.0.0.1", port: 1, display: "redis://127.0.0.1:1", tls: false, db: 0 };
 * const w = await (await nodeStatsWatch({ target }).start()).stop("r1", false);
 * assert.deepEqual(w.tables, {});
 * assert.match(w.warning ?? "", /^the nodes of redis:\/\/127\.0\.0\.1:1 were not found: /);
 * ```
 */
export function nodeStatsWatch(o: NodeStatsWatchOptions): RunWatch {
  return { start: () => nodeWatching(o) };
}

/**
 * A replica a master lists (`ip:port` of its INFO replication), checked before kvlab connects:
 * the ip an IP literal, the port 1–65535, the host one of `trusted` (the target's own host, or
 * the hosts of a cluster's slot map). A server is untrusted: without these checks a hostile one
 * could have kvlab send the plan's password and TLS client files to an address of its choosing.
 *
 * @param address `ip:port` as the master lists it.
 * @param trusted The hosts kvlab may send credentials to.
 * @returns The host and port, or why it is skipped.
 *
 * @example
 * ```ts
 * import { checkedReplica } from "./node_stats.ts";
 * import assert from "node:assert/strict";
 * const trusted = new Set(["127.0.0.1"]);
 * assert.deepEqual(checkedReplica("127.0.0.1:7002", trusted), { host: "127.0.0.1", port: 7002 });
 * assert.match(checkedReplica("127.0.0.1:x", trusted).skipped ?? "", /port/);
 * assert.match(checkedReplica("127.0.0.1:70000", trusted).skipped ?? "", /port/);
 * assert.match(checkedReplica("evil.example:6379", trusted).skipped ?? "", /IP address/);
 * assert.match(checkedReplica("10.9.9.9:6379", trusted).skipped ?? "", /not a host of the target/);
 * ```
 */
export function checkedReplica(
  address: string,
  trusted: ReadonlySet<string>,
): { host: string; port: number; skipped?: undefined } | { skipped: string } {
  const at = address.lastIndexOf(":");
  const host = at < 0 ? address : address.slice(0, at);
  const portText = at < 0 ? "" : address.slice(at + 1);
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 1 && port <= 65535)) return { skipped: "its port is not 1-65535" };
  if (isIP(host) === 0) return { skipped: "its ip is not an IP address" };
  if (!trusted.has(host)) {
    return { skipped: "it is not a host of the target (no credentials are sent there)" };
  }
  return { host, port };
}

/** Server text in a warning: control characters as `?`, at most 80 characters. */
function shown(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?").slice(0, 80);
}

/** The hosts that name the machine of `host` (a loopback name stands for every loopback). */
function sameHosts(host: string): string[] {
  const loopback = host === "localhost" || host === "::1" || /^127\./.test(host);
  return loopback ? [host, "localhost", "127.0.0.1", "::1"] : [host];
}

/**
 * The nodes of a topology: its masters (a cluster's slot map, else the target), then the
 * replicas they list that pass {@link checkedReplica}; a warning for each one skipped.
 */
async function findNodes(
  target: ServerTarget,
): Promise<{ nodes: ServerTarget[]; warnings: string[] }> {
  const masters = target.cluster
    ? (await readSlotMap(target)).nodes.map((n) => nodeTarget(target, n))
    : [target];
  const trusted = new Set([target.host, ...masters.map((m) => m.host)].flatMap(sameHosts));
  const out = [...masters];
  const warnings: string[] = [];
  for (const m of masters) {
    const s = nodeSnapshot(`${m.host}:${m.port}`, await info(m, ["replication"]));
    for (const r of s.replicas) {
      const c = checkedReplica(r, trusted);
      if (c.skipped !== undefined) {
        warnings.push(
          `replica ${shown(r)} listed by ${m.host}:${m.port} was skipped: ${c.skipped}`,
        );
      } else out.push(nodeTarget(target, { host: c.host, port: c.port, id: null }));
    }
  }
  return { nodes: out, warnings };
}

const SECTIONS = ["replication", "cpu", "commandstats", "keyspace"];

/** INFO sections of a node, one connection. */
async function info(t: ServerTarget, sections = SECTIONS, client?: Redis): Promise<string> {
  const c = client ?? await connect(t, 3000);
  try {
    let text = "";
    for (const s of sections) text += (await c.info(s)) + "\r\n";
    return text;
  } finally {
    if (!client) c.disconnect();
  }
}

async function nodeWatching(o: NodeStatsWatchOptions): Promise<RunWatching> {
  let warning: string | null = null;
  const empty = (): Watched => ({
    tables: {},
    raw: [],
    columns: {},
    failure: null,
    warning,
  });
  let nodes: ServerTarget[];
  try {
    const found = o.nodes ? { nodes: [...o.nodes], warnings: [] } : await findNodes(o.target);
    nodes = found.nodes;
    if (found.warnings.length) warning = found.warnings.join("; ");
  } catch (e) {
    warning = `the nodes of ${o.target.display} were not found: ${(e as Error).message}`;
    return { stop: () => Promise.resolve(empty()) };
  }
  const clients = new Map<ServerTarget, Redis>();
  const snapshots = async (): Promise<NodeSnapshot[]> => {
    const out: NodeSnapshot[] = [];
    for (const n of nodes) {
      const name = `${n.host}:${n.port}`;
      try {
        let c = clients.get(n);
        if (!c) clients.set(n, c = await connect(n, 3000));
        out.push(nodeSnapshot(name, await info(n, SECTIONS, c)));
      } catch (e) {
        clients.get(n)?.disconnect();
        clients.delete(n);
        warning ??= `node ${name} did not answer INFO: ${(e as Error).message}`;
        out.push({ ...nodeSnapshot(name, ""), role: null });
      }
    }
    return out;
  };
  const before = await snapshots();
  const t0 = performance.now();
  return {
    async stop(runId: string): Promise<Watched> {
      const after = await snapshots();
      const elapsed = Math.round(performance.now() - t0) / 1000;
      for (const c of clients.values()) c.disconnect();
      const { rows, warnings } = nodeStatsRows(runId, { before, after, elapsedS: elapsed });
      if (warnings.length) warning = [warning, ...warnings].filter(Boolean).join("; ");
      return { ...empty(), tables: { node_stats: rows } };
    },
  };
}

/**
 * Both watches over a run (a server's replication lag and its nodes' facts): their rows, raw
 * files, columns and manifests together; the first failure and warning.
 *
 * @param watches The watches.
 * @returns One watch.
 *
 * @example
 * ```ts
 * import { bothWatches } from "./node_stats.ts";
 * import assert from "node:assert/strict";
 * const watch = (name: string, warning: string | null) => ({
 *   start: () => Promise.resolve({ stop: () => Promise.resolve({ tables: {}, raw: [],
 *     columns: {}, failure: null, warning, manifest: { [name]: true } }) }),
 * });
 * const w = await (await bothWatches(watch("a", null), watch("b", "b lost")).start()).stop("r", false);
 * assert.deepEqual([w.manifest, w.warning], [{ a: true, b: true }, "b lost"]);
 * ```
 */
export function bothWatches(...watches: RunWatch[]): RunWatch {
  return {
    async start() {
      const started = await Promise.all(watches.map((w) => w.start()));
      return {
        async stop(runId: string, failed: boolean): Promise<Watched> {
          const seen = await Promise.all(started.map((w) => w.stop(runId, failed)));
          return {
            tables: Object.assign({}, ...seen.map((w) => w.tables)),
            raw: seen.flatMap((w) => w.raw),
            columns: Object.assign({}, ...seen.map((w) => w.columns)),
            failure: seen.find((w) => w.failure)?.failure ?? null,
            warning: seen.find((w) => w.warning)?.warning ?? null,
            manifest: Object.assign({}, ...seen.map((w) => w.manifest ?? {})),
          };
        },
      };
    },
  };
}

/**
 * The watch of a plan's server over each run: its own (a container's, a started topology's),
 * else for a server someone else runs with `cluster: true` the watch of its nodes.
 *
 * @param server The plan's server.
 * @returns `{ watch }`, or nothing to watch.
 *
 * @example
 * ```ts
 * import { serverWatch } from "./node_stats.ts";
 * import assert from "node:assert/strict";
 * const target = { host: "127.0.0.1", port: 7000, display: "redis://127.0.0.1:7000", tls: false, db: 0 };
 * assert.deepEqual(serverWatch({ target }), {});
 * assert.ok(serverWatch({ target: { ...target, cluster: true } }).watch);
 * ```
 */
export function serverWatch(
  server: { watch?: RunWatch; target?: ServerTarget },
): { watch?: RunWatch } {
  if (server.watch) return { watch: server.watch };
  if (server.target?.cluster) return { watch: nodeStatsWatch({ target: server.target }) };
  return {};
}
