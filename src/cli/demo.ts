/**
 * `kvlab demo`: a throwaway redis-server, the bundled small plan, the results table; without
 * redis-server, the bundled sample outputs ingested instead.
 *
 * @module
 */

import type { OptionValues } from "commander";
import { loadResults } from "../analyze/load.ts";
import { formatForPeople } from "../analyze/present.ts";
import { ingestPaths } from "../collect/ingest.ts";
import { parsePlan, type StudyPlan } from "../collect/plan.ts";
import { ToolNotFoundError } from "../collect/process.ts";
import { startLocalServer } from "../collect/redis_server.ts";
import type { StudyResult } from "../collect/study.ts";
import { parseServerUrl } from "../collect/target.ts";
import { exitForStudy, type Output } from "./_exit.ts";
import { REPO } from "./_options.ts";
import { describeOutcome } from "./ingest.ts";
import { runStudy } from "./run.ts";
import { peopleFormat } from "./_tables.ts";

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

/**
 * Runs the demo live when redis-server is installed, else from the samples.
 *
 * @param o The dataset and samples folders.
 * @param out Where to print.
 * @throws {CommanderError} Exit code 130 when interrupted, 1 when a cell failed or is incomplete.
 */
export async function demoCommand(o: DemoCommandOptions, out: Output): Promise<void> {
  let server;
  try {
    server = await startLocalServer();
  } catch (e) {
    if (!(e instanceof ToolNotFoundError)) throw e;
    out.printErr(
      "redis-server is not installed, so the demo cannot run live. Install it with\n" +
        "  sudo apt-get update && sudo apt-get install -y redis-server redis-tools\n" +
        "Ingesting the bundled sample outputs instead.\n\n",
    );
    await demoFromSamples(o, out);
    return;
  }
  let result: StudyResult;
  const plan = parsePlan(
    Deno.readTextFileSync(REPO + "data/plans/demo.yaml"),
    "data/plans/demo.yaml",
  );
  // a fresh dataset each time: the demo measures this machine now
  const data = `${o.data}/${new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}`;
  try {
    const target = parseServerUrl(server.url);
    const live: StudyPlan = { ...plan, servers: [{ name: "redis", url: target.display, target }] };
    out.print(
      `redis-server started on 127.0.0.1:${server.port} (pid ${server.pid}); dataset ${data}\n`,
    );
    result = await runStudy(live, data, false, out);
  } finally {
    await server.stop();
    out.print(`redis-server (pid ${server.pid}) stopped\n`);
  }
  const df = loadResults(data).sort(["test_index", "run_id"]);
  out.print(`\nresults (${df.height} tests):\n\n`);
  out.print(formatForPeople(df.select(...LIVE_COLUMNS), peopleFormat(undefined, out.isTerminal), {
    headers: false,
  }));
  exitForStudy(result, "demo");
}
