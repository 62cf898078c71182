/**
 * The registry of output formats: the one list ingest iterates, in the order formats are asked
 * whether they recognise a text (the more specific first). Everything that depends on which
 * tools and formats exist — which program a command runs, which formats read its output, the
 * tools `kvlab ingest --tool` accepts, the list of formats an error names — is read from
 * {@link FORMATS}; nothing outside it switches on a tool's name. Adding a format is one folder
 * and one line here.
 *
 * @module
 */

import type { OutputFormat, ParsedCommand } from "./format.ts";
import { redisBenchmarkFormat } from "./redis_benchmark/format.ts";
import { MEMTIER_FORMATS } from "./memtier/format.ts";
import { memtier1xFormat } from "./memtier_1x/format.ts";
import { infoFormat } from "./info/format.ts";
import { dockerStatsFormat } from "./docker_stats/format.ts";
import { cliLatencyFormat, cliReplyFormat, dbsizeFormat } from "./redis_cli/format.ts";

/** Every format kvlab reads, in the order they are asked. */
export const FORMATS: readonly OutputFormat[] = [
  redisBenchmarkFormat,
  memtier1xFormat,
  ...MEMTIER_FORMATS,
  infoFormat,
  dockerStatsFormat,
  dbsizeFormat,
  cliLatencyFormat,
  cliReplyFormat,
];

/**
 * The format a text with no command is read with when no format recognises it: its reader
 * says, at its first line, what it expected.
 */
export const FALLBACK_FORMAT: OutputFormat = redisBenchmarkFormat;

/**
 * A format by its name.
 *
 * @param name Its registry name.
 * @returns The format.
 * @throws {TypeError} `invalid format: …` for a name no format has.
 *
 * @example
 * ```ts
 * import { formatNamed } from "./registry.ts";
 * import assert from "node:assert/strict";
 * assert.equal(formatNamed("memtier-json").tool, "memtier_benchmark");
 * assert.throws(() => formatNamed("xml"), /invalid format: xml/);
 * ```
 */
export function formatNamed(name: string): OutputFormat {
  const f = FORMATS.find((f) => f.name === name);
  if (!f) throw new TypeError(`invalid format: ${name} (expected ${FORMATS.map((f) => f.name)})`);
  return f;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

/**
 * The tool a program word runs, when a format claims it.
 *
 * @param program The program as written (`./src/redis-benchmark`).
 * @returns Its base name, or undefined for a program no format reads.
 *
 * @example
 * ```ts
 * import { toolOf } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(toolOf("/usr/bin/redis-benchmark"), "redis-benchmark");
 * assert.equal(toolOf("ls"), undefined);
 * ```
 */
export function toolOf(program: string): string | undefined {
  // `C:\Redis\redis-benchmark.exe`: a Windows path and program
  const b = basename(program.replaceAll("\\", "/")).replace(/\.exe$/i, "");
  return FORMATS.some((f) => f.programs?.includes(b)) ? b : undefined;
}

/** Every program whose output a format reads, once each, in registry order. */
export function programs(): string[] {
  return [...new Set(FORMATS.flatMap((f) => f.programs ?? []))];
}

/**
 * The format that reads a typed command's output: the first format claiming its program that
 * accepts its arguments.
 *
 * @param command The command.
 * @returns `{ format }`; `{ skip }` with the first format's reason when none accepts it; null
 * for a program no format reads.
 *
 * @example
 * ```ts
 * import { formatForCommand } from "./registry.ts";
 * import { parseCommand } from "./command.ts";
 * import assert from "node:assert/strict";
 * const f = formatForCommand(parseCommand("redis-cli -p 6380 info memory"));
 * assert.equal(f && "format" in f && f.format.name, "redis-info");
 * assert.deepEqual(formatForCommand(parseCommand("docker ps")), { skip: "docker command other than stats" });
 * assert.equal(formatForCommand(parseCommand("ls -l")), null);
 * ```
 */
export function formatForCommand(
  command: ParsedCommand,
): { format: OutputFormat } | { skip: string } | null {
  const tool = command.tool;
  if (tool === undefined) return null;
  const claiming = FORMATS.filter((f) => f.programs?.includes(tool));
  if (claiming.length === 0) return null;
  for (const f of claiming) if ((f.accepts?.(command.args) ?? null) === null) return { format: f };
  return { skip: claiming[0].accepts!(command.args)! };
}

/**
 * Every format that reads a typed command's output, in registry order: the formats claiming its
 * program that accept its arguments (which of them reads it is then told by the output).
 *
 * @param command The command.
 * @returns The formats; empty when none reads it.
 *
 * @example
 * ```ts
 * import { formatsForCommand } from "./registry.ts";
 * import { parseCommand } from "./command.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(formatsForCommand(parseCommand("redis-cli dbsize")).map((f) => f.name), [
 *   "redis-cli-dbsize", "redis-cli-reply",
 * ]);
 * ```
 */
export function formatsForCommand(command: ParsedCommand): OutputFormat[] {
  const tool = command.tool;
  if (tool === undefined) return [];
  return FORMATS.filter((f) =>
    f.programs?.includes(tool) && (f.accepts?.(command.args) ?? null) === null
  );
}

/** The tools whose output `kvlab ingest --tool` can be told a file holds. */
export function ingestTools(): string[] {
  return [...new Set(FORMATS.filter((f) => f.results).flatMap((f) => f.programs ?? []))];
}

const fold = (s: string) => s.toLowerCase().replace(/[-_]/g, "");

/**
 * Checks a `--tool` given to ingest.
 *
 * @param tool The tool name as given.
 * @returns It.
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
 *   /invalid tool: memtier \(did you mean memtier_benchmark\? ingest reads output of redis-benchmark, valkey-benchmark, keydb-benchmark or memtier_benchmark\)/,
 * );
 * ```
 */
export function ingestTool(tool: string): string {
  const all = ingestTools();
  if (all.includes(tool)) return tool;
  const names = all.length === 1 ? all[0] : `${all.slice(0, -1).join(", ")} or ${all.at(-1)}`;
  const meant = all.find((t) => fold(t) === fold(tool) || fold(t) === `${fold(tool)}benchmark`);
  const hint = meant ? `did you mean ${meant}? ` : "";
  throw new TypeError(`invalid tool: ${tool} (${hint}ingest reads output of ${names})`);
}

/**
 * The format whose reading `kvlab ingest --tool TOOL` forces: the first results format that
 * claims the tool.
 *
 * @param tool A tool {@link ingestTool} accepts.
 * @returns The format, or undefined.
 */
export function formatOfTool(tool: string): OutputFormat | undefined {
  return FORMATS.find((f) => f.results && f.programs?.includes(tool));
}

/**
 * What `kvlab ingest` reads, in words, for errors: built from the formats.
 *
 * @returns The phrase.
 *
 * @example
 * ```ts
 * import { knownFormats } from "./registry.ts";
 * import assert from "node:assert/strict";
 * assert.match(knownFormats(), /^redis-benchmark \/ valkey-benchmark output .*, a shell transcript with `\$ redis-benchmark …` or `\$ memtier_benchmark …` commands, or one INFO, .* capture$/);
 * ```
 */
export function knownFormats(): string {
  const results = FORMATS.filter((f) => f.results);
  const others = FORMATS.filter((f) => !f.results && f.reads).map((f) => f.reads!);
  const outputs = [...new Set(results.flatMap((f) => f.reads ? [f.reads] : []))];
  const prompts = [...new Set(results.map((f) => f.programs?.[0]).filter((p) => p))]
    .map((p) => `\`$ ${p} …\``);
  const or = (xs: string[]) =>
    xs.length < 2 ? xs.join("") : `${xs.slice(0, -1).join(", ")} or ${xs.at(-1)}`;
  return `${outputs.join(", ")}, a shell transcript with ${or(prompts)} commands, ` +
    `or one ${or(others)} capture`;
}

/**
 * The tool and version a file's name gives (`valkey-benchmark_8.0.1_…`,
 * `redis-benchmark-7.0.15-csv.txt`), from the programs of the format that reads it.
 *
 * @param name The file's base name.
 * @param format The format its text is read with.
 * @returns The tool and version, each when the name says it.
 *
 * @example
 * ```ts
 * import { toolFromFileName } from "./registry.ts";
 * import { redisBenchmarkFormat } from "./redis_benchmark/format.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(toolFromFileName("valkey-benchmark_8.0.1_x.txt", redisBenchmarkFormat),
 *   { tool: "valkey-benchmark", version: "8.0.1" });
 * assert.deepEqual(toolFromFileName("q.txt", redisBenchmarkFormat), {});
 * ```
 */
export function toolFromFileName(
  name: string,
  format: OutputFormat,
): { tool?: string; version?: string } {
  const names = (format.programs ?? []).map((p) => p.replace(/[.+]/g, "\\$&"));
  if (names.length === 0) return {};
  const m = new RegExp(`(${names.join("|")})(?:[_-]v?(\\d+\\.\\d+(?:\\.\\d+)?))?`).exec(name);
  return m ? { tool: m[1], ...(m[2] ? { version: m[2] } : {}) } : {};
}
