/**
 * Seed 000's published tables (`data/raw/fixed-rate-latency/published-tables.md`) as rows: a
 * table is found by its first header cell (`配信/秒` for the pub/sub delivery table,
 * `リクエスト/秒` for the request tables), and each cell `p50 / p99`, `NS (258k)` or `-` becomes
 * one row per rate and arm, as the sweep tables of kvlab's own runs have them. The text is read by
 * the one parser of published tables, `src/published_sweep.ts` (ingest stores the same cells as
 * runs). Also re-exports the pub/sub delivery-latency chart. Pure: text in, a frame out.
 *
 * @module
 */

import pl from "nodejs-polars";
import { ParseError } from "../../errors.ts";
import { parsePublishedSweep, PUBSUB_TABLE_HEADER } from "../../published_sweep.ts";

export { deliveryLatencyChart, type DeliveryLatencyChartOptions } from "../charts/pubsub.ts";
export { PUBSUB_TABLE_HEADER } from "../../published_sweep.ts";

/** One row of {@link publishedTableRows}: a published cell with its arm's facts. */
export interface PublishedTableRow {
  /** The arm as printed (`Redis I/Oスレッド8`). */
  arm: string;
  /** `hotkv`, `dragonfly`, `redis`, `valkey`: the arm's first word, lower-cased. */
  server: string;
  /** I/O threads of the arm (`1スレッド` → 1, `I/Oスレッド8` → 8), null when not said. */
  io_threads: number | null;
  /** The row's rate (`約 21,000` → 21000). */
  requested_ops_per_sec: number;
  /** Whether the rate was printed as approximate (`約`). */
  approximate: boolean;
  /** `sustained`, `NS` or `skipped` (`-`). */
  verdict: "sustained" | "NS" | "skipped";
  p50_latency_ms: number | null;
  p99_latency_ms: number | null;
  /** The rate reached, for NS cells (`NS (258k)` → 258000). */
  achieved_ops_per_sec: number | null;
  /** Line of the file the cell is on (1-based). */
  source_line: number;
}

/**
 * The cells of one published table as rows.
 *
 * @param markdown The file's text.
 * @param header The table's first header cell (default: the pub/sub delivery table's).
 * @param file The file name, for errors.
 * @returns One row per rate × arm, in the table's order, with the columns of
 * {@link PublishedTableRow}.
 * @throws {ParseError} When no table has that header, or a cell is not `p50 / p99`, `NS (…)`
 *   or `-`.
 *
 * @example
 * ```ts
 * import { publishedTableRows } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const md = "| 配信/秒 | HotKV | Redis I/Oスレッド8 |\n|---|---|---|\n" +
 *   "| 約 21,000 | 0.10 / 0.71 | 0.11 / 0.62 |\n| 約 430,000 | NS (258k) | - |\n";
 * const rows = publishedTableRows(md).toRecords();
 * assert.deepEqual(rows[1], {
 *   arm: "Redis I/Oスレッド8", server: "redis", io_threads: 8, requested_ops_per_sec: 21000,
 *   approximate: true, verdict: "sustained", p50_latency_ms: 0.11, p99_latency_ms: 0.62,
 *   achieved_ops_per_sec: null, source_line: 3,
 * });
 * assert.deepEqual([rows[2].verdict, rows[2].achieved_ops_per_sec, rows[3].verdict], ["NS", 258000, "skipped"]);
 * ```
 */
export function publishedTableRows(
  markdown: string,
  header: string = PUBSUB_TABLE_HEADER,
  file = "published-tables.md",
): pl.DataFrame {
  const table = parsePublishedSweep(markdown, file).find((t) => t.header === header);
  if (!table) {
    throw new ParseError(`a table whose first header cell is ${header}`, {
      file,
      line: 1,
      column: 1,
      text: "",
    });
  }
  const rows: PublishedTableRow[] = [];
  // row by row, the arms in the table's order
  table.cells[0]?.forEach((_, i) => {
    table.arms.forEach((arm, k) => {
      const c = table.cells[k][i];
      rows.push({
        arm: arm.printed,
        server: arm.server,
        io_threads: arm.ioThreads,
        requested_ops_per_sec: c.requestedOpsPerSec,
        approximate: c.approximate,
        verdict: c.verdict,
        p50_latency_ms: c.p50LatencyMs,
        p99_latency_ms: c.p99LatencyMs,
        achieved_ops_per_sec: c.achievedOpsPerSec,
        source_line: c.line,
      });
    });
  });
  return pl.DataFrame(rows);
}
