/**
 * A server in a container that kvlab starts: the image of the installed server (`./image.ts`)
 * on the host's network (`--network host`) and a free loopback port, without persistence,
 * with an optional memory limit (no swap beyond it), CPU quota and CPU list; labelled with
 * kvlab's pid. It is removed (`docker rm -f`) when the plan ends. `docker inspect` says how a
 * container is doing: running, or exited with its code, and whether the kernel killed it for
 * lack of memory (OOM).
 *
 * @module
 */

import { freePort } from "../redis_server.ts";
import { connect } from "../server.ts";
import { parseServerUrl } from "../target.ts";
import { infoNumber, parseInfo } from "../formats/info/info.ts";
import type { DockerEngine } from "./engine.ts";
import type { ServerImage } from "./image.ts";

/** A container's state, as `docker inspect` gives it. */
export interface ContainerState {
  /** created, running, exited, … */
  status: string;
  running: boolean;
  /** The kernel killed it for lack of memory (its cgroup's limit). */
  oomKilled: boolean;
  exitCode: number | null;
  /** Docker's own error, when it has one. */
  error: string | null;
}

/** What `docker inspect` says of a container. */
export interface ContainerFacts {
  name: string;
  id: string;
  image: string;
  /** `--memory`, or null without a limit. */
  memoryLimitBytes: number | null;
  /** `--cpus`, or null without a quota. */
  cpus: number | null;
  /** `--cpuset-cpus`, or null. */
  cpusetCpus: string | null;
  state: ContainerState;
}

/**
 * Reads `docker inspect NAME` (a JSON array of one container).
 *
 * @param json docker's output.
 * @returns The container's facts.
 * @throws {SyntaxError} When the text is not one container's inspect.
 *
 * @example
 * ```ts
 * import { parseInspect } from "./container.ts";
 * import assert from "node:assert/strict";
 * const f = parseInspect(JSON.stringify([{
 *   Id: "e209e83ef63b", Name: "/kvlab-m-redis", Config: { Image: "kvlab/redis:7.0.15" },
 *   HostConfig: { Memory: 67108864, NanoCpus: 1500000000, CpusetCpus: "" },
 *   State: { Status: "exited", Running: false, OOMKilled: true, ExitCode: 137, Error: "" },
 * }]));
 * assert.deepEqual([f.name, f.memoryLimitBytes, f.cpus, f.cpusetCpus], ["kvlab-m-redis", 67108864, 1.5, null]);
 * assert.deepEqual(f.state, { status: "exited", running: false, oomKilled: true, exitCode: 137, error: null });
 * assert.throws(() => parseInspect("[]"), /expected one container/);
 * ```
 */
export function parseInspect(json: string): ContainerFacts {
  let all: unknown;
  try {
    all = JSON.parse(json);
  } catch (e) {
    throw new SyntaxError(`docker inspect: expected JSON: ${(e as Error).message}`);
  }
  // deno-lint-ignore no-explicit-any -- docker's document, read field by field below
  const c = (Array.isArray(all) && all.length === 1 ? all[0] : null) as any;
  if (!c || typeof c !== "object") throw new SyntaxError("docker inspect: expected one container");
  const hc = c.HostConfig ?? {};
  const st = c.State ?? {};
  const positive = (x: unknown) => (typeof x === "number" && x > 0 ? x : null);
  const nano = positive(hc.NanoCpus);
  return {
    name: String(c.Name ?? "").replace(/^\//, ""),
    id: String(c.Id ?? ""),
    image: String(c.Config?.Image ?? ""),
    memoryLimitBytes: positive(hc.Memory),
    cpus: nano === null ? null : nano / 1e9,
    cpusetCpus: hc.CpusetCpus ? String(hc.CpusetCpus) : null,
    state: {
      status: String(st.Status ?? "unknown"),
      running: st.Running === true,
      oomKilled: st.OOMKilled === true,
      exitCode: typeof st.ExitCode === "number" ? st.ExitCode : null,
      error: st.Error ? String(st.Error) : null,
    },
  };
}

/**
 * A container's facts now.
 *
 * @param engine The engine that runs it.
 * @param name Its name or id.
 * @returns Its facts.
 * @throws {DockerCommandError} When there is no such container.
 */
export async function inspectContainer(
  engine: DockerEngine,
  name: string,
): Promise<ContainerFacts> {
  return parseInspect(await engine.run(["inspect", "--type", "container", name]));
}

/**
 * What ended a container, in words, or null while it runs.
 *
 * @param f Its facts.
 * @returns `container N was killed for lack of memory (OOM; limit 64 MiB, exit code 137)`,
 * `container N exited (code 1)`, or null.
 *
 * @example
 * ```ts
 * import { containerEnd } from "./container.ts";
 * import assert from "node:assert/strict";
 * const state = { status: "exited", running: false, oomKilled: true, exitCode: 137, error: null };
 * const f = { name: "c", id: "x", image: "i", memoryLimitBytes: 64 * 2 ** 20, cpus: null, cpusetCpus: null, state };
 * assert.equal(containerEnd(f), "container c was killed for lack of memory (OOM; memory limit 64 MiB, exit code 137)");
 * assert.equal(containerEnd({ ...f, state: { ...state, oomKilled: false, exitCode: 1 } }), "container c exited (exit code 1)");
 * assert.equal(containerEnd({ ...f, state: { ...state, running: true } }), null);
 * ```
 */
export function containerEnd(f: ContainerFacts): string | null {
  const s = f.state;
  if (s.running) return null;
  const code = s.exitCode === null ? "" : `exit code ${s.exitCode}`;
  if (s.oomKilled) {
    const limit = f.memoryLimitBytes === null
      ? "no memory limit"
      : `memory limit ${Number((f.memoryLimitBytes / 2 ** 20).toFixed(1))} MiB`;
    return `container ${f.name} was killed for lack of memory (OOM; ${limit}${
      code ? `, ${code}` : ""
    })`;
  }
  return `container ${f.name} ${s.status === "exited" ? "exited" : `is ${s.status}`}` +
    (code || s.error ? ` (${[code, s.error].filter((x) => x).join(", ")})` : "");
}

/** How kvlab runs a server container. */
export interface ServerContainerOptions {
  image: ServerImage;
  /** The container's name (unique in the engine). */
  name: string;
  /** `--memory` (and `--memory-swap`: no swap beyond it). */
  memoryLimitBytes?: number;
  /** `--cpus`: a CPU quota. */
  cpus?: number;
  /** `--cpuset-cpus`: the CPUs it may run on (a plan's `cpus: { server }`). */
  cpusetCpus?: string;
  /** @default {30000} */
  startTimeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * The `docker run` arguments of a server container on a port.
 *
 * @param o The container's options.
 * @param port The loopback port it serves on.
 * @returns The arguments after `docker`.
 *
 * @example
 * ```ts
 * import { serverContainerArgs } from "./container.ts";
 * import assert from "node:assert/strict";
 * const image = { tag: "kvlab/redis:7.0.15", engine: "redis" as const, version: "7.0.15", sha256: "", binary: "", built: false, ms: 0 };
 * assert.deepEqual(serverContainerArgs({ image, name: "kvlab-p-redis", memoryLimitBytes: 67108864, cpus: 1 }, 6390), [
 *   "run", "--detach", "--name", "kvlab-p-redis", "--network", "host", "--label", `kvlab.pid=${Deno.pid}`,
 *   "--memory", "67108864", "--memory-swap", "67108864", "--cpus", "1",
 *   "kvlab/redis:7.0.15", "--port", "6390", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
 *   "--protected-mode", "yes",
 * ]);
 * ```
 */
export function serverContainerArgs(o: ServerContainerOptions, port: number): string[] {
  const limit = o.memoryLimitBytes === undefined ? [] : [
    "--memory",
    String(o.memoryLimitBytes),
    "--memory-swap",
    String(o.memoryLimitBytes),
  ];
  return [
    "run",
    "--detach",
    "--name",
    o.name,
    "--network",
    "host",
    "--label",
    `kvlab.pid=${Deno.pid}`,
    ...limit,
    ...(o.cpus === undefined ? [] : ["--cpus", String(o.cpus)]),
    ...(o.cpusetCpus === undefined ? [] : ["--cpuset-cpus", o.cpusetCpus]),
    o.image.tag,
    ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    ...["--protected-mode", "yes"],
  ];
}

/** A server container kvlab started. */
export interface ServerContainer {
  name: string;
  /** The loopback port it serves on. */
  port: number;
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  image: ServerImage;
  /** How long it took to answer, ms. */
  startMs: number;
  /** Removes it (`docker rm -f`); what could not be done, or null. */
  remove(): Promise<string | null>;
}

/**
 * Starts a server container on a free loopback port and waits until it answers as a server in a
 * container (INFO `process_id` 1: its own pid namespace, not a process that took the port).
 * A port taken meanwhile is tried again with another (three times).
 *
 * @param engine The engine.
 * @param o The image, name, limits.
 * @returns The running container; remove it with {@link ServerContainer.remove}.
 * @throws {Error} When it exits or does not answer in time (with the end of its log); the
 * container is removed.
 */
export async function startServerContainer(
  engine: DockerEngine,
  o: ServerContainerOptions,
): Promise<ServerContainer> {
  const remove = async () => {
    try {
      await engine.run(["rm", "--force", "--volumes", o.name], { timeoutMs: 60_000 });
      return null;
    } catch (e) {
      return `container ${o.name} could not be removed: ${(e as Error).message}`;
    }
  };
  for (let attempt = 1;; attempt++) {
    const t0 = performance.now();
    const port = freePort();
    let why: string | null;
    try {
      await engine.run(serverContainerArgs(o, port), { signal: o.signal });
      why = await waitForServer(engine, o, port);
    } catch (e) {
      await remove(); // a run cut by Ctrl-C may have made it
      throw e;
    }
    if (why === null) {
      const url = `redis://127.0.0.1:${port}`;
      return { name: o.name, port, url, image: o.image, startMs: performance.now() - t0, remove };
    }
    await remove();
    if (!/Address already in use|another process/.test(why) || attempt === 3) {
      throw new Error(`container ${o.name} (${o.image.tag}) did not start: ${why}`);
    }
  }
}

/** Waits until the container's server answers; null, or why it did not. */
async function waitForServer(
  engine: DockerEngine,
  o: ServerContainerOptions,
  port: number,
): Promise<string | null> {
  const deadline = Date.now() + (o.startTimeoutMs ?? 30_000);
  const target = parseServerUrl(`redis://127.0.0.1:${port}`);
  while (Date.now() < deadline && !o.signal?.aborted) {
    const facts = await inspectContainer(engine, o.name);
    if (!facts.state.running) return `${containerEnd(facts)}; ${await logTail(engine, o.name)}`;
    try {
      const client = await connect(target, 1000);
      try {
        const pid = infoNumber(
          parseInfo(String(await client.call("INFO", "server"))),
          "process_id",
        );
        return pid === 1 ? null : `port ${port} is served by another process (pid ${pid})`;
      } finally {
        client.disconnect();
      }
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return o.signal?.aborted ? "interrupted" : `no answer in ${o.startTimeoutMs ?? 30_000} ms`;
}

/** The last lines a container logged, on one line. */
async function logTail(engine: DockerEngine, name: string): Promise<string> {
  try {
    const r = await engine.runner.run({
      argv: ["docker", "logs", "--tail", "3", name],
      timeoutMs: 10_000,
      capture: true,
    });
    const dec = new TextDecoder();
    const text =
      (dec.decode(r.stdout ?? new Uint8Array()) + dec.decode(r.stderr ?? new Uint8Array()))
        .trim().split("\n").map((l) => l.replace(/^\d+:[A-Z] [^*#]*[*#] /, "")).join(" | ");
    return `its log ends: ${text || "(empty)"}`;
  } catch {
    return "no log";
  }
}
