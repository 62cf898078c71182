/**
 * Streams a file as lines with their byte ranges, without holding the file in memory.
 *
 * @module
 */

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
      const text = decoder.decode(region);
      if (text.length === region.length) {
        // All ASCII: character offsets are byte offsets.
        let start = 0;
        while (start < text.length) {
          const nl = text.indexOf("\n", start);
          let end = nl;
          if (end > start && text.charCodeAt(end - 1) === 13) end--;
          yield {
            text: text.slice(start, end),
            line: line++,
            terminated: true,
            byteStart: carryStart + start,
            byteEnd: carryStart + nl + 1,
          };
          start = nl + 1;
        }
      } else {
        let start = 0;
        while (start < region.length) {
          const nl = region.indexOf(10, start);
          let end = nl;
          if (end > start && region[end - 1] === 13) end--;
          yield {
            text: decoder.decode(region.subarray(start, end)),
            line: line++,
            terminated: true,
            byteStart: carryStart + start,
            byteEnd: carryStart + nl + 1,
          };
          start = nl + 1;
        }
      }
      carry = data.slice(lastNl + 1);
      carryStart += lastNl + 1;
    }
    if (carry.length > 0) {
      let end = carry.length;
      if (carry[end - 1] === 13) end--;
      yield {
        text: decoder.decode(carry.subarray(0, end)),
        line,
        terminated: false,
        byteStart: carryStart,
        byteEnd: carryStart + carry.length,
      };
    }
  } finally {
    file.close();
  }
}

/** Reads bytes `[start, end)` of a file. */
export async function readRange(path: string, start: number, end: number): Promise<Uint8Array> {
  const file = await Deno.open(path, { read: true });
  try {
    await file.seek(start, Deno.SeekMode.Start);
    const out = new Uint8Array(end - start);
    let off = 0;
    while (off < out.length) {
      const n = await file.read(out.subarray(off));
      if (n === null) break;
      off += n;
    }
    return off === out.length ? out : out.subarray(0, off);
  } finally {
    file.close();
  }
}

/** SHA-256 of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const { createHash } = await import("node:crypto");
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
