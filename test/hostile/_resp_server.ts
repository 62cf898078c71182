/**
 * A hostile RESP server for tests: it answers on a free loopback port as a Redis server would,
 * except for what the test makes it say (an INFO whose version holds escape sequences or HTML,
 * unsolicited messages, …). Started and stopped by the test; loopback only.
 *
 * @module
 */

/** One client connection of a hostile server, as its `reply` sees it. */
export interface HostileClient {
  /** Its number, in connection order (0-based). */
  readonly id: number;
  /** What the test keeps about it (the channels it subscribed to, …). */
  readonly state: Record<string, unknown>;
  /** Writes to it now (a string as UTF-8, bytes as they are). */
  send(data: string | Uint8Array): void;
  /** Every client connected now, itself included. */
  all(): HostileClient[];
}

/** What the server answers. */
export interface HostileServerOptions {
  /** The text of INFO's reply (sections and `key:value` lines). */
  info?: string;
  /**
   * Answers a command itself: the RESP to write (it may hold unsolicited pushes after the
   * reply; a string is written as UTF-8, bytes as they are), or undefined for the server's
   * usual answer. The words are the command's bytes as Latin-1 (one character per byte: a
   * binary payload is kept exactly, see {@link rawBulk}).
   */
  reply?: (words: string[], client: HostileClient) => string | Uint8Array | undefined;
  /** Called when a client connects (before it sends anything). */
  connected?: (client: HostileClient) => void;
}

/** Bytes as a Latin-1 string, one character per byte. */
function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) {
    s += String.fromCharCode(...b.subarray(i, i + 8192));
  }
  return s;
}

/**
 * A RESP bulk string of a word as the server received it (Latin-1: the exact bytes), for
 * sending a client's binary payload on unchanged.
 */
export function rawBulk(word: string): Uint8Array {
  const head = enc.encode(`$${word.length}\r\n`);
  const out = new Uint8Array(head.length + word.length + 2);
  out.set(head);
  for (let i = 0; i < word.length; i++) out[head.length + i] = word.charCodeAt(i);
  out.set([13, 10], head.length + word.length);
  return out;
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
  const clients = new Map<Deno.Conn, HostileClient>();
  let nextId = 0;
  const serve = async (conn: Deno.Conn) => {
    conns.add(conn);
    // writes in order, one at a time (a reply and pushes from other clients' commands)
    let writing = Promise.resolve();
    const send = (data: string | Uint8Array) => {
      const b = typeof data === "string" ? enc.encode(data) : data;
      writing = writing.then(async () => {
        for (let off = 0; off < b.length;) off += await conn.write(b.subarray(off));
      }).catch(() => {/* the client went away */});
    };
    const client: HostileClient = {
      id: nextId++,
      state: {},
      send,
      all: () => [...clients.values()],
    };
    clients.set(conn, client);
    o.connected?.(client);
    const chunk = new Uint8Array(64 << 10);
    let pending = "";
    try {
      while (true) {
        const n = await conn.read(chunk);
        if (n === null) break;
        pending += latin1(chunk.subarray(0, n));
        const { cmds, rest } = commands(pending);
        pending = rest;
        let out = "";
        for (const words of cmds) {
          const cmd = (words[0] ?? "").toUpperCase();
          const own = o.reply?.(words, client);
          if (own instanceof Uint8Array) {
            if (out) send(out);
            out = "";
            send(own);
          } else if (own !== undefined) out += own;
          else if (cmd === "INFO") out += bulk(info);
          else if (cmd === "PING") out += "+PONG\r\n";
          else if (cmd === "CONFIG" || cmd === "COMMAND") out += "*0\r\n";
          else if (cmd === "GET") out += "$-1\r\n";
          else if (cmd === "DBSIZE") out += ":0\r\n";
          else if (cmd === "QUIT") out += "+OK\r\n";
          else if (cmd === "HELLO" || cmd === "CLIENT") out += "-ERR unknown command\r\n";
          else out += "+OK\r\n";
        }
        if (out) send(out);
        await writing;
      }
    } catch { /* the client went away */ }
    conns.delete(conn);
    clients.delete(conn);
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
