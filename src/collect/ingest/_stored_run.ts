/**
 * What ingest stores of a run a format read: the labels a user gives ({@link IngestOptions}),
 * and the `runs` row, tables and manifest of a {@link FormatRun} with every text the format kept
 * redacted. Shared by the block assembler (`_run.ts`) and the runs of a tool's file set
 * (`_file_set.ts`).
 *
 * @module
 */

import type { DatasetRef } from "../../store/dataset.ts";
import type { RunInput, RunRecord } from "../../store/writer.ts";
import type { MemoryRow } from "../../schema.ts";
import { redactCommandLine, redactText } from "../../text/redact.ts";
import type { FormatRun } from "../formats/format.ts";
import { runRow } from "../_rows.ts";

/** Options of `ingestFile` and `ingestPaths` (re-exported by `ingest.ts`). */
export interface IngestOptions {
  /** The dataset (or its directory). */
  data: DatasetRef;
  /** Label stored on every run (else a run's heading, see {@link labelFrom}). */
  label?: string;
  /**
   * Whether a paste's headings and label lines (`# Redka`, `--- memix`, `Rust:`) split it into
   * runs and become their labels (`headings`), or not (`none`).
   * @default {"headings"}
   */
  labelFrom?: "headings" | "none";
  /**
   * Server name (redis, valkey, dragonfly, keydb, …) stored on every run.
   * @default {"unknown"}
   */
  server?: string;
  /** Server version stored on every run. */
  serverVersion?: string;
  /** Tool name, for outputs whose command is not known (otherwise taken from the file name). */
  tool?: string;
  /** Tool version. */
  toolVersion?: string;
  /** User tags stored as JSON on every run. */
  tags?: Record<string, string>;
  /**
   * The clock, for `ingested_at` and run ids.
   * @default {() => new Date()}
   */
  now?: () => Date;
  /**
   * Stops ingest between files (and abandons the file being read): what is complete is
   * committed, the rest is left for a retry.
   */
  signal?: AbortSignal;
}

/** One run written from a file. */
export interface IngestedRun {
  runId: string;
  status: "complete" | "incomplete" | "failed";
  tool: string;
  tests: number;
  /** First line of the run's block in the file. */
  line: number;
  warnings: number;
}

/** Where a run came from, besides what its format read. */
export interface RunOrigin {
  runId: string;
  options: IngestOptions;
  now: Date;
  /** The command typed before it, when there was one. */
  command?: { text: string; tool: string | undefined; host: string | undefined; prompt: string };
  /** The tool and version its file's name gives. */
  fromName: { tool?: string; version?: string };
  /** Its file, and the block's lines in it (null for a run of whole files). */
  source: { path: string; sha: string; firstLine: number | null; lastLine: number | null };
  /** When a `script(1)` banner says the capture started. */
  startedAt?: Date | null;
  /** Lines of its file before its block, for a run that is a block of a file. */
  rawLineOffset?: number;
  /** SHA-256 of the block's bytes as they are in the file. */
  rawSha256?: string;
  /** The heading or label line above the run in its file. */
  heading?: string;
}

/**
 * Every string of a manifest value, redacted (objects and arrays walked, other values kept).
 *
 * @param value A manifest field.
 * @returns It, redacted.
 *
 * @example
 * ```ts
 * import { redactDeep } from "./_stored_run.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(redactDeep([{ line: 3, text: "redis-cli -a secret ping" }]), [
 *   { line: 3, text: "redis-cli -a *** ping" },
 * ]);
 * ```
 */
export function redactDeep(value: unknown): unknown {
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)]));
  }
  return value;
}

/**
 * The `runs` row of a run a format read: what the format says wins over the user's labels where
 * the text knows better (an INFO names its server), the user's labels over the file's name.
 *
 * @param run The format's run.
 * @param o Where it came from.
 * @returns The row.
 */
export function formatRunRow(run: FormatRun, o: RunOrigin): RunInput {
  const options = o.options;
  const facts = run.facts ?? {};
  const cmd = o.command;
  const row = runRow({
    run_id: o.runId,
    tool: run.tool ?? cmd?.tool ?? options.tool ?? o.fromName.tool ?? "unknown",
    tool_version: options.toolVersion ?? facts.toolVersion ??
      (cmd ? null : o.fromName.version ?? null),
    command: cmd ? redactCommandLine(cmd.text) : null,
    server: facts.server ?? options.server ?? "unknown",
    server_version: facts.serverVersion ?? options.serverVersion ?? null,
    host: cmd?.host ?? null,
    target: facts.target ?? null,
    transport: facts.transport ?? "tcp",
    label: options.label ?? (o.heading === undefined ? null : redactText(o.heading)),
    tags: options.tags,
    started_at: o.startedAt ?? facts.startedAt ?? null,
    ingested_at: o.now,
    status: run.status,
    output_format: run.outputFormat,
    error: run.error === null ? null : redactText(run.error),
    warning_count: run.warnings.length,
    source_path: o.source.path,
    source_sha256: o.source.sha,
    source_line_start: o.source.firstLine,
    source_line_end: o.source.lastLine,
  });
  if (o.rawSha256 !== undefined) row.raw_sha256 = o.rawSha256;
  return row;
}

/**
 * The record a run is committed with: its row, the format's tables and memory rows, and a
 * manifest with the format's fields and warnings, redacted.
 *
 * @param run The format's run.
 * @param o Where it came from, and `memory`, its `memory` rows already made.
 * @returns The record (no raw files: ingest stores its file's copy apart).
 */
export function formatRunRecord(
  run: FormatRun,
  o: RunOrigin & { memory: MemoryRow[] },
): RunRecord {
  const tables: RunRecord["tables"] = { ...run.tables };
  if (o.memory.length > 0) tables.memory = o.memory;
  return {
    run: formatRunRow(run, o),
    tables,
    raw: [],
    manifest: {
      ...(o.rawLineOffset === undefined
        ? {}
        : { raw_line_offset: o.rawLineOffset, prompt: o.command?.prompt ?? null }),
      ...(redactDeep(run.manifest ?? {}) as Record<string, unknown>),
      warnings: redactDeep(run.warnings),
    },
  };
}

/**
 * What the caller reports of a stored run.
 *
 * @param run The format's run.
 * @param o Its id, tool (as stored) and first line.
 * @returns The run, for progress and outcomes.
 */
export function ingestedRun(
  run: FormatRun,
  o: { runId: string; tool: string; line: number },
): IngestedRun {
  return {
    runId: o.runId,
    status: run.status,
    tool: o.tool,
    tests: run.tests,
    line: o.line,
    warnings: run.warnings.length,
  };
}
