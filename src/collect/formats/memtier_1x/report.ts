/**
 * Parser for memtier_benchmark 1.x stdout: each summary block (`ALL STATS`; with `--run-count`
 * `BEST RUN RESULTS`, `WORST RUN RESULTS`, `AGGREGATED AVERAGE RESULTS (N runs)`) is a table of
 * `Type  Ops/sec  Hits/sec  Misses/sec  Latency  KB/sec`, where `Latency` is the mean latency in
 * milliseconds (1.x prints no percentiles), followed, unless `--hide-histogram`, by its
 * `Request Latency Distribution`. The rows are memtier 2.x's report rows with only the mean
 * latency, so the run's rows are made as 2.x's. Pure: text in, numbers out.
 *
 * @module
 */

import { ParseError } from "../../../errors.ts";
import { splitLines } from "../../../text/lines.ts";
import {
  MEMTIER_ELISION,
  type MemtierReport,
  type MemtierReportBlock,
  type MemtierTableRow,
} from "../memtier/report.ts";
import { distributionRow, memtierBlockTitle, memtierTest } from "../memtier/types.ts";

/** The header of a 1.x table. */
export const MEMTIER_1X_HEADER = /^Type\s+Ops\/sec\s+Hits\/sec\s+Misses\/sec\s+Latency\s+KB\/sec$/;

/** A number, or null where memtier prints `---`. */
function cell(text: string, { file, line, row }: { file: string; line: number; row: string }) {
  if (text === "---") return null;
  const n = Number(text);
  if (!Number.isFinite(n)) {
    throw new ParseError("expected a number or ---", {
      file,
      line,
      column: row.indexOf(text) + 1,
      text: row,
    });
  }
  return n;
}

/** A table row's cells (`Type` and five numbers) as memtier 2.x's report holds a row. */
function tableRow(
  cells: readonly string[],
  at: { file: string; line: number; row: string },
): MemtierTableRow {
  return {
    test: memtierTest(cells[0]),
    label: cells[0],
    opsPerSec: cell(cells[1], at),
    hitsPerSec: cell(cells[2], at),
    missesPerSec: cell(cells[3], at),
    movedPerSec: null,
    askPerSec: null,
    avgLatencyMs: cell(cells[4], at),
    percentiles: [],
    kbPerSec: cell(cells[5], at),
    p50LatencyMs: null,
    p99LatencyMs: null,
    p999LatencyMs: null,
    sourceLine: at.line,
  };
}

/**
 * Parses memtier_benchmark 1.x stdout.
 *
 * @param text The stdout text (stderr's progress may be mixed in: it is skipped).
 * @param options `file`, for errors.
 * @returns Its blocks, as memtier 2.x's report holds them.
 * @throws {ParseError} For a table row that is not `Type` and five numbers (or `---`).
 *
 * @example
 * ```ts
 * import { parseMemtier1xReport } from "./report.ts";
 * import assert from "node:assert/strict";
 * const r = parseMemtier1xReport([
 *   "ALL STATS", "=".repeat(73),
 *   "Type         Ops/sec     Hits/sec   Misses/sec      Latency       KB/sec ",
 *   "-".repeat(73),
 *   "Sets       152692.50          ---          ---      0.23000    159220.41 ",
 *   "Totals     305385.01    152692.50         0.00      0.23000    164555.40",
 *   "",
 * ].join("\n"));
 * assert.deepEqual(r.blocks[0].rows.map((x) => [x.test, x.opsPerSec, x.avgLatencyMs]), [
 *   ["SET", 152692.5, 0.23],
 *   ["TOTALS", 305385.01, 0.23],
 * ]);
 * assert.ok(r.complete);
 * ```
 */
export function parseMemtier1xReport(text: string, options: { file?: string } = {}): MemtierReport {
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
  let mode: "none" | "header" | "table" | "distribution" = "none";
  let cut = false;
  /** Blocks whose distribution the paste elided: it is not kept, the table still is. */
  const elided = new Set<MemtierReportBlock>();
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const t = l.text.trim();
    const title = memtierBlockTitle(t);
    const underline = /^=+$/.test(lines[i + 1]?.text.trim() ?? "");
    // a paste may elide the block's title: `[...]` then the `=====` line and the header
    const untitled = /^=+$/.test(t) && MEMTIER_1X_HEADER.test(lines[i + 1]?.text.trim() ?? "");
    if ((title && underline) || (untitled && mode !== "header")) {
      const head = title ?? memtierBlockTitle("ALL STATS")!;
      block = { ...head, rows: [], distributions: [], complete: false, sourceLine: l.line };
      out.blocks.push(block);
      mode = "header";
      if (title) i++;
      continue;
    }
    if (block === null || t === "" || /^[-=]+$/.test(t)) continue;
    if (MEMTIER_ELISION.test(t)) {
      out.warnings.push(`${file}:${l.line}: lines elided in the output (${t})`);
      if (mode === "distribution") elided.add(block);
      continue;
    }
    if (mode === "header" && MEMTIER_1X_HEADER.test(t)) mode = "table";
    else if (mode === "table") {
      if (t === "Request Latency Distribution") {
        mode = "distribution";
        block.complete = false;
        continue;
      }
      const cells = t.split(/\s+/);
      // after the Totals row the table is over: a fence or prose there is not a row
      if (block.complete && (cells.length !== 6 || !/^[A-Za-z]/.test(cells[0]))) {
        out.warnings.push(`${file}:${l.line}: text after the table skipped`);
        mode = "none";
        continue;
      }
      // a last line with no newline after it is whole when its last cell is printed to its end
      if (!l.terminated && !(cells.length === 6 && /^(\d+\.\d\d|---)$/.test(cells[5]))) {
        cut = true;
        break;
      }
      if (cells.length !== 6 || !/^[A-Za-z]/.test(cells[0])) {
        throw new ParseError("expected a memtier 1.x table row: Type and 5 numbers", {
          file,
          line: l.line,
          column: 1,
          text: t,
        });
      }
      const row = tableRow(cells, { file, line: l.line, row: t });
      block.rows.push(row);
      if (row.test === "TOTALS") block.complete = true;
    } else if (mode === "distribution") {
      const row = distributionRow(t, l);
      if (row) {
        block.distributions.push(row);
        const last = block.rows.filter((r) => r.test !== "TOTALS").at(-1)?.test;
        block.complete = row.percent === 100 && row.test === last;
      } else if (!/^Type\s+<= msec/.test(t) && l.terminated) {
        out.warnings.push(`${file}:${l.line}: unexpected text after the report skipped`);
        mode = "none";
      } else if (!l.terminated) cut = true;
    }
  }
  for (const b of elided) {
    b.distributions = [];
    b.complete = b.rows.some((r) => r.test === "TOTALS");
  }
  const last = out.blocks.at(-1);
  out.complete = last !== undefined && !cut &&
    out.blocks.every((b) => b.complete) &&
    (last.title === "ALL STATS" || last.aggregate === "average");
  if (!out.complete && out.blocks.length > 0) out.warnings.push("the report is cut short");
  return out;
}
