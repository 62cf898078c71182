/**
 * redis-benchmark / valkey-benchmark output as an {@link OutputFormat}: read line by line (a `-l`
 * loop's output can be larger than memory), the command's flags merged into its tests, the
 * memory a `-t set` fill wrote for the captures printed after it.
 *
 * @module
 */

import { redactUrl } from "../../../text/redact.ts";
import {
  type FormatRun,
  type FormatTables,
  type LineReader,
  type LinesFormat,
  type MemoryFields,
  type ParsedCommand,
  type ReadContext,
  runStatus,
} from "../format.ts";
import { type BenchmarkArgs, parseBenchmarkArgs } from "./flags.ts";
import { RedisBenchmarkParser } from "./parse.ts";
import { testRows } from "./rows.ts";

/** redis-benchmark and its forks' copies of it. */
const PROGRAMS = ["redis-benchmark", "valkey-benchmark", "keydb-benchmark"] as const;

/**
 * The `memory` fields of a fill run, before any capture: the keys it writes (a `-t set` run's
 * request count) and the value size (redis-benchmark's default of 3 bytes when not given).
 *
 * @param args The fill's flags, if known.
 * @returns `target_keys` and `value_size_bytes`.
 *
 * @example
 * ```ts
 * import { fillMemory } from "./format.ts";
 * import { parseBenchmarkArgs } from "./flags.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(fillMemory(parseBenchmarkArgs(["-t", "set", "-n", "1000"])), {
 *   target_keys: 1000,
 *   value_size_bytes: 3,
 * });
 * assert.deepEqual(fillMemory(undefined), { target_keys: null, value_size_bytes: null });
 * ```
 */
export function fillMemory(args: BenchmarkArgs | undefined): MemoryFields {
  const a = args;
  return {
    target_keys: a && a.tests?.length === 1 && a.tests[0] === "set" ? a.requests ?? null : null,
    value_size_bytes: a ? a.dataSizeBytes ?? 3 : null,
  };
}

/** The server a command ran against, as `runs.target` keeps it. */
function targetOf(args: BenchmarkArgs): string {
  if (args.socket) return `unix:${args.socket}`;
  return redactUrl(`${args.host ?? "127.0.0.1"}:${args.port ?? 6379}`);
}

/** The flags of a command of this tool, or undefined (another tool, or flags it cannot read). */
function argsOf(command: ParsedCommand | undefined): BenchmarkArgs | undefined {
  if (!command || !(PROGRAMS as readonly string[]).includes(command.tool ?? "")) return undefined;
  try {
    return parseBenchmarkArgs(command.args);
  } catch {
    return undefined;
  }
}

/** One block's reader: the streaming parser, and the tests already taken as parts. */
class BenchmarkReader implements LineReader {
  readonly #parser: RedisBenchmarkParser;
  #args: BenchmarkArgs | undefined;
  #taken = 0;
  /** The tests with no result, of those taken as parts. */
  readonly #incomplete: string[] = [];

  constructor(ctx: ReadContext) {
    this.#args = argsOf(ctx.command);
    this.#parser = new RedisBenchmarkParser({ file: ctx.file, args: this.#args });
  }

  push(text: string, line: number, terminated: boolean): void {
    this.#parser.push(text, line, terminated);
  }

  learnCommand(command: ParsedCommand): void {
    const args = argsOf(command);
    if (!args) return;
    this.#args = args;
    this.#parser.setArgs(args);
  }

  get pendingRows(): number {
    return this.#parser.pendingRows;
  }

  take(runId: string): FormatTables {
    const tests = this.#parser.takeCompleted();
    for (const t of tests) if (!t.complete) this.#incomplete.push(t.test);
    const rows = testRows(runId, tests, this.#taken);
    this.#taken += tests.length;
    return { results: rows.results, latency_distribution: rows.distribution };
  }

  finish(runId: string): FormatRun {
    const parsed = this.#parser.finish();
    const rows = testRows(runId, parsed.tests, this.#taken);
    const args = this.#args;
    const status = runStatus(parsed.testCount, parsed.complete);
    const lacking = [
      ...this.#incomplete,
      ...parsed.tests.filter((t) => !t.complete).map((t) => t.test),
    ];
    return {
      outputFormat: parsed.format,
      status,
      // a partial run says which numbers it lacks
      error: parsed.errors.length > 0
        ? parsed.errors.map((e) => e.text).join("\n")
        : status === "incomplete"
        ? lacking.length > 0
          ? `cut short: no result for ${lacking.join(", ")}`
          : args?.tests?.length
          ? "cut short: tests asked for with -t are not in the output"
          : "cut short (its warnings say where)"
        : null,
      tests: parsed.testCount,
      tables: { results: rows.results, latency_distribution: rows.distribution },
      fill: fillMemory(args),
      facts: args ? { target: targetOf(args), transport: args.transport } : {},
      warnings: parsed.warnings,
      manifest: {
        tool_errors: parsed.errors,
        progress_updates_skipped: parsed.progressUpdates,
      },
    };
  }
}

/**
 * redis-benchmark / valkey-benchmark output, every variant (see `parse.ts`).
 *
 * @example
 * ```ts
 * import { redisBenchmarkFormat } from "./format.ts";
 * import assert from "node:assert/strict";
 * const r = redisBenchmarkFormat.reader({ file: "q.txt" });
 * r.push("SET: 1000.00 requests per second", 1, true);
 * const run = r.finish("r1");
 * assert.equal(run.status, "complete");
 * assert.equal(run.tables.results?.[0].ops_per_sec, 1000);
 * assert.equal(redisBenchmarkFormat.recognizes("====== SET ======"), true);
 * assert.equal(redisBenchmarkFormat.accepts!(["-c", "x"]), "invalid value for -c: expected a number, got x");
 * ```
 */
export const redisBenchmarkFormat: LinesFormat = {
  name: "redis-benchmark",
  tool: "redis-benchmark",
  description: "redis-benchmark output",
  reads: "redis-benchmark / valkey-benchmark output (default report ≤6.0 or 6.2+, -q, --csv)",
  results: true,
  reading: "lines",
  programs: PROGRAMS,
  recognizes: (t) =>
    /^====== .* ======$/.test(t) || /^.+: [\d.]+ requests per second/.test(t) ||
    /^"test","rps"/.test(t) || /^"[^"]+","[\d.]+"$/.test(t) || /^.+: rps=\S+ \(overall: /.test(t) ||
    // the titles of a 6.2+ report's sections (never a label a paste puts above a run)
    /^(Summary|RPS Summary|Latency by percentile distribution|Cumulative distribution of latencies):$/
      .test(t),
  accepts(args) {
    try {
      parseBenchmarkArgs(args);
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  },
  reader: (ctx) => new BenchmarkReader(ctx),
};
