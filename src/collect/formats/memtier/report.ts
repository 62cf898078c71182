/**
 * Parser for memtier_benchmark 2.x stdout: the run information lines, one table per summary
 * block (`ALL STATS`, `RUN #n RESULTS`, `BEST RUN RESULTS`, `WORST RUN RESULTS`,
 * `AGGREGATED AVERAGE RESULTS (N runs)`) and each block's `Request Latency Distribution`
 * (absent with `--hide-histogram`). Columns are read from the header, so `--print-percentiles`,
 * cluster mode (`MOVED/sec`, `ASK/sec`) and arbitrary commands (no Hits/Misses) all work.
 * Pure: text in, numbers out.
 *
 * @module
 */

import { ParseError } from "../../../errors.ts";
import { type Line, splitLines } from "../../../text/lines.ts";
import {
  commonPercentiles,
  distributionRow,
  memtierBlockTitle,
  memtierTest,
  percentileOfLabel,
} from "./types.ts";
import type {
  MemtierBlockTitle,
  MemtierCommonPercentiles,
  MemtierDistributionRow,
  MemtierPercentile,
  MemtierRunInformation,
} from "./types.ts";

/** One row of a stdout table. `null` where memtier prints `---`. */
export interface MemtierTableRow extends MemtierCommonPercentiles {
  /** Normalized test: `SET`, `GET`, `WAIT`, `INCR`, …, `TOTALS`. */
  test: string;
  /** The `Type` column as printed: `Sets`, `Totals`, … */
  label: string;
  opsPerSec: number | null;
  hitsPerSec: number | null;
  missesPerSec: number | null;
  movedPerSec: number | null;
  askPerSec: number | null;
  /** `Avg. Latency` (an HdrHistogram mean), ms. */
  avgLatencyMs: number | null;
  /** One per `pN Latency` column. */
  percentiles: MemtierPercentile[];
  kbPerSec: number | null;
  /** Line of the raw file. */
  sourceLine: number;
}

/** One block of the stdout report. */
export interface MemtierReportBlock extends MemtierBlockTitle {
  rows: MemtierTableRow[];
  /** `Request Latency Distribution` rows, all types. */
  distributions: MemtierDistributionRow[];
  /** Whether the table reached its `Totals` row and the distribution its last 100 % row. */
  complete: boolean;
  /** Line of the title. */
  sourceLine: number;
}

/** What {@link parseMemtierReport} returns. */
export interface MemtierReport {
  runInformation: MemtierRunInformation | null;
  blocks: MemtierReportBlock[];
  /** Lines before the report that memtier prints to stdout (`setting requests to 5000`). */
  notes: string[];
  /** Whether the report reached its end (false for a cut or killed run). */
  complete: boolean;
  warnings: string[];
}

/** Options of {@link parseMemtierReport}. */
export interface MemtierReportOptions {
  /**
   * File name for error messages.
   * @default {"<text>"}
   */
  file?: string;
}

type Column =
  | { field: "opsPerSec" | "hitsPerSec" | "missesPerSec" | "movedPerSec" | "askPerSec" }
  | { field: "avgLatencyMs" | "kbPerSec" | "type" }
  | { field: "percentile"; percentile: number };

/**
 * Parses memtier_benchmark's stdout.
 *
 * @param text The stdout text.
 * @param options File name for errors.
 * @returns Run information, blocks and completeness.
 * @throws {ParseError} For a table row whose cells do not match the header.
 *
 * @example
 * ```ts
 * import { parseMemtierReport } from "./report.ts";
 * import assert from "node:assert/strict";
 * const r = parseMemtierReport([
 *   "2         Threads", "10        Connections per thread", "10        Seconds", "", "",
 *   "ALL STATS", "=".repeat(60),
 *   "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency       KB/sec ",
 *   "-".repeat(60),
 *   "Sets         1007.50          ---          ---         0.46841         0.27900       297.02 ",
 *   "Totals      11072.80     10065.30         0.00         0.43731         0.27100      3215.26 ",
 *   "",
 * ].join("\n"));
 * assert.equal(r.runInformation?.testTimeS, 10);
 * assert.equal(r.blocks[0].rows[1].test, "TOTALS");
 * assert.equal(r.blocks[0].rows[0].hitsPerSec, null);
 * assert.equal(r.blocks[0].rows[1].p50LatencyMs, 0.271);
 * assert.ok(r.complete);
 * ```
 */
export function parseMemtierReport(
  text: string,
  options: MemtierReportOptions = {},
): MemtierReport {
  const file = options.file ?? "<text>";
  const out: MemtierReport = {
    runInformation: null,
    blocks: [],
    notes: [],
    complete: false,
    warnings: [],
  };
  const lines = [...splitLines(text)];
  let block: MemtierReportBlock | null = null;
  let columns: Column[] | null = null;
  let mode: "none" | "table" | "distribution" = "none";
  const withDistribution = new Set<MemtierReportBlock>();
  /** Blocks whose distribution a paste elided (`<<<< many lines`, `...`, `[...]`). */
  const elided = new Map<MemtierReportBlock, number>();
  /** Whether the text ends inside a line memtier had not finished printing. */
  let cut = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const t = l.text.trimEnd();
    const title = memtierBlockTitle(t);
    if (title && /^=+$/.test(lines[i + 1]?.text.trim() ?? "")) {
      block = { ...title, rows: [], distributions: [], complete: false, sourceLine: l.line };
      out.blocks.push(block);
      columns = null;
      mode = "table";
      i++;
      continue;
    }
    if (block === null) {
      readPreamble(t, out);
      continue;
    }
    if (t === "Request Latency Distribution") {
      mode = "distribution";
      withDistribution.add(block);
      continue;
    }
    if (t === "" || /^-+$/.test(t) || /^Type\s+<= msec/.test(t)) continue;
    if (MEMTIER_ELISION.test(t.trim())) {
      // a paste left lines out: a distribution is then partial; a table keeps what it shows
      if (mode === "distribution") elided.set(block, l.line);
      else out.warnings.push(`${file}:${l.line}: lines elided in the output (${t.trim()})`);
      continue;
    }
    if (mode === "table" && t.startsWith("Type ")) columns = readHeader(t);
    else if (mode === "table" && columns) {
      // after the Totals row the table is over: what a paste puts there (a fence, prose) is not
      // a row
      const cells = t.trim().split(/\s+/);
      if (block.complete && (cells.length !== columns.length || !/^[A-Za-z]/.test(cells[0]))) {
        out.warnings.push(`${file}:${l.line}: text after the table skipped`);
        mode = "none";
        continue;
      }
      // a last line with no newline after it (a file saved or pasted so) is whole when its
      // last cell is printed to its end (KB/sec, two decimals, or ---)
      if (!l.terminated && !wholeRow(t, columns)) {
        cut = true;
        break;
      }
      const row = readRow(t, columns, { line: l, file });
      block.rows.push(row);
      if (row.test === "TOTALS") block.complete = true;
    } else if (mode === "distribution") {
      const row = distributionRow(t, l);
      if (row) block.distributions.push(row);
      else if (l.terminated) {
        out.warnings.push(`${file}:${l.line}: unexpected text after the report skipped`);
        mode = "none";
      } else cut = true;
    }
  }
  settleDistributions(out, { file, elided, withDistribution });
  out.complete = !cut && isComplete(out);
  if (!out.complete && out.blocks.length > 0) out.warnings.push("the report is cut short");
  return out;
}

function readPreamble(t: string, out: MemtierReport): void {
  const m = /^(\d+)\s+(Threads|Connections per thread|Seconds|Requests per client)$/.exec(t);
  if (!m) {
    if (t.trim() !== "") out.notes.push(t);
    return;
  }
  const info = out.runInformation ??= {
    threads: null,
    connectionsPerThread: null,
    testTimeS: null,
    requestsPerClient: null,
    formatVersion: null,
  };
  const n = +m[1];
  if (m[2] === "Threads") info.threads = n;
  else if (m[2] === "Connections per thread") info.connectionsPerThread = n;
  else if (m[2] === "Seconds") info.testTimeS = n;
  else info.requestsPerClient = n;
}

function readHeader(t: string): Column[] {
  const labels = t.match(/Avg\. Latency|p\d+(?:\.\d+)? Latency|\S+/g) ?? [];
  return labels.map((label): Column => {
    const p = percentileOfLabel(label);
    if (p !== null) return { field: "percentile", percentile: p };
    switch (label) {
      case "Type":
        return { field: "type" };
      case "Ops/sec":
        return { field: "opsPerSec" };
      case "Hits/sec":
        return { field: "hitsPerSec" };
      case "Misses/sec":
        return { field: "missesPerSec" };
      case "MOVED/sec":
        return { field: "movedPerSec" };
      case "ASK/sec":
        return { field: "askPerSec" };
      case "Avg. Latency":
        return { field: "avgLatencyMs" };
      case "KB/sec":
        return { field: "kbPerSec" };
      default:
        throw new TypeError(`invalid memtier column: ${label}`);
    }
  });
}

/** A row of a summary table (`t`, the text of `at.line` of `at.file`) with these columns. */
function readRow(
  t: string,
  columns: Column[],
  { line: l, file }: { line: Line; file: string },
): MemtierTableRow {
  const cells = t.trim().split(/\s+/);
  if (cells.length !== columns.length || !/^[A-Za-z]/.test(cells[0])) {
    throw new ParseError(`expected a memtier table row of ${columns.length} cells`, {
      file,
      line: l.line,
      column: 1,
      text: t,
    });
  }
  const row: MemtierTableRow = {
    test: memtierTest(cells[0]),
    label: cells[0],
    opsPerSec: null,
    hitsPerSec: null,
    missesPerSec: null,
    movedPerSec: null,
    askPerSec: null,
    avgLatencyMs: null,
    percentiles: [],
    kbPerSec: null,
    p50LatencyMs: null,
    p99LatencyMs: null,
    p999LatencyMs: null,
    sourceLine: l.line,
  };
  columns.forEach((c, i) => {
    if (c.field === "type") return;
    const cell = cells[i];
    const value = cell === "---" ? null : Number(cell);
    if (value !== null && !Number.isFinite(value)) {
      const column = t.indexOf(cell, t.indexOf(cells[i - 1]) + cells[i - 1].length) + 1;
      throw new ParseError("expected a number or ---", { file, line: l.line, column, text: t });
    }
    if (c.field === "percentile") {
      if (value !== null) row.percentiles.push({ percentile: c.percentile, latencyMs: value });
    } else row[c.field] = value;
  });
  Object.assign(row, commonPercentiles(row.percentiles));
  return row;
}

/**
 * The distributions of a report's blocks once it is read: an elided one is not kept (a partial
 * cumulative distribution would mislead); one that does not reach the last type's 100 % row is
 * cut, as is a block without one when the others have theirs (without `--hide-histogram`, every
 * block prints one).
 */
function settleDistributions(
  out: MemtierReport,
  { file, elided, withDistribution }: {
    file: string;
    elided: ReadonlyMap<MemtierReportBlock, number>;
    withDistribution: Set<MemtierReportBlock>;
  },
): void {
  for (const [b, line] of elided) {
    b.distributions = [];
    withDistribution.delete(b);
    out.warnings.push(
      `${file}:${line}: the latency distribution is elided in the output; not kept`,
    );
  }
  for (const b of out.blocks) {
    const last = b.distributions.at(-1);
    const lastType = b.rows.filter((r) => r.test !== "TOTALS").at(-1)?.test;
    const partial = withDistribution.has(b)
      ? last?.percent !== 100 || last.test !== lastType
      : withDistribution.size > 0 && !elided.has(b);
    if (partial) b.complete = false;
  }
}

/** Lines a paste puts where it left lines out (`<<<< many lines …`, `...`, `[...]`). */
export const MEMTIER_ELISION = /^(<{3,}.*|\.\.\.|…|\[\.\.\.\]|\[…\])$/;

/** Whether a table row not ended by a newline was printed to its end. */
function wholeRow(t: string, columns: Column[]): boolean {
  const cells = t.trim().split(/\s+/);
  return cells.length === columns.length && /^(\d+\.\d\d|---)$/.test(cells.at(-1)!);
}

/**
 * Whether the report ran to its end: every block has its `Totals` row (and its distribution
 * reaches 100 %); a `--run-count` report (blocks other than `ALL STATS`) ends with the
 * aggregated block.
 */
function isComplete(out: MemtierReport): boolean {
  const last = out.blocks.at(-1);
  if (!last) return false;
  if (!out.blocks.every((b) => b.complete)) return false;
  return last.title === "ALL STATS" || last.aggregate === "average";
}
