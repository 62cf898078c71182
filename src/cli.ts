/**
 * The `kvlab` command line: declares each command and its options; each command's work is one
 * handler module under `src/cli/` (`xOptions()` reads commander's values into a typed
 * `XCommandOptions`, `xCommand()` does the work). A new command is a handler module, a
 * `declareX` function here and one line in `COMMANDS`. Run `deno task kvlab --help`.
 *
 * @module
 */

import { Command } from "commander";
import pl from "nodejs-polars";
import { plotKindList } from "./analyze/plots.ts";
import { KVLAB_VERSION } from "./version.ts";
import { redactText } from "./text/redact.ts";
import { terminalText } from "./text/safe.ts";
import { TABLES } from "./schema.ts";
import { exitCodeFor, type Output, readOptions } from "./cli/_exit.ts";

import { changesCommand, changesOptions } from "./cli/changes.ts";
import { compareCommand, compareOptions } from "./cli/compare.ts";

import { deltaCommand, deltaOptions } from "./cli/delta.ts";

import { plotCommand, plotOptions } from "./cli/plot.ts";

import { sweepCommand, sweepOptions } from "./cli/sweep.ts";
import { summaryCommand, summaryOptions } from "./cli/summary.ts";
import { tableCommand, tableOptions } from "./cli/table.ts";
import { DEFAULT_SUSTAINED_RULE } from "./fixed_rate.ts";
import {
  declareCompact,
  declareData,
  declareDemo,
  declareDoctor,
  declareIngest,
  declareLoad,
  declarePubSub,
  declareReport,
  declareRun,
  declareSample,
} from "./cli/_declare_collect.ts";

/** Declares `kvlab table` and its options; the work is in `cli/table.ts`. */
function declareTable(program: Command, out: Output): void {
  program.command("table")
    .description("Print a table of a dataset.")
    .argument("<name>", `table: ${Object.keys(TABLES).join(", ")}`)
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .option("--columns <list>", "comma-separated columns to show")
    .action((name: string, opts) => tableCommand(readOptions(() => tableOptions(name, opts)), out));
}

/** Declares `kvlab compare` and its options; the work is in `cli/compare.ts`. */
function declareCompare(program: Command, out: Output): void {
  program.command("compare")
    .description(
      "Compare each arm with a baseline per test: medians over repetitions, ratio with a 95% " +
        "interval, and a verdict (better / worse at 5% by an exact rank-sum test with 4+ runs " +
        "per arm; no difference when the interval is within ±5%; else inconclusive), with " +
        "Benjamini–Hochberg q-values across the table. CSV and JSON carry every column at full " +
        "precision.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--by <column>",
      "column whose values are the arms: label, server, server_version, … (default: label when " +
        "the runs' labels split the data, else the run column that differs)",
    )
    .option("--baseline <value>", "the baseline arm (default: the arm measured first)")
    .option(
      "--metric <column>",
      "metric: ops_per_sec, p50_latency_ms, p99_latency_ms, …",
      "ops_per_sec",
    )
    .option(
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .action((opts) => compareCommand(readOptions(() => compareOptions(opts)), out));
}

/** Declares `kvlab changes` and its options; the work is in `cli/changes.ts`. */
function declareChanges(program: Command, out: Output): void {
  program.command("changes")
    .description(
      "Find the change points of every series of a run history (E-divisive with a t test, as " +
        "Apache Otava): which night, version or commit moved a test, by how much, and what " +
        "else differed between the runs either side.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--order-by <column>",
      "run column that orders each series: started_at, source_path, server_version, " +
        "tag:<key>, … (default: started_at, or source_path when no run has a start time)",
    )
    .option("--metric <column>", "metric: ops_per_sec, p50_latency_ms, …", "ops_per_sec")
    .option("--max-pvalue <p>", "keep change points with a t test p at most this", "0.001")
    .option("--min-change <r>", "keep changes of at least this (0.05 or 5%)", "0")
    .option("--window <n>", "runs per window of the first pass", "50")
    .option("--test <name>", "only this test (SET, GET, …)")
    .option("--by <column>", "arm column: a series per value (default: label when it splits)")
    .option(
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .action((opts) => changesCommand(readOptions(() => changesOptions(opts)), out));
}

/** Declares `kvlab delta` and its options; the work is in `cli/delta.ts`. */
function declareDelta(program: Command, out: Output): void {
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
      "--format <format>",
      "md, csv, json or text (default: text on a terminal, md in a pipe)",
    )
    .action((opts) => deltaCommand(readOptions(() => deltaOptions(opts)), out));
}

/** Declares `kvlab plot` and its options; the work is in `cli/plot.ts`. */
function declarePlot(program: Command, out: Output): void {
  program.command("plot")
    .description("Draw a chart of a dataset and save it (.svg, .png, .html or .vl.json).")
    .argument("<kind>", plotKindList())
    .requiredOption("--data <dir>", "dataset directory")
    .requiredOption("-o, --output <file>", "output file; the extension picks the format")
    .option(
      "--by <column>",
      "arms (default: label when the runs' labels split the data, else the run column that differs)",
    )
    .option(
      "--baseline <value>",
      "the baseline arm (default: the arm measured first); ratio, delta, scaling crossovers",
    )
    .option("--candidate <value>", "arm that may overtake the baseline (scaling)")
    .option("--metric <column>", "metric", "ops_per_sec")
    .option("--x <column>", "x of a scaling curve", "clients")
    .option(
      "--dimension <column>",
      "delta: the column that changes (default: the arm column, when it has two arms)",
    )
    .option("--from <value>", "delta: value before (default: the baseline arm)")
    .option("--to <value>", "delta: value after (default: the other arm)")
    .option("--order-by <column>", "changes: run column that orders the history")
    .option("--test <name>", "changes: only this test")
    .option("--title <text>", "chart title")
    .action((kind: string, opts) => plotCommand(readOptions(() => plotOptions(kind, opts)), out));
}

/** Declares `kvlab summary` and its options; the work is in `cli/summary.ts`. */
function declareSummary(program: Command, out: Output): void {
  program.command("summary")
    .description(
      "Write a study's summary page (summary.md: environment, config differences, runs per " +
        "cell, medians with intervals and verdicts, changes, memory) and its figures (SVG and " +
        "PNG, in figures/): the page to paste into a blog post.",
    )
    .argument("<dir>", "dataset directory")
    .option(
      "--by <column>",
      "arms (default: label when the runs' labels split the data, else the run column that differs)",
    )
    .option("--baseline <value>", "the baseline arm (default: the arm measured first)")
    .option("-o, --output <dir>", "folder for summary.md and figures/ (default: <dir>/summary)")
    .option("--title <text>", "the page's title (default: the dataset folder's name)")
    .action(async (dir: string, opts) => {
      await summaryCommand(readOptions(() => summaryOptions(dir, opts)), out);
    });
}

/** Declares `kvlab sweep`; the work is in `cli/sweep.ts`. */
function declareSweep(program: Command, out: Output): void {
  program.command("sweep")
    .description(
      "Print a fixed-rate sweep: rows = requested rate, columns = arms, cells p50 / p99 (ms), " +
        "NS (achieved) below the sustained bounds, - for steps not run after a first NS.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--format <format>",
      "md (the tables), text, csv or json (one row per arm × step)",
      "md",
    )
    .option("--by <column>", "runs column naming the arms", "label")
    .option(
      "--sustained <min:max>",
      "sustained bounds on achieved / requested",
      `${DEFAULT_SUSTAINED_RULE.min}:${DEFAULT_SUSTAINED_RULE.max}`,
    )
    .action((opts) => sweepCommand(readOptions(() => sweepOptions(opts)), out));
}

/** Every command, in the order `kvlab --help` lists them: one declaration each. */
const COMMANDS: ((program: Command, out: Output) => void)[] = [
  declareIngest,
  declareTable,
  declareData,
  declareReport,
  declareCompare,
  declareDelta,
  declareChanges,
  declarePlot,
  declareSummary,
  declareRun,
  declareSample,
  declareDemo,
  declareDoctor,
  declareCompact,
  declarePubSub,
  declareSweep,
  declareLoad,
];

/** Options of {@link buildCli}. */
export interface BuildCliOptions {
  /**
   * Whether stdout is a terminal (tables as aligned text, progress bars).
   * @default {false}
   */
  isTerminal?: boolean;
  /**
   * Receives commander's own stdout (help and --version): kvlab's fixed text, which the
   * redaction of `print` would garble (`redis://[user:password@]host` is not a credential).
   * @default {print}
   */
  printHelp?: (s: string) => void;
}

/**
 * What `kvlab --version` prints: kvlab's version and the Deno it runs on.
 *
 * @returns e.g. `kvlab 0.1.0 (deno 2.9.6)`.
 *
 * @example
 * ```ts
 * import { versionText } from "./cli.ts";
 * import assert from "node:assert/strict";
 * assert.match(versionText(), /^kvlab \d+\.\d+\.\d+ \(deno \d+\.\d+\.\d+\)$/);
 * ```
 */
export function versionText(): string {
  return `kvlab ${KVLAB_VERSION} (deno ${Deno.version.deno})`;
}

/**
 * Builds the command tree.
 *
 * @param print Receives what goes to stdout.
 * @param printErr Receives what goes to stderr.
 * @param options Whether stdout is a terminal.
 * @returns The commander program; run it with `parseAsync`.
 *
 * @example
 * ```ts
 * import { buildCli } from "./cli.ts";
 * import assert from "node:assert/strict";
 * let out = "";
 * const cli = buildCli((s) => out += s, () => {});
 * await assert.rejects(cli.parseAsync(["--help"], { from: "user" }), { exitCode: 0 });
 * assert.match(out, /Usage: kvlab/);
 * await assert.rejects(buildCli(() => {}, () => {}).parseAsync(["--nope"], { from: "user" }), {
 *   code: "commander.unknownOption",
 * });
 * ```
 */
export function buildCli(
  print: (s: string) => void,
  printErr: (s: string) => void,
  options: BuildCliOptions = {},
): Command {
  const program = new Command("kvlab")
    .description(
      "Collect, ingest and analyze Redis-family benchmark results. Exit codes: 0 done, 1 failed, " +
        "2 usage error, 129 hung up (SIGHUP), 130 interrupted.",
    )
    .version(versionText(), "-V, --version", "print kvlab's and Deno's versions")
    .exitOverride()
    .configureOutput({ writeOut: options.printHelp ?? print, writeErr: printErr })
    // one line after an error (the suggestion stays visible), not the whole help
    .showHelpAfterError("(kvlab --help lists the commands; kvlab <command> --help their options)");

  const out: Output = { print, printErr, isTerminal: options.isTerminal ?? false };
  for (const declare of COMMANDS) declare(program, out);
  for (const command of program.commands) {
    command.showHelpAfterError(`(kvlab ${command.name()} --help lists its options)`);
    // commander does not mark required options in help: say it
    for (const option of command.options) {
      if (option.mandatory) option.description = `${option.description} (required)`;
    }
  }
  return program;
}

if (import.meta.main) {
  // Everything kvlab prints leaves the process here: redacted once, control characters shown
  // (text from datasets and servers is untrusted), written whole.
  const enc = new TextEncoder();
  const writeAll = (w: { writeSync(b: Uint8Array): number }, text: string) => {
    const bytes = enc.encode(text);
    for (let off = 0; off < bytes.length;) off += w.writeSync(bytes.subarray(off));
  };
  const print = (s: string) => writeAll(Deno.stdout, terminalText(redactText(s)));
  const printErr = (s: string) => writeAll(Deno.stderr, terminalText(redactText(s)));
  const printHelp = (s: string) => writeAll(Deno.stdout, s);
  pl.Config.setTblRows(50);
  try {
    await buildCli(print, printErr, { isTerminal: Deno.stdout.isTerminal(), printHelp })
      .parseAsync(Deno.args, { from: "user" });
  } catch (e) {
    Deno.exit(exitCodeFor(e, printErr));
  }
}
