/**
 * Parser for memtier_benchmark 2.x stderr: the live progress line it redraws with `\r` once a
 * second (`[RUN #1 54%,   5 secs]  2 threads 10 conns: … ops/sec, …/sec (avg: …), 0.41 (avg:
 * 0.41) msec latency`), the interrupt notice, the files it wrote, and error lines. Progress is
 * for watching a run, never a result. Pure: text in, numbers out.
 *
 * @module
 */

import { segments, splitLines } from "../../../text/lines.ts";

/** One progress update. */
export interface MemtierProgress {
  /** 1-based run (`--run-count`). */
  runIndex: number;
  /** Percent done (of the test time or of the requests). */
  percent: number;
  /** Seconds since the run started. */
  elapsedS: number;
  /** Threads still running (0 once they have all finished). */
  threads: number;
  /** Connections per thread. */
  connections: number;
  /** Failed connections so far (printed only when some failed). */
  connectionErrors: number;
  /** Requests done so far. */
  ops: number;
  /** Rate over the last second. */
  opsPerSec: number;
  /** Rate since the start. */
  avgOpsPerSec: number;
  /** Bytes per second over the last second (memtier prints KB/MB/GB of 1024). */
  bytesPerSec: number;
  /** Bytes per second since the start. */
  avgBytesPerSec: number;
  /** Mean latency over the last second, ms; `null` where memtier prints `nan` (no requests). */
  latencyMs: number | null;
  /** Mean latency since the start, ms; `null` for `nan`. */
  avgLatencyMs: number | null;
  /** Line of the raw file (several updates share a line, separated by `\r`). */
  sourceLine: number;
}

/** What {@link parseMemtierProgress} returns. */
export interface MemtierStderr {
  /** Every progress update, in order. */
  progress: MemtierProgress[];
  /** `[RUN #n] Interrupted by user (Ctrl+C) after X secs`, per run. */
  interrupted: { runIndex: number; afterS: number; sourceLine: number }[];
  /** Files memtier says it wrote (`Writing … to F...`, `Saving JSON output file: F`). */
  files: string[];
  /** Lines that are none of the above (errors, `Connection error: …`). */
  other: { text: string; sourceLine: number }[];
  /** Whether the text ends with a newline after the last progress update (false when killed). */
  complete: boolean;
}

const PROGRESS = new RegExp(
  String.raw`^\[RUN #(\d+) (\d+)%,\s*(\d+) secs\]\s+(\d+) threads\s+(\d+) conns` +
    String.raw`(?: (\d+) conn errors)?:\s+(\d+) ops,\s+(\d+) \(avg:\s+(\d+)\) ops/sec,` +
    String
      .raw` ([\d.]+)([KMG])B/sec \(avg: ([\d.]+)([KMG])B/sec\),\s+(-?[\d.]+|-?nan) \(avg:\s+(-?[\d.]+|-?nan)\) msec latency\s*$`,
);

const NOISE = [
  /^Json file (.* created\.\.\.|closed\.)$/,
  /^Writing results to /,
  /^\[RUN #\d+\] (Preparing benchmark client|Launching threads now)/,
];

/**
 * Parses memtier_benchmark's stderr.
 *
 * @param text The stderr text.
 * @returns Progress updates, interrupts, files written and other lines.
 *
 * @example
 * ```ts
 * import { parseMemtierProgress } from "./progress.ts";
 * import assert from "node:assert/strict";
 * const e = parseMemtierProgress(
 *   "[RUN #1 10%,   1 secs]  2 threads 10 conns:       10010 ops,   10001 (avg:   10001) ops/sec, " +
 *     "2.84MB/sec (avg: 2.84MB/sec),  0.41 (avg:  0.41) msec latency\r\n",
 * );
 * assert.equal(e.progress[0].opsPerSec, 10001);
 * assert.equal(e.progress[0].bytesPerSec, Math.round(2.84 * 1024 * 1024));
 * assert.ok(e.complete);
 * ```
 */
export function parseMemtierProgress(text: string): MemtierStderr {
  const out: MemtierStderr = {
    progress: [],
    interrupted: [],
    files: [],
    other: [],
    complete: true,
  };
  let lastEnd = true;
  for (const l of splitLines(text)) {
    for (const seg of segments(l.text)) {
      const t = seg.trim();
      const p = PROGRESS.exec(t);
      if (p) {
        out.progress.push(toProgress(p, l.line));
        continue;
      }
      const intr = /^\[RUN #(\d+)\] Interrupted by user \(Ctrl\+C\) after ([\d.]+) secs/.exec(t);
      const wrote = /^Writing .* to (.+?)\.\.\.$/.exec(t) ??
        /^Saving JSON output file: (.+)$/.exec(t);
      if (intr) out.interrupted.push({ runIndex: +intr[1], afterS: +intr[2], sourceLine: l.line });
      else if (wrote) out.files.push(wrote[1]);
      else if (!NOISE.some((re) => re.test(t))) out.other.push({ text: t, sourceLine: l.line });
    }
    lastEnd = l.terminated;
  }
  out.complete = lastEnd;
  return out;
}

function toProgress(m: RegExpExecArray, line: number): MemtierProgress {
  return {
    runIndex: +m[1],
    percent: +m[2],
    elapsedS: +m[3],
    threads: +m[4],
    connections: +m[5],
    connectionErrors: m[6] ? +m[6] : 0,
    ops: +m[7],
    opsPerSec: +m[8],
    avgOpsPerSec: +m[9],
    bytesPerSec: bytes(m[10], m[11]),
    avgBytesPerSec: bytes(m[12], m[13]),
    latencyMs: latency(m[14]),
    avgLatencyMs: latency(m[15]),
    sourceLine: line,
  };
}

function bytes(value: string, unit: string): number {
  const scale = unit === "G" ? 1024 ** 3 : unit === "M" ? 1024 ** 2 : 1024;
  return Math.round(+value * scale);
}

function latency(s: string): number | null {
  return s.endsWith("nan") ? null : +s;
}
