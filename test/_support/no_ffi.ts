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

/**
 * Checks an engine's fallback without FFI permission: `fn(options)` of `mod` runs on the deno
 * engine and says why (`engineNote`), and asking it for `engine: "ffi"` is refused with
 * `NotSupported` rather than run on another engine.
 *
 * @param mod The module's URL.
 * @param fn The exported function (its options take `engine`; its result has `engine` and
 * `engineNote`).
 * @param options The options, as a JavaScript object literal.
 * @param count The result's field that counts what was done: above 0.
 */
export async function assertFallsBackWithoutFfi(
  mod: URL,
  fn: string,
  options: string,
  count: string,
): Promise<void> {
  const got = await runWithoutFfi<
    { engine: string; note: string; count: number; forced: string }
  >(
    `import { ${fn} } from ${JSON.stringify(mod.href)};\n` +
      `const o = ${options};\n` +
      `const r = await ${fn}(o);\n` +
      `let forced = "";\n` +
      `try { await ${fn}({ ...o, engine: "ffi" }); } catch (e) { forced = e.name; }\n` +
      `console.log(JSON.stringify({ engine: r.engine, note: r.engineNote, ` +
      `count: r[${JSON.stringify(count)}], forced }));\n`,
  );
  assert.equal(got.engine, "deno");
  assert.match(got.note, /no FFI permission/);
  assert.ok(got.count > 0, `${count} ${got.count}`);
  assert.equal(got.forced, "NotSupported", "engine ffi asked for and not usable: refused");
}
