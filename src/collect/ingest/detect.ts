/**
 * Recognizes what a text is, from its first lines: used to choose a parser and to say, in an
 * error, what a file looks like when kvlab cannot ingest it.
 *
 * @module
 */

import { looksBinary, segments } from "../../text/lines.ts";

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
  "memtier_benchmark output (--json-out-file, stdout, stderr, --hdr-file-prefix files), " +
  "a shell transcript with `$ redis-benchmark …` or `$ memtier_benchmark …` commands, or one " +
  "INFO, docker stats, DBSIZE or redis-cli --latency capture";

/**
 * The tools whose output `kvlab ingest --tool` can be told a file holds: the one list that
 * both the check and its error message read. A tool becomes ingestible by a line here.
 */
export const INGEST_TOOLS = ["redis-benchmark", "valkey-benchmark", "memtier_benchmark"] as const;

/** Names people give a tool ingest reads, and the name kvlab knows it by. */
const TOOL_ALIASES: Readonly<Record<string, IngestTool>> = {
  memtier: "memtier_benchmark",
  "memtier-benchmark": "memtier_benchmark",
  redis_benchmark: "redis-benchmark",
  valkey_benchmark: "valkey-benchmark",
};

/** A tool `kvlab ingest --tool` accepts. */
export type IngestTool = typeof INGEST_TOOLS[number];

/**
 * Checks a `--tool` given to ingest.
 *
 * @param tool The tool name as given.
 * @returns It, typed.
 * @throws {TypeError} `invalid tool: …` naming the tools ingest reads (and the one meant, for
 *   a near name such as `memtier`).
 *
 * @example
 * ```ts
 * import { ingestTool } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(ingestTool("memtier_benchmark"), "memtier_benchmark");
 * assert.throws(
 *   () => ingestTool("memtier"),
 *   /invalid tool: memtier \(did you mean memtier_benchmark\? ingest reads output of redis-benchmark, valkey-benchmark or memtier_benchmark\)/,
 * );
 * ```
 */
export function ingestTool(tool: string): IngestTool {
  if ((INGEST_TOOLS as readonly string[]).includes(tool)) return tool as IngestTool;
  const all: readonly string[] = INGEST_TOOLS;
  const names = all.length === 1 ? all[0] : `${all.slice(0, -1).join(", ")} or ${all.at(-1)}`;
  const meant = TOOL_ALIASES[tool.toLowerCase()];
  const hint = meant ? `did you mean ${meant}? ` : "";
  throw new TypeError(`invalid tool: ${tool} (${hint}ingest reads output of ${names})`);
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
        /^#\[(StartTime:|BaseTime:|Histogram log format|.*HDR latency histogram)/.test(t)
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

/** Which of memtier_benchmark's files a text is (see {@link memtierFileKind}). */
export type MemtierFileKind = "json" | "stdout" | "stderr" | "hdr-log" | "hdr-percentiles";

/**
 * Tells which memtier_benchmark file a text is, from a sample of its start: the
 * `--json-out-file` JSON, the stdout report, the stderr progress, or a `--hdr-file-prefix`
 * interval log (`.hgrm`, `#[…]` headers) or percentile distribution (`.txt`,
 * `Value   Percentile   TotalCount`).
 *
 * @param sample The first lines of the text.
 * @returns The kind, or null for text that is none of memtier's files.
 *
 * @example
 * ```ts
 * import { memtierFileKind } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(memtierFileKind('{\n\t"configuration":{\n'), "json");
 * assert.equal(memtierFileKind("4         Threads\n\nALL STATS\n"), "stdout");
 * assert.equal(memtierFileKind("[RUN #1] Preparing benchmark client...\n"), "stderr");
 * assert.equal(memtierFileKind("       Value   Percentile   TotalCount 1/(1-Percentile)\n"), "hdr-percentiles");
 * assert.equal(memtierFileKind("#[Histogram log format version 1.2]\n"), "hdr-log");
 * assert.equal(memtierFileKind("SET: 1.00 requests per second\n"), null);
 * ```
 */
export function memtierFileKind(sample: string): MemtierFileKind | null {
  switch (detectKind(sample)) {
    case "memtier_benchmark-json":
      return "json";
    case "hdr-histogram":
      return /^\s*Value\s+Percentile\s+TotalCount/m.test(sample) ? "hdr-percentiles" : "hdr-log";
    case "memtier_benchmark": {
      const report =
        /^(ALL STATS|BEST RUN RESULTS|WORST RUN RESULTS|AGGREGATED AVERAGE RESULTS.*|RUN #\d+ RESULTS|Type\s+Ops\/sec.*|\d+\s+(Threads|Connections per thread))\s*$/m;
      return report.test(sample) ? "stdout" : "stderr";
    }
    default:
      return null;
  }
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
