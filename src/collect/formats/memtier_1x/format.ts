/**
 * memtier_benchmark 1.x stdout as an {@link OutputFormat}: recognised by its table header (one
 * `Latency` column), read as a whole text into the rows memtier 2.x's report makes.
 *
 * @module
 */

import { ParseError } from "../../../errors.ts";
import type { TextFormat } from "../format.ts";
import { memtierCommandFacts } from "../memtier/flags.ts";
import { MEMTIER_FILE_MAX_BYTES } from "../memtier/format.ts";
import { parseMemtierProgress } from "../memtier/progress.ts";
import { memtierRows } from "../memtier/rows.ts";
import { MEMTIER_1X_HEADER, parseMemtier1xReport } from "./report.ts";

/**
 * memtier_benchmark 1.x stdout (`ALL STATS` tables with one `Latency` column).
 *
 * @example
 * ```ts
 * import { memtier1xFormat } from "./format.ts";
 * import assert from "node:assert/strict";
 * const text = "ALL STATS\n" + "=".repeat(40) + "\n" +
 *   "Type  Ops/sec  Hits/sec  Misses/sec  Latency  KB/sec\n" + "-".repeat(40) + "\n" +
 *   "Sets  100.00  ---  ---  0.50000  10.00\nTotals  100.00  0.00  0.00  0.50000  10.00\n";
 * const run = memtier1xFormat.read(text, { file: "m.txt", firstLine: 1, lastLine: 6, runId: "r" });
 * assert.equal(run.status, "complete");
 * assert.deepEqual(run.tables.results?.map((r) => [r.test, r.ops_per_sec, r.avg_latency_ms]), [
 *   ["SET", 100, 0.5],
 *   ["TOTALS", 100, 0.5],
 * ]);
 * ```
 */
export const memtier1xFormat: TextFormat = {
  name: "memtier-1x",
  tool: "memtier_benchmark",
  description: "memtier_benchmark 1.x output",
  reads: "memtier_benchmark 1.x output (ALL STATS with one Latency column)",
  results: true,
  reading: "text",
  maxBytes: MEMTIER_FILE_MAX_BYTES,
  programs: ["memtier_benchmark"],
  variant: true,
  recognizes: (t) => MEMTIER_1X_HEADER.test(t),
  read(text, { file, command, firstLine, runId }) {
    // blank lines before it, so that the lines read are the file's
    const output = "\n".repeat(firstLine - 1) + text;
    const report = parseMemtier1xReport(output, { file });
    if (report.blocks.length === 0) {
      throw new ParseError("expected a memtier_benchmark 1.x ALL STATS table", {
        file,
        line: firstLine,
        column: 1,
        text: text.split("\n", 1)[0],
      });
    }
    const facts = command ? memtierCommandFacts(command.args) : undefined;
    const rows = memtierRows({
      report,
      reportFile: file,
      stderr: parseMemtierProgress(output),
      settings: facts?.settings,
    }, runId);
    const status = rows.complete ? "complete" : rows.results.length > 0 ? "incomplete" : "failed";
    return {
      tool: "memtier_benchmark",
      outputFormat: "stdout-1x",
      status,
      error: status === "complete" ? null : rows.reason,
      tests: rows.results.length,
      tables: {
        results: rows.results,
        latency_distribution: rows.latency_distribution,
        time_series: rows.time_series,
      },
      facts: facts ? { target: facts.target, transport: facts.transport } : {},
      warnings: rows.warnings.map((message) => ({ message })),
    };
  },
};
