/**
 * An incremental reader of what a subscriber connection receives (RESP2): `message` and
 * `smessage` pushes, whose payload header (stamp, publisher, sequence) is decoded in place
 * and handed over as numbers, subscribe confirmations, and errors. Pure: no I/O, no clock.
 *
 * One decode path per push, and no allocation on it: a push that lies whole in the chunk is
 * parsed in place from the read buffer (the common case); one split across chunks goes
 * through the byte-at-a-time state machine, which keeps only the header's bytes.
 *
 * @module
 */

import { RespProtocolError } from "../loadgen/resp.ts";
import { PAYLOAD_HEADER_BYTES } from "./payload.ts";

const SEQUENCE_AT = 12;
const PUBLISHER_AT = 8;

const CR = 13;
const LF = 10;

/** What a {@link PushReader} reports. */
export interface PushHandlers {
  /**
   * A `message` or `smessage` push: its payload header's fields (see `payload.ts`), or
   * `NaN, -1, -1` when the payload is shorter than {@link PAYLOAD_HEADER_BYTES}.
   */
  message(stampNs: number, publisher: number, sequence: number): void;
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
 * import { writePayloadHeader } from "./payload.ts";
 * const got: string[] = [];
 * const r = new PushReader({
 *   message: (stampNs, publisher, sequence) => got.push(`m:${stampNs}/${publisher}/${sequence}`),
 *   subscribed: () => got.push("sub"),
 *   other: (e) => got.push(`other:${e}`),
 * });
 * const payload = new Uint8Array(20).fill(120);
 * writePayloadHeader(payload, { stampNs: 1500, publisher: 3, sequence: 7 });
 * const enc = new TextEncoder();
 * const bytes = new Uint8Array([
 *   ...enc.encode("*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"),
 *   ...enc.encode("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$20\r\n"), ...payload,
 *   ...enc.encode("\r\n*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$3\r\nabc\r\n-ERR no\r\n"),
 * ]);
 * const want = ["sub", "m:1500/3/7", "m:NaN/-1/-1", "other:ERR no"];
 * r.feed(bytes); // whole pushes: parsed in place
 * assert.deepEqual(got.splice(0), want);
 * for (const b of bytes) r.feed(new Uint8Array([b])); // split anywhere: the state machine
 * assert.deepEqual(got, want);
 * ```
 */
export class PushReader {
  readonly #h: PushHandlers;
  #state = S.Type;
  #type = 0;
  #number = 0;
  #negative = false;
  #digits = 0;
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
  readonly #headerView = new DataView(this.#header.buffer);
  #headerLength = 0;
  #offset = 0;
  /** A view of the last chunk's buffer (the caller's reused read buffer: made once). */
  #view: DataView | undefined;
  /** Length read by {@link PushReader.#bulkAt}. */
  #length = 0;

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
      if (this.#state === S.Type && this.#count === 0 && chunk[i] === 42) {
        const end = this.#messageAt(chunk, i, length);
        if (end > 0) {
          i = end;
          continue;
        }
      }
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

  /**
   * Parses a whole `message`/`smessage` push starting at `i` in place and reports it.
   *
   * @returns The index after it, or -1 (not one, or not whole in the chunk: the state
   *   machine takes it from `i`, and reports any protocol error).
   */
  #messageAt(c: Uint8Array, i: number, end: number): number {
    if (i + 4 > end || c[i + 1] !== 51 || c[i + 2] !== CR || c[i + 3] !== LF) return -1;
    let j = this.#bulkAt(c, i + 4, end);
    const kind = this.#length;
    if (j < 0 || !((kind === 7 && c[j] === 109) || (kind === 8 && c[j] === 115))) return -1;
    j = this.#bulkAt(c, this.#bodyEnd(c, j, kind, end), end);
    j = this.#bulkAt(c, this.#bodyEnd(c, j, this.#length, end), end);
    const size = this.#length;
    const next = this.#bodyEnd(c, j, size, end);
    if (next < 0) return -1;
    if (size < PAYLOAD_HEADER_BYTES) {
      this.#h.message(NaN, -1, -1);
      return next;
    }
    if (this.#view?.buffer !== c.buffer) this.#view = new DataView(c.buffer);
    const v = this.#view;
    const at = c.byteOffset + j;
    this.#h.message(
      v.getFloat64(at, true),
      v.getUint32(at + PUBLISHER_AT, true),
      v.getUint32(at + SEQUENCE_AT, true),
    );
    return next;
  }

  /** Reads `$<n>\r\n` at `j` into `#length`; the index after it, or -1. */
  #bulkAt(c: Uint8Array, j: number, end: number): number {
    if (j < 0 || j >= end || c[j] !== 36) return -1;
    let n = 0;
    for (j++; j < end && c[j] !== CR; j++) {
      const d = c[j] - 48;
      if (d < 0 || d > 9 || n > 1e9) return -1;
      n = n * 10 + d;
    }
    if (j + 1 >= end || c[j + 1] !== LF) return -1;
    this.#length = n;
    return j + 2;
  }

  /** The index after a bulk body of `n` bytes at `j` and its CRLF, or -1. */
  // positional: called several times per push decoded (the per-message hot path), as #bulkAt
  #bodyEnd(c: Uint8Array, j: number, n: number, end: number): number {
    if (j < 0) return -1;
    const e = j + n;
    return e + 2 <= end && c[e] === CR && c[e + 1] === LF ? e + 2 : -1;
  }

  #start(b: number, at: number): void {
    if (b !== 43 && b !== 45 && b !== 58 && b !== 36 && b !== 42) {
      throw new RespProtocolError("a RESP2 type byte (+ - : $ *)", at, b);
    }
    this.#type = b;
    this.#number = 0;
    this.#negative = false;
    this.#digits = 0;
    this.#text.length = 0;
    this.#state = S.Line;
  }

  #lineByte(b: number, at: number): void {
    if (this.#type === 45 || this.#type === 43) {
      if (this.#text.length < 200) this.#text.push(b);
    } else if (b >= 48 && b <= 57) {
      this.#number = this.#number * 10 + (b - 48);
      this.#digits++;
    } else if (b === 45 && this.#digits === 0 && !this.#negative) this.#negative = true;
    else throw new RespProtocolError("a digit", at, b);
  }

  #endLine(at: number): void {
    const n = this.#negative ? -this.#number : this.#number;
    const t = this.#type;
    if (t !== 43 && t !== 45 && (this.#digits === 0 || (n < -1 && t !== 58))) {
      // `$-1` and `*-1` are nil; another negative length (`$-5`), or none, is no RESP2
      throw new RespProtocolError(
        this.#digits === 0 ? "digits" : "a length of -1 (nil), or 0 and above",
        at,
        { byte: LF, line: `${String.fromCharCode(t)}${n}` },
      );
    }
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
      for (let k = 0; k < want; k++) this.#header[this.#headerLength++] = chunk[i + k];
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
      const v = this.#headerView;
      if (this.#headerLength < PAYLOAD_HEADER_BYTES) this.#h.message(NaN, -1, -1);
      else {
        this.#h.message(
          v.getFloat64(0, true),
          v.getUint32(PUBLISHER_AT, true),
          v.getUint32(SEQUENCE_AT, true),
        );
      }
    } else if ((k === 9 && c === 115) || (k === 10 && c === 115)) this.#h.subscribed();
    else this.#h.other("");
  }
}
