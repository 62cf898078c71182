/**
 * Published sweep tables as a dataset: seed 000's raw files are not public, so what kvlab can
 * reproduce is its published cells (`data/raw/fixed-rate-latency/published-tables.md`, the
 * post's three Markdown tables byte for byte). {@link parsePublishedSweep} (the one pure parser,
 * `src/published_sweep.ts`, shared with the analysis) reads them; {@link writePublishedSweep}
 * stores one run per table × arm, with one `results` row per step that was run:
 * `requested_ops_per_sec` from the row, `p50`/`p99` from a `p50 / p99` cell, or `ops_per_sec` =
 * the achieved rate of an `NS (258k)` cell (no latency, as published). `-` cells were not run
 * and get no row, as kvlab's own sweeps store nothing for a skipped step (the sweep analysis
 * shows them as skipped). Runs carry `output_format = published` and the tag
 * `source=published`.
 *
 * @module
 */

import type { ResultsRow } from "../../schema.ts";
import { runRow } from "../_rows.ts";
import { newRunId, RunWriter } from "../../store/writer.ts";
import {
  parsePublishedSweep,
  type PublishedCell,
  type PublishedTable,
} from "../../published_sweep.ts";

export {
  parsePublishedSweep,
  type PublishedArm,
  type PublishedCell,
  type PublishedTable,
} from "../../published_sweep.ts";

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
