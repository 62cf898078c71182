/**
 * A topology of installed server binaries on loopback ports: a standalone primary (with
 * replicas), or a Redis Cluster made by `redis-cli --cluster create` and waited for until every
 * node says `cluster_state:ok` with all 16384 slots covered and every replica's link is up;
 * plaintext, or TLS only with a throwaway CA. Everything lives in one temporary folder
 * (`kvlab-start-<kvlab pid>-…`) removed when it stops; a folder whose kvlab is gone is removed
 * by the next start. Its target is the one a plan's `url:` entry with `cluster: true` and
 * `tls: { ca_file, cert_file, key_file }` would give.
 *
 * @module
 */

import { findTool } from "../tools/find.ts";
import { type ProcessRunner, ToolNotFoundError } from "../process.ts";
import { connect } from "../server.ts";
import { parseServerUrl, type ServerTarget } from "../target.ts";
import { serverBinaryVersion } from "../docker/image.ts";
import { processState } from "../../system/pids.ts";
import { makeThrowawayCerts } from "./certs.ts";
import { lastLines, type RunningNode, startNode } from "./node.ts";
import {
  describeTopology,
  nodeCount,
  type TlsPaths,
  type TopologySpec,
  versionMatches,
} from "./spec.ts";

/** A topology that cannot be started here, or did not come up (saying why). */
export class TopologyError extends Error {
  /** @param message What failed. */
  constructor(message: string) {
    super(message);
    this.name = "TopologyError";
  }
}

/** A topology checked against this machine: its programs and the server's version. */
export interface PreparedTopology {
  spec: TopologySpec;
  /** The server binary (`/usr/bin/redis-server`). */
  program: string;
  /** Its client (`redis-cli`), which creates a cluster. */
  cli: string;
  /** The server's version (`7.0.15`). */
  version: string;
}

/** A topology that runs. */
export interface RunningTopology extends PreparedTopology {
  /** The first primary, with the cluster and TLS options a client needs. */
  target: ServerTarget;
  /** Every process, with its role (`primary`, `replica`). */
  nodes: (RunningNode & { role: "primary" | "replica"; target: ServerTarget })[];
  /** Its temporary folder (certificates, node folders). */
  dir: string;
  /** How long starting it took, ms. */
  startMs: number;
  /**
   * Stops every process by its PID and removes the folder.
   * @returns What went wrong (a process that had exited on its own, a folder left), one each.
   */
  stop(): Promise<string[]>;
}

/** Options of {@link startTopology}. */
export interface StartTopologyOptions {
  /** Starts the servers, openssl and the cluster client. */
  runner: ProcessRunner;
  /** Aborting stops the start (what was started is stopped). */
  signal?: AbortSignal;
  /** @default {30000} The longest wait for the cluster's state and the replicas' links. */
  readyTimeoutMs?: number;
}

/** The prefix of a topology's folder in the system's temporary folder. */
const DIR_PREFIX = "kvlab-start-";

/**
 * Checks a topology against this machine before anything starts: the server and its client
 * are installed, its version is the one asked for, and it can do TLS when asked.
 *
 * @param spec The topology.
 * @param runner Runs `--version` and `ldd`.
 * @returns The programs and version.
 * @throws {ToolNotFoundError} When the server or its client is not installed.
 * @throws {TopologyError} When the version differs or the binary was built without TLS.
 */
export async function prepareTopology(
  spec: TopologySpec,
  runner: ProcessRunner,
): Promise<PreparedTopology> {
  const find = (name: string) => {
    const p = findTool(name);
    if (p === null) throw new ToolNotFoundError(name);
    return p;
  };
  const program = find(`${spec.engine}-server`);
  const cli = find(`${spec.engine}-cli`);
  const out = await runner.run({ argv: [program, "--version"], timeoutMs: 10_000, capture: true });
  const version = serverBinaryVersion(new TextDecoder().decode(out.stdout ?? new Uint8Array()));
  if (version === null) throw new TopologyError(`${program} --version: no version in its answer`);
  if (spec.version !== undefined && !versionMatches(version, spec.version)) {
    throw new TopologyError(
      `start.version: ${spec.version} asked, but the installed ${spec.engine}-server (${program}) ` +
        `is ${version}`,
    );
  }
  const noTls = spec.tls ? buildInfoWithoutTls(program) : null;
  if (noTls !== null) {
    throw new TopologyError(
      `start.tls: ${spec.engine}-server ${version} (${program}) was built without TLS (its ` +
        `${noTls} records no BUILD_TLS=yes; .ci/install rebuilds it with TLS): it cannot serve TLS`,
    );
  }
  if (spec.tls && await builtWithoutTls(program, runner)) {
    throw new TopologyError(
      `start.tls: ${spec.engine}-server ${version} (${program}) was built without TLS (it links ` +
        `no libssl; build it with BUILD_TLS=yes): it cannot serve TLS`,
    );
  }
  return { spec, program, cli, version };
}

/**
 * The BUILD-INFO that `.ci/install` writes beside the binaries it builds into the tools cache,
 * when it says the build had no TLS (no `BUILD_TLS=yes` line: a cache built before Valkey was
 * built with TLS); null when there is none or it records TLS.
 */
function buildInfoWithoutTls(program: string): string | null {
  const file = `${program.replace(/\/[^/]*$/, "")}/BUILD-INFO`;
  if (!program.includes("/")) return null;
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch {
    return null;
  }
  return /\bBUILD_TLS=yes\b/.test(text) ? null : file;
}

/** Whether `ldd` shows a binary without libssl (false when ldd cannot tell). */
async function builtWithoutTls(program: string, runner: ProcessRunner): Promise<boolean> {
  try {
    const r = await runner.run({ argv: ["ldd", program], timeoutMs: 10_000, capture: true });
    if (r.code !== 0) return false;
    return !/libssl\.so/.test(new TextDecoder().decode(r.stdout ?? new Uint8Array()));
  } catch {
    return false; // no ldd: the server says so when it starts
  }
}

/**
 * Removes the topology folders left by a kvlab that is gone (killed by SIGKILL, a crash).
 *
 * @returns What was removed, one line each.
 */
export function removeLeftTopologyDirs(): string[] {
  const root = Deno.env.get("TMPDIR") || "/tmp";
  const done: string[] = [];
  let names: string[];
  try {
    names = [...Deno.readDirSync(root)].filter((e) => e.isDirectory).map((e) => e.name);
  } catch {
    return done;
  }
  for (const name of names) {
    const pid = Number(new RegExp(`^${DIR_PREFIX}(\\d+)-`).exec(name)?.[1] ?? NaN);
    if (!Number.isInteger(pid) || pid === Deno.pid || processState(pid).state !== "gone") continue;
    try {
      Deno.removeSync(`${root}/${name}`, { recursive: true });
      done.push(`removed ${root}/${name}, left by kvlab pid ${pid} which is gone`);
    } catch { /* another user's, or removed meanwhile */ }
  }
  return done;
}

/**
 * Starts a prepared topology and waits until it serves (see the module's doc). On an error or
 * an abort, what was started is stopped and the folder removed before it throws.
 *
 * @param prepared The topology, checked by {@link prepareTopology}.
 * @param o The runner, a stop signal, the longest wait.
 * @returns The running topology.
 * @throws {TopologyError} When a server exits, the cluster is not created, or it is not ready
 * in time (with what the server or the client said).
 */
export async function startTopology(
  prepared: PreparedTopology,
  o: StartTopologyOptions,
): Promise<RunningTopology> {
  const t0 = performance.now();
  const { spec, program } = prepared;
  const dir = Deno.makeTempDirSync({ prefix: `${DIR_PREFIX}${Deno.pid}-` });
  const nodes: RunningNode[] = [];
  const stop = async () => {
    const problems = nodes.flatMap((n) =>
      n.ended ? [`${n.name} (pid ${n.pid}) had exited before the end: ${lastLines(n.log())}`] : []
    );
    await Promise.all(nodes.map((n) => n.stop()));
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) problems.push(`${dir} not removed: ${e}`);
    }
    return problems;
  };
  try {
    const tls = spec.tls ? await makeThrowawayCerts(dir, o) : undefined;
    const node = async (i: number, extra: { cluster?: boolean; replicaOf?: number }) => {
      const n = await startNode({
        runner: o.runner,
        program,
        name: `node ${i + 1}`,
        dir: `${dir}/node-${i + 1}`,
        tls,
        config: spec.config,
        signal: o.signal,
        ...extra,
      });
      nodes.push(n);
      return n;
    };
    const target = (port: number) => nodeTargetOf(port, tls);
    if (spec.cluster) {
      for (let i = 0; i < nodeCount(spec); i++) await node(i, { cluster: true });
      await createCluster(prepared, { nodes, tls, o });
    } else {
      const primary = await node(0, {});
      for (let i = 1; i < nodeCount(spec); i++) await node(i, { replicaOf: primary.port });
    }
    const roles = await waitReady(spec, nodes.map((n) => target(n.port)), o);
    const withRoles = nodes.map((n, i) =>
      Object.assign(n, { role: roles[i], target: target(n.port) })
    );
    const first = withRoles.find((n) => n.role === "primary")!;
    return {
      ...prepared,
      target: { ...target(first.port), ...(spec.cluster ? { cluster: true } : {}) },
      nodes: withRoles,
      dir,
      startMs: performance.now() - t0,
      stop,
    };
  } catch (e) {
    await stop();
    if (e instanceof TopologyError || e instanceof ToolNotFoundError) throw e;
    throw new TopologyError(`${describeTopology(spec)}: ${(e as Error).message}`);
  }
}

/** The target of one node: plaintext, or TLS with the CA and the client certificate. */
function nodeTargetOf(port: number, tls: TlsPaths | undefined): ServerTarget {
  const t = parseServerUrl(`${tls ? "rediss" : "redis"}://127.0.0.1:${port}`);
  return tls
    ? {
      ...t,
      tlsFiles: { caFile: tls.caFile, certFile: tls.clientCertFile, keyFile: tls.clientKeyFile },
    }
    : t;
}

/** `redis-cli --cluster create … --cluster-replicas R --cluster-yes`, failing with its words. */
async function createCluster(
  prepared: PreparedTopology,
  { nodes, tls, o }: { nodes: RunningNode[]; tls?: TlsPaths; o: StartTopologyOptions },
): Promise<void> {
  const argv = [
    prepared.cli,
    ...(tls
      ? ["--tls", "--cacert", tls.caFile, "--cert", tls.clientCertFile, "--key", tls.clientKeyFile]
      : []),
    "--cluster",
    "create",
    ...nodes.map((n) => `127.0.0.1:${n.port}`),
    "--cluster-replicas",
    String(prepared.spec.cluster!.replicas),
    "--cluster-yes",
  ];
  const r = await o.runner.run({ argv, timeoutMs: 60_000, capture: true, signal: o.signal });
  if (r.code === 0) return;
  const raw = new TextDecoder().decode(new Uint8Array([...(r.stdout ?? []), ...(r.stderr ?? [])]));
  // deno-lint-ignore no-control-regex -- the colours redis-cli may print
  const said = raw.replace(/\x1b\[[0-9;]*m/g, "");
  const lines = said.split("\n").map((l) => l.trim()).filter((l) => /ERR|rror|\[ERR\]/.test(l));
  throw new TopologyError(
    `${prepared.cli.split("/").pop()} --cluster create failed (${
      r.interrupted ? "interrupted" : r.timedOut ? "no end in 60 s" : `exit ${r.code ?? r.signal}`
    }): ${(lines.length ? lines : said.trim().split("\n").slice(-2)).join(" / ")}`,
  );
}

/** One INFO-style reply as fields. */
function fields(text: string): Map<string, string> {
  return new Map(
    text.split(/\r?\n/).filter((l) => l.includes(":")).map((l) => {
      const at = l.indexOf(":");
      return [l.slice(0, at), l.slice(at + 1).trim()];
    }),
  );
}

/**
 * Waits (bounded) until every node serves: each replica's link up, and in a cluster every node
 * at `cluster_state:ok` with 16384 slots ok and every node known. Returns each node's role.
 */
async function waitReady(
  spec: TopologySpec,
  targets: ServerTarget[],
  o: StartTopologyOptions,
): Promise<("primary" | "replica")[]> {
  const timeoutMs = o.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let lastWhy = "";
  for (;;) {
    if (o.signal?.aborted) throw new TopologyError("stopped while waiting for it to serve");
    const roles: ("primary" | "replica")[] = [];
    lastWhy = "";
    for (const [i, t] of targets.entries()) {
      const why = await nodeNotReady(spec, t, targets.length).catch((e: Error) => e.message);
      if (typeof why === "string") {
        lastWhy = `node ${i + 1} (127.0.0.1:${t.port}): ${why}`;
        break;
      }
      roles.push(why.role);
    }
    if (!lastWhy) return roles;
    if (Date.now() >= deadline) {
      throw new TopologyError(`not ready in ${timeoutMs / 1000} s: ${lastWhy}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Why a node does not serve yet, or its role. */
async function nodeNotReady(
  spec: TopologySpec,
  t: ServerTarget,
  count: number,
): Promise<string | { role: "primary" | "replica" }> {
  const client = await connect(t, 5000);
  try {
    const repl = fields(await client.info("replication"));
    const role = repl.get("role") === "slave" ? "replica" : "primary";
    if (role === "replica" && repl.get("master_link_status") !== "up") {
      return `replica link ${repl.get("master_link_status") ?? "unknown"}`;
    }
    if (spec.cluster) {
      const c = fields(String(await client.call("CLUSTER", "INFO")));
      if (c.get("cluster_state") !== "ok" || c.get("cluster_slots_ok") !== "16384") {
        return `cluster_state:${c.get("cluster_state")}, ${
          c.get("cluster_slots_ok")
        } of 16384 slots ok`;
      }
      if (Number(c.get("cluster_known_nodes")) !== count) {
        return `knows ${c.get("cluster_known_nodes")} of ${count} nodes`;
      }
    }
    return { role };
  } finally {
    client.disconnect();
  }
}
