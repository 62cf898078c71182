/**
 * Server snapshots over a Redis client (ioredis): `INFO everything` (falling back to `INFO all`
 * and `INFO`), `CONFIG GET *` where the server allows it, and `DBSIZE`. A managed service that
 * refuses CONFIG is recorded as such, not treated as an error.
 *
 * @module
 */

import { Redis } from "ioredis";
import { type InfoField, parseInfo, type ServerIdentity, serverIdentity } from "./memory/info.ts";
import { redactConfigValue } from "../text/redact.ts";
import type { ServerTarget } from "./target.ts";

/** The server could not be reached (down, wrong port, refused auth). */
export class ServerUnreachableError extends Error {
  /** @param message What failed, naming the (redacted) server URL. */
  constructor(message: string) {
    super(message);
    this.name = "ServerUnreachableError";
  }
}

/** What a server said about itself at one moment. */
export interface ServerSnapshot {
  /** The raw INFO reply. */
  infoText: string;
  info: InfoField[];
  identity: ServerIdentity;
  /** CONFIG GET * pairs, secrets redacted; empty when refused. */
  config: [string, string][];
  configStatus: "ok" | "refused" | "error";
  /** The server's reply when CONFIG was refused or failed. */
  configError: string | null;
  dbsize: number | null;
}

/** Options of {@link snapshotServer}. */
export interface SnapshotOptions {
  /**
   * Connect and command timeout.
   * @default {5000}
   */
  timeoutMs?: number;
}

/** Opens an ioredis client that fails fast instead of retrying. */
export async function connect(target: ServerTarget, timeoutMs = 5000): Promise<Redis> {
  let lastError: Error | undefined;
  const client = new Redis({
    ...(target.socket ? { path: target.socket } : { host: target.host, port: target.port }),
    username: target.user,
    password: target.password,
    db: target.db,
    tls: target.tls ? {} : undefined,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on("error", (e: Error) => {
    lastError = e;
  });
  try {
    await client.connect();
  } catch (e) {
    client.disconnect();
    const why = (lastError ?? (e as Error)).message;
    throw new ServerUnreachableError(`cannot connect to ${target.display}: ${why}`);
  }
  return client;
}

/**
 * Takes a snapshot of a server.
 *
 * @throws {ServerUnreachableError} When the server cannot be reached or INFO fails.
 */
export async function snapshotServer(
  target: ServerTarget,
  options: SnapshotOptions = {},
): Promise<ServerSnapshot> {
  const client = await connect(target, options.timeoutMs ?? 5000);
  try {
    let infoText: string | undefined;
    for (const args of [["everything"], ["all"], []]) {
      try {
        infoText = await client.info(...args);
        break;
      } catch (e) {
        if (args.length === 0) {
          throw new ServerUnreachableError(
            `INFO failed on ${target.display}: ${(e as Error).message}`,
          );
        }
      }
    }
    const info = parseInfo(infoText!);
    let config: [string, string][] = [];
    let configStatus: ServerSnapshot["configStatus"] = "ok";
    let configError: string | null = null;
    try {
      const flat = await client.call("CONFIG", "GET", "*") as string[];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        config.push([String(flat[i]), redactConfigValue(String(flat[i]), String(flat[i + 1]))]);
      }
      config = config.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    } catch (e) {
      configError = (e as Error).message;
      configStatus = /unknown command|NOPERM|not allowed|disabled|permission/i.test(configError)
        ? "refused"
        : "error";
    }
    let dbsize: number | null = null;
    try {
      dbsize = await client.dbsize();
    } catch { /* some proxies refuse DBSIZE */ }
    return {
      infoText: infoText!,
      info,
      identity: serverIdentity(info),
      config,
      configStatus,
      configError,
      dbsize,
    };
  } finally {
    client.disconnect();
  }
}

/** How many more clients a server takes, from one snapshot. */
export interface ClientRoom {
  /** `maxclients` (CONFIG GET, else INFO's `clients` section). */
  maxClients: number;
  /** `connected_clients`, the snapshot's own connection left out (it is closed by now). */
  connected: number;
  /** `maxClients − connected`, at least 0. */
  room: number;
}

/**
 * How many more connections a server accepts: `maxclients` (from CONFIG GET, else from INFO,
 * where Redis 7 and Valkey print it) minus its connected clients other than the snapshot's own.
 * Null when the server tells neither (a proxy, a managed service refusing CONFIG on an old
 * version): nothing is then checked.
 *
 * @param s The snapshot (see {@link snapshotServer}).
 * @returns The room, or null.
 *
 * @example
 * ```ts
 * import { clientRoom } from "./server.ts";
 * import assert from "node:assert/strict";
 * const info = [{ section: "Clients", key: "connected_clients", value: "11", valueNum: 11 }];
 * assert.deepEqual(clientRoom({ info, config: [["maxclients", "100"]] }),
 *   { maxClients: 100, connected: 10, room: 90 });
 * assert.equal(clientRoom({ info, config: [] }), null);
 * ```
 */
export function clientRoom(
  s: Pick<ServerSnapshot, "info" | "config">,
): ClientRoom | null {
  const fromConfig = s.config.find(([k]) => k === "maxclients")?.[1];
  const fromInfo = s.info.find((f) => f.key === "maxclients")?.valueNum ?? null;
  const maxClients = fromConfig !== undefined && /^\d+$/.test(fromConfig)
    ? Number(fromConfig)
    : fromInfo;
  const clients = s.info.find((f) => f.key === "connected_clients")?.valueNum ?? null;
  if (maxClients === null || clients === null) return null;
  const connected = Math.max(0, clients - 1);
  return { maxClients, connected, room: Math.max(0, maxClients - connected) };
}
