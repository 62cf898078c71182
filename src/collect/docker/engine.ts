/**
 * The Docker engine kvlab talks to, through the `docker` client: the one `DOCKER_HOST` names
 * (Docker's own convention), else the client's default socket. Every docker command kvlab runs
 * goes through {@link DockerEngine.run} (argv arrays through a {@link ProcessRunner}, never a
 * shell), with `DOCKER_HOST` set for an engine kvlab started itself (`./private_engine.ts`).
 *
 * @module
 */

import { type ProcessRunner, ToolNotFoundError } from "../process.ts";

/** No Docker engine could be reached (or no docker client is installed). */
export class DockerUnavailableError extends Error {
  /** @param message What docker said. */
  constructor(message: string) {
    super(message);
    this.name = "DockerUnavailableError";
  }
}

/** A docker command that ran and failed (exit code other than 0), with what docker printed. */
export class DockerCommandError extends Error {
  /**
   * @param args The docker arguments (no secrets: kvlab passes none to docker).
   * @param detail docker's stderr, or the exit code.
   */
  constructor(readonly args: readonly string[], readonly detail: string) {
    super(`docker ${args.join(" ")} failed: ${detail}`);
    this.name = "DockerCommandError";
  }
}

/** Options of one docker command. */
export interface DockerRunOptions {
  /** @default {60000} */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** An engine that answers, and how kvlab reaches it. */
export interface DockerEngine {
  /**
   * The `DOCKER_HOST` kvlab sets for its docker commands (`unix:///…/docker.sock`), or null for
   * the client's own choice (the caller's `DOCKER_HOST`, else the default socket).
   */
  readonly host: string | null;
  /** The engine's version (`docker version`'s Server.Version). */
  readonly version: string;
  /** Whether kvlab started this engine (and stops it). */
  readonly private: boolean;
  /** Starts the docker client against this engine (the caller's runner, `DOCKER_HOST` set). */
  readonly runner: ProcessRunner;
  /**
   * Runs `docker ARGS…` and returns its stdout.
   *
   * @throws {DockerUnavailableError} When there is no docker client or the engine does not answer.
   * @throws {DockerCommandError} When docker fails otherwise (with its message).
   */
  run(args: readonly string[], options?: DockerRunOptions): Promise<string>;
}

/**
 * A runner whose every process gets `DOCKER_HOST` (unchanged when `host` is null): the docker
 * commands of tools and sweeps then reach the engine kvlab chose.
 *
 * @param inner The runner that starts the processes.
 * @param host The `DOCKER_HOST` value, or null.
 * @returns The runner.
 *
 * @example
 * ```ts
 * import { dockerEnvRunner } from "./engine.ts";
 * import type { ProcessRunner, RunProcessOptions } from "../process.ts";
 * import assert from "node:assert/strict";
 * const seen: (Record<string, string> | undefined)[] = [];
 * const fake: ProcessRunner = {
 *   run: (o: RunProcessOptions) => {
 *     seen.push(o.env);
 *     return Promise.resolve({ code: 0, signal: null, timedOut: false, interrupted: false, durationMs: 1, pid: 1 });
 *   },
 * };
 * await dockerEnvRunner(fake, "unix:///tmp/d.sock").run({ argv: ["docker", "ps"], timeoutMs: 1000 });
 * assert.deepEqual(seen, [{ DOCKER_HOST: "unix:///tmp/d.sock" }]);
 * assert.equal(dockerEnvRunner(fake, null), fake);
 * ```
 */
export function dockerEnvRunner(inner: ProcessRunner, host: string | null): ProcessRunner {
  if (host === null) return inner;
  return {
    run: (o) => inner.run({ ...o, env: { ...o.env, DOCKER_HOST: host } }),
    ...(inner.shown ? { shown: (argv: readonly string[]) => inner.shown!(argv) } : {}),
  };
}

/** Whether docker's message says that no engine answered. */
function noEngine(message: string): boolean {
  return /Cannot connect to the Docker daemon|Is the docker daemon running|connect: no such file|connection refused|permission denied while trying to connect/i
    .test(message);
}

/**
 * Runs `docker ARGS…` through a runner and returns its stdout.
 *
 * @param runner Starts the client (with `DOCKER_HOST` when it is to be set).
 * @param args The arguments.
 * @param options Time limit and stop signal.
 * @returns What docker printed on stdout.
 * @throws {DockerUnavailableError} No client, or no engine answered.
 * @throws {DockerCommandError} docker failed otherwise.
 */
export async function runDocker(
  runner: ProcessRunner,
  args: readonly string[],
  options: DockerRunOptions = {},
): Promise<string> {
  let r;
  try {
    r = await runner.run({
      argv: ["docker", ...args],
      timeoutMs: options.timeoutMs ?? 60_000,
      signal: options.signal,
      capture: true,
    });
  } catch (e) {
    if (e instanceof ToolNotFoundError) {
      throw new DockerUnavailableError("docker: not found on PATH (no Docker client)");
    }
    throw e;
  }
  const dec = new TextDecoder();
  const err = dec.decode(r.stderr ?? new Uint8Array()).trim();
  if (r.code === 0) return dec.decode(r.stdout ?? new Uint8Array());
  if (r.interrupted) throw new DockerCommandError(args, "interrupted");
  if (r.timedOut) {
    throw new DockerCommandError(args, `no answer in ${options.timeoutMs ?? 60_000} ms`);
  }
  const detail = err.split("\n").slice(-3).join(" ").trim() || `exit ${r.code ?? r.signal}`;
  if (noEngine(err)) throw new DockerUnavailableError(`docker ${args[0]}: ${detail}`);
  throw new DockerCommandError(args, detail);
}

/**
 * The engine at `host` (or the client's default), when it answers.
 *
 * @param runner Starts the client.
 * @param host A `DOCKER_HOST` value to set, or null for the client's own choice.
 * @param isPrivate Whether kvlab started it.
 * @returns The engine.
 * @throws {DockerUnavailableError} When it does not answer (docker's message).
 */
export async function connectEngine(
  runner: ProcessRunner,
  host: string | null,
  isPrivate = false,
): Promise<DockerEngine> {
  const envRunner = dockerEnvRunner(runner, host);
  let version: string;
  try {
    version = (await runDocker(envRunner, ["version", "--format", "{{.Server.Version}}"], {
      timeoutMs: 20_000,
    })).trim();
  } catch (e) {
    // a client that fails otherwise (an old or odd one) has no engine kvlab can use either
    if (e instanceof DockerCommandError) throw new DockerUnavailableError(e.message);
    throw e;
  }
  if (version === "") throw new DockerUnavailableError("docker version: no server version");
  return {
    host,
    version,
    private: isPrivate,
    runner: envRunner,
    run: (args, options) => runDocker(envRunner, args, options),
  };
}

/**
 * The engine kvlab uses when it starts none: `DOCKER_HOST` when it is set, else the client's
 * default socket (`unix:///var/run/docker.sock`).
 *
 * @param runner Starts the client.
 * @returns The engine.
 * @throws {DockerUnavailableError} When none answers, naming where docker looked.
 */
export async function findEngine(runner: ProcessRunner): Promise<DockerEngine> {
  const where = Deno.env.get("DOCKER_HOST") ?? "unix:///var/run/docker.sock (the default)";
  try {
    return await connectEngine(runner, null);
  } catch (e) {
    if (!(e instanceof DockerUnavailableError)) throw e;
    throw new DockerUnavailableError(`no Docker engine answers at ${where}: ${e.message}`);
  }
}
