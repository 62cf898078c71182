/**
 * What a step learns of its server's topology before it runs: TLS (the CA's PEM read from its
 * file), cluster mode (declared, or detected from INFO `cluster_enabled:1` and said so), the
 * cluster's slot map, and each master's command counts before and after the run for the
 * cross-check of the generator's total.
 *
 * @module
 */

import type { ServerTarget } from "../../target.ts";
import type { InfoField } from "../../formats/info/info.ts";
import {
  clusterEnabled,
  crossCheckNodes,
  nodeCalls,
  type NodeCrossCheck,
  readSlotMap,
} from "../../cluster/nodes.ts";
import type { TopologyOptions } from "./engine.ts";

export type { NodeCrossCheck };

/** A step's topology, ready to run. */
export interface StepTopology {
  /** What the generator is given (TLS PEMs, the slot map). */
  options: TopologyOptions;
  /** What kvlab says of it (cluster mode detected). */
  notes: string[];
  /**
   * The per-node counts after the run and their cross-check with the generator's count of
   * GET/SET answered without error, warm-up included (null when not a cluster).
   */
  after(answered: number): Promise<NodeCrossCheck | null>;
}

function readPem(what: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return Deno.readTextFileSync(path);
  } catch (e) {
    throw new Error(`TLS: cannot read the ${what} file ${path}: ${(e as Error).message}`);
  }
}

/**
 * The topology of a step's target.
 *
 * @param target The server.
 * @param info Its INFO before the step.
 * @returns The topology, or why the step cannot run (a cluster without a slot map, a TLS file
 * that cannot be read).
 */
export async function stepTopology(
  target: ServerTarget,
  info: readonly InfoField[] | undefined,
): Promise<StepTopology | { reason: string }> {
  const options: TopologyOptions = {};
  const notes: string[] = [];
  try {
    if (target.tls) {
      const f = target.tlsFiles ?? {};
      const ca = readPem("CA", f.caFile);
      options.tls = {
        ...(ca ? { caCerts: [ca] } : {}),
        ...(f.certFile ? { cert: readPem("certificate", f.certFile) } : {}),
        ...(f.keyFile ? { key: readPem("key", f.keyFile) } : {}),
      };
    }
    const detected = clusterEnabled(info);
    if (!target.cluster && !detected) return { options, notes, after: () => Promise.resolve(null) };
    if (!target.cluster) {
      notes.push(
        `cluster mode detected from INFO (cluster_enabled:1) on ${target.display}: requests go ` +
          "to each key's master, MOVED and ASK followed",
      );
    }
    if (target.cluster && !detected && info !== undefined) {
      return { reason: `${target.display} is not a cluster node (INFO cluster_enabled:0)` };
    }
    const map = await readSlotMap(target);
    options.cluster = map;
    const before = await nodeCalls(target, map);
    return {
      options,
      notes,
      after: async (answered) => crossCheckNodes(before, await nodeCalls(target, map), answered),
    };
  } catch (e) {
    return { reason: (e as Error).message };
  }
}
