/**
 * The `kvlab` command line: `ingest`, `table`, `demo`. Run `deno task kvlab --help`.
 *
 * @module
 */

import { Command, CommanderError, InvalidArgumentError } from "commander";
import pl from "nodejs-polars";
import { type FileOutcome, ingestPaths } from "./collect/ingest.ts";
import { formatTable, tableFormat } from "./analyze/format.ts";
import { loadResults, loadTable } from "./analyze/load.ts";
import { TABLES } from "./schema.ts";

function collectTag(value: string, previous: Record<string, string>): Record<string, string> {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError(`expected k=v, got ${JSON.stringify(value)}`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

function describe(o: FileOutcome): string {
  switch (o.status) {
    case "duplicate":
      return `duplicate ${o.path}: same bytes already ingested` +
        (o.duplicateOf?.length
          ? ` as run ${o.duplicateOf.join(", ")}`
          : " (claimed by another writer)");
    case "error":
      return `error ${o.error?.message ?? o.path}`;
    case "ingested": {
      const byStatus = new Map<string, number>();
      let tests = 0;
      let warnings = 0;
      for (const r of o.runs) {
        byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
        tests += r.tests;
        warnings += r.warnings;
      }
      const st = [...byStatus].map(([k, v]) => `${v} ${k}`).join(", ");
      return `ingested ${o.path}: ${o.runs.length} run${o.runs.length === 1 ? "" : "s"} (${st}), ` +
        `${tests} test${tests === 1 ? "" : "s"}` +
        (warnings ? `, ${warnings} warnings in run.json` : "") +
        (o.skipped.length ? `, ${o.skipped.length} blocks skipped` : "");
    }
  }
}

const REPO = new URL("../", import.meta.url).pathname;

const SUMMARY_COLUMNS = [
  "server",
  "server_version",
  "tool",
  "output_format",
  "test",
  "clients",
  "threads",
  "pipeline",
  "data_size_bytes",
  "requests",
  "ops_per_sec",
  "avg_latency_ms",
  "p50_latency_ms",
  "p99_latency_ms",
  "status",
];

/** Builds the command tree; `print` receives what would go to stdout. */
export function buildCli(print: (s: string) => void, printErr: (s: string) => void): Command {
  const program = new Command("kvlab")
    .description("Collect, ingest and analyze Redis-family benchmark results.")
    .exitOverride()
    .configureOutput({ writeOut: print, writeErr: printErr })
    .showHelpAfterError();

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
    .action(async (paths: string[], opts) => {
      let failed = 0;
      try {
        await ingestPaths(paths, {
          data: opts.data,
          label: opts.label,
          server: opts.server,
          serverVersion: opts.serverVersion,
          tool: opts.tool,
          toolVersion: opts.toolVersion,
          tags: opts.tag,
        }, (o) => {
          if (o.status === "error") {
            failed++;
            printErr(describe(o) + "\n");
          } else {
            print(describe(o) + "\n");
          }
          for (const s of o.skipped) if (s.reason) print(`  skipped: ${s.reason}\n`);
        });
      } catch (e) {
        printErr(`error ${(e as Error).message}\n`);
        failed++;
      }
      if (failed > 0) {
        printErr(`${failed} file${failed === 1 ? "" : "s"} could not be ingested\n`);
        throw new CommanderError(1, "kvlab.ingest", "");
      }
    });

  program.command("table")
    .description("Print a table of a dataset.")
    .argument("<name>", `table: ${Object.keys(TABLES).join(", ")}`)
    .requiredOption("--data <dir>", "dataset directory")
    .option("--format <format>", "md, csv or json", "md")
    .option("--columns <list>", "comma-separated columns to show")
    .action((name: string, opts) => {
      const format = tableFormat(opts.format);
      let df = loadTable(opts.data, name);
      if (opts.columns) df = df.select(...String(opts.columns).split(",").map((c) => c.trim()));
      print(formatTable(df, format));
    });

  program.command("demo")
    .description(
      "Ingest the bundled sample outputs (data/samples/<server>-<version>/) into a dataset and " +
        "print the results table.",
    )
    .option("--data <dir>", "dataset directory", REPO + "data/demo")
    .option("--samples <dir>", "folder of <server>-<version>/ folders", REPO + "data/samples")
    .action(async (opts) => {
      const outcomes: FileOutcome[] = [];
      const folders = [...Deno.readDirSync(opts.samples)].filter((e) => e.isDirectory).map((e) =>
        e.name
      ).sort();
      for (const folder of folders) {
        const m = /^([a-z]+)-(\d[\w.]*)$/.exec(folder);
        await ingestPaths([`${opts.samples}/${folder}`], {
          data: opts.data,
          server: m?.[1] ?? folder,
          serverVersion: m?.[2],
          label: "demo",
        }, (o) => {
          outcomes.push(o);
          print(describe(o) + "\n");
        });
      }
      const df = loadResults(opts.data).sort(["server", "output_format", "test_index"]);
      print(`\nresults in ${opts.data} (${df.height} tests):\n\n`);
      print(formatTable(df.select(...SUMMARY_COLUMNS), "md"));
      if (outcomes.some((o) => o.status === "error")) throw new CommanderError(1, "kvlab.demo", "");
    });

  return program;
}

if (import.meta.main) {
  const enc = new TextEncoder();
  const print = (s: string) => void Deno.stdout.writeSync(enc.encode(s));
  const printErr = (s: string) => void Deno.stderr.writeSync(enc.encode(s));
  pl.Config.setTblRows(50);
  try {
    await buildCli(print, printErr).parseAsync(Deno.args, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) Deno.exit(e.exitCode === 0 ? 0 : e.exitCode);
    printErr(`error: ${(e as Error).message}\n`);
    Deno.exit(1);
  }
}
