/**
 * Small blocking-style RESP helpers over a Deno TCP connection, off the hot path: connecting
 * (with AUTH), and writing a batch of pipelined commands then reading their replies.
 *
 * @module
 */

import { encodeCommand, RespReplyReader } from "./resp.ts";
import { redactSent } from "../../text/redact.ts";

/** Where to connect. */
export interface Endpoint {
  /** @default {"127.0.0.1"} */
  hostname?: string;
  port: number;
  /** Sent with AUTH after connecting. */
  password?: string;
}

/** Writes all of `bytes` (Deno's write may be partial). */
export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(at === 0 ? bytes : bytes.subarray(at));
}

/**
 * Writes `bytes` (holding `count` commands) and reads `count` replies.
 *
 * @returns Number of error replies and the text of the last one.
 * @throws {Deno.errors.InvalidData} When the server sent more replies than commands (its
 * replies can no longer be matched to them).
 */
export async function roundTrip(
  conn: Deno.Conn,
  bytes: Uint8Array,
  count: number,
): Promise<{ errors: number; lastError: string }> {
  let errors = 0;
  const reader = new RespReplyReader((kind) => {
    if (kind === "error") errors++;
  });
  const written = writeAll(conn, bytes);
  const buf = new Uint8Array(64 * 1024);
  let seen = 0;
  while (seen < count) {
    const n = await conn.read(buf);
    if (n === null) throw new Deno.errors.ConnectionReset("server closed the connection");
    seen += reader.feed(buf, n);
  }
  if (seen > count) {
    throw new Deno.errors.InvalidData(`${seen} replies to ${count} commands: more than asked`);
  }
  await written;
  return { errors, lastError: reader.lastError };
}

/**
 * Connects to a server (TCP_NODELAY on), sending AUTH when a password is given.
 *
 * @throws {Deno.errors.TimedOut} When the connection is not up within `timeoutMs`.
 */
export async function connectResp(endpoint: Endpoint, timeoutMs: number): Promise<Deno.TcpConn> {
  const pending = Deno.connect({ hostname: endpoint.hostname ?? "127.0.0.1", port: endpoint.port });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Deno.errors.TimedOut(`connect to port ${endpoint.port} timed out`)),
      timeoutMs,
    );
  });
  let conn: Deno.TcpConn | undefined;
  try {
    conn = await Promise.race([pending, timeout]);
    conn.setNoDelay(true);
    if (endpoint.password !== undefined) {
      const r = await roundTrip(conn, encodeCommand(["AUTH", endpoint.password]), 1);
      if (r.errors > 0) {
        // (a server may echo the password it refused)
        const said = redactSent(r.lastError, endpoint.password);
        throw new Deno.errors.PermissionDenied(`AUTH failed: ${said}`);
      }
    }
    return conn;
  } catch (e) {
    if (conn) conn.close();
    else pending.then((c) => c.close(), () => {});
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
