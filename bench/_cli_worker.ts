// deno-lint-ignore-file no-console
/**
 * One `kvlab` command in its own process (so its peak memory is its own), run in-process from a
 * kvlab tree: `_cli_worker.ts ROOT ARGS…` imports `ROOT/src/cli.ts` (this checkout's, or another
 * one's, e.g. a `git worktree` of an older commit, to time a command before and after a change)
 * and runs `kvlab ARGS…`. Prints one JSON line: { seconds, peakRssBytes, code, bytes } (bytes
 * printed on stdout).
 *
 * @module
 */

const [root, ...args] = Deno.args;
const { buildCli } = await import(`${root.replace(/\/+$/, "")}/src/cli.ts`);
const { exitCodeFor } = await import(`${root.replace(/\/+$/, "")}/src/cli/_exit.ts`);
let bytes = 0;
let code = 0;
const t0 = performance.now();
try {
  await buildCli((s: string) => void (bytes += s.length), () => {}, { isTerminal: false })
    .parseAsync(args, { from: "user" });
} catch (e) {
  code = exitCodeFor(e, () => {});
}
const seconds = (performance.now() - t0) / 1000;
const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"));
console.log(JSON.stringify({ seconds, peakRssBytes: m ? Number(m[1]) * 1024 : NaN, code, bytes }));
