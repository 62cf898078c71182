/**
 * Streams a file as lines with their byte ranges, without holding the file in memory.
 *
 * @module
 */

import { createHash } from "node:crypto";
import type { Line } from "./_lines.ts";

/** A line with where its bytes are in the file. */
export interface ByteLine extends Line {
  /** Offset of the line's first byte. */
  byteStart: number;
  /** Offset just past the line's ending (`\n` included). */
  byteEnd: number;
}

const CHUNK = 1 << 20;

/**
 * Reads a file line by line. Line endings are `\n` (a `\r` before it is dropped from `text`);
 * byte offsets are exact even where the file is not valid UTF-8.
 */
export async function* readLines(path: string): AsyncGenerator<ByteLine> {
  for await (const batch of readLineBatches(path)) yield* batch;
}

/**
 * Reads a file as batches of lines (about 1 MiB each), so that callers loop over lines without
 * an `await` per line.
 */
export async function* readLineBatches(path: string): AsyncGenerator<ByteLine[]> {
  const file = await Deno.open(path, { read: true });
  const decoder = new TextDecoder("utf-8", { fatal: false });
  try {
    let carry = new Uint8Array(0);
    let carryStart = 0; // file offset of carry[0]
    let line = 1;
    const buf = new Uint8Array(CHUNK);
    while (true) {
      const n = await file.read(buf);
      if (n === null) break;
      let data: Uint8Array;
      if (carry.length > 0) {
        data = new Uint8Array(carry.length + n);
        data.set(carry, 0);
        data.set(buf.subarray(0, n), carry.length);
      } else {
        data = buf.subarray(0, n);
      }
      const lastNl = data.lastIndexOf(10);
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
        while (start < text.length) {
          const nl = text.indexOf("\n", start);
          let end = nl;
          if (end > start && text.charCodeAt(end - 1) === 13) end--;
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
          const nl = region.indexOf(10, start);
          let end = nl;
          if (end > start && region[end - 1] === 13) end--;
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
  } finally {
    file.close();
  }
}

/** Reads bytes `[start, end)` of an open file. */
export function readRangeSync(file: Deno.FsFile, start: number, end: number): Uint8Array {
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
    const chunk = readRangeSync(file, pos, Math.min(end, pos + CHUNK));
    if (chunk.length === 0) break;
    hash.update(chunk);
    pos += chunk.length;
  }
  return hash.digest("hex");
}

/**
 * Copies bytes `[start, end)` of an open file to `dest` (a new file, or an open one written at
 * its position) in chunks that end at line ends, passing each chunk through `transform`
 * (which returns the bytes to write).
 */
export function copyRangeSync(
  file: Deno.FsFile,
  start: number,
  end: number,
  dest: string | Deno.FsFile,
  transform: (chunk: Uint8Array) => Uint8Array,
): void {
  const out = typeof dest === "string"
    ? Deno.openSync(dest, { write: true, createNew: true })
    : dest;
  try {
    let pos = start;
    let carry = new Uint8Array(0);
    while (pos < end || carry.length > 0) {
      const want = Math.min(CHUNK, end - pos);
      const fresh = want > 0 ? readRangeSync(file, pos, pos + want) : new Uint8Array(0);
      pos += fresh.length;
      const data = carry.length ? concat(carry, fresh) : fresh;
      const cut = pos >= end ? data.length : data.lastIndexOf(10) + 1;
      if (cut <= 0) {
        carry = data.slice();
        continue;
      }
      writeAll(out, transform(data.subarray(0, cut)));
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
