// Starting `kvlab` as a child process and stopping it with a signal once it is under way: the
// hostile tests of Ctrl-C and SIGTERM (`kvlab load`, `kvlab pubsub`).

const ROOT = new URL("../../", import.meta.url).pathname;

/** What an interrupted child printed and how it ended. */
export interface Interrupted {
  code: number;
  /** The signal that ended it, if one did (SIGKILL: it ignored `signal` for 120 s). */
  signal: Deno.Signal | null;
  /** Its stdout and stderr, one after the other. */
  printed: string;
}

/**
 * Runs `deno run -A src/cli.ts ARGS…`, polls `underWay` every 100 ms (at most 60 s), then sends
 * `signal` and waits for the child to end. A bound, not a timing: a child that ignores the
 * signal is killed after 120 s, which shows as `signal: "SIGKILL"`.
 */
export async function interruptCli(
  args: string[],
  signal: Deno.Signal,
  underWay: () => Promise<boolean>,
): Promise<Interrupted> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ROOT + "src/cli.ts", ...args],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  for (let i = 0; i < 600 && !await underWay(); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill(signal);
  const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  const out = await child.output();
  clearTimeout(killer);
  return {
    code: out.code,
    signal: out.signal,
    printed: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
  };
}
