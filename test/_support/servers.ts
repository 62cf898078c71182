/**
 * Test support: real redis-servers on free loopback ports, and fake tools on PATH that replay
 * a recorded output.
 *
 * @module
 */

import { Redis } from "ioredis";
import { type LocalServer, startLocalServer } from "../../src/collect/redis_server.ts";
import { commandStats } from "../../src/collect/cluster/nodes.ts";
import { withTempDir } from "./temp.ts";

/** Runs `fn` with fresh redis-servers (one per entry of `args`), stopped afterwards by PID. */
export async function withServers<T>(
  args: { args?: string[]; password?: string }[],
  fn: (servers: LocalServer[]) => Promise<T>,
): Promise<T> {
  const servers: LocalServer[] = [];
  try {
    for (const a of args) servers.push(await startLocalServer(a));
    return await fn(servers);
  } finally {
    for (const s of servers) await s.stop();
  }
}

/**
 * Runs `fn` with one fresh redis-server and a fresh temporary folder (the usual home of a test's
 * dataset), the server stopped by PID and the folder removed afterwards.
 */
export function withServerAndDir<T>(
  prefix: string,
  fn: (server: LocalServer, dir: string) => Promise<T>,
): Promise<T> {
  return withServers([{}], ([server]) => withTempDir(prefix, (dir) => fn(server, dir)));
}

/**
 * Writes an executable `dir/name` that prints `name 7.0.15` for `--version` and otherwise
 * replays `output` (a recorded stdout) then exits with `exitCode`.
 */
export function fakeTool(
  dir: string,
  name: string,
  output: string,
  exitCode = 0,
  delayS = 0,
): string {
  Deno.mkdirSync(dir, { recursive: true });
  const path = `${dir}/${name}`;
  Deno.writeTextFileSync(
    path,
    `#!/usr/bin/env bash
if [ "$1" = "--version" ]; then echo "${name} 7.0.15"; exit 0; fi
${delayS ? `sleep ${delayS}` : ""}
cat '${output.replace(/'/g, `'\\''`)}'
exit ${exitCode}
`,
  );
  Deno.chmodSync(path, 0o755);
  return path;
}

/**
 * A port nothing listens on (for "server is down"): port 1 (tcpmux), privileged and unused.
 * A freed ephemeral port could be taken by another process before the test connects.
 */
export function closedPort(): number {
  return 1;
}

/** Every file under a directory. */
export function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...walk(p));
    else out.push(p);
  }
  return out.sort();
}

/**
 * One INFO section of a local server, read with a fresh connection per look (one may be closed
 * under a test on a loaded machine); null when it does not answer.
 */
async function infoSection(port: number, section: string): Promise<string | null> {
  // 127.0.0.1, not localhost: the test task's --allow-net names the address
  const admin = new Redis({
    host: "127.0.0.1",
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await admin.connect();
    return await admin.info(section);
  } catch {
    return null;
  } finally {
    admin.disconnect();
  }
}

/** Commands a local server processed so far (INFO stats), or 0 when it does not answer. */
export async function commandsProcessed(port: number): Promise<number> {
  const info = await infoSection(port, "stats");
  return Number(/total_commands_processed:(\d+)/.exec(info ?? "")?.[1] ?? 0);
}

/**
 * The calls of one command a local server answered so far (INFO commandstats: `get`, `set`,
 * …), or 0 when it does not answer: how far a load against it has got, without a clock.
 */
export async function commandCalls(port: number, command: string): Promise<number> {
  const info = await infoSection(port, "commandstats");
  return commandStats(info ?? "").get(command.toLowerCase()) ?? 0;
}
