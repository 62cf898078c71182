/**
 * Helpers of the hostile suite: run the real CLI as a subprocess and read back every byte it
 * wrote under a dataset.
 *
 * @module
 */

const ROOT = new URL("../../", import.meta.url).pathname;

/** Where the hostile fixtures are. */
export const HOSTILE = ROOT + "test/testdata/hostile/";

// the permissions of `deno task kvlab`, loopback network only
export const PERMISSIONS =
  "--allow-read --allow-write --allow-env --allow-ffi --allow-sys --allow-run --allow-net=127.0.0.1";

/** What one CLI run printed. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Both streams, for "nothing printed holds the secret". */
  printed: string;
  /** Milliseconds the process took. */
  ms: number;
}

/**
 * Runs `deno run … src/cli.ts <args>` as a user of the tasks would.
 *
 * @param args The kvlab arguments.
 * @param maxHeapMb A V8 heap limit (a plan that expands in memory then dies fast).
 * @returns Exit code and output.
 */
export async function kvlab(args: string[], maxHeapMb?: number): Promise<CliResult> {
  const t0 = performance.now();
  const heap = maxHeapMb ? [`--v8-flags=--max-old-space-size=${maxHeapMb}`] : [];
  const argv = ["run", ...PERMISSIONS.split(" "), ...heap, ROOT + "src/cli.ts", ...args];
  const io = { stdout: "piped", stderr: "piped" } as const;
  const out = await new Deno.Command(Deno.execPath(), { args: argv, cwd: ROOT, ...io }).output();
  const dec = new TextDecoder();
  const stdout = dec.decode(out.stdout);
  const stderr = dec.decode(out.stderr);
  return {
    code: out.code,
    stdout,
    stderr,
    printed: stdout + stderr,
    ms: performance.now() - t0,
  };
}

/**
 * Every file under a folder, as one string (bytes read as Latin-1, so that binary files and
 * UTF-8 text alike can be searched for an ASCII secret), and the list of paths.
 *
 * @param dir The folder (a missing folder is empty).
 */
export function allBytes(dir: string): { text: string; files: string[] } {
  const files: string[] = [];
  const walk = (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of entries) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory) walk(p);
      else if (e.isFile) files.push(p);
    }
  };
  walk(dir);
  const dec = new TextDecoder("latin1");
  return { text: files.map((f) => dec.decode(Deno.readFileSync(f))).join("\n"), files };
}

/**
 * The secrets of a case found in a text.
 *
 * @param text What was written or printed.
 * @param secrets The case's secrets.
 * @returns Those present (none is the expectation).
 */
export function leaked(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((s) => text.includes(s));
}
