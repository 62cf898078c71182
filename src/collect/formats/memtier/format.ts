/**
 * memtier_benchmark 2.x's files as {@link OutputFormat}s: its `--json-out-file` JSON, its stdout
 * report, its stderr progress and its `--hdr-file-prefix` interval logs and percentile files,
 * each recognised by its text; and the set of files one run writes together
 * ({@link memtierFiles}), read as one run.
 *
 * @module
 */

import type { FileSet, OutputFormat, TextFormat } from "../format.ts";
import { type MemtierFileKind, memtierSiblings, memtierVersionOfName } from "./files.ts";
import { readMemtierFiles, readMemtierText } from "./read.ts";

/** Bytes of one memtier file kvlab reads whole (its JSON with a per-second series is large). */
export const MEMTIER_FILE_MAX_BYTES = 256 << 20;

/**
 * The files of one memtier run: `X.json`, `X.txt`, `X.stderr.txt`, `X_hdr_*` by base name, the
 * JSON first.
 *
 * @example
 * ```ts
 * import { memtierFiles } from "./format.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(memtierFiles.siblings("x.txt", ["x.json", "x.txt", "y.txt"]), [
 *   { name: "x.json", format: "memtier-json" },
 *   { name: "x.txt", format: "memtier-stdout" },
 * ]);
 * ```
 */
export const memtierFiles: FileSet = {
  formats: ["json", "stdout", "stderr", "hdr-log", "hdr-percentiles"].map((k) => `memtier-${k}`),
  maxBytes: MEMTIER_FILE_MAX_BYTES,
  siblings: (name, names) =>
    memtierSiblings(name, names).map((s) => ({ name: s.name, format: `memtier-${s.kind}` })),
  async read(files, writer) {
    const run = await readMemtierFiles(files, writer);
    const version = files[0] ? memtierVersionOfName(files[0].name) : null;
    if (version) run.facts = { ...run.facts, toolVersion: version };
    return run;
  },
};

/** A memtier file's format: the parts all five share. */
function memtierFormat(
  kind: MemtierFileKind,
  { description, reads, recognizes, programs }: {
    description: string;
    reads?: string;
    recognizes: (line: string) => boolean;
    programs?: readonly string[];
  },
): TextFormat {
  return {
    name: `memtier-${kind}`,
    tool: "memtier_benchmark",
    description,
    ...(reads ? { reads } : {}),
    results: true,
    reading: "text",
    maxBytes: MEMTIER_FILE_MAX_BYTES,
    recognizes,
    ...(programs ? { programs } : {}),
    files: memtierFiles,
    read: (text, ctx) =>
      readMemtierText(text, {
        file: ctx.file,
        kind,
        command: ctx.command,
        firstLine: ctx.firstLine,
        runId: ctx.runId,
      }),
  };
}

/** memtier's `--json-out-file`. */
export const memtierJsonFormat: TextFormat = memtierFormat("json", {
  description: "memtier_benchmark JSON",
  reads: "memtier_benchmark output (--json-out-file, stdout, stderr, --hdr-file-prefix files)",
  recognizes: (t) => /^"?(ALL STATS|configuration|run information)"?\s*:/.test(t),
});

/** memtier's stdout report (with its stderr, when both went to one file or one terminal). */
export const memtierStdoutFormat: TextFormat = memtierFormat("stdout", {
  description: "memtier_benchmark output",
  programs: ["memtier_benchmark"],
  recognizes: (t) =>
    /^(ALL STATS|BEST RUN RESULTS|WORST RUN RESULTS|AGGREGATED AVERAGE RESULTS.*|RUN #\d+ RESULTS|Type\s+Ops\/sec.*|\d+\s+(Threads|Connections per thread))\s*$/
      .test(t),
});

/** memtier's stderr: its live progress. */
export const memtierStderrFormat: TextFormat = memtierFormat("stderr", {
  description: "memtier_benchmark progress (stderr)",
  // a paste may lose the progress line's `[`: `RUN #1 100%,   2 secs]  0 threads: …`
  recognizes: (t) => /^\[RUN #\d+/.test(t) || /^RUN #\d+ \d+%, +\d+ secs\]/.test(t),
});

/** An HdrHistogram percentile distribution (`--hdr-file-prefix`'s `.txt` in memtier 2.3.0). */
export const hdrPercentilesFormat: TextFormat = memtierFormat("hdr-percentiles", {
  description: "an HdrHistogram file",
  recognizes: (t) => /^Value\s+Percentile\s+TotalCount/.test(t),
});

/** An HdrHistogram interval log (`--hdr-file-prefix`'s `.hgrm` in memtier 2.3.0). */
export const hdrLogFormat: TextFormat = memtierFormat("hdr-log", {
  description: "an HdrHistogram file",
  recognizes: (t) =>
    /^#\[(StartTime:|BaseTime:|Histogram log format|.*HDR latency histogram)/.test(t),
});

/** memtier's formats, in the order the registry asks them. */
export const MEMTIER_FORMATS: readonly OutputFormat[] = [
  memtierJsonFormat,
  memtierStdoutFormat,
  memtierStderrFormat,
  hdrPercentilesFormat,
  hdrLogFormat,
];
