/**
 * Test support of `--engine` (`kvlab load`, `kvlab pubsub`): each engine runs on a fresh
 * dataset, the step line names it, and the step's one raw file (its summary JSON, stored by
 * content hash) keeps which one ran; an unknown engine is refused before anything runs.
 *
 * @module
 */

import assert from "node:assert/strict";
import { walk } from "../_support/servers.ts";
import { withTempDir } from "../_support/temp.ts";
import { cli } from "./_cli.ts";

/** What a command's `--engine` cases differ in. */
export interface EngineCase {
  /** The command and its step's options, without `--engine` and `--data`. */
  args: string[];
  /** The step line expected of an engine, from the engine's printed name. */
  engineLine: (said: string) => RegExp;
  /** Checks of the stored summary beyond its `engine`. */
  summary: (summary: Record<string, unknown>, engine: string) => void;
}

/** The engines, with the name the step line gives each. */
const ENGINES = [["ffi", "ffi (epoll by FFI)"], ["deno", "deno (Deno TCP)"]] as const;

/** An engine's printed name as a regular expression's source. */
export const quoted = (said: string) => said.replace(/[()]/g, "\\$&");

/**
 * Runs `kvlab <args> --engine E --data <fresh folder>` for each engine and checks its step line
 * and stored summary, then `--engine uring` (exit 2, `invalid --engine: uring`).
 *
 * @param c The command's case.
 */
export async function checkEngines(c: EngineCase): Promise<void> {
  for (const [engine, said] of ENGINES) {
    await withTempDir(`kvlab-${c.args[0]}-engine-`, async (data) => {
      const r = await cli([...c.args, "--engine", engine, "--data", data]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, c.engineLine(said));
      const raw = walk(data).filter((p) => p.includes("/raw/"));
      assert.equal(raw.length, 1, `one raw file in ${walk(data).join(", ")}`);
      const summary = JSON.parse(Deno.readTextFileSync(raw[0]));
      assert.equal(summary.engine, engine);
      c.summary(summary, engine);
    });
  }
  const bad = await cli([...c.args, "--engine", "uring", "--data", "unused"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /invalid --engine: uring/);
}
