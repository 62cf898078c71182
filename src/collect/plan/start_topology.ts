/**
 * The topology fields of a plan server's `start:` (without `container: true`): `version`,
 * `config`, `tls`, `replicas`, `cluster: { shards, replicas }`. Each mistake at its line.
 *
 * @module
 */

import {
  MAX_TOPOLOGY_NODES,
  MIN_CLUSTER_SHARDS,
  nodeCount,
  settingAllowed,
  type TopologySpec,
} from "../topology/spec.ts";
import type { PlanPath, PlanReader } from "./reader.ts";

/** The topology fields of `start:`. */
export const TOPOLOGY_FIELDS = ["version", "config", "tls", "replicas", "cluster"] as const;

/**
 * Reads the topology fields of a `start:` (all optional: a standalone plaintext server).
 *
 * @param read The plan.
 * @param path The `start` field.
 * @returns The fields given.
 * @throws {PlanError} At the field that is wrong.
 *
 * @example
 * ```ts
 * import { parsePlan } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = (start: string) => parsePlan("name: p\nservers:\n  - name: c\n    start: " + start +
 *   "\ntests: [get]\n", "p.yaml");
 * const s = plan("{ engine: redis, tls: true, cluster: { shards: 3, replicas: 1 }, config: { io-threads: 2 } }");
 * assert.deepEqual(s.servers[0].start, { engine: "redis", tls: true,
 *   cluster: { shards: 3, replicas: 1 }, config: { "io-threads": "2" } });
 * assert.throws(() => plan("{ engine: redis, cluster: { shards: 1 } }"),
 *   /p\.yaml:4:\d+: servers\.0\.start\.cluster\.shards: expected an integer ≥ 3/);
 * assert.throws(() => plan("{ engine: redis, config: { port: 7000 } }"), /config\.port: kvlab sets it/);
 * ```
 */
export function readTopologyStart(
  read: PlanReader,
  path: PlanPath,
): Partial<Omit<TopologySpec, "engine">> {
  const out: Partial<Omit<TopologySpec, "engine">> = {};
  const has = (k: string) => read.value([...path, k]) !== undefined;
  if (has("version")) {
    const raw = read.value([...path, "version"]);
    const v = typeof raw === "number" ? String(raw) : raw;
    if (typeof v !== "string" || !/^\d+(\.\d+){0,2}$/.test(v)) {
      read.fail([...path, "version"], 'expected a version: "7", "7.0" or "7.0.15" (quoted)');
    }
    out.version = v;
  }
  if (has("config")) out.config = readConfig(read, [...path, "config"]);
  if (has("tls")) out.tls = read.boolean([...path, "tls"], false);
  if (has("replicas")) out.replicas = read.integer([...path, "replicas"], 0, 0);
  if (has("cluster")) {
    const c = [...path, "cluster"];
    read.section(c, ["shards", "replicas"], "expected { shards: N, replicas: R }");
    out.cluster = {
      shards: read.integer([...c, "shards"], undefined, MIN_CLUSTER_SHARDS),
      replicas: read.integer([...c, "replicas"], 0, 0),
    };
    if (has("replicas")) {
      read.fail(
        [...path, "replicas"],
        "a cluster's replicas are cluster: { replicas: R } (replicas: is a standalone primary's)",
      );
    }
  }
  if (nodeCount(out) > MAX_TOPOLOGY_NODES) {
    read.fail(
      [...path, out.cluster ? "cluster" : "replicas"],
      `at most ${MAX_TOPOLOGY_NODES} server processes (this is ${nodeCount(out)})`,
    );
  }
  if (!out.replicas) delete out.replicas;
  return out;
}

/** `config:`: setting names to strings, numbers or booleans (yes/no). */
function readConfig(read: PlanReader, path: PlanPath): Record<string, string> {
  const config: Record<string, string> = {};
  for (const [k, v] of Object.entries(read.mapping(path, "expected { setting: value, … }"))) {
    if (!/^[a-z][a-z0-9-]*$/.test(k)) {
      read.fail([...path, k], "expected a server setting name (lower case, digits, '-')", "");
    }
    if (!settingAllowed(k)) {
      read.fail(
        [...path, k],
        "kvlab sets it on the servers it starts (ports, files, TLS, cluster and replication " +
          "wiring, passwords)",
        "",
      );
    }
    if (typeof v === "boolean") config[k] = v ? "yes" : "no";
    else if (typeof v === "number" || (typeof v === "string" && !/[\0\n\r]/.test(v))) {
      config[k] = String(v);
    } else read.fail([...path, k], "expected a string, number or boolean");
  }
  return config;
}
