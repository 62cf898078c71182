/**
 * A plan's server entry beyond its URL, for a server someone else runs: `cluster: true`,
 * `tls: { ca_file, cert_file, key_file, insecure }` (a `rediss://` URL with a private CA), and
 * `password_env: NAME` (the password read from the environment, never written in the plan).
 *
 * @module
 */

import type { PlanReader } from "./reader.ts";
import { type ServerTarget, type TlsFiles, withTargetOptions } from "../target.ts";

/** The fields of a server entry this module reads. */
export const TARGET_OPTION_FIELDS = ["cluster", "tls", "password_env"] as const;

const TLS_FIELDS = ["ca_file", "cert_file", "key_file", "insecure"];

/**
 * The target of a server entry with its options applied (see {@link withTargetOptions}).
 *
 * @param read The plan.
 * @param path The server entry (`["servers", i]`).
 * @param target Its URL's target.
 * @returns The target.
 * @throws {PlanError} At the field that is wrong.
 *
 * @example
 * ```ts
 * import { parsePlan } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const plan = parsePlan("name: p\nservers:\n  - name: a\n    url: rediss://127.0.0.1:7000\n" +
 *   "    cluster: true\n    tls: { ca_file: ca.crt }\ntests: [get]\n", "p.yaml");
 * assert.deepEqual([plan.servers[0].target.cluster, plan.servers[0].target.tlsFiles],
 *   [true, { caFile: "ca.crt" }]);
 * assert.throws(() => parsePlan("name: p\nservers:\n  - name: a\n    url: redis://h\n" +
 *   "    tls: { ca_file: ca.crt }\ntests: [get]\n", "p.yaml"), /p\.yaml:5:\d+: servers\.0\.tls: needs a rediss/);
 * ```
 */
export function readTargetOptions(
  read: PlanReader,
  path: (string | number)[],
  target: ServerTarget,
): ServerTarget {
  const cluster = read.value([...path, "cluster"]) === undefined
    ? undefined
    : read.boolean([...path, "cluster"], false);
  let tls: TlsFiles | undefined;
  if (read.value([...path, "tls"]) !== undefined) {
    read.section([...path, "tls"], TLS_FIELDS, `expected { ${TLS_FIELDS.join(", ")} }`);
    const file = (k: string) =>
      read.value([...path, "tls", k]) === undefined ? undefined : read.string([...path, "tls", k]);
    tls = Object.fromEntries(
      Object.entries({
        caFile: file("ca_file"),
        certFile: file("cert_file"),
        keyFile: file("key_file"),
        insecure: read.value([...path, "tls", "insecure"]) === undefined
          ? undefined
          : read.boolean([...path, "tls", "insecure"], false),
      }).filter(([, v]) => v !== undefined),
    );
  }
  const passwordEnv = read.value([...path, "password_env"]) === undefined
    ? undefined
    : read.string([...path, "password_env"]);
  try {
    return withTargetOptions(target, { cluster, tls, passwordEnv });
  } catch (e) {
    const field = /^(\w+):/.exec((e as Error).message)?.[1] ?? "url";
    return read.fail([...path, field], (e as Error).message.replace(/^\w+: /, ""), "");
  }
}
