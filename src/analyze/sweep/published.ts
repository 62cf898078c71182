/**
 * Seed 000's published tables (`data/raw/fixed-rate-latency/published-tables.md`) as rows: a
 * table is found by its first header cell (`配信/秒` for the pub/sub delivery table,
 * `リクエスト/秒` for the request tables), and each cell `p50 / p99`, `NS (258k)` or `-` becomes
 * one row per rate and arm, as the sweep tables of kvlab's own runs have them. Also re-exports
 * the pub/sub delivery-latency chart. Pure: text in, a frame out.
 *
 * @module
 */

import pl from "nodejs-polars";
import { ParseError } from "../../errors.ts";

export { deliveryLatencyChart, type DeliveryLatencyChartOptions } from "../charts/pubsub.ts";

/** The first header cell of seed 000's pub/sub delivery table. */
export const PUBSUB_TABLE_HEADER = "配信/秒";

/** One cell of a published table. */
export interface PublishedCell {
  /** The arm as printed (`Redis I/Oスレッド8`). */
  arm: string;
  /** `hotkv`, `dragonfly`, `redis`, `valkey`, or the arm lower-cased. */
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
 * @returns One row per rate × arm, in the table's order, with the columns of {@link PublishedCell}.
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
  const lines = markdown.split("\n");
  const cellsOf = (line: string) =>
    line.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
  const start = lines.findIndex((l) => l.startsWith("|") && cellsOf(l)[0] === header);
  const fail = (line: number, expected: string, text: string): never => {
    throw new ParseError(expected, { file, line, column: 1, text });
  };
  if (start < 0) fail(1, `a table whose first header cell is ${header}`, "");
  const arms = cellsOf(lines[start]).slice(1);
  const rows: PublishedCell[] = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith("|"); i++) {
    const cells = cellsOf(lines[i]);
    const rate = /^(約\s*)?([\d,]+)$/.exec(cells[0]);
    if (!rate || cells.length !== arms.length + 1) {
      fail(i + 1, `a rate and ${arms.length} cells`, lines[i]);
    }
    arms.forEach((arm, k) => {
      rows.push({
        ...armFacts(arm),
        requested_ops_per_sec: Number(rate![2].replaceAll(",", "")),
        approximate: rate![1] !== undefined,
        ...cellFacts(cells[k + 1]) ?? fail(i + 1, "p50 / p99, NS (…) or -", cells[k + 1]),
        source_line: i + 1,
      });
    });
  }
  return pl.DataFrame(rows);
}

/** `Redis I/Oスレッド8` → redis, 8; `Valkey 1スレッド` → valkey, 1; `HotKV` → hotkv, null. */
function armFacts(arm: string): Pick<PublishedCell, "arm" | "server" | "io_threads"> {
  const m = /^(\S+)\s*(?:(?:I\/Oスレッド)(\d+)|(\d+)スレッド)?$/.exec(arm);
  const threads = m?.[2] ?? m?.[3];
  return {
    arm,
    server: (m?.[1] ?? arm).toLowerCase(),
    io_threads: threads === undefined ? null : Number(threads),
  };
}

/** `0.10 / 0.71`, `NS (1,078k)` or `-`; undefined for anything else. */
function cellFacts(
  cell: string,
):
  | Pick<PublishedCell, "verdict" | "p50_latency_ms" | "p99_latency_ms" | "achieved_ops_per_sec">
  | undefined {
  const none = { p50_latency_ms: null, p99_latency_ms: null, achieved_ops_per_sec: null };
  if (cell === "-") return { verdict: "skipped", ...none };
  const ns = /^NS \(([\d,]+)k\)$/.exec(cell);
  if (ns) {
    return {
      ...none,
      verdict: "NS",
      achieved_ops_per_sec: Number(ns[1].replaceAll(",", "")) * 1000,
    };
  }
  const lat = /^(\d+(?:\.\d+)?) \/ (\d+(?:\.\d+)?)$/.exec(cell);
  if (!lat) return undefined;
  return {
    ...none,
    verdict: "sustained",
    p50_latency_ms: Number(lat[1]),
    p99_latency_ms: Number(lat[2]),
  };
}
