/**
 * A throwaway redis-server (or valkey-server) on a free loopback port, without persistence,
 * for demos, tests and notebooks. It is stopped by its PID.
 *
 * @module
 */

import { ToolNotFoundError } from "./process.ts";

/** A running server. */
export interface LocalServer {
  port: number;
  pid: number;
  /** `redis://127.0.0.1:<port>` (with the password when one was set). */
  url: string;
  /** Stops the server (SIGTERM, then SIGKILL) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Options of {@link startLocalServer}. */
export interface LocalServerOptions {
  /** @default {"redis-server"} */
  program?: string;
  /** More arguments (`--io-threads 2`, `--requirepass pw`, …). */
  args?: string[];
  /** Password to set with `--requirepass` (and to put in the URL). */
  password?: string;
  /** @default {10000} */
  startTimeoutMs?: number;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Starts a server on a free port of 127.0.0.1 with `--save '' --appendonly no`, and waits until
 * it accepts connections.
 *
 * @throws {ToolNotFoundError} When the program is not installed.
 */
export async function startLocalServer(options: LocalServerOptions = {}): Promise<LocalServer> {
  const program = options.program ?? "redis-server";
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = freePort();
    const args = [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--daemonize",
      "no",
      "--protected-mode",
      "yes",
      "--loglevel",
      "warning",
      ...(options.password ? ["--requirepass", options.password] : []),
      ...(options.args ?? []),
    ];
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(program, { args, stdin: "null", stdout: "null", stderr: "piped" })
        .spawn();
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) throw new ToolNotFoundError(program);
      throw e;
    }
    const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    const deadline = Date.now() + (options.startTimeoutMs ?? 10_000);
    let exited = false;
    child.status.then(() => (exited = true));
    while (Date.now() < deadline && !exited) {
      try {
        const c = await Deno.connect({ hostname: "127.0.0.1", port });
        c.close();
        const auth = options.password ? `:${encodeURIComponent(options.password)}@` : "";
        return {
          port,
          pid: child.pid,
          url: `redis://${auth}127.0.0.1:${port}`,
          async stop() {
            try {
              Deno.kill(child.pid, "SIGTERM");
            } catch { /* gone */ }
            const t = setTimeout(() => {
              try {
                Deno.kill(child.pid, "SIGKILL");
              } catch { /* gone */ }
            }, 5000);
            await child.status;
            clearTimeout(t);
            await stderr.cancel().catch(() => {});
          },
        };
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    try {
      Deno.kill(child.pid, "SIGKILL");
    } catch { /* gone */ }
    await child.status;
    const { value } = await Promise.race([
      stderr.read(),
      new Promise<{ value: string }>((r) => setTimeout(() => r({ value: "" }), 200)),
    ]);
    await stderr.cancel().catch(() => {});
    if (attempt === 2) {
      throw new Error(`${program} did not start on port ${port}: ${value ?? ""}`.trim());
    }
  }
  throw new Error("unreachable");
}
