/**
 * Text as UTF-16 bytes, as Windows tools and some terminals write a tool's output: little- or
 * big-endian, with or without a byte-order mark. For the encoding tests.
 *
 * @module
 */

/**
 * `text` as UTF-16 bytes.
 *
 * @param text The text (its code units are written as they are).
 * @param o Byte order, and whether a byte-order mark comes first.
 * @returns The bytes.
 */
export function utf16(text: string, o: { le: boolean; bom: boolean }): Uint8Array {
  const skip = o.bom ? 1 : 0;
  const b = new Uint8Array((text.length + skip) * 2);
  const view = new DataView(b.buffer);
  if (o.bom) view.setUint16(0, 0xfeff, o.le);
  for (let i = 0; i < text.length; i++) view.setUint16((i + skip) * 2, text.charCodeAt(i), o.le);
  return b;
}
