/**
 * The runs of tools that write several files per run (memtier's JSON, stdout, stderr and HDR
 * files): a file's siblings found by the format's {@link FileSet} (by name) and recognised by
 * their text (by the registry), read together by the set into one run, stored with every file's
 * redacted bytes.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";
import { decodeText } from "../../text/decode.ts";
import { type DatasetWriter, newRunId } from "../../store/writer.ts";
import { detectText } from "../formats/detect.ts";
import type { FileSet, OutputFormat, SetFile } from "../formats/format.ts";
import {
  formatRunRecord,
  type IngestedRun,
  ingestedRun,
  type IngestOptions,
} from "./_stored_run.ts";

/** The files of one run, the first of them its source (its leader). */
export interface FileGroup {
  set: FileSet;
  files: SetFile[];
}

/** Bytes of a file's start read to tell what it is. */
const SNIFF_BYTES = 64 << 10;

/** What a file's start says it is: a format's text, empty, or neither (null). */
function sniff(path: string): OutputFormat | "empty" | null {
  let f: Deno.FsFile;
  try {
    f = Deno.openSync(path, { read: true });
  } catch {
    return null;
  }
  try {
    const buf = new Uint8Array(SNIFF_BYTES);
    let n = 0;
    while (n < buf.length) {
      const got = f.readSync(buf.subarray(n));
      if (got === null) break;
      n += got;
    }
    // UTF-16 (with or without a BOM) read like UTF-8
    const kind = detectText(decodeText(buf.subarray(0, n & ~1)));
    return kind.kind === "empty" ? "empty" : kind.kind === "format" ? kind.format : null;
  } finally {
    f.close();
  }
}

/**
 * The run a file belongs to when its text is a format with a file set: the files of its folder
 * the set names as its siblings whose text is one of the set's formats (an empty one is kept
 * with the others), in the set's order. With `forced` (`kvlab ingest --tool`), the file is read
 * as the forced format's even when its text does not say so.
 *
 * @param path The file.
 * @param o `names`, the non-hidden file names of a folder (cached by the caller); `forced`, the
 * format `--tool` names.
 * @returns The group, or null.
 */
export function findFileGroup(
  path: string,
  { names, forced }: { names: (dir: string) => readonly string[]; forced?: OutputFormat },
): FileGroup | null {
  const own = sniff(path);
  const format = own !== null && own !== "empty" ? own : undefined;
  const set = forced ? forced.files : format?.files;
  if (!set || (forced && format?.files && format.files !== forced.files)) return null;
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
  const name = path.slice(slash + 1);
  const listed = names(dir);
  const siblings = set.siblings(name, listed.includes(name) ? listed : [...listed, name]);
  const files: SetFile[] = [];
  const empty: SetFile[] = [];
  for (const s of siblings) {
    const p = s.name === name ? path : `${dir === "/" ? "" : dir}/${s.name}`;
    const kind = p === path ? own : sniff(p);
    if (kind === "empty") empty.push({ path: p, name: s.name, format: s.format });
    else if (kind !== null && set.formats.includes(kind.name)) {
      files.push({ path: p, name: s.name, format: kind.name });
    } else if (forced && p === path) files.push({ path: p, name: s.name, format: s.format });
  }
  if (files.length > 0) files.push(...empty);
  if (!files.some((m) => m.path === path)) return null;
  if (!forced && files.length === 1 && readAlone(files[0])) return null;
  files.sort((a, b) => set.formats.indexOf(a.format) - set.formats.indexOf(b.format));
  return { set, files };
}

/**
 * The group of one file read on its own (a stream's copy): its format from its text.
 *
 * @param path Where to read it.
 * @param o `name`, its name; `forced`, the format `--tool` names.
 * @returns The group, or null when its text is no file set's.
 */
export function singleFileGroup(
  path: string,
  { name, forced }: { name: string; forced?: OutputFormat },
): FileGroup | null {
  const sniffed = sniff(path);
  const format = sniffed !== null && sniffed !== "empty" && sniffed.files ? sniffed : undefined;
  const chosen = format ?? (forced?.files && sniffed !== "empty" ? forced : undefined);
  if (!chosen?.files) return null;
  if (!forced && readAlone({ path, name, format: chosen.name })) return null;
  return { set: chosen.files, files: [{ path, name, format: chosen.name }] };
}

/**
 * Whether a file found alone is read as text, block by block, like any paste: a stdout or stderr
 * with no sibling can hold several runs (a paste of two, under headings), which the block reader
 * splits; a JSON or HDR file is read by its set (in chunks).
 */
function readAlone(file: SetFile): boolean {
  return file.format === "memtier-stdout" || file.format === "memtier-stderr";
}

/**
 * Writes the run of a group into the current batch.
 *
 * @param group The run's files.
 * @param o `source`, the leader's path as given and its SHA-256 (stored as the run's source);
 * `options`, the labels; `now`, the clock; `dataset`, the batches.
 * @returns The run.
 * @throws {ParseError} When a file is too large, or none can be read.
 */
export async function ingestFileGroup(
  group: FileGroup,
  { source, options, now, dataset }: {
    source: { path: string; sha: string };
    options: IngestOptions;
    now: () => Date;
    dataset: DatasetWriter;
  },
): Promise<IngestedRun> {
  for (const m of group.files) {
    const size = Deno.statSync(m.path).size;
    if (size > group.set.maxBytes) {
      throw new ParseError(
        `a file of at most ${group.set.maxBytes >> 20} MiB (this one has ${size} bytes)`,
        { file: m.path, line: 1, column: 1, text: "" },
      );
    }
  }
  const writer = dataset.run(newRunId(now()));
  try {
    const run = await group.set.read(group.files, writer);
    const record = formatRunRecord(run, {
      runId: writer.runId,
      options,
      now: now(),
      fromName: {},
      source: { ...source, firstLine: null, lastLine: null },
      memory: [],
    });
    writer.commit(record);
    return ingestedRun(run, { runId: writer.runId, tool: record.run.tool, line: 1 });
  } catch (e) {
    writer.abort();
    throw e;
  }
}
