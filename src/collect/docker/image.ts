/**
 * Local server images without a registry: `kvlab/redis:<version>` and `kvlab/valkey:<version>`
 * made by `docker import` of a root file system that holds the installed server binary (as
 * `/usr/bin/<engine>-server`) and the libraries `ldd` lists, labelled with the binary's version
 * and SHA-256. An image whose labels match the installed binary is reused; the build folder is
 * removed however the build ends.
 *
 * @module
 */

import { findTool } from "../tools/find.ts";
import { ToolNotFoundError } from "../process.ts";
import type { DockerEngine } from "./engine.ts";
import { dockerCacheDir } from "./private_engine.ts";

/** The servers kvlab can put in a container. */
export const SERVER_ENGINES = ["redis", "valkey"] as const;

/** A server kvlab can put in a container. */
export type ServerEngine = typeof SERVER_ENGINES[number];

/** A server image, ready to run. */
export interface ServerImage {
  /** `kvlab/redis:7.0.15`. */
  tag: string;
  engine: ServerEngine;
  /** The server's version, from its `--version`. */
  version: string;
  /** SHA-256 of the binary inside. */
  sha256: string;
  /** The installed binary it was made from. */
  binary: string;
  /** Whether it was built now (false: an image with the same labels was reused). */
  built: boolean;
  /** How long building or finding it took, ms. */
  ms: number;
}

/**
 * The libraries `ldd` lists for a binary (the loader included), as absolute paths.
 *
 * @param text ldd's output.
 * @returns The paths, in order.
 * @throws {Error} When a library is `not found`.
 *
 * @example
 * ```ts
 * import { parseLdd } from "./image.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(parseLdd(
 *   "\tlinux-vdso.so.1 (0x00007ffd)\n" +
 *     "\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f04)\n" +
 *     "\t/lib64/ld-linux-x86-64.so.2 (0x00007f04)\n",
 * ), ["/lib/x86_64-linux-gnu/libm.so.6", "/lib64/ld-linux-x86-64.so.2"]);
 * assert.throws(() => parseLdd("\tlibx.so.1 => not found\n"), /libx\.so\.1 => not found/);
 * ```
 */
export function parseLdd(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (/=>\s*not found/.test(line)) throw new Error(`ldd: ${line}`);
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^(\/\S+)/.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}

/**
 * The version a server prints for `--version` (`Redis server v=7.0.15 sha=…`).
 *
 * @param text Its output.
 * @returns The version, or null.
 *
 * @example
 * ```ts
 * import { serverBinaryVersion } from "./image.ts";
 * import assert from "node:assert/strict";
 * assert.equal(serverBinaryVersion("Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0"), "7.0.15");
 * assert.equal(serverBinaryVersion("Valkey server v=8.0.1 sha=00000000:0"), "8.0.1");
 * assert.equal(serverBinaryVersion("nope"), null);
 * ```
 */
export function serverBinaryVersion(text: string): string | null {
  return /\bv=([0-9][\w.+-]*)/.exec(text)?.[1] ?? null;
}

/**
 * The image tag and labels of a server binary.
 *
 * @param engine redis or valkey.
 * @param version Its version.
 * @param sha256 Its checksum.
 * @returns The tag and the `docker import --change` values.
 *
 * @example
 * ```ts
 * import { imageSpec } from "./image.ts";
 * import assert from "node:assert/strict";
 * const s = imageSpec("redis", "7.0.15", "ab12");
 * assert.equal(s.tag, "kvlab/redis:7.0.15");
 * assert.deepEqual(s.changes, [
 *   'LABEL kvlab.engine="redis" kvlab.version="7.0.15" kvlab.sha256="ab12"',
 *   'ENTRYPOINT ["/usr/bin/redis-server"]',
 *   "WORKDIR /data",
 * ]);
 * ```
 */
export function imageSpec(
  engine: ServerEngine,
  version: string,
  sha256: string,
): { tag: string; changes: string[] } {
  if (!/^[\w.+-]+$/.test(version)) throw new TypeError(`invalid server version: ${version}`);
  return {
    tag: `kvlab/${engine}:${version.replaceAll("+", "_")}`,
    changes: [
      `LABEL kvlab.engine="${engine}" kvlab.version="${version}" kvlab.sha256="${sha256}"`,
      `ENTRYPOINT ["/usr/bin/${engine}-server"]`,
      "WORKDIR /data",
    ],
  };
}

/** The installed server binary of an engine (PATH, then kvlab's tools cache), resolved. */
function serverBinary(engine: ServerEngine): { program: string; file: string } {
  const program = findTool(`${engine}-server`);
  if (program === null) throw new ToolNotFoundError(`${engine}-server`);
  // Debian's redis-server is a link to redis-check-rdb; the binary acts on its own name
  return { program, file: Deno.realPathSync(program) };
}

async function sha256Of(path: string): Promise<string> {
  const bytes = await Deno.readFile(path);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Runs a program with the engine's runner; its stdout, or an Error with what it printed. */
async function output(engine: DockerEngine, argv: string[]): Promise<string> {
  const r = await engine.runner.run({ argv, timeoutMs: 60_000, capture: true });
  const dec = new TextDecoder();
  if (r.code === 0) return dec.decode(r.stdout ?? new Uint8Array());
  const err = dec.decode(r.stderr ?? new Uint8Array()).trim();
  throw new Error(`${argv.join(" ")} failed: ${err || `exit ${r.code ?? r.signal}`}`);
}

/**
 * The image of the installed server of `engine`: reused when the engine holds one whose labels
 * name the same binary (version and SHA-256), else built from the binary and its libraries.
 *
 * @param engine The Docker engine.
 * @param server redis or valkey.
 * @returns The image.
 * @throws {ToolNotFoundError} When the server is not installed.
 * @throws {Error} When ldd, tar or docker import fail (with what they said).
 */
export async function serverImage(
  engine: DockerEngine,
  server: ServerEngine,
): Promise<ServerImage> {
  const t0 = performance.now();
  const { program, file } = serverBinary(server);
  const version = serverBinaryVersion(await output(engine, [program, "--version"]));
  if (version === null) throw new Error(`${program} --version: no version in its answer`);
  const sha256 = await sha256Of(file);
  const spec = imageSpec(server, version, sha256);
  const base = { tag: spec.tag, engine: server, version, sha256, binary: file };
  if (await labelledSha(engine, spec.tag) === sha256) {
    return { ...base, built: false, ms: performance.now() - t0 };
  }
  const dir = buildFolder();
  try {
    const root = `${dir}/root`;
    for (const d of ["usr/bin", "tmp", "data"]) Deno.mkdirSync(`${root}/${d}`, { recursive: true });
    Deno.chmodSync(`${root}/tmp`, 0o1777);
    Deno.copyFileSync(file, `${root}/usr/bin/${server}-server`);
    for (const lib of parseLdd(await output(engine, ["ldd", file]))) {
      Deno.mkdirSync(`${root}${lib.slice(0, lib.lastIndexOf("/"))}`, { recursive: true });
      Deno.copyFileSync(lib, `${root}${lib}`); // the file a link names, under the link's path
    }
    await output(engine, ["tar", "-C", root, "-cf", `${dir}/root.tar`, "."]);
    await engine.run(
      ["import", ...spec.changes.flatMap((c) => ["--change", c]), `${dir}/root.tar`, spec.tag],
      { timeoutMs: 120_000 },
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  return { ...base, built: true, ms: performance.now() - t0 };
}

/** The `kvlab.sha256` label of an image, or null when there is no such image. */
async function labelledSha(engine: DockerEngine, tag: string): Promise<string | null> {
  try {
    const out = await engine.run(["image", "inspect", "--format", "{{json .Config.Labels}}", tag]);
    const labels = JSON.parse(out.trim() || "null") as Record<string, string> | null;
    return labels?.["kvlab.sha256"] ?? null;
  } catch {
    return null; // no such image
  }
}

/** A new build folder: in kvlab's docker cache (removed after the build), else in /tmp. */
function buildFolder(): string {
  const cache = dockerCacheDir(Deno.env.toObject());
  if (cache === null) return Deno.makeTempDirSync({ prefix: "kvlab-image-" });
  Deno.mkdirSync(cache, { recursive: true });
  return Deno.makeTempDirSync({ dir: cache, prefix: `build-${Deno.pid}-` });
}
