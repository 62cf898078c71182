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
import { KVLAB_VERSION } from "./store/writer.ts";
import { redactText } from "./text/redact.ts";
import { terminalText } from "./text/safe.ts";
import { TABLES } from "./schema.ts";
import { exitCodeFor, type Output, readOptions } from "./cli/_exit.ts";
import { collectTag, REPO } from "./cli/_options.ts";
import { compactCommand, compactOptions } from "./cli/compact.ts";
import { compareCommand, compareOptions } from "./cli/compare.ts";
import { dataCommand, dataOptions } from "./cli/data.ts";
import { deltaCommand, deltaOptions } from "./cli/delta.ts";
import { demoCommand, demoOptions } from "./cli/demo.ts";
import { ingestCommand, ingestOptions } from "./cli/ingest.ts";
import { loadCommand, loadOptions } from "./cli/load.ts";
import { plotCommand, plotOptions } from "./cli/plot.ts";
import { pubSubCommand, pubSubCommandOptions } from "./cli/pubsub.ts";
import { reportCommand, reportOptions } from "./cli/report.ts";
import { runCommand, runOptions } from "./cli/run.ts";
import { sampleCommand, sampleOptions } from "./cli/sample.ts";
import { sweepCommand, sweepOptions } from "./cli/sweep.ts";
import { summaryCommand, summaryOptions } from "./cli/summary.ts";
import { tableCommand, tableOptions } from "./cli/table.ts";

/** Declares `kvlab ingest` and its options; the work is in `cli/ingest.ts`. */
function declareIngest(program: Command, out: Output): void {
  program.command("ingest")
    .description(
      "Parse raw redis-benchmark / valkey-benchmark outputs and shell transcripts into a dataset.",
    )
    .argument("<paths...>", "files or folders (walked recursively)")
    .requiredOption("--data <dir>", "dataset directory (created if missing)")
    .option("--label <label>", "label stored on every run")
    .option("--server <name>", "server benchmarked: redis, valkey, dragonfly, keydb, …")
    .option("--server-version <v>", "server version")
    .option("--tool <name>", "tool, when the files do not say (redis-benchmark, valkey-benchmark)")
    .option("--tool-version <v>", "tool version")
    .option("--tag <k=v>", "tag stored on every run (repeatable)", collectTag, {})
    .action((paths: string[], opts) =>
      ingestCommand(readOptions(() => ingestOptions(paths, opts)), out)
    );
}

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

/** Declares `kvlab data` and its options; the work is in `cli/data.ts`. */
function declareData(program: Command, out: Output): void {
  program.command("data")
    .description(
      "Rebuild the bundled study datasets (data/studies/<study>/) from the raw outputs in " +
        "data/raw/<study>/, as each folder's ingest.json says (server, version, label per file).",
    )
    .option("--raw <dir>", "raw folder", REPO + "data/raw")
    .option("--out <dir>", "where the datasets go", REPO + "data/studies")
    .action((opts) => dataCommand(readOptions(() => dataOptions(opts)), out));
}

/** Declares `kvlab report` and its options; the work is in `cli/report.ts`. */
function declareReport(program: Command, out: Output): void {
  program.command("report")
    .description(
      "Rebuild the study datasets, execute every notebook headless with Jupyter and the Deno " +
        "kernel, and write executed notebooks, HTML and figures to out/.",
    )
    .option("--only <names>", "comma-separated notebook names (without .ipynb)")
    .action((opts) => reportCommand(readOptions(() => reportOptions(opts)), out));
}

/** Declares `kvlab compare` and its options; the work is in `cli/compare.ts`. */
function declareCompare(program: Command, out: Output): void {
  program.command("compare")
    .description(
      "Compare each arm with a baseline per test: medians over repetitions, ratio with a 95% " +
        "bootstrap interval, and a verdict (better / worse / no difference). CSV and JSON carry " +
        "every column at full precision.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option(
      "--by <column>",
      "column whose values are the arms: label, server, server_version, … (default: label when " +
        "the runs' labels split the data, else the run column that differs)",
    )
    .option("--baseline <value>", "the baseline arm (default: the first arm)")
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

/** Declares `kvlab delta` and its options; the work is in `cli/delta.ts`. */
function declareDelta(program: Command, out: Output): void {
  program.command("delta")
    .description(
      "The change along one dimension per test: throughput factor and avg/p50/p95/p99 latency " +
        "change in % (e.g. --dimension transport --from tcp --to rdma).",
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
    .option("--baseline <value>", "baseline arm (ratio: default the first arm; scaling crossovers)")
    .option("--candidate <value>", "arm that may overtake the baseline (scaling)")
    .option("--metric <column>", "metric", "ops_per_sec")
    .option("--x <column>", "x of a scaling curve", "clients")
    .option("--dimension <column>", "dimension of a delta")
    .option("--from <value>", "delta: value before")
    .option("--to <value>", "delta: value after")
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

/** Declares `kvlab run` and its options; the work is in `cli/run.ts`. */
function declareRun(program: Command, out: Output): void {
  program.command("run")
    .description(
      "Run a study plan (YAML or JSON; see examples/plan.yaml) against live servers, storing one " +
        "run per cell. Re-running skips complete cells and redoes incomplete or failed ones.",
    )
    .argument("<plan>", "plan file")
    .requiredOption("--data <dir>", "dataset directory (created if missing)")
    .option("--dry-run", "print every command, run nothing")
    .action((plan: string, opts) => runCommand(readOptions(() => runOptions(plan, opts)), out));
}

/** Declares `kvlab sample` and its options; the work is in `cli/sample.ts`. */
function declareSample(program: Command, out: Output): void {
  program.command("sample")
    .description(
      "Sample a server's memory (INFO memory, DBSIZE, process RSS, docker stats of --container) " +
        "every --interval seconds for --duration seconds, as one run of memory rows.",
    )
    .requiredOption(
      "--url <url>",
      "redis://[user:password@]host[:port][/db], rediss://…, unix:///path",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option("--interval <s>", "seconds between samples", "1")
    .requiredOption("--duration <s>", "seconds to sample for (at most 86400)")
    .option("--container <name>", "docker container of the server")
    .option("--label <label>", "label stored on the run")
    .action((opts) => sampleCommand(readOptions(() => sampleOptions(opts)), out));
}

/** Declares `kvlab pubsub` and its options; the work is in `cli/pubsub.ts`. */
function declarePubSub(program: Command, out: Output): void {
  program.command("pubsub")
    .description("One pub/sub delivery-latency step (open-loop publishing at --rate deliveries/s).")
    .requiredOption("--url <url>", "redis://[:password@]host[:port] (plain TCP)")
    .requiredOption("--data <dir>", "dataset directory")
    .requiredOption("--rate <n>", "target delivery rate: messages × subscribers reached per second")
    .option("--mode <mode>", "one-to-one, fan-out or sharded", "one-to-one")
    .option("--publishers <n>", "publisher connections", "64")
    .option("--subscribers <n>", "subscriber connections", "100")
    .option("--channels <n>", "channels (default: subscribers ÷ fan-out)")
    .option("--fan-out <n>", "subscribers per channel (fan-out: all; else 1)")
    .option("--payload <bytes>", "payload size, at least 16", "128")
    .option("--duration <s>", "publishing window, seconds", "10")
    .option("--grace <s>", "seconds deliveries may still arrive after it", "2")
    .option("--label <label>", "label stored on the run")
    .action((opts) => pubSubCommand(readOptions(() => pubSubCommandOptions(opts)), out));
}

/** Declares `kvlab demo` and its options; the work is in `cli/demo.ts`. */
function declareDemo(program: Command, out: Output): void {
  program.command("demo")
    .description(
      "Start throwaway redis-server and, when installed, valkey-server on free loopback ports, " +
        "run the bundled small plan (data/plans/demo.yaml), stop them, print Valkey against " +
        "Redis and write the summary page (Redis alone: the results table). Without " +
        "redis-server, ingest the bundled sample outputs instead.",
    )
    .option("--data <dir>", "dataset directory", REPO + "data/demo")
    .option("--samples <dir>", "folder of <server>-<version>/ folders", REPO + "data/samples")
    .action((opts) => demoCommand(readOptions(() => demoOptions(opts)), out));
}

/** Declares `kvlab compact` and its options; the work is in `cli/compact.ts`. */
function declareCompact(program: Command, out: Output): void {
  program.command("compact")
    .description("Merge a dataset's small batch files into few large ones (safe while in use).")
    .requiredOption("--data <dir>", "dataset directory")
    .option("--target-mb <n>", "size a merged batch aims at, MB", "128")
    .action((opts) => compactCommand(readOptions(() => compactOptions(opts)), out));
}

/** Declares `kvlab sweep`; the work is in `cli/sweep.ts`. */
function declareSweep(program: Command, out: Output): void {
  program.command("sweep")
    .description(
      "Print a fixed-rate sweep: rows = requested rate, columns = arms, cells p50 / p99 (ms), " +
        "NS (achieved) below the sustained bounds, - for steps not run after a first NS.",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .option("--format <format>", "md (the tables), csv or json (one row per arm × step)", "md")
    .option("--by <column>", "runs column naming the arms", "label")
    .option("--sustained <min:max>", "sustained bounds on achieved / requested", "0.97:1.03")
    .action((opts) => sweepCommand(readOptions(() => sweepOptions(opts)), out));
}

/** Declares `kvlab load`; the work is in `cli/load.ts`. */
function declareLoad(program: Command, out: Output): void {
  program.command("load")
    .description(
      "Run one open-loop step with kvlab's generator (latency from the intended send time, " +
        "phases spread) and store it as a run.",
    )
    .requiredOption("--url <url>", "redis://[:password@]host[:port]")
    .requiredOption("--rate <r>", "requested total rate, requests per second")
    .requiredOption("--connections <n>", "connections")
    .requiredOption("--duration <s>", "measured seconds")
    .requiredOption("--data <dir>", "dataset directory (created if missing)")
    .option("--warmup <s>", "seconds of load before, not measured", "0")
    .option("--ratio <set:get>", "SET:GET mix (0:1 = GET only)", "0:1")
    .option("--data-size <bytes>", "value size of SETs", "256")
    .option("--keys <n>", "key space (key:0 … key:n-1)", "1000")
    .option("--pipeline <n>", "requests in flight per connection", "1")
    .option("--arrivals <mode>", "uniform (spread phases) or poisson", "uniform")
    .option("--threads <n>", "Worker threads sharing the connections", "1")
    .option("--label <label>", "label stored on the run")
    .action((opts) => loadCommand(readOptions(() => loadOptions(opts)), out));
}

/** Every command, in the order `kvlab --help` lists them: one declaration each. */
const COMMANDS: ((program: Command, out: Output) => void)[] = [
  declareIngest,
  declareTable,
  declareData,
  declareReport,
  declareCompare,
  declareDelta,
  declarePlot,
  declareSummary,
  declareRun,
  declareSample,
  declareDemo,
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
    .showHelpAfterError();

  const out: Output = { print, printErr, isTerminal: options.isTerminal ?? false };
  for (const declare of COMMANDS) declare(program, out);
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
