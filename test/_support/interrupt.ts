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

/**
 * Runs `deno run -A src/cli.ts ARGS…` and sends `signal` once its stdout matches `after` (a
 * plan's progress: `[3/4] …` then `SET: done`), then waits for it to end. A child whose output
 * never matches runs to its end (the caller's assertions say so); one that ignores the signal
 * is killed after 120 s, which shows as `signal: "SIGKILL"`.
 */
export async function interruptCliAfter(
  args: string[],
  signal: Deno.Signal,
  after: RegExp,
): Promise<Interrupted & { signalled: boolean }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ROOT + "src/cli.ts", ...args],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let signalled = false;
  let killer: ReturnType<typeof setTimeout> | undefined;
  const reading = (async () => {
    for await (const c of child.stdout.pipeThrough(new TextDecoderStream())) {
      out += c;
      if (!signalled && after.test(out)) {
        signalled = true;
        child.kill(signal);
        killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
      }
    }
  })();
  const [status, , err] = await Promise.all([
    child.status,
    reading,
    new Response(child.stderr).text(),
  ]);
  clearTimeout(killer);
  return { code: status.code, signal: status.signal, printed: out + err, signalled };
}
