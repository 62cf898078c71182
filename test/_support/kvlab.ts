/**
 * Test support: the real `kvlab` (or another module) run as a separate `deno run` process, with
 * the permissions a user's task grants, as a user starts it.
 *
 * @module
 */

import { ROOT } from "./testdata.ts";

/**
 * The permissions of `deno task demo` (`deno task kvlab`'s, with the network limited to
 * loopback): no `--allow-all`, so that what needs more fails here as it would for a user.
 */
export const TASK_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-ffi",
  "--allow-sys",
  "--allow-run",
  "--allow-net=127.0.0.1",
];

/** Options of {@link denoRun} and {@link kvlabProcess}. */
export interface RunOptions {
  /** @default {TASK_PERMISSIONS} */
  permissions?: readonly string[];
  /** Environment variables set for the child (on top of this process's). */
  env?: Record<string, string>;
  /** A V8 heap limit in MB (for a command that expands in memory, then dies fast). */
  maxHeapMb?: number;
}

/** What one process printed and how it ended. */
export interface ProcessOutput {
  code: number;
  stdout: string;
  stderr: string;
  /** Both streams, one after the other (for "nothing printed holds the secret"). */
  printed: string;
  /** Milliseconds the process took. */
  ms: number;
}

/**
 * Runs `deno run <permissions> <script> <args…>` from the repository's root.
 *
 * @param script The module's path.
 * @param args Its arguments.
 * @param o Permissions, environment, heap limit.
 * @returns Its exit code and output.
 */
export async function denoRun(
  script: string,
  args: readonly string[],
  o: RunOptions = {},
): Promise<ProcessOutput> {
  const t0 = performance.now();
  const heap = o.maxHeapMb ? [`--v8-flags=--max-old-space-size=${o.maxHeapMb}`] : [];
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...(o.permissions ?? TASK_PERMISSIONS), ...heap, script, ...args],
    cwd: ROOT,
    env: o.env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout);
  const stderr = dec.decode(out.stderr);
  return { code: out.code, stdout, stderr, printed: stdout + stderr, ms: performance.now() - t0 };
}

/**
 * Runs `kvlab <args…>` (`src/cli.ts`) as a separate process, as a user of the tasks would.
 *
 * @param args The kvlab arguments.
 * @param o Permissions, environment, heap limit.
 * @returns Its exit code and output.
 */
export function kvlabProcess(args: readonly string[], o: RunOptions = {}): Promise<ProcessOutput> {
  return denoRun(ROOT + "src/cli.ts", args, o);
}
