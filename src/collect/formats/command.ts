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

/**
 * Commands that run another command, and their options that take a value (the next word):
 * `sudo -u bench …`, `numactl -C 6 …`, `taskset -c 0-3 …`, `nice -n 10 …`, `timeout 60 …`,
 * `docker exec -it redis …` (its container word is skipped too).
 */
const WRAPPERS: Readonly<Record<string, readonly string[]>> = {
  sudo: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
  time: ["-f", "-o", "--format", "--output"],
  nice: ["-n", "--adjustment"],
  nohup: [],
  stdbuf: ["-i", "-o", "-e"],
  taskset: ["-c", "--cpu-list"],
  numactl: ["-C", "-N", "-m", "-p", "-i", "--physcpubind", "--cpunodebind", "--membind"],
  env: ["-u", "-C", "--unset", "--chdir"],
  timeout: ["-s", "-k", "--signal", "--kill-after"],
  chrt: [],
  ionice: ["-c", "-n", "-p"],
  caffeinate: [],
};

/** `docker exec` / `podman exec` options that take a value. */
const EXEC_OPTIONS = ["-u", "--user", "-e", "--env", "-w", "--workdir", "--env-file"];

/**
 * Finds the tool in a command line, skipping `VAR=value` prefixes and wrappers such as
 * `sudo -u bench`, `time`, `taskset -c 0-3`, `numactl -C 6`, `timeout 60` or `docker exec -it
 * CONTAINER` (each with its options and their values). A Windows program's `.exe` is dropped
 * from its tool name.
 *
 * @example
 * ```ts
 * import { parseCommand } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const c = parseCommand("sudo taskset -c 0 ./src/valkey-benchmark -q -n 10");
 * assert.equal(c.tool, "valkey-benchmark");
 * assert.deepEqual(c.args, ["-q", "-n", "10"]);
 * assert.equal(parseCommand("sudo -u bench numactl -C 6 redis-benchmark -q").tool, "redis-benchmark");
 * assert.equal(parseCommand("docker exec -it redis redis-benchmark -q").tool, "redis-benchmark");
 * assert.equal(parseCommand("timeout 60 memtier_benchmark -t 2").tool, "memtier_benchmark");
 * assert.equal(parseCommand("C:\\Redis\\redis-benchmark.exe -n 10").tool, "redis-benchmark");
 * ```
 */
export function parseCommand(line: string): ParsedCommand {
  // a Windows path (`C:\redis\redis-benchmark.exe`): its backslashes separate, not escape
  const text = /(^|\s)[A-Za-z]:\\/.test(line) ? line.replaceAll("\\", "/") : line;
  const words = shellWords(text.trim());
  let i = 0;
  while (i < words.length) {
    const w = words[i];
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      i++;
      continue;
    }
    const base = basename(w);
    const valued = WRAPPERS[base];
    if (valued !== undefined) {
      i = skipOptions(words, i + 1, valued);
      // `timeout 60 …`, `nice 10 …`, `chrt 99 …`: a number before the command
      while (i < words.length && /^[0-9][0-9.,:smhd-]*$/.test(words[i])) i++;
      continue;
    }
    if ((base === "docker" || base === "podman") && words[i + 1] === "exec") {
      // docker exec [options] CONTAINER command …
      i = skipOptions(words, i + 2, EXEC_OPTIONS) + 1;
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

/** The index past a command's options (`-x`, `--x=v`, and the values of `valued` ones). */
function skipOptions(words: readonly string[], from: number, valued: readonly string[]): number {
  let i = from;
  while (i < words.length && words[i].startsWith("-") && words[i] !== "--") {
    const w = words[i++];
    if (valued.includes(w) && i < words.length) i++;
  }
  if (words[i] === "--") i++;
  return i;
}

function basename(p: string): string {
  const s = p.lastIndexOf("/");
  return s < 0 ? p : p.slice(s + 1);
}
