/**
 * Bytes of a tool's output as text, whatever Windows or a terminal did to them: UTF-8, or
 * UTF-16 little- or big-endian with or without its byte-order mark (PowerShell's `>` writes
 * UTF-16 LE with a BOM; other tools write either without one).
 *
 * @module
 */

/**
 * How a file's bytes are text: UTF-8 (also plain ASCII), or UTF-16 little- or big-endian with
 * or without its byte-order mark (Windows PowerShell's `>` writes UTF-16 LE with one; other
 * tools write either without). UTF-16 files are read as text and handed on as UTF-8; byte
 * offsets stay those of the file.
 */
export type TextEncoding = "utf-8" | "utf-16le" | "utf-16be";

/** The encoding a file's first bytes announce (a UTF-16 byte-order mark), else UTF-8. */
export function encodingOfBytes(head: Uint8Array): TextEncoding {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return "utf-16le";
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return "utf-16be";
  return "utf-8";
}

/** Bytes looked at to tell UTF-16 without a BOM from UTF-8. */
export const SNIFF_BYTES = 4096;

/**
 * The encoding of a text's bytes: its BOM says, else UTF-16 when NUL bytes fill every other
 * position (ASCII in UTF-16: `S\0E\0T\0` or `\0S\0E\0T`; UTF-8 text holds no NUL), else UTF-8.
 *
 * @param bytes The text's first bytes (at least {@link SNIFF_BYTES} where there are), or all.
 * @returns `utf-8`, `utf-16le` or `utf-16be`.
 *
 * @example
 * ```ts
 * import { textEncoding } from "./decode.ts";
 * import assert from "node:assert/strict";
 * const le = new Uint8Array([0x53, 0, 0x45, 0, 0x54, 0, 0x0a, 0]);
 * assert.equal(textEncoding(le), "utf-16le");
 * assert.equal(textEncoding(le.slice(1)), "utf-16be");
 * assert.equal(textEncoding(new TextEncoder().encode("SET\n")), "utf-8");
 * assert.equal(textEncoding(new Uint8Array([0xfe, 0xff, 0, 0x53])), "utf-16be");
 * ```
 */
export function textEncoding(bytes: Uint8Array): TextEncoding {
  const bom = encodingOfBytes(bytes);
  if (bom !== "utf-8") return bom;
  const n = Math.min(bytes.length, SNIFF_BYTES) >> 1;
  if (n < 2) return "utf-8";
  let even = 0, odd = 0;
  for (let i = 0; i < n; i++) {
    if (bytes[2 * i] === 0) even++;
    if (bytes[2 * i + 1] === 0) odd++;
  }
  if (odd >= 0.9 * n && even <= 0.1 * n) return "utf-16le";
  if (even >= 0.9 * n && odd <= 0.1 * n) return "utf-16be";
  return "utf-8";
}

/**
 * Decodes a tool's output (see {@link textEncoding}); a byte-order mark is not part of the text.
 *
 * @param bytes The bytes.
 * @returns The text.
 *
 * @example
 * ```ts
 * import { decodeText } from "./decode.ts";
 * import assert from "node:assert/strict";
 * assert.equal(decodeText(new Uint8Array([0xff, 0xfe, 0x53, 0, 0x0a, 0])), "S\n");
 * assert.equal(decodeText(new Uint8Array([0, 0x53, 0, 0x0a])), "S\n");
 * assert.equal(decodeText(new TextEncoder().encode("\ufeffSET\n")), "SET\n");
 * ```
 */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder(textEncoding(bytes)).decode(bytes);
}
