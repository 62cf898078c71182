/**
 * Test support: a real Docker engine for the container tests — the one `DOCKER_HOST` or the
 * default socket names, else a private dockerd kvlab starts (root and Debian's `docker.io`),
 * stopped by its PID afterwards. Where neither is possible the test is skipped, saying so, except
 * under `CI=true`, where `.ci/install` installed docker.io and a missing engine is a failure.
 *
 * @module
 */

import {
  DenoProcessRunner,
  type DockerEngine,
  DockerUnavailableError,
  findEngine,
  startPrivateEngine,
} from "../../src/collect/mod.ts";

const CI = () => Deno.env.get("CI") === "true";

/**
 * Runs `fn` with an engine (found, or started and stopped afterwards), or skips it with one line
 * `skipped: <what>: …` when this machine has none and cannot start one (a failure under CI).
 *
 * @param what What the test does, for the skip line.
 * @param fn The test, given the engine.
 * @throws {DockerUnavailableError} Under `CI=true`, when there is no engine.
 */
export async function withDockerEngine(
  what: string,
  fn: (engine: DockerEngine) => Promise<void>,
): Promise<void> {
  const runner = new DenoProcessRunner();
  let engine: DockerEngine;
  let stop: (() => Promise<string | null>) | undefined;
  try {
    engine = await findEngine(runner);
  } catch (e) {
    if (!(e instanceof DockerUnavailableError)) throw e;
    try {
      const own = await startPrivateEngine({ runner });
      engine = own;
      stop = own.stop;
    } catch (why) {
      if (!(why instanceof DockerUnavailableError) || CI()) throw why;
      // deno-lint-ignore no-console -- one line saying what was skipped and why
      console.log(`skipped: ${what}: ${e.message}; ${why.message}`);
      return;
    }
  }
  try {
    await fn(engine);
  } finally {
    const left = await stop?.();
    if (left) throw new Error(left);
  }
}

/**
 * Whether this machine can start a private engine (root, dockerd installed), for the tests
 * that make kvlab start one; under `CI=true` it must.
 *
 * @returns Why not, or null.
 */
export function privateEngineMissing(): string | null {
  let uid: number | null = null;
  try {
    uid = Deno.uid();
  } catch { /* unknown */ }
  const dockerd = ["/usr/sbin/dockerd", "/usr/bin/dockerd"].some((p) => {
    try {
      return Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  });
  const why = !dockerd ? "dockerd is not installed" : uid !== 0 ? "not root" : null;
  if (why && CI()) throw new Error(`a private Docker engine cannot start here: ${why}`);
  return why;
}
