/**
 * RESP2 on the wire, for the open-loop generator: command encoding and an incremental reply
 * reader that walks bytes as they arrive from a socket, never copying a value (bulk bodies are
 * skipped by count; only error text is kept). Pure: no I/O, no clock.
 *
 * @module
 */

const encoder = new TextEncoder();
const CR = 13;
const LF = 10;
/** Error replies longer than this are cut when kept as text. */
const MAX_ERROR_TEXT = 200;

/** Kind of a complete top-level reply. */
export type RespReplyKind = "simple" | "error" | "integer" | "bulk" | "nil" | "array";

/** RESP3's own type bytes, by what they start (kvlab speaks RESP2: it never sends HELLO 3). */
const RESP3_TYPES: Record<number, string> = {
  62: "push", // >
  95: "null", // _
  44: "double", // ,
  35: "boolean", // #
  33: "blob error", // !
  61: "verbatim string", // =
  40: "big number", // (
  37: "map", // %
  126: "set", // ~
  124: "attribute", // |
};

/** The server sent a byte that cannot start or continue a RESP2 reply. */
export class RespProtocolError extends SyntaxError {
  /** Offset of the offending byte in the whole stream fed so far (0-based). */
  readonly offset: number;
  /** The offending byte. */
  readonly byte: number;

  /**
   * @param expected What the reader expected.
   * @param offset Offset of the byte in the stream.
   * @param found The byte found, or the byte that ended a header line and the line (`$-5`).
   */
  constructor(expected: string, offset: number, found: number | { byte: number; line: string }) {
    const byte = typeof found === "number" ? found : found.byte;
    const shown = (byte > 32 && byte < 127 ? ` "${String.fromCharCode(byte)}"` : "") +
      (typeof found === "number" && RESP3_TYPES[byte] ? `: a RESP3 ${RESP3_TYPES[byte]}` : "");
    super(
      `RESP offset ${offset}: expected ${expected} ` +
        (typeof found === "number" ? `(found byte ${byte}${shown})` : `(found "${found.line}")`),
    );
    this.name = "RespProtocolError";
    this.offset = offset;
    this.byte = byte;
  }
}

/**
 * A reply that cannot be matched to its request (a reply to no request, or of a kind the request
 * cannot get): thrown from a reply callback, so that the reader's caller drops the connection,
 * as for bytes that are not RESP. (The open loop's and the pub/sub publishers' replies.)
 */
export class ReplyMismatchError extends Error {
  /** @param problem What is wrong, in words. */
  constructor(problem: string) {
    super(problem);
    this.name = "RespProtocolError";
  }
}

/**
 * Encodes one command as a RESP array of bulk strings.
 *
 * @param args Command name and arguments (strings are UTF-8 encoded).
 * @returns The bytes to write.
 *
 * @example
 * ```ts
 * import { encodeCommand } from "./resp.ts";
 * import assert from "node:assert/strict";
 * const bytes = encodeCommand(["GET", "key:7"]);
 * assert.equal(new TextDecoder().decode(bytes), "*2\r\n$3\r\nGET\r\n$5\r\nkey:7\r\n");
 * ```
 */
export function encodeCommand(args: readonly (string | Uint8Array)[]): Uint8Array {
  const parts = args.map((a) => typeof a === "string" ? encoder.encode(a) : a);
  let head = `*${parts.length}\r\n`;
  const heads = parts.map((p) => {
    const h = encoder.encode(`${head}$${p.length}\r\n`);
    head = "";
    return h;
  });
  const size = parts.reduce((n, p, i) => n + heads[i].length + p.length + 2, 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    out.set(heads[i], at);
    at += heads[i].length;
    out.set(parts[i], at);
    at += parts[i].length;
    out[at++] = CR;
    out[at++] = LF;
  }
  return out;
}

/**
 * Encodes `GET key` (the hot-path shortcut of {@link encodeCommand}, same bytes).
 *
 * @param key An ASCII key.
 * @returns The bytes to write.
 *
 * @example
 * ```ts
 * import { encodeCommand, encodeGet } from "./resp.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(encodeGet("k1"), encodeCommand(["GET", "k1"]));
 * ```
 */
export function encodeGet(key: string): Uint8Array {
  return encoder.encode(`*2\r\n$3\r\nGET\r\n$${key.length}\r\n${key}\r\n`);
}

/**
 * Encodes `SET key value` (the hot-path shortcut of {@link encodeCommand}, same bytes).
 *
 * @param key An ASCII key.
 * @param value The value bytes (not copied into a string).
 * @returns The bytes to write.
 *
 * @example
 * ```ts
 * import { encodeCommand, encodeSet } from "./resp.ts";
 * import assert from "node:assert/strict";
 * const v = new Uint8Array([120, 120]);
 * assert.deepEqual(encodeSet("k1", v), encodeCommand(["SET", "k1", v]));
 * ```
 */
export function encodeSet(key: string, value: Uint8Array): Uint8Array {
  const head = encoder.encode(
    `*3\r\n$3\r\nSET\r\n$${key.length}\r\n${key}\r\n$${value.length}\r\n`,
  );
  const out = new Uint8Array(head.length + value.length + 2);
  out.set(head, 0);
  out.set(value, head.length);
  out[out.length - 2] = CR;
  out[out.length - 1] = LF;
  return out;
}

const GET_HEAD = encoder.encode("*2\r\n$3\r\nGET\r\n$");
const SET_HEAD = encoder.encode("*3\r\n$3\r\nSET\r\n$");

/** Writes the decimal digits of a non-negative integer; returns the offset after them. */
function putInt(buf: Uint8Array, at: number, v: number): number {
  let digits = 1;
  for (let x = v; x >= 10; x = Math.floor(x / 10)) digits++;
  for (let i = at + digits - 1; i >= at; i--) {
    buf[i] = 48 + (v % 10);
    v = Math.floor(v / 10);
  }
  return at + digits;
}

/**
 * Writes `GET <prefix><key>` (or `SET <prefix><key> <value>`) into `buf` at `at`, allocating
 * nothing: the same bytes as {@link encodeGet} and {@link encodeSet}, for a hot path that
 * reuses one buffer.
 *
 * @param buf Where to write (must have room).
 * @param at Offset to write at.
 * @param prefix The key prefix, as bytes.
 * @param key The key's number (a non-negative integer).
 * @param value The value of a SET, or null for a GET.
 * @returns The offset after the command.
 *
 * @example
 * ```ts
 * import { encodeGet, encodeKeyCommandInto, encodeSet } from "./resp.ts";
 * import assert from "node:assert/strict";
 * const buf = new Uint8Array(128);
 * const p = new TextEncoder().encode("key:");
 * const n = encodeKeyCommandInto(buf, 0, p, 1234, null);
 * assert.deepEqual(buf.subarray(0, n), encodeGet("key:1234"));
 * const v = new Uint8Array([120, 120, 120]);
 * const m = encodeKeyCommandInto(buf, n, p, 0, v);
 * assert.deepEqual(buf.subarray(n, m), encodeSet("key:0", v));
 * ```
 */
// positional: the per-request hot path of the epoll engine (written in place, no object per call)
export function encodeKeyCommandInto(
  buf: Uint8Array,
  at: number,
  prefix: Uint8Array,
  key: number,
  value: Uint8Array | null,
): number {
  buf.set(value === null ? GET_HEAD : SET_HEAD, at);
  at += GET_HEAD.length;
  let digits = 1;
  for (let x = key; x >= 10; x = Math.floor(x / 10)) digits++;
  at = putInt(buf, at, prefix.length + digits);
  buf[at++] = CR;
  buf[at++] = LF;
  buf.set(prefix, at);
  at = putInt(buf, at + prefix.length, key);
  buf[at++] = CR;
  buf[at++] = LF;
  if (value !== null) {
    buf[at++] = 36; // $
    at = putInt(buf, at, value.length);
    buf[at++] = CR;
    buf[at++] = LF;
    buf.set(value, at);
    at += value.length;
    buf[at++] = CR;
    buf[at++] = LF;
  }
  return at;
}

const enum State {
  Type,
  Line,
  Body,
}

/**
 * Incremental RESP2 reply reader. Feed it socket chunks of any size, split anywhere; it calls
 * `onReply` once per complete top-level reply, in order. Nested array elements are walked but
 * not reported; bulk bodies are skipped by count, so nothing but error text is copied.
 *
 * @example
 * ```ts
 * import { RespReplyReader } from "./resp.ts";
 * import assert from "node:assert/strict";
 * const kinds: string[] = [];
 * const r = new RespReplyReader((kind) => kinds.push(kind));
 * const bytes = new TextEncoder().encode("+OK\r\n$3\r\nabc\r\n$-1\r\n-ERR no\r\n*2\r\n:1\r\n$1\r\nx\r\n");
 * for (const b of bytes) r.feed(new Uint8Array([b])); // one byte at a time
 * assert.deepEqual(kinds, ["simple", "bulk", "nil", "error", "array"]);
 * assert.equal(r.lastError, "ERR no");
 * // only -1 is nil: another negative length is no RESP2
 * assert.throws(() => r.feed(new TextEncoder().encode("$-5\r\n")), /expected a length of -1 \(nil\), or 0 and above \(found "\$-5"\)/);
 * ```
 */
export class RespReplyReader {
  /** Text of the last error reply seen (cut to 200 characters), or `""`. */
  lastError = "";
  #onReply: (kind: RespReplyKind) => void;
  #state = State.Type;
  #type = 0;
  #number = 0;
  #negative = false;
  /** Digits of the current header line's number. */
  #digits = 0;
  #text: number[] = [];
  #skip = 0;
  /** Length of the bulk string being read. */
  #bulk = 0;
  /** Elements still expected by each open array, innermost last. */
  #pending: number[] = [];
  #topKind: RespReplyKind = "simple";
  #offset = 0;

  /** @param onReply Called with the kind of each complete top-level reply. */
  constructor(onReply: (kind: RespReplyKind) => void) {
    this.#onReply = onReply;
  }

  /**
   * Reads a chunk.
   *
   * @param chunk Bytes from the socket.
   * @param length How many bytes of `chunk` are valid (default: all), so a read buffer can be
   *   passed without slicing it.
   * @returns How many top-level replies completed in this chunk.
   * @throws {RespProtocolError} On a byte that is not RESP2.
   */
  feed(chunk: Uint8Array, length = chunk.length): number {
    let done = 0;
    let i = 0;
    while (i < length) {
      if (this.#state === State.Body) {
        const take = Math.min(this.#skip, length - i);
        this.#skip -= take;
        i += take;
        if (this.#skip === 0 && this.#element()) done++;
        continue;
      }
      const b = chunk[i++];
      if (this.#state === State.Type) {
        this.#startLine(b, this.#offset + i - 1);
      } else if (b === LF) {
        if (this.#endLine(this.#offset + i - 1)) done++;
      } else this.#lineByte(b, this.#offset + i - 1);
    }
    this.#offset += length;
    return done;
  }

  /**
   * What the reader holds of a reply not yet complete, in words, for an error that says what a
   * server did (`""` between replies). Not for the hot path.
   *
   * @returns E.g. `a bulk string of 10 bytes, 3 received`, `a reply line cut short ("$12")`.
   *
   * @example
   * ```ts
   * import { RespReplyReader } from "./resp.ts";
   * import assert from "node:assert/strict";
   * const r = new RespReplyReader(() => {});
   * assert.equal(r.pending(), "");
   * r.feed(new TextEncoder().encode("*2\r\n$10\r\nabc"));
   * assert.equal(r.pending(), "a bulk string of 10 bytes, 3 received (in an array, 2 elements to go)");
   * ```
   */
  pending(): string {
    const inArray = this.#pending.length > 0
      ? ` (in an array, ${this.#pending.at(-1)} element${
        this.#pending.at(-1) === 1 ? "" : "s"
      } to go)`
      : "";
    if (this.#state === State.Body) {
      const got = Math.max(0, this.#bulk + 2 - this.#skip);
      return `a bulk string of ${this.#bulk} bytes, ${Math.min(got, this.#bulk)} received` +
        (got > this.#bulk ? " and part of its CRLF" : "") + inArray;
    }
    if (this.#state === State.Line) {
      const t = String.fromCharCode(this.#type);
      const line = this.#type === 45 || this.#type === 43
        ? t + String.fromCharCode(...this.#text.slice(0, 40))
        : `${t}${this.#negative ? "-" : ""}${this.#digits ? this.#number : ""}`;
      return `a reply line cut short (${JSON.stringify(line)})` + inArray;
    }
    return inArray ? `an array cut short${inArray}` : "";
  }

  #startLine(b: number, offset: number): void {
    if (b !== 43 && b !== 45 && b !== 58 && b !== 36 && b !== 42) {
      throw new RespProtocolError("a RESP2 type byte (+ - : $ *)", offset, b);
    }
    this.#type = b;
    this.#number = 0;
    this.#negative = false;
    this.#digits = 0;
    this.#text.length = 0;
    this.#state = State.Line;
  }

  #lineByte(b: number, offset: number): void {
    const t = this.#type;
    if (t === 45) {
      if (b !== CR && this.#text.length < MAX_ERROR_TEXT) this.#text.push(b);
    } else if (t !== 43 && b !== CR) {
      if (b >= 48 && b <= 57) {
        this.#number = this.#number * 10 + (b - 48);
        this.#digits++;
      } else if (b === 45 && this.#digits === 0 && !this.#negative) this.#negative = true;
      else throw new RespProtocolError("a digit", offset, b);
    }
  }

  /** Ends a header line; true when a top-level reply completed. */
  #endLine(offset: number): boolean {
    const n = this.#negative ? -this.#number : this.#number;
    const t = this.#type;
    const top = this.#pending.length === 0;
    if (t !== 43 && t !== 45 && (this.#digits === 0 || (n < 0 && n !== -1 && t !== 58))) {
      // `$-1` and `*-1` are nil; any other negative length (`$-5`, `*-7`), or none, is no RESP2
      throw new RespProtocolError(
        this.#digits === 0 ? "digits" : "a length of -1 (nil), or 0 and above",
        offset,
        { byte: LF, line: `${String.fromCharCode(t)}${n === 0 && this.#negative ? "-" : ""}${n}` },
      );
    }
    if (t === 36) {
      if (top) this.#topKind = n < 0 ? "nil" : "bulk";
      if (n >= 0) {
        this.#bulk = n;
        this.#skip = n + 2;
        this.#state = State.Body;
        return false;
      }
    } else if (t === 42) {
      if (top) this.#topKind = n < 0 ? "nil" : "array";
      if (n > 0) {
        this.#pending.push(n);
        this.#state = State.Type;
        return false;
      }
    } else if (top) {
      this.#topKind = t === 43 ? "simple" : t === 58 ? "integer" : "error";
      if (t === 45) this.lastError = String.fromCharCode(...this.#text);
    }
    return this.#element();
  }

  /** One element finished; true when that closed a top-level reply. */
  #element(): boolean {
    this.#state = State.Type;
    const p = this.#pending;
    while (p.length > 0) {
      if (--p[p.length - 1] > 0) return false;
      p.pop();
    }
    this.#onReply(this.#topKind);
    return true;
  }
}
