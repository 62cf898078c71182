/**
 * A failover run's slot migration (action `reshard`): the engine's own cli (`valkey-cli` or
 * `redis-cli`, found as the topology finds it) runs `--cluster reshard` moving slots from one
 * master to another while the load runs; its output is kept as the run's raw `reshard.txt`, and a
 * cli that fails fails the action with its words. And the per-master cross-check of a cluster
 * failover run whose masters stayed the same (the load's total against INFO commandstats).
 *
 * @module
 */

import type { ProcessRunner } from "../process.ts";
import { call, type Node } from "./nodes.ts";
import { crossCheckNodes, type NodeCalls, nodeCalls, readSlotMap } from "../cluster/nodes.ts";
import type { NodeCrossCheck } from "../cluster/nodes.ts";
import type { SlotMap } from "../cluster/slots.ts";
import { DEFAULT_RESHARD_SLOTS, type FailoverAction } from "./spec.ts";
import type { ServerTarget } from "../target.ts";

/** A reshard's cli that failed: its words in the message, its whole output kept. */
export class ReshardError extends Error {
  override name = "ReshardError";
  /**
   * @param output Its command line and output.
   * @param message Its words.
   */
  constructor(readonly output: string, message: string) {
    super(message);
  }
}

/** What a reshard's cli did. */
export interface ReshardDone {
  /** Its command line. */
  argv: string[];
  /** Its stdout and stderr, colours removed (the run's raw `reshard.txt`). */
  output: string;
  durationMs: number;
}

// deno-lint-ignore no-control-regex -- the colours redis-cli may print
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

/**
 * The lines of a cli's output that say why it failed (its `[ERR]` and error lines), else its
 * last two lines.
 *
 * @param output What it printed.
 * @returns Its words, joined by ` / `.
 *
 * @example
 * ```ts
 * import { cliWords } from "./reshard.ts";
 * import assert from "node:assert/strict";
 * assert.equal(cliWords(">>> Check\n[ERR] Nodes don't agree about configuration!\nbye\n"),
 *   "[ERR] Nodes don't agree about configuration!");
 * assert.equal(cliWords("a\nb\nc\n"), "b / c");
 * ```
 */
export function cliWords(output: string): string {
  const said = plain(output);
  const lines = said.split("\n").map((l) => l.trim()).filter((l) => /ERR|rror/.test(l));
  return (lines.length ? lines : said.trim().split("\n").slice(-2)).join(" / ");
}

/**
 * Runs `cli --cluster reshard` moving `slots` slots of `from` to `to` (node ids read with
 * `CLUSTER MYID`), `--cluster-yes`.
 *
 * @param o The cli, the runner, the two masters, the slot count, the signal.
 * @returns Its command line, output and duration.
 * @throws {ReshardError} When it fails, with its words (`[ERR] …`) and how it ended.
 */
export async function runReshard(o: {
  cli: string;
  runner: ProcessRunner;
  from: Pick<Node, "port" | "target">;
  to: Pick<Node, "target">;
  slots: number;
  signal?: AbortSignal;
}): Promise<ReshardDone> {
  const fromId = String(await call(o.from, "CLUSTER", "MYID"));
  const toId = String(await call(o.to, "CLUSTER", "MYID"));
  const argv = [
    o.cli,
    "--cluster",
    "reshard",
    `127.0.0.1:${o.from.port}`,
    "--cluster-from",
    fromId,
    "--cluster-to",
    toId,
    "--cluster-slots",
    String(o.slots),
    "--cluster-yes",
  ];
  const r = await o.runner.run({ argv, timeoutMs: 300_000, capture: true, signal: o.signal });
  const output = plain(
    new TextDecoder().decode(new Uint8Array([...(r.stdout ?? []), ...(r.stderr ?? [])])),
  );
  if (r.code !== 0) {
    const name = o.cli.split("/").pop();
    throw new ReshardError(
      `$ ${argv.join(" ")}\n${output}`,
      `${name} --cluster reshard failed (${
        r.interrupted
          ? "interrupted"
          : r.timedOut
          ? "no end in 300 s"
          : `exit ${r.code ?? r.signal}`
      }): ${cliWords(output)}`,
    );
  }
  return { argv, output, durationMs: r.durationMs };
}

/**
 * The action `reshard` of a failover run: the target master (`to`, or the first other master of
 * the slot map), `action` marked as the cli starts and `action_done` when it exits 0; its
 * output kept (also when it fails, then with its words thrown).
 *
 * @param o The cli and runner, the slot map and nodes, the node moved from and the action, what
 * marks an event and what keeps the output.
 * @throws {Error} When `to` is no other master, or the cli fails.
 */
export async function reshardAction(o: {
  cli: string;
  runner: ProcessRunner;
  signal?: AbortSignal;
  map: SlotMap;
  nodes: readonly Node[];
  node: Node;
  action: FailoverAction;
  mark: (event: "action" | "action_done", n: Node, detail: string) => void;
  keep: (output: string) => void;
}): Promise<void> {
  const { map, node, action: a } = o;
  const masterPorts = new Set(Array.from(map.slotNode, (i) => map.nodes[i].port));
  const to = a.to
    ? o.nodes.find((n) => n.name === a.to)
    : o.nodes.find((n) => n !== node && masterPorts.has(n.port));
  if (!to || to === node || !masterPorts.has(to.port)) {
    throw new Error(`to: ${a.to ?? "no other master"} is not another master of the cluster`);
  }
  const slots = a.slots ?? DEFAULT_RESHARD_SLOTS;
  const name = o.cli.split("/").pop();
  o.mark("action", node, `${name} --cluster reshard: ${slots} slots to ${to.name}`);
  try {
    const done = await runReshard({ ...o, from: node, to, slots });
    o.keep(`$ ${done.argv.join(" ")}\n${done.output}`);
  } catch (e) {
    o.keep(e instanceof ReshardError ? `${e.output}\n${e.message}\n` : (e as Error).message);
    throw e;
  }
  o.mark("action_done", to, `${name} --cluster reshard exited 0: ${slots} slots moved`);
}

/** The masters' calls before a cluster failover run, and how to cross-check them after. */
export interface MasterCalls {
  map: SlotMap;
  before: (NodeCalls | null)[];
}

/**
 * Each master's GET/SET calls before the run (null when they cannot be read).
 *
 * @param target A node of the cluster.
 * @returns The masters and their calls.
 */
export async function mastersBefore(target: ServerTarget): Promise<MasterCalls | null> {
  try {
    const map = await readSlotMap(target);
    return { map, before: await nodeCalls(target, map) };
  } catch {
    return null;
  }
}

/**
 * The cross-check after the run: the load's GET/SET answered without error against the sum of
 * the masters' commandstats deltas, when the masters are the ones of before (a reshard, a stop
 * with no promotion); null with the reason when they changed (a replica promoted serves calls
 * the masters of before did not, and a demoted one executes the replicated writes).
 *
 * @param target A node of the cluster (one still running).
 * @param m The masters before.
 * @param answered The load's requests answered without error.
 * @returns The check, or the reason there is none.
 */
export async function mastersAfter(
  target: ServerTarget,
  m: MasterCalls,
  answered: number,
): Promise<NodeCrossCheck | { none: string }> {
  const key = (map: SlotMap) =>
    [...new Set(Array.from(map.slotNode))].map((i) => `${map.nodes[i].host}:${map.nodes[i].port}`)
      .sort()
      .join(",");
  let now: SlotMap;
  try {
    now = await readSlotMap(target);
  } catch (e) {
    return { none: `no slot map after the run: ${(e as Error).message}` };
  }
  if (key(now) !== key(m.map)) {
    return { none: `the masters changed (${key(m.map)} before, ${key(now)} after)` };
  }
  return crossCheckNodes(m.before, await nodeCalls(target, m.map), answered);
}
