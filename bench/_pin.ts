/**
 * CPU pinning for the load-generator benches (issue 20 item 5): the server on one CPU, this
 * process (every thread, and the children it starts later, such as memtier_benchmark) on
 * another, with `taskset`. `--pin 0,1` (the default on a machine with two CPUs or more) names
 * the server's CPU and the client's; `--pin none` leaves both unpinned.
 *
 * @module
 */

/** The CPUs of the server and of the client, or undefined when not pinning. */
export function pinChoice(args: string[]): { server: string; client: string } | undefined {
  const i = args.indexOf("--pin");
  const given = i >= 0 ? args[i + 1] ?? "" : navigator.hardwareConcurrency >= 2 ? "0,1" : "none";
  if (given === "none") return undefined;
  const parts = given.split(",");
  const [server, client] = parts;
  const list = /^\d+(-\d+)?$/;
  if (parts.length !== 2 || !list.test(server) || !list.test(client)) {
    throw new RangeError(`invalid --pin: ${given} (expected SERVER_CPUS,CLIENT_CPUS or none)`);
  }
  return { server, client };
}

/** Pins every thread of process `pid` to `cpus` (`taskset -a -p -c`). */
export async function pin(pid: number, cpus: string): Promise<void> {
  const out = await new Deno.Command("taskset", {
    args: ["-a", "-p", "-c", cpus, String(pid)],
    stdout: "null",
    stderr: "piped",
  }).output().catch((e) => {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error("taskset: not found (util-linux); or run the bench with --pin none");
    }
    throw e;
  });
  if (!out.success) {
    throw new Error(`taskset -c ${cpus} ${pid} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}
