/**
 * A throwaway certificate authority for a TLS topology, made with openssl: a CA, a server
 * certificate for 127.0.0.1 and localhost, and a client certificate, all signed by it, valid
 * for a day, in a folder the caller owns and removes (nothing of it is kept or stored).
 *
 * @module
 */

import type { ProcessRunner } from "../process.ts";
import type { TlsPaths } from "./spec.ts";

/** Options of {@link makeThrowawayCerts}. */
export interface ThrowawayCertsOptions {
  /** Starts openssl. */
  runner: ProcessRunner;
  /** Aborting stops openssl. */
  signal?: AbortSignal;
}

/** The extensions of the two certificates (`server.ext`, `client.ext` beside them). */
export const CERT_EXTENSIONS = {
  server: "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
  client: "extendedKeyUsage=clientAuth\n",
} as const;

/**
 * The openssl commands that make the CA and the two certificates in `dir` (P-256 keys: quick
 * to make), in order.
 *
 * @param dir The folder.
 * @returns One argv per command.
 *
 * @example
 * ```ts
 * import { certCommands } from "./certs.ts";
 * import assert from "node:assert/strict";
 * const argvs = certCommands("/t");
 * assert.equal(argvs.length, 5);
 * assert.deepEqual(argvs[0].slice(0, 3), ["openssl", "req", "-x509"]);
 * assert.ok(argvs[2].includes("/t/server.ext"));
 * ```
 */
export function certCommands(dir: string): string[][] {
  const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const req = (name: string) => [
    "openssl",
    "req",
    ...key,
    "-keyout",
    `${dir}/${name}.key`,
    "-out",
    `${dir}/${name}.csr`,
    "-subj",
    `/CN=kvlab ${name}`,
  ];
  const sign = (name: string, serial: number) => [
    "openssl",
    "x509",
    "-req",
    "-in",
    `${dir}/${name}.csr`,
    "-CA",
    `${dir}/ca.crt`,
    "-CAkey",
    `${dir}/ca.key`,
    "-set_serial",
    String(serial),
    "-days",
    "1",
    "-extfile",
    `${dir}/${name}.ext`,
    "-out",
    `${dir}/${name}.crt`,
  ];
  return [
    [
      "openssl",
      "req",
      "-x509",
      ...key,
      "-days",
      "1",
      "-keyout",
      `${dir}/ca.key`,
      "-out",
      `${dir}/ca.crt`,
      "-subj",
      "/CN=kvlab throwaway CA",
    ],
    req("server"),
    sign("server", 1),
    req("client"),
    sign("client", 2),
  ];
}

/**
 * Makes the CA and certificates in `dir` (see {@link certCommands}).
 *
 * @param dir A folder only kvlab's user can read (the keys are in it).
 * @param o The runner.
 * @returns Their paths.
 * @throws {Error} When openssl fails or is missing (with what it said).
 */
export async function makeThrowawayCerts(
  dir: string,
  o: ThrowawayCertsOptions,
): Promise<TlsPaths> {
  for (const [name, text] of Object.entries(CERT_EXTENSIONS)) {
    Deno.writeTextFileSync(`${dir}/${name}.ext`, text);
  }
  for (const argv of certCommands(dir)) {
    const r = await o.runner.run({ argv, timeoutMs: 30_000, capture: true, signal: o.signal });
    if (r.code !== 0) {
      const said = new TextDecoder().decode(r.stderr ?? new Uint8Array()).trim().split("\n");
      throw new Error(
        `TLS certificates: ${argv.slice(0, 2).join(" ")} failed (${
          r.interrupted ? "interrupted" : `exit ${r.code ?? r.signal}`
        }): ${said.slice(-2).join(" ")}`,
      );
    }
  }
  return {
    caFile: `${dir}/ca.crt`,
    certFile: `${dir}/server.crt`,
    keyFile: `${dir}/server.key`,
    clientCertFile: `${dir}/client.crt`,
    clientKeyFile: `${dir}/client.key`,
  };
}
