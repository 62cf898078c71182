/**
 * Runs a script in a Deno without `--allow-ffi` (read, env, sys, and loopback network only), as
 * a user's would, for the engines' fallback tests.
 *
 * @module
 */

import assert from "node:assert/strict";

/**
 * Writes `source` to a temporary module, runs it with the repository's config and without FFI
 * permission, and returns the JSON of the last line it printed.
 *
 * @param source The script (it prints one JSON line last).
 * @returns The parsed line.
 */
export async function runWithoutFfi<T>(source: string): Promise<T> {
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(script, source);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--config",
        new URL("../../deno.json", import.meta.url).pathname,
        "--allow-read",
        "--allow-env",
        "--allow-sys",
        "--allow-net=127.0.0.1",
        script,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!) as T;
  } finally {
    await Deno.remove(script);
  }
}
