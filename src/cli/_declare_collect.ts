/**
 * The declarations of kvlab's commands that collect, ingest, build and look after datasets
 * (`ingest`, `data`, `report`, `run`, `sample`, `pubsub`, `demo`, `doctor`, `compact`, `load`):
 * each a small `declareX` that names its options and hands them to its handler module. The
 * commands that analyze a dataset are declared in `src/cli.ts`, which registers them all.
 *
 * @module
 */

import type { Command } from "commander";

import { type Output, readOptions } from "./_exit.ts";
import { collectTag, REPO } from "./_options.ts";
import { compactCommand, compactOptions } from "./compact.ts";

import { dataCommand, dataOptions } from "./data.ts";

import { demoCommand, demoOptions } from "./demo.ts";
import { doctorCommand, doctorOptions } from "./doctor.ts";
import { ingestCommand, ingestOptions } from "./ingest.ts";
import { loadCommand, loadOptions } from "./load.ts";

import { pubSubCommand, pubSubCommandOptions } from "./pubsub.ts";
import { reportCommand, reportOptions } from "./report.ts";
import { runCommand, runOptions } from "./run.ts";
import { sampleCommand, sampleOptions } from "./sample.ts";

/** Declares `kvlab ingest` and its options; the work is in `cli/ingest.ts`. */
export function declareIngest(program: Command, out: Output): void {
  program.command("ingest")
    .description(
      "Parse raw redis-benchmark / valkey-benchmark / memtier_benchmark outputs and shell " +
        "transcripts into a dataset.",
    )
    .argument("<paths...>", "files or folders (walked recursively)")
    .requiredOption("--data <dir>", "dataset directory (created if missing)")
    .option("--label <label>", "label stored on every run")
    .option("--server <name>", "server benchmarked: redis, valkey, dragonfly, keydb, …")
    .option("--server-version <v>", "server version")
    .option(
      "--tool <name>",
      "tool, when the files do not say (redis-benchmark, valkey-benchmark, memtier_benchmark)",
    )
    .option("--tool-version <v>", "tool version")
    .option("--tag <k=v>", "tag stored on every run (repeatable)", collectTag)
    .action((paths: string[], opts) =>
      ingestCommand(readOptions(() => ingestOptions(paths, opts)), out)
    );
}

/** Declares `kvlab data` and its options; the work is in `cli/data.ts`. */
export function declareData(program: Command, out: Output): void {
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
export function declareReport(program: Command, out: Output): void {
  program.command("report")
    .description(
      "Rebuild the study datasets, execute every notebook headless with Jupyter and the Deno " +
        "kernel, and write executed notebooks, HTML and figures to out/. KVLAB_DATA=DIR points " +
        "the notebooks at your own dataset (KVLAB_BY, KVLAB_BASELINE, KVLAB_CANDIDATE and " +
        "KVLAB_LABELS name its arms; see README.md).",
    )
    .option("--only <names>", "comma-separated notebook names (without .ipynb)")
    .option(
      "--jobs <n>",
      "notebooks executed at once (default 1; more is faster, but live parts then share the CPUs)",
    )
    .action((opts) => reportCommand(readOptions(() => reportOptions(opts)), out));
}

/** Declares `kvlab run` and its options; the work is in `cli/run.ts`. */
export function declareRun(program: Command, out: Output): void {
  program.command("run")
    .description(
      "Run a study plan (YAML or JSON) against live servers, storing one run per cell. Its " +
        "kind: redis-benchmark (the default; examples/plan.yaml), memtier " +
        "(examples/memtier-plan.yaml), latency-sweep (examples/latency-sweep.yaml), pubsub " +
        "(examples/pubsub.yaml) or memory (examples/memory-plan.yaml). Re-running skips " +
        "complete cells and redoes incomplete or failed ones.",
    )
    .argument("<plan>", "plan file")
    .requiredOption("--data <dir>", "dataset directory (created if missing)")
    .option("--dry-run", "print every command, run nothing")
    .action((plan: string, opts) => runCommand(readOptions(() => runOptions(plan, opts)), out));
}

/** Declares `kvlab sample` and its options; the work is in `cli/sample.ts`. */
export function declareSample(program: Command, out: Output): void {
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
export function declarePubSub(program: Command, out: Output): void {
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
    .option("--engine <engine>", "auto (epoll by FFI where it can run), ffi or deno", "auto")
    .option("--label <label>", "label stored on the run")
    .action((opts) => pubSubCommand(readOptions(() => pubSubCommandOptions(opts)), out));
}

/** Declares `kvlab demo` and its options; the work is in `cli/demo.ts`. */
export function declareDemo(program: Command, out: Output): void {
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

/** Declares `kvlab doctor` and its options; the work is in `cli/doctor.ts`. */
export function declareDoctor(program: Command, out: Output): void {
  program.command("doctor")
    .description(
      "Check whether this machine is quiet enough to benchmark on (CPUs, load, other processes' " +
        "CPU, steal, iowait, CPU governor and turbo, the tools kvlab drives) and say what to change.",
    )
    .option("--sample-s <s>", "how long to watch the machine, seconds", "1")
    .action((opts) => doctorCommand(readOptions(() => doctorOptions(opts)), out));
}

/** Declares `kvlab compact` and its options; the work is in `cli/compact.ts`. */
export function declareCompact(program: Command, out: Output): void {
  program.command("compact")
    .description("Merge a dataset's small batch files into few large ones (safe while in use).")
    .requiredOption("--data <dir>", "dataset directory")
    .option("--target-mb <n>", "size a merged batch aims at, MB", "128")
    .action((opts) => compactCommand(readOptions(() => compactOptions(opts)), out));
}

/** Declares `kvlab load`; the work is in `cli/load.ts`. */
export function declareLoad(program: Command, out: Output): void {
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
    .option("--engine <engine>", "auto (epoll by FFI where it can run), ffi or deno", "auto")
    .option("--label <label>", "label stored on the run")
    .action((opts) => loadCommand(readOptions(() => loadOptions(opts)), out));
}
