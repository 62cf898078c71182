/**
 * Seed 000's published sweep tables as a dataset. Its raw files are not public, so what kvlab can
 * reproduce is its published cells (`data/raw/fixed-rate-latency/published-tables.md`, the
 * post's three Markdown tables byte for byte). {@link parsePublishedSweep} reads them: a table is
 * a header row (its first cell names the rate: `リクエスト/秒` for requests, `配信/秒` for pub/sub
 * deliveries; then one arm per column) and one row per rate (`19,584`, or `約 21,000` when
 * approximate) whose cells are `p50 / p99` (ms, sustained), `NS (258k)` (not sustained, with the
 * rate reached) or `-` (not run: the arm's sweep had stopped). {@link writePublishedSweep} stores
 * one run per table × arm (its label in English, its server and io-threads from the printed
 * name), with one `results` row per step that was run: `requested_ops_per_sec` from the row,
 * `p50`/`p99` from a `p50 / p99` cell, or `ops_per_sec` = the achieved rate of an `NS (258k)`
 * cell (no latency, as published). `-` cells were not run and get no row, as kvlab's own sweeps
 * store nothing for a skipped step (the sweep analysis shows them as skipped). Runs carry
 * `output_format = published` and the tag `source=published`; the analysis reads them from the
 * dataset (`analyze/sweep/published.ts`), never from the Markdown.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";
import type { SweepVerdict } from "../../fixed_rate.ts";
import type { ResultsRow } from "../../schema.ts";
import { runRow } from "../_rows.ts";
import { newRunId, RunWriter } from "../../store/writer.ts";

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

/** Options of {@link writePublishedSweep}. */
export interface PublishedSweepOptions {
  /** Stored as the runs' `source_path`. */
  sourcePath?: string;
  /** Tags on every run (besides `source=published` and `table`). */
  tags?: Record<string, string>;
  /** @default {() => new Date()} */
  now?: () => Date;
}

/** The results row of one published step that was run. */
function cellRow(
  runId: string,
  { index: i, table: t, cell: c }: { index: number; table: PublishedTable; cell: PublishedCell },
): ResultsRow {
  return {
    run_id: runId,
    test_index: i,
    test: t.test,
    test_title: t.test,
    clients: t.clients,
    ops_per_sec: c.achievedOpsPerSec,
    p50_latency_ms: c.p50LatencyMs,
    p99_latency_ms: c.p99LatencyMs,
    requested_ops_per_sec: c.requestedOpsPerSec,
    latency_basis: "send",
    fan_out: t.test.startsWith("PUBSUB") ? 1 : null,
    complete: true,
    source_line: c.line,
  };
}

/**
 * Stores published sweep tables as a dataset: one run per table × arm.
 *
 * @param text The file ({@link parsePublishedSweep} reads it).
 * @param data Dataset directory.
 * @param options Source path, tags, clock.
 * @returns Runs and step rows stored.
 *
 * @example
 * ```ts
 * import { writePublishedSweep } from "@kvlab/kvlab/collect";
 * import { sweepTable } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const data = Deno.makeTempDirSync();
 * const text = "48接続\n| リクエスト/秒 | A | B |\n|---|---|---|\n" +
 *   "| 1,000 | 0.10 / 0.20 | 0.30 / 0.40 |\n| 2,000 | 0.10 / 0.20 | NS (1k) |\n" +
 *   "| 3,000 | NS (2k) | - |\n";
 * assert.deepEqual(writePublishedSweep(text, data), { runs: 2, tests: 5 });
 * const t = sweepTable(data);
 * assert.deepEqual(t.getColumn("verdict").toArray(), ["sustained", "sustained", "NS", "sustained", "NS", "skipped"]);
 * ```
 */
export function writePublishedSweep(
  text: string,
  data: string,
  options: PublishedSweepOptions = {},
): { runs: number; tests: number } {
  const now = options.now ?? (() => new Date());
  const file = options.sourcePath ?? "published-tables.md";
  const bytes = new TextEncoder().encode(text);
  const start = now().getTime();
  let runs = 0;
  let tests = 0;
  for (const t of parsePublishedSweep(text, file)) {
    t.arms.forEach((arm, k) => {
      // one second apart, so run ids (time first) keep the published order of tables and arms
      const writer = new RunWriter(data, newRunId(new Date(start + runs * 1000)));
      const results = t.cells[k].filter((c) => c.verdict !== "skipped").map((c, i) =>
        cellRow(writer.runId, { index: i, table: t, cell: c })
      );
      const at = now();
      writer.commit({
        run: runRow({
          run_id: writer.runId,
          tool: t.test === "GET" ? "memtier_benchmark" : "pubsub-sub-bench",
          server: arm.server,
          server_io_threads: arm.ioThreads,
          transport: "tcp",
          label: arm.label,
          tags: {
            ...options.tags,
            source: "published",
            table: `${t.test}, ${t.clients} ${t.test === "GET" ? "connections" : "publishers"}`,
          },
          ingested_at: at,
          status: "complete",
          output_format: "published",
          source_path: file,
          source_line_start: t.lineStart,
          source_line_end: t.lineEnd,
        }),
        tables: { results },
        raw: [{ name: "published-tables.md", bytes }],
        manifest: { printed_arm: arm.printed },
      });
      runs++;
      tests += results.length;
    });
  }
  return { runs, tests };
}
