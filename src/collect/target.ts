/**
 * Server addresses as study plans give them: `redis://[user:password@]host[:port][/db]`,
 * `rediss://…` (TLS), `valkey://…`, or `unix:///path/to.sock`.
 *
 * @module
 */

import { redactWholeUrl, rememberSentSecret } from "../text/redact.ts";

/** A server to benchmark. */
export interface ServerTarget {
  host: string;
  port: number;
  /** Unix socket path, when the URL is `unix://`. */
  socket?: string;
  tls: boolean;
  user?: string;
  password?: string;
  db: number;
  /** The URL with credentials redacted, safe to store and print. */
  display: string;
}

/**
 * Reads a server URL.
 *
 * @param url The URL as the user gave it.
 * @returns The target; its `display` is the URL with credentials redacted.
 * @throws {TypeError} `invalid server URL: …` for anything else (a bad form, a port outside
 * 1–65535, a malformed percent-escape); the message shows the URL with credentials redacted.
 *
 * @example
 * ```ts
 * import { parseServerUrl } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const t = parseServerUrl("redis://alice:pw@127.0.0.1:6380/2");
 * assert.deepEqual([t.host, t.port, t.user, t.password, t.db, t.tls], ["127.0.0.1", 6380, "alice", "pw", 2, false]);
 * assert.equal(t.display, "redis://***:***@127.0.0.1:6380/2");
 * assert.equal(parseServerUrl("unix:///run/redis.sock").socket, "/run/redis.sock");
 * assert.throws(() => parseServerUrl("http://x"), /invalid server URL/);
 * assert.throws(() => parseServerUrl("redis://h:0"), /port 0: expected 1 to 65535/);
 * assert.throws(
 *   () => parseServerUrl("redis://u:p%zzXYZ@h"),
 *   (e: Error) => /malformed percent-escape/.test(e.message) && !e.message.includes("XYZ"),
 * );
 * ```
 */
export function parseServerUrl(url: string): ServerTarget {
  const display = redactWholeUrl(url);
  const unix = /^unix:\/\/(\/.+)$/.exec(url);
  if (unix) return { host: "localhost", port: 0, socket: unix[1], tls: false, db: 0, display };
  const m =
    /^(redis|rediss|valkey|valkeys):\/\/(?:([^:@/]*)(?::([^@/]*))?@)?(\[[^\]]+\]|[^:/]+)(?::(\d+))?(?:\/(\d+))?\/?$/
      .exec(url);
  if (!m) {
    throw new TypeError(
      `invalid server URL: ${display} (expected redis://[user:password@]host[:port][/db], rediss://…, or unix:///path)`,
    );
  }
  const port = m[5] ? Number(m[5]) : 6379;
  if (port < 1 || port > 65535) {
    throw new TypeError(`invalid server URL: ${display} (port ${port}: expected 1 to 65535)`);
  }
  const dec = (s: string | undefined) => {
    if (s === undefined || s === "") return undefined;
    try {
      return decodeURIComponent(s);
    } catch {
      throw new TypeError(
        `invalid server URL: ${display} (malformed percent-escape in the user or password)`,
      );
    }
  };
  const password = dec(m[3]);
  // the password kvlab will send: a server echoing it back never gets it printed or stored
  rememberSentSecret(password);
  return {
    host: m[4].replace(/^\[|\]$/g, ""),
    port,
    tls: m[1] === "rediss" || m[1] === "valkeys",
    user: dec(m[2]),
    password,
    db: m[6] ? Number(m[6]) : 0,
    display,
  };
}

/**
 * The transport of a target as stored in `runs.transport`.
 *
 * @example
 * ```ts
 * import { parseServerUrl, transportOf } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(transportOf(parseServerUrl("rediss://h")), "tls");
 * assert.equal(transportOf(parseServerUrl("redis://h"), true), "rdma");
 * ```
 */
export function transportOf(t: ServerTarget, rdma = false): "tcp" | "tls" | "unix" | "rdma" {
  return rdma ? "rdma" : t.tls ? "tls" : t.socket ? "unix" : "tcp";
}

/** Whether a target is on this machine (loopback or a unix socket), so /proc describes it. */
export function isLocal(t: ServerTarget): boolean {
  return !!t.socket || /^(127\.|localhost$|::1$)/.test(t.host);
}
