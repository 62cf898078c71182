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
  type OpenEngine,
  openEngine,
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
  let open: OpenEngine;
  try {
    open = await openEngine(new DenoProcessRunner());
  } catch (e) {
    if (!(e instanceof DockerUnavailableError) || CI()) throw e;
    // deno-lint-ignore no-console -- one line saying what was skipped and why
    console.log(`skipped: ${what}: ${e.message}`);
    return;
  }
  let left: string | null;
  try {
    await fn(open.engine);
  } finally {
    left = await open.stop();
  }
  // an engine kvlab started that left its folder behind fails the test that started it
  if (left) throw new Error(left);
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
