/**
 * memtier_benchmark's `--json-out-file` read in chunks, so that its size does not set the
 * memory of ingest or of a live run: the bytes are decoded (UTF-8, or UTF-16 as `decodeText` tells), secrets redacted
 * line by line, the redacted text written as the run's raw copy and parsed as it goes. The
 * per-second `Time-Serie` is never held: a first pass counts it, and once the run's rows are
 * known, a second pass over the raw copy writes its rows in Parquet parts.
 *
 * @module
 */

import { ParseError } from "../../../../errors.ts";
import { type MemtierJson, MemtierJsonReader, type MemtierSecond } from "./parse.ts";
import type { TimeSeriesRow } from "../../../../schema.ts";
import { textEncoding } from "../../../../text/decode.ts";
import { redactSecret, type RedactState, redactText } from "../../../../text/redact.ts";
import type { RunWriter } from "../../../../store/writer.ts";
import { collectEvery, releaseNativeMemory } from "../../../../system/memory.ts";

/** Bytes read at a time. */
const CHUNK_BYTES = 1 << 20;

/** Rows of the series kept before they are written as a Parquet part. */
const PART_ROWS = 10_000;

/**
 * Longest line held, characters: memtier writes one key per line; a JSON made one line (`jq -c`)
 * would otherwise be held whole.
 */
const LINE_MAX_CHARS = 16 << 20;

/** Characters read between two garbage collections (see `system/memory.ts`). */
const COLLECT_EVERY = 8 << 20;

/** What the first pass over a memtier JSON gives. */
export interface StreamedJson {
  /** The parsed file (its series counted, not kept), or null when it is not JSON. */
  json: MemtierJson | null;
  /** Why it could not be read (then `json` is null). */
  error: ParseError | null;
  /** Whether redaction changed the text. */
  redacted: boolean;
}

/**
 * Reads a memtier JSON file in chunks: decoded, redacted, written to `rawPath` (UTF-8, as the
 * raw copy of every memtier file is kept) and parsed, its per-second series counted only.
 * A parse error stops the parsing, not the copy.
 *
 * @param path The file.
 * @param to `file`, its name in messages; `rawPath`, where its redacted copy goes (not `path`);
 * `secret`, a password to replace wherever it appears (6 characters or more: shorter ones cannot
 * be told apart from ordinary output).
 * @returns The parsed file (or the error) and whether anything was redacted.
 */
export function readMemtierJsonFile(
  path: string,
  { file, rawPath, secret = "" }: { file: string; rawPath: string; secret?: string },
): StreamedJson {
  const state: RedactState = { secretNext: false };
  const reader = new MemtierJsonReader({ file, onSecond: () => {} });
  const out = Deno.openSync(rawPath, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  let error: ParseError | null = null;
  let redacted = false;
  const parse = (f: () => void) => {
    try {
      f();
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      error = e;
    }
  };
  try {
    for (const text of textChunks(path, file)) {
      let red = redactText(text, state);
      red = redactSecret(red, secret);
      if (red !== text) redacted = true;
      writeAll(out, encoder.encode(red));
      if (error === null) parse(() => reader.push(red));
    }
  } finally {
    out.close();
  }
  let json: MemtierJson | null = null;
  if (error === null) parse(() => json = reader.end());
  return { json, error, redacted };
}

/**
 * Reads the raw copy written by {@link readMemtierJsonFile} again and writes the `time_series`
 * rows of its seconds, in parts, as the run's rows say (a type with no results row has none).
 *
 * @param rawPath The redacted copy.
 * @param to `file`, its name in messages; `rows`, the run's rows (`MemtierRows` of
 *   `../rows.ts`: the row of a second of a block's type, or null); `writer`, the run.
 * @returns The rows written.
 */
export async function writeMemtierSeries(
  rawPath: string,
  { file, rows, writer }: {
    file: string;
    rows: {
      jsonSecondRow(
        at: { block: number; type: number },
        second: MemtierSecond,
      ): TimeSeriesRow | null;
    };
    writer: RunWriter;
  },
): Promise<number> {
  let part: TimeSeriesRow[] = [];
  let written = 0;
  const reader = new MemtierJsonReader({
    file,
    onSecond: (second, at) => {
      const row = rows.jsonSecondRow(at, second);
      if (row !== null) part.push(row);
    },
  });
  const flush = async () => {
    writer.writePart("time_series", part);
    written += part.length;
    part = [];
    // the part's frame is native memory, freed once V8 collects it and the event loop turns
    await releaseNativeMemory();
  };
  for (const text of textChunks(rawPath, file)) {
    reader.push(text);
    if (part.length >= PART_ROWS) await flush();
  }
  reader.end();
  await flush();
  return written;
}

/**
 * A file's text in pieces of about {@link CHUNK_BYTES} that end at a line end (the last one at
 * the end of the file), decoded as `decodeText` decodes the whole: its BOM or NUL bytes tell
 * UTF-16, and a BOM is not part of the text. Garbage is collected every
 * {@link COLLECT_EVERY} characters, so the reader's heap does not grow with the file.
 */
function* textChunks(path: string, file = path): Generator<string> {
  const f = Deno.openSync(path, { read: true });
  const read = collectEvery(COLLECT_EVERY);
  const buf = new Uint8Array(CHUNK_BYTES);
  let decoder: TextDecoder | undefined;
  let rest = "";
  let line = 1;
  try {
    for (let n; (n = readFull(f, buf)) > 0;) {
      const bytes = buf.subarray(0, n);
      // the first chunk holds the bytes the encoding is told from
      decoder ??= new TextDecoder(textEncoding(bytes));
      const text = rest + decoder.decode(bytes, { stream: true });
      const nl = text.lastIndexOf("\n");
      if (nl < 0) {
        rest = text;
        if (rest.length > LINE_MAX_CHARS) {
          throw new ParseError(
            `lines of at most ${LINE_MAX_CHARS >> 20} Mi characters, as memtier writes its JSON ` +
              "(one key per line; a JSON made one line can be laid out again with `jq .`)",
            { file, line, column: 1, text: rest.slice(0, 80) },
          );
        }
      } else {
        for (let i = text.indexOf("\n"); i >= 0 && i <= nl; i = text.indexOf("\n", i + 1)) line++;
        yield text.slice(0, nl + 1);
        rest = text.slice(nl + 1);
        read(nl + 1);
      }
    }
    rest += decoder?.decode() ?? "";
    if (rest !== "") yield rest;
  } finally {
    f.close();
  }
}

/** Fills `buf` from the file as far as it goes; the bytes read (0 at its end). */
function readFull(f: Deno.FsFile, buf: Uint8Array): number {
  let n = 0;
  while (n < buf.length) {
    const got = f.readSync(buf.subarray(n));
    if (got === null) break;
    n += got;
  }
  return n;
}

function writeAll(f: Deno.FsFile, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length;) off += f.writeSync(bytes.subarray(off));
}
