/**
 * Streams a file as lines with their byte ranges, without holding the file in memory.
 *
 * @module
 */

import { createHash } from "node:crypto";
import type { Line } from "./lines.ts";
import { encodingOfBytes, SNIFF_BYTES, type TextEncoding, textEncoding } from "./decode.ts";

/** A line with where its bytes are in the file. */
export interface ByteLine extends Line {
  /** Offset of the line's first byte. */
  byteStart: number;
  /** Offset just past the line's ending (`\n` included). */
  byteEnd: number;
}

const CHUNK = 1 << 20;

/** A file's encoding and the length of its byte-order mark (0 or 2). */
interface FileText {
  enc: TextEncoding;
  bom: number;
}

/** The encoding of a file whose first bytes are `head`, and its BOM's length. */
function fileText(head: Uint8Array): FileText {
  const enc = textEncoding(head);
  return { enc, bom: enc !== "utf-8" && encodingOfBytes(head) === enc ? 2 : 0 };
}

const ENCODINGS = new WeakMap<Deno.FsFile, FileText>();

function encodingOf(file: Deno.FsFile): FileText {
  let e = ENCODINGS.get(file);
  if (e === undefined) {
    e = fileText(readBytes(file, 0, SNIFF_BYTES));
    ENCODINGS.set(file, e);
  }
  return e;
}

/** Offset just past the last line end of UTF-16 `data` (code units from an even offset). */
function lastUtf16LineEnd(data: Uint8Array, enc: TextEncoding): number {
  const [lo, hi] = enc === "utf-16le" ? [0x0a, 0] : [0, 0x0a];
  for (let i = (data.length & ~1) - 2; i >= 0; i -= 2) {
    if (data[i] === lo && data[i + 1] === hi) return i + 2;
  }
  return 0;
}

/**
 * Reads a file line by line. Line endings are `\n` (a `\r` before it is dropped from `text`);
 * byte offsets are exact even where the file is not valid UTF-8.
 */
export async function* readLines(path: string): AsyncGenerator<ByteLine> {
  for await (const batch of readLineBatches(path)) yield* batch;
}

/**
 * Reads a file as batches of lines (about 1 MiB each), so that callers loop over lines without
 * an `await` per line. A UTF-16 file (see `textEncoding` in `decode.ts`) is decoded as UTF-16.
 */
export async function* readLineBatches(path: string): AsyncGenerator<ByteLine[]> {
  const file = await Deno.open(path, { read: true });
  try {
    const text = encodingOf(file);
    await file.seek(0, Deno.SeekMode.Start);
    if (text.enc === "utf-8") yield* utf8Batches(file);
    else yield* utf16Batches(file, text);
  } finally {
    file.close();
  }
}

async function* utf8Batches(file: Deno.FsFile): AsyncGenerator<ByteLine[]> {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  let carry = new Uint8Array(0);
  let carryStart = 0; // file offset of carry[0]
  let line = 1;
  const buf = new Uint8Array(CHUNK);
  /** The line break: `\n`, or `\r` for a file whose lines end with `\r` alone (old Mac OS). */
  let sep = 0;
  while (true) {
    const n = await file.read(buf);
    if (n === null) break;
    const data = carry.length > 0 ? concat(carry, buf.subarray(0, n)) : buf.subarray(0, n);
    if (sep === 0) sep = data.indexOf(10) < 0 && data.indexOf(13) >= 0 ? 13 : 10;
    const lastNl = data.lastIndexOf(sep);
    if (lastNl < 0) {
      carry = data.slice();
      continue;
    }
    const region = data.subarray(0, lastNl + 1);
    const batch: ByteLine[] = [];
    const text = decoder.decode(region);
    if (text.length === region.length) {
      // All ASCII: character offsets are byte offsets.
      let start = 0;
      const sepChar = String.fromCharCode(sep);
      while (start < text.length) {
        const nl = text.indexOf(sepChar, start);
        let end = nl;
        if (sep === 10 && end > start && text.charCodeAt(end - 1) === 13) end--;
        batch.push({
          text: text.slice(start, end),
          line: line++,
          terminated: true,
          byteStart: carryStart + start,
          byteEnd: carryStart + nl + 1,
        });
        start = nl + 1;
      }
    } else {
      let start = 0;
      while (start < region.length) {
        const nl = region.indexOf(sep, start);
        let end = nl;
        if (sep === 10 && end > start && region[end - 1] === 13) end--;
        batch.push({
          text: decoder.decode(region.subarray(start, end)),
          line: line++,
          terminated: true,
          byteStart: carryStart + start,
          byteEnd: carryStart + nl + 1,
        });
        start = nl + 1;
      }
    }
    yield batch;
    carry = data.slice(lastNl + 1);
    carryStart += lastNl + 1;
  }
  if (carry.length > 0) {
    let end = carry.length;
    if (carry[end - 1] === 13) end--;
    yield [{
      text: decoder.decode(carry.subarray(0, end)),
      line,
      terminated: false,
      byteStart: carryStart,
      byteEnd: carryStart + carry.length,
    }];
  }
}

/** Lines of a UTF-16 file: one code unit is two bytes, so offsets are BOM + 2 × index. */
async function* utf16Batches(
  file: Deno.FsFile,
  { enc, bom }: FileText,
): AsyncGenerator<ByteLine[]> {
  const decoder = new TextDecoder(enc, { ignoreBOM: true });
  let carry = new Uint8Array(0);
  let carryStart = bom; // past the byte-order mark
  let line = 1;
  const buf = new Uint8Array(CHUNK);
  await file.seek(bom, Deno.SeekMode.Start);
  const lines = (text: string, base: number, terminated: boolean): ByteLine[] =>
    text.split("\n").slice(0, terminated ? -1 : undefined).map((t, _i, all) => {
      const startUnit = base;
      base += t.length + (terminated || _i < all.length - 1 ? 1 : 0);
      return {
        text: t.endsWith("\r") ? t.slice(0, -1) : t,
        line: line++,
        terminated: terminated || _i < all.length - 1,
        // the first line's bytes include the byte-order mark
        byteStart: startUnit === 0 ? 0 : bom + 2 * startUnit,
        byteEnd: bom + 2 * base,
      };
    });
  while (true) {
    const n = await file.read(buf);
    if (n === null) break;
    const data = carry.length > 0 ? concat(carry, buf.subarray(0, n)) : buf.subarray(0, n);
    const cut = lastUtf16LineEnd(data, enc);
    if (cut === 0) {
      carry = data.slice();
      continue;
    }
    yield lines(decoder.decode(data.subarray(0, cut)), (carryStart - bom) / 2, true);
    carry = data.slice(cut);
    carryStart += cut;
  }
  if (carry.length > 0) yield lines(decoder.decode(carry), (carryStart - bom) / 2, false);
}

/** Reads bytes `[start, end)` of an open file as they are. */
function readBytes(file: Deno.FsFile, start: number, end: number): Uint8Array {
  file.seekSync(start, Deno.SeekMode.Start);
  const out = new Uint8Array(end - start);
  let off = 0;
  while (off < out.length) {
    const n = file.readSync(out.subarray(off));
    if (n === null) break;
    off += n;
  }
  return off === out.length ? out : out.subarray(0, off);
}

/**
 * Reads bytes `[start, end)` of an open file, as UTF-8: the bytes themselves, or for a UTF-16
 * file (see {@link readLineBatches}) the range decoded (its byte-order mark dropped) and
 * encoded as UTF-8.
 */
export function readRangeSync(file: Deno.FsFile, start: number, end: number): Uint8Array {
  return toUtf8(readBytes(file, start, end), start, encodingOf(file));
}

function toUtf8(bytes: Uint8Array, start: number, { enc, bom }: FileText): Uint8Array {
  if (enc === "utf-8") return bytes;
  const body = start === 0 ? bytes.subarray(bom) : bytes;
  return new TextEncoder().encode(new TextDecoder(enc, { ignoreBOM: true }).decode(body));
}

/** SHA-256 of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  const file = await Deno.open(path, { read: true });
  try {
    const buf = new Uint8Array(CHUNK);
    while (true) {
      const n = await file.read(buf);
      if (n === null) break;
      hash.update(buf.subarray(0, n));
    }
  } finally {
    file.close();
  }
  return hash.digest("hex");
}

/** SHA-256 of bytes `[start, end)` of an open file, read in chunks. */
export function hashRangeSync(file: Deno.FsFile, start: number, end: number): string {
  const hash = createHash("sha256");
  for (let pos = start; pos < end;) {
    // the bytes as they are in the file (a UTF-16 file is hashed as itself)
    const chunk = readBytes(file, pos, Math.min(end, pos + CHUNK));
    if (chunk.length === 0) break;
    hash.update(chunk);
    pos += chunk.length;
  }
  return hash.digest("hex");
}

/**
 * Copies bytes `[start, end)` of an open file to `dest` (a new file, or an open one written at
 * its position) in chunks that end at line ends, passing each chunk through `transform`
 * (which returns the bytes to write). Chunks are UTF-8 (a UTF-16 file's are decoded, as
 * {@link readRangeSync} does).
 */
export function copyRangeSync(
  file: Deno.FsFile,
  dest: string | Deno.FsFile,
  { start, end, transform }: {
    start: number;
    end: number;
    transform: (chunk: Uint8Array) => Uint8Array;
  },
): void {
  const text = encodingOf(file);
  const enc = text.enc;
  const out = typeof dest === "string"
    ? Deno.openSync(dest, { write: true, createNew: true })
    : dest;
  try {
    let pos = start;
    let at = start; // file offset of data[0]
    let carry = new Uint8Array(0);
    while (pos < end || carry.length > 0) {
      const want = Math.min(CHUNK, end - pos);
      const fresh = want > 0 ? readBytes(file, pos, pos + want) : new Uint8Array(0);
      pos += fresh.length;
      if (want > 0 && fresh.length === 0) pos = end; // the file is shorter than it was
      const data = carry.length ? concat(carry, fresh) : fresh;
      const lineEnd = enc === "utf-8" ? data.lastIndexOf(10) + 1 : lastUtf16LineEnd(data, enc);
      const cut = pos >= end ? data.length : lineEnd;
      if (cut <= 0) {
        carry = data.slice();
        continue;
      }
      writeAll(out, transform(toUtf8(data.subarray(0, cut), at, text)));
      at += cut;
      carry = data.slice(cut);
      if (pos >= end && carry.length === 0) break;
    }
  } finally {
    if (typeof dest === "string") out.close();
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const c = new Uint8Array(a.length + b.length);
  c.set(a, 0);
  c.set(b, a.length);
  return c;
}

function writeAll(f: Deno.FsFile, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += f.writeSync(bytes.subarray(off));
}
