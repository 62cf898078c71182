/**
 * Reading command lines: shell words, wrappers and prefixes skipped, and which tool ran (the tool
 * whose format claims the program word, from the registry). Each tool's flag grammar is in its
 * format's room (`redis_benchmark/flags.ts`, `memtier/flags.ts`).
 *
 * @module
 */

import type { ParsedCommand } from "./format.ts";
import { toolOf } from "./registry.ts";

export type { ParsedCommand, Transport } from "./format.ts";

/**
 * Splits a shell command line into words, honouring single and double quotes and backslash
 * escapes. It does not expand variables or globs.
 *
 * @example
 * ```ts
 * import { shellWords } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.deepEqual(shellWords(`redis-cli -a 'p w' --user "x y" a\\ b`), [
 *   "redis-cli", "-a", "p w", "--user", "x y", "a b",
 * ]);
 * ```
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let cur = "";
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      cur += end < 0 ? line.slice(i + 1) : line.slice(i + 1, end);
      inWord = true;
      i = end < 0 ? line.length : end + 1;
    } else if (c === '"') {
      i++;
      while (i < line.length && line[i] !== '"') {
        if (line[i] === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) i++;
        cur += line[i++];
      }
      i++;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      cur += line[i + 1];
      inWord = true;
      i += 2;
    } else if (c === " " || c === "\t") {
      if (inWord) words.push(cur);
      cur = "";
      inWord = false;
      i++;
    } else {
      cur += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

const WRAPPERS = new Set(["sudo", "time", "nice", "nohup", "stdbuf", "taskset", "numactl", "env"]);

/**
 * Finds the tool in a command line, skipping `VAR=value` prefixes and wrappers such as
 * `sudo`, `time`, `taskset -c 0-3` or `numactl …`.
 *
 * @example
 * ```ts
 * import { parseCommand } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const c = parseCommand("sudo taskset -c 0 ./src/valkey-benchmark -q -n 10");
 * assert.equal(c.tool, "valkey-benchmark");
 * assert.deepEqual(c.args, ["-q", "-n", "10"]);
 * ```
 */
export function parseCommand(line: string): ParsedCommand {
  const words = shellWords(line.trim());
  let i = 0;
  while (i < words.length) {
    const w = words[i];
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      i++;
      continue;
    }
    const base = basename(w);
    if (WRAPPERS.has(base)) {
      i++;
      // wrapper options and their values: skip words until one looks like a program
      while (i < words.length && (words[i].startsWith("-") || /^[0-9,-]+$/.test(words[i]))) i++;
      continue;
    }
    break;
  }
  const program = words[i] ?? "";
  const rest = words.slice(i + 1);
  // Stop at the first shell operator: `| grep human`, `> out.txt`, `2>&1`, `&& …`.
  const op = rest.findIndex((w) => /^(\||\|\||&&|;|&|\d?>>?.*|<.*)$/.test(w));
  return { tool: toolOf(program), program, args: op < 0 ? rest : rest.slice(0, op) };
}

function basename(p: string): string {
  const s = p.lastIndexOf("/");
  return s < 0 ? p : p.slice(s + 1);
}
