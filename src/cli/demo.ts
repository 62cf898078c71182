/**
 * `kvlab demo`: throwaway local servers (redis-server, and valkey-server when it is installed),
 * the bundled small plan, then Valkey against Redis (the `compare` table and a summary page
 * under the dataset) or, with Redis alone, the results table; without redis-server, the bundled
 * sample outputs ingested instead.
 *
 * @module
 */

import type { Command, OptionValues } from "commander";
import { loadResults } from "../analyze/load.ts";
import { formatForPeople } from "../analyze/present.ts";
import { ingestPaths } from "../collect/ingest/ingest.ts";
import { parsePlan, type StudyPlan } from "../collect/plan/plan.ts";
import { ToolNotFoundError } from "../collect/process.ts";
import { type LocalServer, startLocalServer } from "../collect/redis_server.ts";
import type { StudyResult } from "../collect/plan/study.ts";
import { parseServerUrl } from "../collect/target.ts";
import { findTool } from "../collect/tools/find.ts";
import { compare, verdictSummary } from "../analyze/compare/compare.ts";
import { adviceSummary } from "../analyze/compare/advice.ts";
import { cellCounts, fewRunsWarning } from "../analyze/environment.ts";
import { exitForStudy, type Output, readOptions } from "./_exit.ts";
import { REPO } from "./_options.ts";
import { describeOutcome } from "./ingest.ts";
import { runStudy } from "./run.ts";
import { untilSettings } from "./_rounds.ts";
import type { UntilDecidedResult } from "./_until_decided.ts";
import { peopleFormat, tableText } from "./_tables.ts";
import { compactCompare } from "./compare.ts";
import { summaryCommand, summaryTables } from "./summary.ts";

/** Where `kvlab demo` writes and what it falls back to. */
export interface DemoCommandOptions {
  /** Dataset directory; a live demo adds a fresh timestamped folder. @default {"<repo>/data/demo"} */
  data: string;
  /** Folder of `<server>-<version>/` folders of outputs. @default {"<repo>/data/samples"} */
  samples: string;
}

/**
 * Reads `kvlab demo`'s options (commander fills in the defaults).
 *
 * @param raw Commander's option values.
 * @returns The typed options.
 *
 * @example
 * ```ts
 * import { demoOptions } from "./demo.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(demoOptions({ data: "d", samples: "s" }), { data: "d", samples: "s" });
 * ```
 */
export function demoOptions(raw: OptionValues): DemoCommandOptions {
  return { data: String(raw.data), samples: String(raw.samples) };
}

/** The measured columns both demo tables end with. */
const MEASURED = ["ops_per_sec", "avg_latency_ms", "p50_latency_ms", "p99_latency_ms", "status"];

/** The columns of the live demo's table. */
const LIVE_COLUMNS = [
  "server",
  "server_version",
  "tool_version",
  "repetition",
  "test",
  "clients",
  "requests",
  ...MEASURED,
];

/** The columns of the samples demo's table. */
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
  ...MEASURED,
];

/** The demo without redis-server: ingest data/samples/<server>-<version>/. */
async function demoFromSamples(o: DemoCommandOptions, out: Output): Promise<void> {
  const print = out.print;
  const folders = [...Deno.readDirSync(o.samples)].filter((e) => e.isDirectory).map((e) => e.name)
    .sort();
  for (const folder of folders) {
    const m = /^([a-z]+)-(\d[\w.]*)$/.exec(folder);
    await ingestPaths([`${o.samples}/${folder}`], {
      data: o.data,
      server: m?.[1] ?? folder,
      serverVersion: m?.[2],
      label: "demo",
    }, (f) => print(describeOutcome(f) + "\n"));
  }
  const df = loadResults(o.data).sort(["server", "output_format", "test_index"]);
  print(`\nresults in ${o.data} (${df.height} tests):\n\n`);
  print(formatForPeople(df.select(...SUMMARY_COLUMNS), peopleFormat(undefined, out.isTerminal), {
    headers: false,
  }));
}

/** A server the demo started: the plan's server name, and the server. */
interface DemoServer {
  name: string;
  server: LocalServer;
}

/**
 * Starts redis-server and, when it is installed, valkey-server (each on a free loopback port).
 *
 * @returns The servers started, redis first; none when redis-server is not installed.
 */
async function startDemoServers(out: Output): Promise<DemoServer[]> {
  const started: DemoServer[] = [];
  try {
    started.push({ name: "redis", server: await startLocalServer() });
  } catch (e) {
    if (e instanceof ToolNotFoundError) return started;
    throw e;
  }
  const valkey = findTool("valkey-server");
  if (valkey === null) {
    out.printErr(
      "valkey-server is not installed (on PATH or in ~/.cache/kvlab/tools/; ./kvlab demo builds " +
        "it from ../shared/vendor/ when that folder is there): the demo runs Redis alone.\n",
    );
    return started;
  }
  try {
    started.push({ name: "valkey", server: await startLocalServer({ program: valkey }) });
  } catch (e) {
    for (const s of started) await s.server.stop();
    throw e;
  }
  return started;
}

/** The demo plan with the started servers' URLs; servers that did not start are left out. */
function demoPlan(servers: readonly DemoServer[]): StudyPlan {
  const plan = parsePlan(
    Deno.readTextFileSync(REPO + "data/plans/demo.yaml"),
    "data/plans/demo.yaml",
  );
  const live = plan.servers.flatMap((s) => {
    const started = servers.find((d) => d.name === s.name);
    if (!started) return [];
    const target = parseServerUrl(started.server.url);
    return [{ ...s, url: target.display, target }];
  });
  return { ...plan, servers: live };
}

/**
 * Prints valkey against redis (`compare` by label, baseline redis) and writes the summary page
 * under the dataset.
 */
async function printComparison(
  data: string,
  out: Output,
  o: { table: boolean },
): Promise<void> {
  const tables = summaryTables(data); // read once: the comparison, then the summary page
  const results = tables.results;
  if (o.table) {
    const c = compare(results, { by: "label", baseline: "redis" });
    out.print(`\nvalkey against redis, per test and client count (compare --by label):\n\n`);
    out.print(tableText(c, peopleFormat(undefined, out.isTerminal), compactCompare));
    out.print(`\n${verdictSummary(c)}\n`);
    const advice = adviceSummary(c);
    if (advice) out.print(`${advice}\n`);
    const warning = fewRunsWarning(cellCounts(results, "label"));
    if (warning) out.print(`\n${warning}\n`);
  }
  out.print("\n");
  await summaryCommand(
    {
      data,
      by: "label",
      baseline: "redis",
      output: `${data}/summary`,
      title: "kvlab demo: Valkey against Redis on this machine",
    },
    out,
    tables,
  );
}

/**
 * What the demo says when no cell was decided within its budget (issue 36): that this machine
 * is too noisy for it, the runs per arm the cells would need, and the doctor hint, instead of a
 * table of inconclusive rows.
 *
 * @param r The run until decided.
 * @returns The lines.
 */
function tooNoisy(r: UntilDecidedResult): string {
  const need = r.decisions.flatMap((d) => d.runsNeeded === null ? [] : [d.runsNeeded]);
  const range = need.length === 0
    ? ""
    : ` the ${r.decisions.length} cells would need ${Math.min(...need)}–${Math.max(...need)} ` +
      "runs per arm to tell ±5 % (80 % power);";
  return `\nThis machine is too noisy to decide anything within the demo's budget:${range} ` +
    "`kvlab doctor` says what disturbs it (steal, other processes, frequency scaling). The " +
    "summary page below has the runs.\n";
}

/** Prints the results of a one-server demo, one row per test. */
function printResults(data: string, out: Output): void {
  const df = loadResults(data).sort(["test_index", "run_id"]);
  out.print(`\nresults (${df.height} tests):\n\n`);
  out.print(formatForPeople(df.select(...LIVE_COLUMNS), peopleFormat(undefined, out.isTerminal), {
    headers: false,
  }));
}

/**
 * Runs the demo live: redis-server, and valkey-server when installed, the bundled small plan,
 * then the comparison of the two (and the summary page) or, with Redis alone, the results.
 * Without redis-server, the bundled samples are ingested instead.
 *
 * @param o The dataset and samples folders.
 * @param out Where to print.
 * @throws {CommanderError} Exit code 130 when interrupted, 1 when a cell failed or is incomplete.
 */
export async function demoCommand(o: DemoCommandOptions, out: Output): Promise<void> {
  const servers = await startDemoServers(out);
  if (servers.length === 0) {
    out.printErr(
      "redis-server is not installed, so the demo cannot run live. Install it with\n" +
        "  sudo apt-get update && sudo apt-get install -y redis-server redis-tools\n" +
        "Ingesting the bundled sample outputs instead.\n\n",
    );
    await demoFromSamples(o, out);
    return;
  }
  let result: StudyResult & { decided?: UntilDecidedResult };
  // a fresh dataset each time: the demo measures this machine now
  const data = `${o.data}/${new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}`;
  try {
    for (const { name, server } of servers) {
      out.print(`${name} started on 127.0.0.1:${server.port} (pid ${server.pid})\n`);
    }
    out.print(`dataset ${data}\n`);
    const plan = demoPlan(servers);
    // issue 36: rounds until each cell is decided, within the plan's budget (two servers)
    const untilDecided = plan.servers.length > 1 ? untilSettings(plan, undefined) : undefined;
    result = await runStudy(plan, { data, dryRun: false, untilDecided }, out);
  } finally {
    for (const { name, server } of servers) {
      await server.stop();
      out.print(`${name} (pid ${server.pid}) stopped\n`);
    }
  }
  const complete = !result.interrupted && result.failed === 0 && result.incomplete === 0;
  const undecided = result.decided?.decisions.every((d) => d.verdict === "inconclusive");
  if (servers.length === 2 && complete) {
    if (undecided) out.print(tooNoisy(result.decided!));
    await printComparison(data, out, { table: !undecided });
  } else printResults(data, out);
  exitForStudy(result, "demo");
}

/**
 * Declares `kvlab demo`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link demoCommand} does the work.
 */
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
