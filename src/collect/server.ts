/**
 * Server snapshots over a Redis client (ioredis): `INFO everything` (falling back to `INFO all`
 * and `INFO`), `CONFIG GET *` where the server allows it, and `DBSIZE`. A managed service that
 * refuses CONFIG is recorded as such, not treated as an error.
 *
 * @module
 */

import { Redis } from "ioredis";
import {
  type InfoField,
  parseInfo,
  type ServerIdentity,
  serverIdentity,
} from "./formats/info/info.ts";
import { redactConfigValue, redactSent, rememberSentSecret } from "../text/redact.ts";
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

/** The first protocol error of each client (ioredis closes the connection after it). */
const protocolErrors = new WeakMap<Redis, Error>();

/**
 * What a server sent that is not RESP, in words naming the server, the command and the bytes
 * (escaped, at most 48): ioredis says only `Protocol error, got "?" as reply type byte. Please
 * report this.`, then `Stream isn't writeable and enableOfflineQueue options is false` for every
 * later command.
 *
 * @param display The server as shown (its redacted URL).
 * @param command The command whose reply was malformed (`INFO everything`).
 * @param e redis-parser's `ParserError` (its `buffer` is the JSON of the bytes read).
 * @returns E.g. `redis://127.0.0.1:6379 sent malformed RESP in reply to INFO everything: got "?"
 * as reply type byte, in "?what is this\r\n" (not a Redis-compatible server?)`.
 *
 * @example
 * ```ts
 * import { malformedReply } from "./server.ts";
 * import assert from "node:assert/strict";
 * const e = Object.assign(new Error('Protocol error, got "?" as reply type byte. Please report this.'),
 *   { name: "ParserError", buffer: JSON.stringify({ type: "Buffer", data: [63, 104, 105, 27, 13, 10] }), offset: 1 });
 * assert.equal(malformedReply("redis://h:1", "INFO", e),
 *   'redis://h:1 sent malformed RESP in reply to INFO: got "?" as reply type byte, in ' +
 *   '"?hi\\x1b\\r\\n" (not a Redis-compatible server?)');
 * ```
 */
export function malformedReply(display: string, command: string, e: Error): string {
  const what = e.message.replace(/^Protocol error, /, "").replace(/\.? Please report this\.?$/, "");
  let sent = "";
  try {
    const raw = (e as { buffer?: unknown }).buffer;
    const data: number[] = typeof raw === "string" ? JSON.parse(raw).data ?? [] : [];
    const at = Math.max(0, Number((e as { offset?: unknown }).offset ?? 1) - 1);
    const bytes = data.slice(at, at + 48);
    const esc = (b: number) =>
      b === 13
        ? "\\r"
        : b === 10
        ? "\\n"
        : b === 34 || b === 92
        ? `\\${String.fromCharCode(b)}`
        : b >= 32 && b < 127
        ? String.fromCharCode(b)
        : `\\x${b.toString(16).padStart(2, "0")}`;
    if (bytes.length) {
      sent = `, in "${bytes.map(esc).join("")}${data.length > at + 48 ? "…" : ""}"`;
    }
  } catch { /* no bytes to show */ }
  return `${display} sent malformed RESP in reply to ${command}: ${what}${sent} ` +
    "(not a Redis-compatible server?)";
}

/** Whether an ioredis error is a protocol (parser) error. */
function isProtocolError(e: Error): boolean {
  return e.name === "ParserError" || /^Protocol error/.test(e.message);
}

/**
 * The error to throw for a failed command: the server's malformed reply in words when the
 * connection broke on one (see {@link malformedReply}), else `fallback`.
 */
function commandError(
  client: Redis,
  { target, command, fallback }: { target: ServerTarget; command: string; fallback: string },
): ServerUnreachableError {
  const p = protocolErrors.get(client);
  return new ServerUnreachableError(p ? malformedReply(target.display, command, p) : fallback);
}

/** Opens an ioredis client that fails fast instead of retrying. */
export async function connect(target: ServerTarget, timeoutMs = 5000): Promise<Redis> {
  rememberSentSecret(target.password);
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
    // no CLIENT SETINFO before the ready check's INFO: a server that answers nothing is told
    // after one timeout, not two
    disableClientInfo: true,
  });
  let connected = false;
  client.on("connect", () => (connected = true));
  client.on("error", (e: Error) => {
    lastError = e;
    if (isProtocolError(e) && !protocolErrors.has(client)) protocolErrors.set(client, e);
  });
  try {
    await client.connect();
  } catch (e) {
    client.disconnect();
    // (a server may echo the password it refused: `unknown command 'auth', with args …`)
    const why = redactSent((lastError ?? (e as Error)).message, target.password);
    // ioredis' ready check sends INFO; a server that took the connection and then said nothing
    // is not one that is down (issue 30)
    const silent = connected && /timed out/i.test(why);
    const fallback = silent
      ? `${target.display} accepted the connection but did not answer (no reply to ` +
        `${target.password ? "AUTH or " : ""}INFO in ${timeoutMs / 1000} s): not a ` +
        "Redis-compatible server, or one that is stuck"
      : `cannot connect to ${target.display}: ${why}`;
    throw commandError(client, { target, command: "INFO", fallback });
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
        // a malformed reply closes the connection: the fallbacks then say only "Stream isn't
        // writeable", so the first reply that broke it is named
        if (args.length === 0 || protocolErrors.has(client)) {
          throw commandError(client, {
            target,
            command: ["INFO", ...args].join(" "),
            fallback: `INFO failed on ${target.display}: ${(e as Error).message}`,
          });
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
      const fallback = (e as Error).message;
      configError = commandError(client, { target, command: "CONFIG GET *", fallback }).message;
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
