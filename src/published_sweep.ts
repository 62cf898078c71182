/**
 * Seed 000's published sweep tables (`data/raw/fixed-rate-latency/published-tables.md`, the
 * post's Markdown tables byte for byte), read once for everyone: ingest stores them as runs
 * (`collect/ingest/published_sweep.ts`), analysis shows them as rows
 * (`analyze/sweep/published.ts`). A table is a header row (its first cell names the rate:
 * `リクエスト/秒` for requests, `配信/秒` for pub/sub deliveries; then one arm per column) and
 * one row per rate (`19,584`, or `約 21,000` when approximate) whose cells are `p50 / p99` (ms,
 * sustained), `NS (258k)` (not sustained, with the rate reached) or `-` (not run: the arm's
 * sweep had stopped). Pure: text in, tables out.
 *
 * @module
 */

import { ParseError } from "./errors.ts";
import type { SweepVerdict } from "./fixed_rate.ts";

/** The first header cell of seed 000's pub/sub delivery table. */
export const PUBSUB_TABLE_HEADER = "配信/秒";

/** One arm (column) of a published table. */
export interface PublishedArm {
  /** As printed: `Redis I/Oスレッド8`. */
  printed: string;
  /** In English: `Redis 1スレッド` → `Redis 1 thread`, `Redis I/Oスレッド8` → `Redis io-threads 8`. */
  label: string;
  /** The arm's first word, lower-cased: `hotkv`, `dragonfly`, `redis`, `valkey`. */
  server: string;
  /** I/O threads (`1スレッド` → 1, `I/Oスレッド8` → 8); null when not said. */
  ioThreads: number | null;
}

/** One published cell: a step of one arm. */
export interface PublishedCell {
  /** The row's rate (requests or deliveries per second; `約 21,000` reads as 21000). */
  requestedOpsPerSec: number;
  /** Whether the rate was printed as approximate (`約`). */
  approximate: boolean;
  /** `sustained` (`p50 / p99`), `NS` (`NS (258k)`) or `skipped` (`-`: not run). */
  verdict: Extract<SweepVerdict, "sustained" | "NS" | "skipped">;
  /** `p50 / p99` in ms; null for `NS` and `-`. */
  p50LatencyMs: number | null;
  p99LatencyMs: number | null;
  /** The achieved rate of an `NS (258k)` cell (258000); null otherwise. */
  achievedOpsPerSec: number | null;
  /** 1-based line of the cell's row. */
  line: number;
}

/** One published table. */
export interface PublishedTable {
  /** The first header cell (`リクエスト/秒`, `配信/秒`). */
  header: string;
  /** `GET`, or `PUBSUB_ONE_TO_ONE` for a deliveries table. */
  test: string;
  /** Connections (`816接続` before the table), or publishers for a pub/sub table. */
  clients: number | null;
  arms: PublishedArm[];
  /** Cells by arm (same order as `arms`), rows in the table's order. */
  cells: PublishedCell[][];
  /** Lines of the table (header to last row). */
  lineStart: number;
  lineEnd: number;
}

/** An arm's facts from its printed name. */
function publishedArm(printed: string): PublishedArm {
  const p = printed.trim();
  const m = /^(\S+)\s*(?:I\/Oスレッド(\d+)|(\d+)スレッド)?$/.exec(p);
  const threads = m?.[2] ?? m?.[3];
  return {
    printed: p,
    label: p.replace(/^(.+?)\s*1スレッド$/, "$1 1 thread")
      .replace(/^(.+?)\s*I\/Oスレッド(\d+)$/, "$1 io-threads $2"),
    server: p.split(/\s+/)[0].toLowerCase(),
    ioThreads: threads === undefined ? null : Number(threads),
  };
}

/** A cell's text as a cell, or undefined when it is none of the published forms. */
function publishedCell(
  text: string,
  row: Pick<PublishedCell, "requestedOpsPerSec" | "approximate" | "line">,
): PublishedCell | undefined {
  const none = { p50LatencyMs: null, p99LatencyMs: null, achievedOpsPerSec: null };
  if (text === "-") return { ...row, ...none, verdict: "skipped" };
  const ns = /^NS \(([\d,]+)k\)$/.exec(text);
  if (ns) {
    const achievedOpsPerSec = Number(ns[1].replaceAll(",", "")) * 1000;
    return { ...row, ...none, verdict: "NS", achievedOpsPerSec };
  }
  const lat = /^(\d+(?:\.\d+)?) \/ (\d+(?:\.\d+)?)$/.exec(text);
  if (!lat) return undefined;
  return { ...row, ...none, verdict: "sustained", p50LatencyMs: +lat[1], p99LatencyMs: +lat[2] };
}

/** The cells of a Markdown table row, trimmed, without the outer pipes. */
const cellsOf = (line: string) =>
  line.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());

/**
 * Reads the published sweep tables: each Markdown table, its connections from the line
 * `<N>接続` before it (or `<N>パブリッシャー` in the text before a deliveries table), its rows.
 *
 * @param text The file.
 * @param file Its name, for errors.
 * @returns The tables, in order.
 * @throws {ParseError} For a row that is not a rate and one cell per arm, or a cell that is
 * none of `p50 / p99`, `NS (258k)` and `-` (at its line, column 1).
 *
 * @example
 * ```ts
 * import { parsePublishedSweep } from "./published_sweep.ts";
 * import assert from "node:assert/strict";
 * const [t] = parsePublishedSweep([
 *   "48接続",
 *   "| リクエスト/秒 | HotKV | Redis 1スレッド |",
 *   "|---|---|---|",
 *   "| 199,968 | 0.08 / 0.27 | 0.20 / 0.35 |",
 *   "| 約 300,000 | 0.08 / 0.27 | NS (231k) |",
 *   "| 400,000 | 0.09 / 0.30 | - |",
 * ].join("\n"), "t.md");
 * assert.deepEqual([t.test, t.clients, t.header], ["GET", 48, "リクエスト/秒"]);
 * assert.deepEqual(t.arms.map((a) => [a.label, a.server, a.ioThreads]),
 *   [["HotKV", "hotkv", null], ["Redis 1 thread", "redis", 1]]);
 * assert.deepEqual(t.cells[1].map((c) => c.verdict), ["sustained", "NS", "skipped"]);
 * assert.equal(t.cells[1][1].achievedOpsPerSec, 231000);
 * assert.equal(t.cells[1][1].approximate, true);
 * assert.equal(t.cells[0][0].p99LatencyMs, 0.27);
 * assert.throws(() => parsePublishedSweep("| r/s | A |\n|---|---|\n| 1 | fast |\n", "x.md"), /x\.md:3:1/);
 * ```
 */
export function parsePublishedSweep(text: string, file: string): PublishedTable[] {
  const lines = text.split("\n");
  const tables: PublishedTable[] = [];
  const fail = (line: number, expected: string, text: string): never => {
    throw new ParseError(`expected ${expected}`, { file, line, column: 1, text });
  };
  let clients: number | null = null;
  let publishers: number | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const conn = /^(\d+)接続$/.exec(l.trim());
    if (conn) clients = Number(conn[1]);
    const pub = /(\d+)パブリッシャー/.exec(l);
    if (pub) publishers = Number(pub[1]);
    if (!l.startsWith("|") || !lines[i + 1]?.startsWith("|---")) continue;
    const head = cellsOf(l);
    const deliveries = head[0].includes("配信");
    const t: PublishedTable = {
      header: head[0],
      test: deliveries ? "PUBSUB_ONE_TO_ONE" : "GET",
      clients: deliveries ? publishers : clients,
      arms: head.slice(1).map(publishedArm),
      cells: head.slice(1).map(() => []),
      lineStart: i + 1,
      lineEnd: i + 2,
    };
    for (i += 2; i < lines.length && lines[i].startsWith("|"); i++) {
      const cells = cellsOf(lines[i]);
      const rate = /^(約\s*)?([\d,]+)$/.exec(cells[0]);
      if (!rate) fail(i + 1, "a rate (19,584 or 約 21,000)", cells[0]);
      if (cells.length !== t.arms.length + 1) {
        fail(i + 1, `a rate and ${t.arms.length} cells`, lines[i]);
      }
      const row = {
        requestedOpsPerSec: Number(rate![2].replaceAll(",", "")),
        approximate: rate![1] !== undefined,
        line: i + 1,
      };
      cells.slice(1).forEach((c, k) => {
        const cell = publishedCell(c, row) ?? fail(i + 1, "`p50 / p99`, `NS (258k)` or `-`", c);
        t.cells[k].push(cell);
      });
      t.lineEnd = i + 1;
    }
    tables.push(t);
  }
  return tables;
}
