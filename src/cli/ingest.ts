/**
 * `kvlab ingest`: parse raw outputs and transcripts into a dataset, one line per file.
 *
 * @module
 */

import type { Command, OptionValues } from "commander";
import { type FileOutcome, type IngestOptions, ingestPaths } from "../collect/ingest/ingest.ts";
import { exitWith, type Output, readOptions, withStopSignals } from "./_exit.ts";
import { DiskFullError } from "../system/disk.ts";
import { collectTag, datasetOption, optionalString } from "./_options.ts";

/** What `kvlab ingest` does. */
export interface IngestCommandOptions {
  /** Files or folders (walked recursively). */
  paths: string[];
  /** The dataset and the labels stored on every run. */
  ingest: IngestOptions;
}

/** `--label-from`: headings (the default) or none. */
function labelFromOption(raw: unknown): "headings" | "none" {
  const v = String(raw ?? "headings");
  if (v !== "headings" && v !== "none") {
    throw new TypeError(`invalid --label-from: ${v} (expected headings or none)`);
  }
  return v;
}

/**
 * Reads `kvlab ingest`'s arguments and commander's options.
 *
 * @param paths The positional paths.
 * @param raw Commander's option values.
 * @returns The typed options.
 *
 * @example
 * ```ts
 * import { ingestOptions } from "./ingest.ts";
 * import assert from "node:assert/strict";
 * const o = ingestOptions(["a.txt"], { data: "ds", server: "valkey", tag: { host: "lab1" } });
 * assert.deepEqual(o.ingest.tags, { host: "lab1" });
 * assert.equal(o.ingest.serverVersion, undefined);
 * ```
 */
export function ingestOptions(paths: string[], raw: OptionValues): IngestCommandOptions {
  return {
    paths,
    ingest: {
      data: datasetOption(raw.data),
      label: optionalString(raw.label),
      labelFrom: labelFromOption(raw.labelFrom),
      server: optionalString(raw.server),
      serverVersion: optionalString(raw.serverVersion),
      tool: optionalString(raw.tool),
      toolVersion: optionalString(raw.toolVersion),
      tags: raw.tag ?? {},
    },
  };
}

/**
 * One line about one ingested file (two when its bytes were ingested before under other
 * labels).
 *
 * @param o The outcome of one file.
 * @returns The text, without a final newline.
 *
 * @example
 * ```ts
 * import { describeOutcome } from "./ingest.ts";
 * import assert from "node:assert/strict";
 * assert.equal(
 *   describeOutcome({ path: "a.txt", status: "duplicate", runs: [], skipped: [], duplicateOf: ["r1"] }),
 *   "duplicate a.txt: same bytes already ingested as run r1",
 * );
 * ```
 */
export function describeOutcome(o: FileOutcome): string {
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
      const n = o.with?.length ?? 0;
      const group = n ? ` (with ${n} other file${n === 1 ? "" : "s"} of its memtier run)` : "";
      return `ingested ${o.path}${group}: ${o.runs.length} run${o.runs.length === 1 ? "" : "s"} ` +
        `(${st}), ` +
        `${tests} test${tests === 1 ? "" : "s"}` +
        (warnings ? `, ${warnings} warnings in run.json` : "") +
        (o.skipped.length ? `, ${o.skipped.length} blocks skipped` : "") + same;
    }
  }
}

/**
 * Ingests the paths, printing one line per file (errors to stderr).
 *
 * @param o What to ingest and the labels to store.
 * @param out Where to print.
 * @throws {CommanderError} Exit code 1 when a file could not be ingested.
 */
export async function ingestCommand(o: IngestCommandOptions, out: Output): Promise<void> {
  let failed = 0;
  /** What kvlab saw but did not read, over every file: listed again at the end. */
  const unread: string[] = [];
  let stopped = false;
  let diskFull = false;
  try {
    // Ctrl-C / SIGTERM / SIGHUP: the files done so far are committed, the one being read is not
    await withStopSignals((signal) => {
      signal.addEventListener("abort", () => stopped = true);
      return ingestPaths(o.paths, { ...o.ingest, signal }, (f) => {
        if (f.status === "error") {
          failed++;
          // a full disk is said once (every file of the batch fails with it)
          const again = diskFull && f.error instanceof DiskFullError;
          diskFull ||= f.error instanceof DiskFullError;
          out.printErr(
            again ? `error ${f.path}: not ingested (disk full)\n` : describeOutcome(f) + "\n",
          );
        } else {
          out.print(describeOutcome(f) + "\n");
        }
        for (const s of f.skipped) {
          if (!s.reason) continue;
          out.print(`  skipped: ${s.reason}\n`);
          unread.push(s.reason);
        }
      });
    });
  } catch (e) {
    if (!(diskFull && e instanceof DiskFullError)) out.printErr(`error ${(e as Error).message}\n`);
    failed++;
  }
  if (unread.length > 0) {
    // nothing dropped silently: every block of tool output (or tool command) that made no run
    out.print(
      `\n${unread.length} block${unread.length === 1 ? "" : "s"} of tool output or commands ` +
        `not read:\n` + unread.map((r) => `  ${r}\n`).join(""),
    );
  }
  if (failed > 0) {
    out.printErr(`${failed} file${failed === 1 ? "" : "s"} could not be ingested\n`);
    exitWith(1, "ingest");
  }
  if (stopped) {
    out.printErr("interrupted: the files listed above are ingested; run again for the rest\n");
    exitWith(130, "ingest");
  }
}

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
    .option(
      "--label-from <how>",
      "headings: a paste's headings and label lines (# Redka, --- memix, Rust:) split it into " +
        "runs and label them (unless --label is given); none: they do not",
      "headings",
    )
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
