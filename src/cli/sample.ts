/**
 * `kvlab sample`: sample a server's memory every interval for a bounded time, as one run.
 *
 * @module
 */

import type { Dataset } from "../store/dataset.ts";
import type { Command, OptionValues } from "commander";
import { runMemorySampler } from "../collect/memory/sweep.ts";
import { parseServerUrl, type ServerTarget } from "../collect/target.ts";
import { exitWith, type Output, readOptions, withStopSignals } from "./_exit.ts";
import { datasetOption, optionalString } from "./_options.ts";
import { limited, LIMITS } from "../collect/limits.ts";

/** What `kvlab sample` samples. */
export interface SampleCommandOptions {
  /** The server. */
  target: ServerTarget;
  /** The dataset of `--data`, opened once. */
  data: Dataset;
  /** Seconds between samples. @default {1} */
  intervalS: number;
  /** Seconds to sample for. */
  durationS: number;
  /** Docker container of the server. */
  container?: string;
  /** Label stored on the run. */
  label?: string;
}

/**
 * Reads `kvlab sample`'s options: the URL, then the interval, then the duration.
 *
 * @param raw Commander's option values (defaults filled in).
 * @returns The typed options.
 * @throws {TypeError} For a bad URL.
 * @throws {RangeError} For an interval or a duration outside its limit (`invalid --duration: 0
 * (expected seconds above 0 and at most 86400)`).
 *
 * @example
 * ```ts
 * import { sampleOptions } from "./sample.ts";
 * import assert from "node:assert/strict";
 * const o = sampleOptions({ url: "redis://127.0.0.1:6379", data: "ds", interval: "0.5", duration: "3" });
 * assert.deepEqual([o.intervalS, o.durationS, o.container], [0.5, 3, undefined]);
 * assert.throws(
 *   () => sampleOptions({ url: "redis://127.0.0.1:6379", data: "ds", interval: "abc", duration: "3" }),
 *   /invalid --interval: abc/,
 * );
 * assert.throws(
 *   () => sampleOptions({ url: "redis://127.0.0.1:6379", data: "ds", interval: "1", duration: "0" }),
 *   /invalid --duration: 0 \(expected seconds above 0 and at most 86400\)/,
 * );
 * ```
 */
export function sampleOptions(raw: OptionValues): SampleCommandOptions {
  return {
    target: parseServerUrl(String(raw.url)),
    data: datasetOption(raw.data),
    // within limits before any connection, named as typed (`../collect/limits.ts`)
    intervalS: limited("--interval", raw.interval, LIMITS.sampleInterval),
    durationS: limited("--duration", raw.duration, LIMITS.sampleDuration),
    container: optionalString(raw.container),
    label: optionalString(raw.label),
  };
}

/**
 * Samples until the duration ends or SIGINT / SIGTERM, printing one line per sample and a
 * summary.
 *
 * @param o The server, the dataset, the timing.
 * @param out Where to print.
 * @throws {CommanderError} Exit code 1 when the run failed.
 */
export async function sampleCommand(o: SampleCommandOptions, out: Output): Promise<void> {
  const r = await withStopSignals((signal) =>
    runMemorySampler({
      data: o.data,
      target: o.target,
      intervalMs: o.intervalS * 1000,
      durationS: o.durationS,
      container: o.container,
      label: o.label,
      signal,
      onSample: (row) =>
        out.print(
          `  ${
            Number(row.elapsed_s).toFixed(1)
          } s: ${row.keys} keys, used_memory ${row.used_memory_bytes} B, rss ${row.used_memory_rss_bytes} B\n`,
        ),
    })
  );
  out.print(
    `${r.status}: ${r.steps} samples, run ${r.runId}${r.reason ? ` (${r.reason})` : ""}${
      r.dockerError ? ` (${r.dockerError})` : ""
    }\n`,
  );
  if (r.rssNote) out.printErr(`warning: ${r.rssNote}\n`);
  if (r.status === "failed") exitWith(1, "sample");
}

/**
 * Declares `kvlab sample`: its arguments, options and help, for the registry of `src/cli.ts`;
 * {@link sampleCommand} does the work.
 */
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
