/**
 * An incremental reader of what a subscriber connection receives (RESP2): `message` and
 * `smessage` pushes, whose payload header is handed over without copying the rest of the
 * payload, subscribe confirmations, and errors. Pure: no I/O, no clock.
 *
 * @module
 */

import { RespProtocolError } from "../loadgen/resp.ts";
import { PAYLOAD_HEADER_BYTES } from "./payload.ts";

const CR = 13;
const LF = 10;

/** What a {@link PushReader} reports. */
export interface PushHandlers {
  /**
   * A `message` or `smessage` push: the first bytes of its payload (up to
   * {@link PAYLOAD_HEADER_BYTES}; the view is reused, read it at once).
   */
  message(header: Uint8Array): void;
  /** A `subscribe` or `ssubscribe` confirmation. */
  subscribed(): void;
  /** An error reply (its text), or any other reply (`""`). */
  other(error: string): void;
}

const enum S {
  Type,
  Line,
  Body,
}

/**
 * Reads a subscriber's stream: feed it socket chunks split anywhere.
 *
 * @example
 * ```ts
 * import { PushReader } from "./push.ts";
 * import assert from "node:assert/strict";
 * const got: string[] = [];
 * const r = new PushReader({
 *   message: (h) => got.push(`m:${new TextDecoder().decode(h)}`),
 *   subscribed: () => got.push("sub"),
 *   other: (e) => got.push(`other:${e}`),
 * });
 * const text = "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n" +
 *   "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$20\r\n0123456789abcdefXYZW\r\n" +
 *   "*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$3\r\nabc\r\n-ERR no\r\n";
 * for (const b of new TextEncoder().encode(text)) r.feed(new Uint8Array([b]));
 * assert.deepEqual(got, ["sub", "m:0123456789abcdef", "m:abc", "other:ERR no"]);
 * ```
 */
export class PushReader {
  readonly #h: PushHandlers;
  #state = S.Type;
  #type = 0;
  #number = 0;
  #negative = false;
  #text: number[] = [];
  /** Elements of the current top-level array: expected, done. */
  #count = 0;
  #elem = 0;
  /** Bytes of the current bulk still to read (with its CRLF). */
  #skip = 0;
  /** Element 0: its length and first byte (the push kind); element 2: the header bytes. */
  #kindLength = 0;
  #kindByte = 0;
  readonly #header = new Uint8Array(PAYLOAD_HEADER_BYTES);
  #headerLength = 0;
  #offset = 0;

  /** @param handlers Called for each complete reply. */
  constructor(handlers: PushHandlers) {
    this.#h = handlers;
  }

  /**
   * Reads a chunk.
   *
   * @param chunk Bytes from the socket.
   * @param length How many bytes of `chunk` are valid (default: all).
   * @throws {RespProtocolError} On bytes that are not RESP2, or a nested array.
   */
  feed(chunk: Uint8Array, length = chunk.length): void {
    let i = 0;
    while (i < length) {
      if (this.#state === S.Body) {
        i = this.#body(chunk, i, length);
        continue;
      }
      const b = chunk[i++];
      if (this.#state === S.Type) this.#start(b, this.#offset + i - 1);
      else if (b === LF) this.#endLine(this.#offset + i - 1);
      else if (b !== CR) this.#lineByte(b, this.#offset + i - 1);
    }
    this.#offset += length;
  }

  #start(b: number, at: number): void {
    if (b !== 43 && b !== 45 && b !== 58 && b !== 36 && b !== 42) {
      throw new RespProtocolError("a RESP2 type byte (+ - : $ *)", at, b);
    }
    this.#type = b;
    this.#number = 0;
    this.#negative = false;
    this.#text.length = 0;
    this.#state = S.Line;
  }

  #lineByte(b: number, at: number): void {
    if (this.#type === 45 || this.#type === 43) {
      if (this.#text.length < 200) this.#text.push(b);
    } else if (b >= 48 && b <= 57) this.#number = this.#number * 10 + (b - 48);
    else if (b === 45 && this.#number === 0) this.#negative = true;
    else throw new RespProtocolError("a digit", at, b);
  }

  #endLine(at: number): void {
    const n = this.#negative ? -this.#number : this.#number;
    const inArray = this.#count > 0;
    this.#state = S.Type;
    if (this.#type === 42) {
      if (inArray) throw new RespProtocolError("no nested array in a push", at, 42);
      if (n > 0) {
        this.#count = n;
        this.#elem = 0;
        this.#kindLength = 0;
        this.#headerLength = 0;
      } else this.#h.other("");
    } else if (this.#type === 36 && n >= 0) {
      if (this.#elem === 0) this.#kindLength = n;
      this.#skip = n + 2;
      this.#state = S.Body;
    } else if (inArray) this.#element();
    else this.#h.other(this.#type === 45 ? String.fromCharCode(...this.#text) : "");
  }

  /** Reads bulk bytes from `i`, keeping the ones that matter; returns the next index. */
  #body(chunk: Uint8Array, i: number, length: number): number {
    const take = Math.min(this.#skip, length - i);
    const bodyAt = this.#kindLength + 2 - this.#skip; // meaningful for element 0 only
    if (this.#elem === 0 && bodyAt === 0 && take > 0) this.#kindByte = chunk[i];
    if (this.#elem === 2 && this.#headerLength < PAYLOAD_HEADER_BYTES) {
      const want = Math.min(PAYLOAD_HEADER_BYTES - this.#headerLength, take, this.#skip - 2);
      if (want > 0) {
        this.#header.set(chunk.subarray(i, i + want), this.#headerLength);
        this.#headerLength += want;
      }
    }
    this.#skip -= take;
    if (this.#skip === 0) {
      if (this.#count > 0) this.#element();
      else this.#h.other("");
      this.#state = this.#state === S.Body ? S.Type : this.#state;
    }
    return i + take;
  }

  /** One element of the current array is complete. */
  #element(): void {
    this.#state = S.Type;
    if (++this.#elem < this.#count) return;
    this.#count = 0;
    const k = this.#kindLength;
    const c = this.#kindByte;
    if ((k === 7 && c === 109) || (k === 8 && c === 115)) {
      this.#h.message(this.#header.subarray(0, this.#headerLength));
    } else if ((k === 9 && c === 115) || (k === 10 && c === 115)) this.#h.subscribed();
    else this.#h.other("");
  }
}
