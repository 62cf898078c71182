/**
 * What ingest reads, before any parser: regular files as they are; standard input (`-`,
 * `/dev/stdin`) and pipes or FIFOs (`<(cmd)`) copied once to a file under the dataset's `tmp/`
 * (the parsers read a file twice: lines, then byte ranges for the raw copy); devices and
 * sockets refused. The content hash is taken in the same pass that checks line lengths, so a
 * file with a huge line is refused before it is read as lines.
 *
 * @module
 */

import type { Dataset } from "../../store/dataset.ts";
import { createHash } from "node:crypto";
import { redactText } from "../../text/redact.ts";
import { markWriter, unmarkWriter } from "../../store/tmp.ts";

/** A file ingest cannot read, and why, in words a user can act on. */
export class IngestInputError extends Error {
  /** @param message What is wrong, naming the path. */
  constructor(message: string) {
    super(redactText(message));
    this.name = "IngestInputError";
  }
}

/** Paths that mean standard input. */
export const STDIN_PATHS: readonly string[] = ["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

/** Bytes read from a stream at most (a pipe from `/dev/zero` would never end). */
export const STREAM_MAX_BYTES = 1 << 30;

/**
 * Bytes of a line at most (up to `\n`). Progress lines redrawn with `\r` make long lines; a
 * day-long run's stay under this.
 */
export const LINE_MAX_BYTES = 16 << 20;

/** Bytes between two line breaks (`\n` or `\r`) at most: no benchmark prints such a line. */
export const SEGMENT_MAX_BYTES = 1 << 20;

const CHUNK = 1 << 20;

/** A file to ingest, readable as a regular file. */
export interface IngestSource {
  /** The path as given (shown, and stored as the run's source). */
  path: string;
  /** Where its bytes are: the path itself, or a copy of a stream under the dataset's `tmp/`. */
  readPath: string;
  /** SHA-256 of its bytes. */
  sha256: string;
  /** Removes a stream's copy (nothing for a file). */
  dispose(): void;
}

/**
 * Opens a path for ingest: checks what it is, copies a stream, hashes the bytes and checks
 * line lengths.
 *
 * @param path A path as given (or `-`).
 * @param dataset The dataset, whose `tmp/` holds stream copies.
 * @returns The source.
 * @throws {IngestInputError} For a device or socket, a stream over {@link STREAM_MAX_BYTES}, a
 *   broken symbolic link, or a line over the limits (naming the line).
 */
export async function openSource(path: string, dataset: Dataset): Promise<IngestSource> {
  let readPath = path;
  let dispose = () => {};
  if (STDIN_PATHS.includes(path)) {
    readPath = await copyStream(Deno.stdin.readable, path, dataset);
  } else {
    const info = await statOrExplain(path);
    if (info.isFifo) {
      const f = await Deno.open(path, { read: true });
      readPath = await copyStream(f.readable, path, dataset);
    } else if (!info.isFile) {
      throw new IngestInputError(
        `${path}: not a regular file (${kindOf(info)}); kvlab ingest reads files, folders, ` +
          "pipes and - (standard input)",
      );
    }
  }
  if (readPath !== path) {
    const copy = readPath;
    dispose = () => {
      try {
        Deno.removeSync(copy);
      } catch { /* gone */ }
      unmarkWriter(copy);
    };
  }
  try {
    const sha256 = await hashChecked(readPath, path);
    return { path, readPath, sha256, dispose };
  } catch (e) {
    dispose();
    throw e;
  }
}

async function statOrExplain(path: string): Promise<Deno.FileInfo> {
  try {
    return await Deno.stat(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    let link: string | null = null;
    try {
      link = await Deno.readLink(path);
    } catch { /* not a link */ }
    if (link !== null) {
      throw new IngestInputError(
        `${path}: broken symbolic link (to ${link}, which does not exist)`,
      );
    }
    throw e;
  }
}

function kindOf(info: Deno.FileInfo): string {
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSocket) return "a socket";
  if (info.isDirectory) return "a folder";
  return "not a file";
}

/** Copies a stream to `<data>/tmp/stream-…` (marked as this writer's), at most the cap. */
async function copyStream(
  stream: ReadableStream<Uint8Array>,
  path: string,
  dataset: Dataset,
): Promise<string> {
  const copy = dataset.streamCopyPath();
  markWriter(copy);
  const out = Deno.openSync(copy, { write: true, createNew: true });
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += chunk.length;
      if (size > STREAM_MAX_BYTES) {
        throw new IngestInputError(
          `${path}: more than ${STREAM_MAX_BYTES >> 20} MiB read from this stream; kvlab ingest ` +
            "stops there (save the output to a file if it really is that long)",
        );
      }
      for (let off = 0; off < chunk.length;) off += out.writeSync(chunk.subarray(off));
    }
  } catch (e) {
    out.close();
    Deno.removeSync(copy);
    unmarkWriter(copy);
    throw e;
  }
  out.close();
  return copy;
}

/**
 * SHA-256 of a file, checking as it goes that no line is over {@link LINE_MAX_BYTES} and no
 * stretch without `\r` or `\n` over {@link SEGMENT_MAX_BYTES}.
 */
async function hashChecked(readPath: string, shown: string): Promise<string> {
  const hash = createHash("sha256");
  const f = await Deno.open(readPath, { read: true });
  const buf = new Uint8Array(CHUNK);
  let pos = 0;
  // offsets where the current line and the current segment started
  let lineStart = 0;
  let segStart = 0;
  let hit: { what: string; start: number } | null = null;
  const segment = () => ({
    what: `more than ${SEGMENT_MAX_BYTES >> 20} MiB with no line break`,
    start: segStart,
  });
  const line = () => ({ what: `longer than ${LINE_MAX_BYTES >> 20} MiB`, start: lineStart });
  try {
    for (let n; hit === null && (n = await f.read(buf)) !== null;) {
      const chunk = buf.subarray(0, n);
      hash.update(chunk);
      const nl = chunk.indexOf(10);
      const cr = chunk.indexOf(13);
      const firstBreak = nl < 0 ? cr : cr < 0 ? nl : Math.min(nl, cr);
      // gaps inside a chunk are shorter than a chunk, which is not over either limit
      if (firstBreak >= 0 && pos + firstBreak - segStart > SEGMENT_MAX_BYTES) hit = segment();
      else if (nl >= 0 && pos + nl - lineStart > LINE_MAX_BYTES) hit = line();
      if (hit) break;
      if (firstBreak >= 0) {
        segStart = pos + Math.max(chunk.lastIndexOf(10), chunk.lastIndexOf(13)) + 1;
      }
      if (nl >= 0) lineStart = pos + chunk.lastIndexOf(10) + 1;
      pos += n;
      if (pos - segStart > SEGMENT_MAX_BYTES) hit = segment();
      else if (pos - lineStart > LINE_MAX_BYTES) hit = line();
    }
  } finally {
    f.close();
  }
  if (hit) {
    const n = await lineAt(readPath, hit.start);
    throw new IngestInputError(
      `${shown}:${n}: line ${n} is ${hit.what}; no benchmark output has such lines, so kvlab ` +
        "does not read this file (split it into lines, or check that it is the right file)",
    );
  }
  return hash.digest("hex");
}

/** The 1-based line number of a byte offset (counted only when a line is refused). */
async function lineAt(path: string, offset: number): Promise<number> {
  const f = await Deno.open(path, { read: true });
  const buf = new Uint8Array(CHUNK);
  let line = 1;
  let pos = 0;
  try {
    for (let n; pos < offset && (n = await f.read(buf)) !== null;) {
      const chunk = buf.subarray(0, Math.min(n, offset - pos));
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) line++;
      pos += n;
    }
  } finally {
    f.close();
  }
  return line;
}
