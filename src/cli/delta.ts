/**
 * `kvlab delta`: the change along one dimension per test (throughput factor, latency change),
 * each with its interval and verdict (the rule of `kvlab compare`).
 *
 * @module
 */

import type { Dataset } from "../store/dataset.ts";
import type { Command, OptionValues } from "commander";
import type pl from "nodejs-polars";
import { deltaSides } from "../analyze/arms.ts";
import { delta } from "../analyze/compare/compare.ts";
import { adviceSummary } from "../analyze/compare/advice.ts";
import { cellCounts, fewRunsWarning } from "../analyze/environment.ts";
import type { TableFormat } from "../analyze/format.ts";
import { loadResults } from "../analyze/load.ts";
import { type Output, readOptions } from "./_exit.ts";
import { attemptsNote } from "./_shows.ts";
import { datasetOption, optionalFormat } from "./_options.ts";
import { peopleFormat, tableText } from "./_tables.ts";

/** What `kvlab delta` measures. */
export interface DeltaCommandOptions {
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** The column that changes: transport, server_io_threads, … */
  dimension: string;
  /** The value before. */
  from: string;
  /** The value after. */
  to: string;
  /** Columns that split the change into groups of their own (`--per server,tool`). */
  per?: string[];
  /** @default {text on a terminal, md in a pipe} */
  format?: TableFormat;
}

/**
 * Reads `kvlab delta`'s options.
 *
 * @param raw Commander's option values (defaults filled in).
 * @returns The typed options.
 * @throws {TypeError} For an unknown format.
 *
 * @example
 * ```ts
 * import { deltaOptions } from "./delta.ts";
 * import assert from "node:assert/strict";
 * const o = deltaOptions({ data: "ds", dimension: "transport", from: "tcp", to: "rdma", format: "csv" });
 * assert.deepEqual([o.from, o.to, o.format, o.per], ["tcp", "rdma", "csv", undefined]);
 * assert.deepEqual(deltaOptions({ data: "ds", dimension: "transport", from: "tcp", to: "tls",
 *   per: "server, tool" }).per, ["server", "tool"]);
 * ```
 */
export function deltaOptions(raw: OptionValues): DeltaCommandOptions {
  return {
    data: datasetOption(raw.data),
    dimension: String(raw.dimension),
    from: String(raw.from),
    to: String(raw.to),
    ...(raw.per === undefined ? {} : { per: perOption(String(raw.per)) }),
    format: optionalFormat(raw.format),
  };
}

/** `--per a,b`: the column names, each once; an empty one is an error. */
function perOption(text: string): string[] {
  const names = text.split(",").map((c) => c.trim());
  if (names.some((c) => c === "")) {
    throw new TypeError(
      `invalid --per: ${JSON.stringify(text)} (expected columns such as server,tool)`,
    );
  }
  return [...new Set(names)];
}

/**
 * The columns of a delta worth a table for people: the keys, n, throughput on both sides, the
 * factor with its interval and verdict, the latency changes with their verdicts (not each
 * side's latencies nor the latency intervals: CSV and JSON keep them), and `also_differs` when
 * it says something.
 *
 * @param d A delta from `delta()`.
 * @returns The narrower frame.
 */
export function compactDelta(d: pl.DataFrame): pl.DataFrame {
  const keep = d.columns.filter((col) =>
    !/^(from|to)$|^(from|to)_(avg|p\d+)_latency_ms$|_latency_change_ci_(low|high)_pct$|runs_needed/
      .test(col) &&
    !(col === "also_differs" && d.getColumn(col).nullCount() === d.height)
  );
  return d.select(...keep);
}

/**
 * Prints the delta table: compact and rounded for people (Markdown, or aligned text on a
 * terminal), every column at full precision in CSV and JSON.
 *
 * @param o What to measure.
 * @param out Where to print.
 * @throws {TypeError} When the dimension has fewer than two values or `--from`/`--to` are not
 * two of them.
 */
export function deltaCommand(o: DeltaCommandOptions, out: Output): void {
  const results = loadResults(o.data, { onLeftOut: attemptsNote(out) });
  deltaSides(results, o);
  const d = delta(results, { dimension: o.dimension, from: o.from, to: o.to, per: o.per });
  out.print(tableText(d, peopleFormat(o.format, out.isTerminal), compactDelta));
  const warning = fewRunsWarning(cellCounts(results, o.dimension));
  if (warning) out.printErr(`${warning}\n`);
  const advice = adviceSummary(d, { prefix: "throughput_" });
  if (advice) out.printErr(`${advice}\n`);
}

/**
 * Declares `kvlab delta`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link deltaCommand} does the work.
 */
export function declareDelta(program: Command, out: Output): void {
  program.command("delta")
    .description(
      "The change along one dimension per test: throughput factor and avg/p50/p95/p99 latency " +
        "change in %, each with its interval and verdict as compare gives them (e.g. " +
        "--dimension transport --from tcp --to rdma).",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .requiredOption(
      "--dimension <column>",
      "transport, server_io_threads, server_version, data_size_bytes, label, …",
    )
    .requiredOption("--from <value>", "value before")
    .requiredOption("--to <value>", "value after")
    .option(
      "--per <columns>",
      "columns that split the change into groups of their own, e.g. server,tool (Redis's and " +
        "Valkey's TLS cost apart)",
    )
    .option(
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .action((opts) => deltaCommand(readOptions(() => deltaOptions(opts)), out));
}
