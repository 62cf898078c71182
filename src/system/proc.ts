/**
 * Reading `/proc` and `/sys` files as kvlab runs. Deno refuses `/proc/*` (and some `/sys`
 * files) unless the process has `--allow-all`, which `./kvlab` and `deno task test` do not give:
 * then the files are read by one `sh` child (which `--allow-run` allows), each between NUL
 * markers so that a missing file reads as null and the others are kept.
 *
 * Paths must be plain absolute paths (`/proc/123/stat`), never user text: they are passed as
 * arguments to `sh`, not spliced into its script, but a path with a NUL cannot be marked.
 *
 * @example
 * ```ts
 * import { readSystemFiles } from "./proc.ts";
 * import assert from "node:assert/strict";
 * const got = readSystemFiles(["/proc/loadavg", "/proc/no-such-file"]);
 * assert.match(got["/proc/loadavg"] ?? "", /^\d+\.\d+ /);
 * assert.equal(got["/proc/no-such-file"], null);
 * ```
 *
 * @module
 */

/** A file's text, or null when it cannot be read (missing, not Linux). */
export type SystemFiles = Record<string, string | null>;

/**
 * Reads system files: directly when Deno may, else through one `sh` child.
 *
 * @param paths Absolute paths.
 * @returns Each path's text, or null.
 * @throws {TypeError} For a path that is not absolute or holds a NUL.
 */
export function readSystemFiles(paths: readonly string[]): SystemFiles {
  for (const p of paths) {
    if (!p.startsWith("/") || p.includes("\0")) throw new TypeError(`invalid system path: ${p}`);
  }
  const out: SystemFiles = {};
  const rest: string[] = [];
  for (const p of paths) {
    try {
      out[p] = Deno.readTextFileSync(p);
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable) rest.push(p);
      else out[p] = null;
    }
  }
  if (rest.length > 0) Object.assign(out, readThroughShell(rest));
  return out;
}

/** One `sh` reads the files: `\0path\0text` for each readable file. */
function readThroughShell(paths: readonly string[]): SystemFiles {
  const out: SystemFiles = Object.fromEntries(paths.map((p) => [p, null]));
  let stdout: Uint8Array;
  try {
    stdout = new Deno.Command("sh", {
      args: [
        "-c",
        'for f in "$@"; do if [ -r "$f" ]; then printf "\\000%s\\000" "$f"; cat "$f" 2>/dev/null; fi; done',
        "sh",
        ...paths,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync().stdout;
  } catch {
    return out; // no sh, or not allowed to run it: unknown
  }
  const parts = new TextDecoder().decode(stdout).split("\0");
  // parts: "", path, text, path, text, …
  for (let i = 1; i + 1 < parts.length; i += 2) {
    if (parts[i] in out) out[parts[i]] = parts[i + 1];
  }
  return out;
}
