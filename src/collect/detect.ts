/**
 * Recognizes what a text is, from its first lines: used to choose a parser and to say, in an
 * error, what a file looks like when kvlab cannot ingest it.
 *
 * @module
 */

import { looksBinary, segments } from "./_lines.ts";

/** Kinds of text kvlab recognizes. */
export type DetectedKind =
  | "redis-benchmark"
  | "transcript"
  | "memtier_benchmark"
  | "memtier_benchmark-json"
  | "hdr-histogram"
  | "redis-info"
  | "docker-stats"
  | "redis-cli-latency"
  | "binary"
  | "empty"
  | "unknown";

/** Formats `kvlab ingest` can read today, in words, for error messages. */
export const KNOWN_FORMATS =
  "redis-benchmark / valkey-benchmark output (default report ≤6.0 or 6.2+, -q, --csv), " +
  "a shell transcript with `$ redis-benchmark …` commands, or one INFO, docker stats, DBSIZE " +
  "or redis-cli --latency capture";

/**
 * The tools whose output `kvlab ingest --tool` can be told a file holds: the one list that
 * both the check and its error message read. A tool becomes ingestible by a line here.
 */
export const INGEST_TOOLS = ["redis-benchmark", "valkey-benchmark"] as const;

/** A tool `kvlab ingest --tool` accepts. */
export type IngestTool = typeof INGEST_TOOLS[number];

/**
 * Checks a `--tool` given to ingest.
 *
 * @param tool The tool name as given.
 * @returns It, typed.
 * @throws {TypeError} `invalid tool: …` naming the tools ingest reads.
 *
 * @example
 * ```ts
 * import { ingestTool } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(ingestTool("valkey-benchmark"), "valkey-benchmark");
 * assert.throws(() => ingestTool("memtier"), /invalid tool: memtier \(ingest reads output of redis-benchmark or valkey-benchmark\)/);
 * ```
 */
export function ingestTool(tool: string): IngestTool {
  if ((INGEST_TOOLS as readonly string[]).includes(tool)) return tool as IngestTool;
  const all: readonly string[] = INGEST_TOOLS;
  const names = all.length === 1 ? all[0] : `${all.slice(0, -1).join(", ")} or ${all.at(-1)}`;
  throw new TypeError(`invalid tool: ${tool} (ingest reads output of ${names})`);
}

/**
 * Guesses the kind of a text from a sample of its start.
 *
 * @example
 * ```ts
 * import { detectKind } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(detectKind('"test","rps","avg_latency_ms"\n'), "redis-benchmark");
 * assert.equal(detectKind("$ redis-cli info\n# Server\n"), "transcript");
 * assert.equal(detectKind("ALL STATS\n====\nType  Ops/sec  Hits/sec\n"), "memtier_benchmark");
 * assert.equal(detectKind(""), "empty");
 * ```
 */
export function detectKind(sample: string): DetectedKind {
  if (sample.trim() === "") return "empty";
  if (looksBinary(sample)) return "binary";
  const lines = sample.split("\n").slice(0, 400);
  for (const raw of lines) {
    for (const s of segments(raw.replace(/\r$/, ""))) {
      const t = s.trim();
      if (/^(\[[^\]]+\][$#]|[\w.-]+@[\w.-]+(:[^$#\s]*)?[$#]|\$)\s+\S/.test(t)) return "transcript";
      if (/^====== .* ======$/.test(t)) return "redis-benchmark";
      if (/^.+: [\d.]+ requests per second/.test(t)) return "redis-benchmark";
      if (/^"test","rps"/.test(t) || /^"[^"]+","[\d.]+"$/.test(t)) return "redis-benchmark";
      if (/^.+: rps=\S+ \(overall: /.test(t)) return "redis-benchmark";
      if (/^(ALL STATS|BEST RUN RESULTS|WORST RUN RESULTS|AGGREGATED AVERAGE RESULTS)/.test(t)) {
        return "memtier_benchmark";
      }
      if (/^Type\s+Ops\/sec/.test(t) || /^\[RUN #\d+/.test(t)) return "memtier_benchmark";
      if (/^"?(ALL STATS|configuration|run information)"?\s*:/.test(t)) {
        return "memtier_benchmark-json";
      }
      if (
        /^Value\s+Percentile\s+TotalCount/.test(t) ||
        /^#\[(StartTime:|Histogram log format)/.test(t)
      ) {
        return "hdr-histogram";
      }
      if (/^# (Server|Memory|Clients|Keyspace|Stats)$/.test(t) || /^redis_version:/.test(t)) {
        return "redis-info";
      }
      if (/^CONTAINER ID\s+NAME/.test(t) || /^\{"BlockIO":/.test(t)) return "docker-stats";
      if (/^min: \d+, max: \d+, avg: /.test(t)) return "redis-cli-latency";
      if (/^\d+ \d+ \d+\.\d\d \d+$/.test(t)) return "redis-cli-latency";
    }
  }
  return "unknown";
}

/**
 * A phrase naming a detected kind, for error messages.
 *
 * @example
 * ```ts
 * import { describeKind } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(describeKind("memtier_benchmark"), "memtier_benchmark output");
 * ```
 */
export function describeKind(kind: DetectedKind): string {
  switch (kind) {
    case "redis-benchmark":
      return "redis-benchmark output";
    case "transcript":
      return "a shell transcript";
    case "memtier_benchmark":
      return "memtier_benchmark output";
    case "memtier_benchmark-json":
      return "memtier_benchmark JSON";
    case "hdr-histogram":
      return "an HdrHistogram file";
    case "redis-info":
      return "redis-cli INFO output";
    case "docker-stats":
      return "docker stats output";
    case "redis-cli-latency":
      return "redis-cli --latency output";
    case "binary":
      return "binary data";
    case "empty":
      return "an empty file";
    case "unknown":
      return "text in no known format";
  }
}
