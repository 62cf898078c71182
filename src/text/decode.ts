/**
 * Bytes of a tool's output as text, whatever Windows or a terminal did to them: UTF-8, or
 * UTF-16 little- or big-endian with or without its byte-order mark (PowerShell's `>` writes
 * UTF-16 LE with a BOM; other tools write either without one).
 *
 * @module
 */

import { textEncoding } from "./read_lines.ts";

export { textEncoding };

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
