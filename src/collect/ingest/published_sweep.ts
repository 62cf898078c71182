/**
 * Published sweep tables as a dataset: seed 000's raw files are not public, so what kvlab can
 * reproduce is its published cells (`data/raw/fixed-rate-latency/published-tables.md`, the
 * post's three Markdown tables byte for byte). {@link parsePublishedSweep} reads them (pure);
 * {@link writePublishedSweep} stores one run per table × arm, with one `results` row per step
 * that was run: `requested_ops_per_sec` from the row, `p50`/`p99` from a `p50 / p99` cell, or
 * `ops_per_sec` = the achieved rate of an `NS (258k)` cell (no latency, as published). `-`
 * cells were not run and get no row (the sweep analysis shows them as skipped). Runs carry
 * `output_format = published` and the tag `source=published`.
 *
 * @module
 */

import { ParseError } from "../../errors.ts";
import type { ResultsRow } from "../../schema.ts";
import { runRow } from "../_rows.ts";
import { newRunId, RunWriter } from "../../store/writer.ts";

/** One published cell. */
export interface PublishedCell {
  /** The row's rate (requests or deliveries per second; `約 21,000` reads as 21000). */
  requestedOpsPerSec: number;
  /** `p50 / p99` in ms; null for `NS` and `-`. */
  p50LatencyMs: number | null;
  p99LatencyMs: number | null;
  /** The achieved rate of an `NS (258k)` cell (258000); null otherwise. */
  achievedOpsPerSec: number | null;
  /** `-`: the server's sweep had stopped. */
  notRun: boolean;
  /** 1-based line of the cell's row. */
  line: number;
}

/** One published table. */
export interface PublishedTable {
  /** `GET`, or `PUBSUB_ONE_TO_ONE` for a deliveries table. */
  test: string;
  /** Connections (`816接続`), or publishers for a pub/sub table. */
  clients: number | null;
  /** The arms as printed, then in English (`Redis 1スレッド` → `Redis 1 thread`). */
  arms: { printed: string; label: string }[];
  /** Cells by arm (same order as `arms`). */
  cells: PublishedCell[][];
  /** Lines of the table (header to last row). */
  lineStart: number;
  lineEnd: number;
}

/** The English label of a printed arm name. */
function armLabel(printed: string): string {
  return printed.trim()
    .replace(/^(.+?)\s*1スレッド$/, "$1 1 thread")
    .replace(/^(.+?)\s*I\/Oスレッド(\d+)$/, "$1 io-threads $2");
}

function readCell(text: string, rate: number, line: number, file: string): PublishedCell {
  const t = text.trim();
  const cell = { requestedOpsPerSec: rate, line, notRun: false };
  const lat = /^(\d+(?:\.\d+)?) \/ (\d+(?:\.\d+)?)$/.exec(t);
  if (lat) {
    return { ...cell, p50LatencyMs: +lat[1], p99LatencyMs: +lat[2], achievedOpsPerSec: null };
  }
  const ns = /^NS \(([\d,]+)k\)$/.exec(t);
  if (ns) {
    const achieved = Number(ns[1].replace(/,/g, "")) * 1000;
    return { ...cell, p50LatencyMs: null, p99LatencyMs: null, achievedOpsPerSec: achieved };
  }
  if (t === "-") {
    return {
      ...cell,
      p50LatencyMs: null,
      p99LatencyMs: null,
      achievedOpsPerSec: null,
      notRun: true,
    };
  }
  throw new ParseError("expected `p50 / p99`, `NS (258k)` or `-`", {
    file,
    line,
    column: 1,
    text: t,
  });
}

/**
 * Reads the published sweep tables: each Markdown table, its connections from the line
 * `<N>接続` before it (or `<N>パブリッシャー` in the text before a deliveries table), its rows
 * (`| rate | cell | … |`).
 *
 * @param text The file.
 * @param file Its name, for errors.
 * @returns The tables, in order.
 * @throws {ParseError} For a cell or rate that is none of the published forms.
 *
 * @example
 * ```ts
 * import { parsePublishedSweep } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const [t] = parsePublishedSweep([
 *   "48接続",
 *   "| リクエスト/秒 | HotKV | Redis 1スレッド |",
 *   "|---|---|---|",
 *   "| 199,968 | 0.08 / 0.27 | 0.20 / 0.35 |",
 *   "| 300,000 | 0.08 / 0.27 | NS (231k) |",
 * ].join("\n"), "t.md");
 * assert.equal(t.test, "GET");
 * assert.equal(t.clients, 48);
 * assert.deepEqual(t.arms.map((a) => a.label), ["HotKV", "Redis 1 thread"]);
 * assert.equal(t.cells[1][1].achievedOpsPerSec, 231000);
 * assert.equal(t.cells[0][0].p99LatencyMs, 0.27);
 * assert.throws(() => parsePublishedSweep("| r/s | A |\n|---|---|\n| 1 | fast |\n", "x.md"), /x\.md:3:1/);
 * ```
 */
export function parsePublishedSweep(text: string, file: string): PublishedTable[] {
  const lines = text.split("\n");
  const tables: PublishedTable[] = [];
  let clients: number | null = null;
  let publishers: number | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const conn = /^(\d+)接続$/.exec(l.trim());
    if (conn) clients = Number(conn[1]);
    const pub = /(\d+)パブリッシャー/.exec(l);
    if (pub) publishers = Number(pub[1]);
    if (!l.startsWith("|") || !lines[i + 1]?.startsWith("|---")) continue;
    const head = l.split("|").slice(1, -1).map((s) => s.trim());
    const deliveries = head[0].includes("配信");
    const t: PublishedTable = {
      test: deliveries ? "PUBSUB_ONE_TO_ONE" : "GET",
      clients: deliveries ? publishers : clients,
      arms: head.slice(1).map((printed) => ({ printed, label: armLabel(printed) })),
      cells: head.slice(1).map(() => []),
      lineStart: i + 1,
      lineEnd: i + 2,
    };
    for (i += 2; i < lines.length && lines[i].startsWith("|"); i++) {
      const cells = lines[i].split("|").slice(1, -1);
      const rateText = cells[0].trim().replace(/^約\s*/, "").replace(/,/g, "");
      if (!/^\d+$/.test(rateText)) {
        throw new ParseError("expected a rate (19,584 or 約 21,000)", {
          file,
          line: i + 1,
          column: 1,
          text: cells[0].trim(),
        });
      }
      cells.slice(1).forEach((c, k) => t.cells[k]?.push(readCell(c, +rateText, i + 1, file)));
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
function cellRow(runId: string, i: number, t: PublishedTable, c: PublishedCell): ResultsRow {
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
      const results = t.cells[k].filter((c) => !c.notRun).map((c, i) =>
        cellRow(writer.runId, i, t, c)
      );
      const at = now();
      writer.commit({
        run: runRow({
          run_id: writer.runId,
          tool: t.test === "GET" ? "memtier_benchmark" : "pubsub-sub-bench",
          server: arm.label.split(" ")[0].toLowerCase(),
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
