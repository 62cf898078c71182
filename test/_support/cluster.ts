/**
 * Test support: topologies on loopback ports, made of real redis-servers: a Redis Cluster of
 * masters (`redis-cli --cluster create`), and a TLS server with a throwaway CA made by openssl.
 * Every process is stopped by its PID and every file removed afterwards, passed or failed.
 *
 * @module
 */

import { freePort, type LocalServer, startLocalServer } from "../../src/collect/redis_server.ts";
import { withTempDir } from "./temp.ts";

/** A running cluster: its masters, in the order given to `--cluster create`. */
export interface TestCluster {
  nodes: LocalServer[];
  /** `redis://127.0.0.1:<port>` of the first node. */
  url: string;
}

async function run(argv: string[], cwd?: string): Promise<string> {
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${argv.join(" ")} failed (${out.code}): ${text}`);
  return text;
}

/** INFO/CLUSTER INFO through redis-cli, with up to `tries` polls until `ok` says so. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  tries = 200,
): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** `redis-cli -p PORT …` (plaintext), its output. */
export function cli(port: number, ...args: string[]): Promise<string> {
  return run(["redis-cli", "-p", String(port), ...args]);
}

/**
 * Runs `fn` with a fresh cluster of `masters` redis-servers (no replicas), every slot covered
 * and `cluster_state:ok` on every node; the servers are stopped by PID afterwards.
 */
export function withCluster<T>(
  masters: number,
  fn: (c: TestCluster) => Promise<T>,
): Promise<T> {
  return withTempDir("kvlab-cluster-", async (dir) => {
    const nodes: LocalServer[] = [];
    try {
      for (let i = 0; i < masters; i++) {
        nodes.push(
          await startLocalServer({
            args: [
              "--cluster-enabled",
              "yes",
              "--cluster-config-file",
              `${dir}/nodes-${i}.conf`,
              // (the bus port: port + 10000 may be past 65535 for an ephemeral port)
              "--cluster-port",
              String(freePort()),
              "--dir",
              dir,
              "--cluster-node-timeout",
              "5000",
            ],
          }),
        );
      }
      await run([
        "redis-cli",
        "--cluster",
        "create",
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        "--cluster-replicas",
        "0",
        "--cluster-yes",
      ]);
      for (const n of nodes) {
        await waitFor(
          `cluster_state:ok on port ${n.port}`,
          async () => /cluster_state:ok/.test(await cli(n.port, "cluster", "info")),
        );
      }
      return await fn({ nodes, url: `redis://127.0.0.1:${nodes[0].port}` });
    } finally {
      for (const n of nodes) await n.stop();
    }
  });
}

/** Files of a throwaway CA and a server certificate for 127.0.0.1 signed by it. */
export interface TestCa {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** Makes a CA (`name`) and a certificate for 127.0.0.1 signed by it, in `dir`, with openssl. */
export async function makeCa(dir: string, name = "ca"): Promise<TestCa> {
  const p = (f: string) => `${dir}/${name}-${f}`;
  const subj = (cn: string) => ["-subj", `/CN=${cn}`];
  await run([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-keyout",
    p("ca.key"),
    "-out",
    p("ca.crt"),
    ...subj(`kvlab test ${name}`),
  ]);
  await run([
    "openssl",
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    p("server.key"),
    "-out",
    p("server.csr"),
    ...subj("127.0.0.1"),
  ]);
  Deno.writeTextFileSync(p("ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  await run([
    "openssl",
    "x509",
    "-req",
    "-in",
    p("server.csr"),
    "-CA",
    p("ca.crt"),
    "-CAkey",
    p("ca.key"),
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    p("ext.cnf"),
    "-out",
    p("server.crt"),
  ]);
  return { caFile: p("ca.crt"), certFile: p("server.crt"), keyFile: p("server.key") };
}

/** A running TLS server: its plaintext port (for checks), its TLS port and URL, its CA. */
export interface TlsServer {
  server: LocalServer;
  tlsPort: number;
  /** `rediss://127.0.0.1:<tlsPort>` */
  url: string;
  ca: TestCa;
  /** A second CA that did not sign the server's certificate. */
  otherCa: TestCa;
}

/**
 * Runs `fn` with a redis-server listening on a plaintext port and a TLS port (its certificate
 * signed by a throwaway CA; clients need no certificate), stopped by PID afterwards.
 */
export function withTlsServer<T>(fn: (s: TlsServer) => Promise<T>): Promise<T> {
  return withTempDir("kvlab-tls-", async (dir) => {
    const ca = await makeCa(dir, "ca");
    const otherCa = await makeCa(dir, "other");
    const tlsPort = freePort();
    const server = await startLocalServer({
      args: [
        "--tls-port",
        String(tlsPort),
        "--tls-cert-file",
        ca.certFile,
        "--tls-key-file",
        ca.keyFile,
        "--tls-ca-cert-file",
        ca.caFile,
        "--tls-auth-clients",
        "no",
      ],
    });
    try {
      return await fn({ server, tlsPort, url: `rediss://127.0.0.1:${tlsPort}`, ca, otherCa });
    } finally {
      await server.stop();
    }
  });
}
