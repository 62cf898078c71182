/**
 * A hostile RESP server for tests: it answers on a free loopback port as a Redis server would,
 * except for what the test makes it say (an INFO whose version holds escape sequences or HTML,
 * unsolicited messages, …). Started and stopped by the test; loopback only.
 *
 * @module
 */

/** What the server answers. */
export interface HostileServerOptions {
  /** The text of INFO's reply (sections and `key:value` lines). */
  info?: string;
  /**
   * Answers a command itself: the RESP to write (it may hold unsolicited pushes after the
   * reply), or undefined for the server's usual answer.
   */
  reply?: (words: string[]) => string | undefined;
}

/** A running hostile server. */
export interface HostileServer {
  port: number;
  /** Stops listening and closes every connection. */
  close(): void;
}

const enc = new TextEncoder();

/** The words of each complete RESP array in `buf`, and what is left over. */
function commands(buf: string): { cmds: string[][]; rest: string } {
  const cmds: string[][] = [];
  let i = 0;
  while (i < buf.length) {
    if (buf[i] !== "*") {
      // an inline command
      const nl = buf.indexOf("\n", i);
      if (nl < 0) break;
      cmds.push(buf.slice(i, nl).trim().split(/\s+/));
      i = nl + 1;
      continue;
    }
    const nl = buf.indexOf("\r\n", i);
    if (nl < 0) break;
    const n = Number(buf.slice(i + 1, nl));
    let j = nl + 2;
    const words: string[] = [];
    let whole = true;
    for (let k = 0; k < n; k++) {
      const e = buf.indexOf("\r\n", j);
      if (e < 0) {
        whole = false;
        break;
      }
      const len = Number(buf.slice(j + 1, e));
      if (buf.length < e + 2 + len + 2) {
        whole = false;
        break;
      }
      words.push(buf.slice(e + 2, e + 2 + len));
      j = e + 2 + len + 2;
    }
    if (!whole) break;
    cmds.push(words);
    i = j;
  }
  return { cmds, rest: buf.slice(i) };
}

/** A RESP bulk string. */
export function bulk(s: string): string {
  return `$${enc.encode(s).length}\r\n${s}\r\n`;
}

/**
 * Starts a hostile server on a free loopback port.
 *
 * @param o What it answers.
 * @returns Its port and how to stop it.
 */
export function hostileServer(o: HostileServerOptions = {}): HostileServer {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const info = o.info ?? "# Server\r\nredis_version:7.0.15\r\n";
  const serve = async (conn: Deno.Conn) => {
    conns.add(conn);
    const write = async (s: string) => {
      const b = enc.encode(s);
      for (let off = 0; off < b.length;) off += await conn.write(b.subarray(off));
    };
    const dec = new TextDecoder();
    const chunk = new Uint8Array(64 << 10);
    let pending = "";
    try {
      while (true) {
        const n = await conn.read(chunk);
        if (n === null) break;
        pending += dec.decode(chunk.subarray(0, n), { stream: true });
        const { cmds, rest } = commands(pending);
        pending = rest;
        let out = "";
        for (const words of cmds) {
          const cmd = (words[0] ?? "").toUpperCase();
          const own = o.reply?.(words);
          if (own !== undefined) out += own;
          else if (cmd === "INFO") out += bulk(info);
          else if (cmd === "PING") out += "+PONG\r\n";
          else if (cmd === "CONFIG" || cmd === "COMMAND") out += "*0\r\n";
          else if (cmd === "GET") out += "$-1\r\n";
          else if (cmd === "DBSIZE") out += ":0\r\n";
          else if (cmd === "QUIT") out += "+OK\r\n";
          else if (cmd === "HELLO" || cmd === "CLIENT") out += "-ERR unknown command\r\n";
          else out += "+OK\r\n";
        }
        if (out) await write(out);
      }
    } catch { /* the client went away */ }
    conns.delete(conn);
    try {
      conn.close();
    } catch { /* closed */ }
  };
  (async () => {
    try {
      for await (const conn of listener) serve(conn);
    } catch { /* closed */ }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      conns.clear();
    },
  };
}
