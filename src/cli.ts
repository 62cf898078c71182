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
import { parsePlan, type StudyPlan } from "./collect/plan.ts";
import { runPlan, type StudyResult } from "./collect/study.ts";
import { ToolNotFoundError } from "./collect/process.ts";
import { startLocalServer } from "./collect/redis_server.ts";
import { parseServerUrl } from "./collect/target.ts";
import { runMemorySampler } from "./collect/memory_sweep.ts";
import { studyProgress } from "./cli_progress.ts";
import { buildStudies } from "./collect/studies.ts";
import { NotebookError, runReport } from "./report.ts";
import { compare, delta } from "./analyze/compare.ts";
import { formatForPeople } from "./analyze/present.ts";
import { crossovers, scaling } from "./analyze/scaling.ts";
import { latencySpectrum } from "./analyze/latency.ts";
import {
  deltaChart,
  latencyChart,
  ratioChart,
  scalingChart,
  throughputChart,
  type VegaLiteSpec,
} from "./analyze/chart.ts";
import { chartFormat, saveChart } from "./analyze/export.ts";

/** A number of seconds from an option, or a TypeError naming the option. */
function seconds(option: string, value: string): number {
  const n = Number(value);
  if (value === undefined || value.trim() === "" || !Number.isFinite(n)) {
    throw new TypeError(
      `invalid ${option}: ${JSON.stringify(value)} (expected seconds, e.g. 1 or 0.5)`,
    );
  }
  return n;
}

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
      const same = o.sameBytesAs?.length
        ? `\n  flagged: the same bytes were ingested before as ${
          o.sameBytesAs.map((x) => x.path).join(", ")
        } ` +
          "under other labels: these runs repeat those (same raw_sha256), they are not a second measurement"
        : "";
      return `ingested ${o.path}: ${o.runs.length} run${o.runs.length === 1 ? "" : "s"} (${st}), ` +
        `${tests} test${tests === 1 ? "" : "s"}` +
        (warnings ? `, ${warnings} warnings in run.json` : "") +
        (o.skipped.length ? `, ${o.skipped.length} blocks skipped` : "") + same;
    }
  }
}

const REPO = new URL("../", import.meta.url).pathname;

const LIVE_COLUMNS = [
  "server",
  "server_version",
  "tool_version",
  "repetition",
  "test",
  "clients",
  "requests",
  "ops_per_sec",
  "avg_latency_ms",
  "p50_latency_ms",
  "p99_latency_ms",
  "status",
];

/** The columns of a comparison worth a Markdown table. */
function compactCompare(c: pl.DataFrame, metric: string): pl.DataFrame {
  const keep = c.columns.filter((col) =>
    !/^(baseline_min|baseline_max|candidate_min|candidate_max)_|^direction$|^baseline$/.test(col) &&
    !(col === "also_differs" && c.getColumn(col).nullCount() === c.height)
  );
  void metric;
  return c.select(...keep);
}

/** Runs a plan with progress output and signal handling; prints a one-line summary. */
async function runStudy(
  plan: StudyPlan,
  data: string,
  dryRun: boolean,
  print: (s: string) => void,
): Promise<StudyResult> {
  const ac = new AbortController();
  const onSignal = () => ac.abort();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  try {
    const result = await runPlan(plan, {
      data,
      dryRun,
      signal: ac.signal,
      onEvent: studyProgress(print, Deno.stdout.isTerminal()),
    });
    print(
      dryRun
        ? `${result.cells} cells (dry run: nothing was run)\n`
        : `${result.cells} cells: ${result.complete} complete, ${result.skipped} skipped (already complete), ` +
          `${result.incomplete} incomplete, ${result.failed} failed` +
          (result.interrupted ? ", interrupted" : "") + "\n",
    );
    return result;
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
}

/** The demo without redis-server: ingest data/samples/<server>-<version>/. */
async function demoFromSamples(
  data: string,
  samples: string,
  print: (s: string) => void,
): Promise<void> {
  const folders = [...Deno.readDirSync(samples)].filter((e) => e.isDirectory).map((e) => e.name)
    .sort();
  for (const folder of folders) {
    const m = /^([a-z]+)-(\d[\w.]*)$/.exec(folder);
    await ingestPaths([`${samples}/${folder}`], {
      data,
      server: m?.[1] ?? folder,
      serverVersion: m?.[2],
      label: "demo",
    }, (o) => print(describe(o) + "\n"));
  }
  const df = loadResults(data).sort(["server", "output_format", "test_index"]);
  print(`\nresults in ${data} (${df.height} tests):\n\n`);
  print(formatForPeople(df.select(...SUMMARY_COLUMNS), "md", { headers: false }));
}

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
      if (opts.columns) {
        const cols = String(opts.columns).split(",").map((c) => c.trim());
        const unknown = cols.filter((c) => !df.columns.includes(c));
        if (unknown.length) {
          throw new TypeError(
            `invalid column: ${unknown.join(", ")} (table ${name} has: ${df.columns.join(", ")})`,
          );
        }
        df = df.select(...cols);
      }
      print(formatTable(df, format));
    });

  program.command("data")
    .description(
      "Rebuild the bundled study datasets (data/studies/<study>/) from the raw outputs in " +
        "data/raw/<study>/, as each folder's ingest.json says (server, version, label per file).",
    )
    .option("--raw <dir>", "raw folder", REPO + "data/raw")
    .option("--out <dir>", "where the datasets go", REPO + "data/studies")
    .action(async (opts) => {
      const built = await buildStudies(opts.raw, opts.out);
      for (const b of built) print(`${b.study}: ${b.runs} runs, ${b.tests} tests → ${b.data}\n`);
    });

  program.command("report")
    .description(
      "Rebuild the study datasets, execute every notebook headless with Jupyter and the Deno " +
        "kernel, and write executed notebooks, HTML and figures to out/.",
    )
    .option("--only <names>", "comma-separated notebook names (without .ipynb)")
    .action(async (opts) => {
      const t0 = performance.now();
      try {
        const runs = await runReport({
          only: opts.only ? String(opts.only).split(",") : undefined,
          onNotebook: (r) =>
            print(
              `${r.notebook}: ${r.errors.length ? `${r.errors.length} cell error(s)` : "ok"} in ${
                r.seconds.toFixed(1)
              } s → ${r.html ?? r.executed}\n`,
            ),
        });
        print(
          `${runs.length} notebooks in ${
            ((performance.now() - t0) / 1000).toFixed(1)
          } s; figures in out/figures/\n`,
        );
      } catch (e) {
        if (e instanceof NotebookError) {
          printErr(e.message + "\n");
          throw new CommanderError(1, "kvlab.report", "");
        }
        throw e;
      }
    });

  program.command("compare")
    .description(
      "Compare each arm with a baseline per test: medians over repetitions, ratio with a 95% " +
        "bootstrap interval, and a verdict (better / worse / no difference).",
    )
    .requiredOption("--data <dir>", "dataset directory")
    .requiredOption(
      "--by <column>",
      "column whose values are the arms: server, label, server_version, …",
    )
    .requiredOption("--baseline <value>", "the baseline arm")
    .option(
      "--metric <column>",
      "metric: ops_per_sec, p50_latency_ms, p99_latency_ms, …",
      "ops_per_sec",
    )
    .option("--format <format>", "md, csv or json", "md")
    .action((opts) => {
      const format = tableFormat(opts.format);
      const c = compare(loadResults(opts.data), {
        by: opts.by,
        baseline: opts.baseline,
        metric: opts.metric,
      });
      print(formatForPeople(format === "md" ? compactCompare(c, opts.metric) : c, format));
    });

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
    .option("--format <format>", "md, csv or json", "md")
    .action((opts) => {
      const format = tableFormat(opts.format);
      const d = delta(loadResults(opts.data), {
        dimension: opts.dimension,
        from: opts.from,
        to: opts.to,
      });
      print(formatForPeople(d, format));
    });

  program.command("plot")
    .description("Draw a chart of a dataset and save it (.svg, .png, .html or .vl.json).")
    .argument("<kind>", "throughput, ratio, latency, scaling or delta")
    .requiredOption("--data <dir>", "dataset directory")
    .requiredOption("-o, --output <file>", "output file; the extension picks the format")
    .option("--by <column>", "arms", "server")
    .option("--baseline <value>", "baseline arm (ratio, scaling crossovers)")
    .option("--candidate <value>", "arm that may overtake the baseline (scaling)")
    .option("--metric <column>", "metric", "ops_per_sec")
    .option("--x <column>", "x of a scaling curve", "clients")
    .option("--dimension <column>", "dimension of a delta")
    .option("--from <value>", "delta: value before")
    .option("--to <value>", "delta: value after")
    .option("--title <text>", "chart title")
    .action(async (kind: string, opts) => {
      if (!["throughput", "ratio", "latency", "scaling", "delta"].includes(kind)) {
        throw new TypeError(
          `invalid chart kind: ${kind} (expected throughput, ratio, latency, scaling or delta)`,
        );
      }
      chartFormat(opts.output);
      const results = loadResults(opts.data);
      let spec: VegaLiteSpec;
      switch (kind) {
        case "throughput":
          spec = throughputChart(results, { by: opts.by, metric: opts.metric, title: opts.title });
          break;
        case "ratio":
          if (!opts.baseline) throw new TypeError("ratio needs --baseline");
          spec = ratioChart(
            compare(results, { by: opts.by, baseline: opts.baseline, metric: opts.metric }),
            {
              by: opts.by,
              title: opts.title,
            },
          );
          break;
        case "latency": {
          const runs = loadTable(opts.data, "runs").select("run_id", opts.by);
          const dist = loadTable(opts.data, "latency_distribution").join(runs, { on: "run_id" });
          spec = latencyChart(latencySpectrum(dist, { by: [opts.by] }), {
            by: opts.by,
            title: opts.title,
          });
          break;
        }
        case "scaling": {
          const curve = scaling(results, { x: opts.x, by: opts.by, metric: opts.metric });
          const cross = opts.baseline && opts.candidate
            ? crossovers(results, {
              x: opts.x,
              by: opts.by,
              metric: opts.metric,
              baseline: opts.baseline,
              candidate: opts.candidate,
            })
            : undefined;
          spec = scalingChart(curve, {
            x: opts.x,
            by: opts.by,
            metric: opts.metric,
            crossovers: cross,
            title: opts.title,
          });
          break;
        }
        case "delta":
          if (!opts.dimension || opts.from === undefined || opts.to === undefined) {
            throw new TypeError("delta needs --dimension, --from and --to");
          }
          spec = deltaChart(
            delta(results, { dimension: opts.dimension, from: opts.from, to: opts.to }),
            { title: opts.title },
          );
          break;
        default:
          throw new TypeError(
            `invalid chart kind: ${kind} (expected throughput, ratio, latency, scaling or delta)`,
          );
      }
      await saveChart(spec, opts.output);
      print(`wrote ${opts.output}\n`);
    });

  program.command("run")
    .description(
      "Run a study plan (YAML or JSON; see examples/plan.yaml) against live servers, storing one " +
        "run per cell. Re-running skips complete cells and redoes incomplete or failed ones.",
    )
    .argument("<plan>", "plan file")
    .requiredOption("--data <dir>", "dataset directory (created if missing)")
    .option("--dry-run", "print every command, run nothing")
    .action(async (planPath: string, opts) => {
      const plan = parsePlan(Deno.readTextFileSync(planPath), planPath);
      const result = await runStudy(plan, opts.data, Boolean(opts.dryRun), print);
      if (result.interrupted) throw new CommanderError(130, "kvlab.run", "");
      if (result.failed > 0 || result.incomplete > 0) throw new CommanderError(1, "kvlab.run", "");
    });

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
    .action(async (opts) => {
      const ac = new AbortController();
      const onSignal = () => ac.abort();
      for (const sig of ["SIGINT", "SIGTERM"] as Deno.Signal[]) {
        Deno.addSignalListener(sig, onSignal);
      }
      try {
        const r = await runMemorySampler({
          data: opts.data,
          target: parseServerUrl(opts.url),
          intervalMs: seconds("--interval", opts.interval) * 1000,
          durationS: seconds("--duration", opts.duration),
          container: opts.container,
          label: opts.label,
          signal: ac.signal,
          onSample: (row) =>
            print(
              `  ${
                Number(row.elapsed_s).toFixed(1)
              } s: ${row.keys} keys, used_memory ${row.used_memory_bytes} B, rss ${row.used_memory_rss_bytes} B\n`,
            ),
        });
        print(
          `${r.status}: ${r.steps} samples, run ${r.runId}${r.reason ? ` (${r.reason})` : ""}${
            r.dockerError ? ` (${r.dockerError})` : ""
          }\n`,
        );
        if (r.status === "failed") throw new CommanderError(1, "kvlab.sample", "");
      } finally {
        for (const sig of ["SIGINT", "SIGTERM"] as Deno.Signal[]) {
          Deno.removeSignalListener(sig, onSignal);
        }
      }
    });

  program.command("demo")
    .description(
      "Start a throwaway redis-server on a free loopback port, run the bundled small plan " +
        "(data/plans/demo.yaml), stop the server, and print the results table. Without " +
        "redis-server, ingest the bundled sample outputs instead.",
    )
    .option("--data <dir>", "dataset directory", REPO + "data/demo")
    .option("--samples <dir>", "folder of <server>-<version>/ folders", REPO + "data/samples")
    .action(async (opts) => {
      let server;
      try {
        server = await startLocalServer();
      } catch (e) {
        if (!(e instanceof ToolNotFoundError)) throw e;
        printErr(
          "redis-server is not installed, so the demo cannot run live. Install it with\n" +
            "  sudo apt-get update && sudo apt-get install -y redis-server redis-tools\n" +
            "Ingesting the bundled sample outputs instead.\n\n",
        );
        await demoFromSamples(opts.data, opts.samples, print);
        return;
      }
      let result: StudyResult;
      const plan = parsePlan(
        Deno.readTextFileSync(REPO + "data/plans/demo.yaml"),
        "data/plans/demo.yaml",
      );
      // a fresh dataset each time: the demo measures this machine now
      const data = `${opts.data}/${
        new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")
      }`;
      try {
        const target = parseServerUrl(server.url);
        const live: StudyPlan = {
          ...plan,
          servers: [{ name: "redis", url: target.display, target }],
        };
        print(
          `redis-server started on 127.0.0.1:${server.port} (pid ${server.pid}); dataset ${data}\n`,
        );
        result = await runStudy(live, data, false, print);
      } finally {
        await server.stop();
        print(`redis-server (pid ${server.pid}) stopped\n`);
      }
      const df = loadResults(data).sort(["test_index", "run_id"]);
      print(`\nresults (${df.height} tests):\n\n`);
      print(formatForPeople(df.select(...LIVE_COLUMNS), "md", { headers: false }));
      if (result.interrupted) throw new CommanderError(130, "kvlab.demo", "");
      if (result.failed > 0 || result.incomplete > 0) throw new CommanderError(1, "kvlab.demo", "");
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
