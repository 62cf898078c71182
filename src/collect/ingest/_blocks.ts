/**
 * The block splitter of ingest: lines of a raw output or transcript in, blocks out. A block is
 * one command and its output (or the output before any command), with the parser that reads it
 * when it is benchmark output. Pure: no file access, no clock.
 *
 * @module
 */

import { readScriptBanner } from "../../text/lines.ts";
import type { ByteLine } from "../../text/read_lines.ts";
import { type BenchmarkArgs, parseBenchmarkArgs } from "../formats/command.ts";
import { RedisBenchmarkParser } from "../formats/redis_benchmark/parse.ts";
import { readPrompt, type TranscriptCommand, TranscriptSplitter } from "./transcript.ts";

/** Where a block is in its file, and what {@link BlockSplitter} saw of its output. */
export interface BlockSpan {
  /** Line of the command (or of the first output line). */
  firstLine: number;
  /** Last line of the block. */
  lastLine: number;
  /** Offset of the block's first byte. */
  byteStart: number;
  /** Offset just past the block's last byte. */
  byteEnd: number;
  /** Output lines that are not blank. */
  nonBlank: number;
  /** The first 50 non-blank output lines, to tell what an unreadable output is. */
  sample: string[];
  /** When a `script(1)` banner in the output says the capture started. */
  startedAt: Date | null;
}

/** A block of benchmark output and the parser reading it. */
export type BenchmarkBlock =
  & BlockSpan
  & {
    /** Output of a `redis-benchmark` / `valkey-benchmark` command typed at a prompt. */
    kind: "benchmark";
    command: TranscriptCommand;
    args: BenchmarkArgs;
    parser: RedisBenchmarkParser;
  };

/**
 * Output with no command before it (a raw output file, or the text before a transcript's
 * first prompt): read as benchmark output; a `script(1)` banner may name its command.
 */
export type ImplicitBlock =
  & BlockSpan
  & {
    kind: "implicit";
    command: TranscriptCommand | undefined;
    args: BenchmarkArgs | undefined;
    parser: RedisBenchmarkParser;
  };

/** Output of `redis-cli` / `valkey-cli` or `docker stats`: a capture read whole at its end. */
export type CaptureBlock = BlockSpan & { kind: "capture"; command: TranscriptCommand };

/** A command whose output kvlab does not read; a non-empty reason is reported. */
export type SkipBlock = BlockSpan & { kind: "skip"; command: TranscriptCommand; reason: string };

/** Output of a `memtier_benchmark` command (stdout and stderr), read whole at its end. */
export type MemtierBlock = BlockSpan & { kind: "memtier"; command: TranscriptCommand };

/** One block of a file, by kind. */
export type Block = BenchmarkBlock | ImplicitBlock | CaptureBlock | SkipBlock;

/** A block as {@link BlockSplitter} gives it: memtier blocks are run apart from the others. */
export type SplitBlock = Block | MemtierBlock;

/** A block whose output a benchmark parser reads. */
export type ParsedBlock = BenchmarkBlock | ImplicitBlock;

/** What a command makes of a block (everything but its span). */
type BlockHead =
  | Pick<BenchmarkBlock, "kind" | "command" | "args" | "parser">
  | Pick<ImplicitBlock, "kind" | "command" | "args" | "parser">
  | Pick<CaptureBlock, "kind" | "command">
  | Pick<SkipBlock, "kind" | "command" | "reason">
  | Pick<MemtierBlock, "kind" | "command">;

/**
 * Splits lines into blocks as they come: {@link push} returns the block a new command ends,
 * {@link end} the last one. The current block can be inspected (for its parser) meanwhile.
 *
 * @example
 * ```ts
 * import { BlockSplitter } from "./_blocks.ts";
 * import assert from "node:assert/strict";
 * const s = new BlockSplitter("t.txt");
 * let at = 0;
 * const line = (text: string, line: number) => {
 *   const l = { text, line, terminated: true, byteStart: at, byteEnd: at + text.length + 1 };
 *   at = l.byteEnd;
 *   return l;
 * };
 * assert.equal(s.push(line("$ redis-cli dbsize", 1)), undefined);
 * assert.equal(s.push(line("(integer) 3", 2)), undefined);
 * const done = s.push(line("$ redis-benchmark -q -t set", 3));
 * assert.equal(done?.kind, "capture");
 * assert.equal(done?.lastLine, 2);
 * s.push(line("SET: 1.00 requests per second", 4));
 * const last = s.end();
 * assert.equal(last?.kind, "benchmark");
 * assert.equal(last?.kind === "benchmark" && last.parser.finish().tests.length, 1);
 * ```
 */
export class BlockSplitter {
  readonly #file: string;
  readonly #prompts = new TranscriptSplitter();
  #current: SplitBlock | undefined;
  #sawCommand = false;

  /** @param file The file's path, for parse errors and skip reasons. */
  constructor(file: string) {
    this.#file = file;
  }

  /** The block being read, if any. */
  get current(): SplitBlock | undefined {
    return this.#current;
  }

  /** Whether a command was seen at a prompt so far. */
  get sawCommand(): boolean {
    return this.#sawCommand;
  }

  /**
   * Reads one line.
   *
   * @param l The line, with its byte range.
   * @returns The block the line ends (when it starts a new command), else undefined.
   */
  push(l: ByteLine): SplitBlock | undefined {
    const e = this.#prompts.push(l);
    if (e.kind === "command") {
      this.#sawCommand = true;
      const done = this.#current;
      this.#current = { ...span(l, true), ...this.#head(e.command) };
      return done;
    }
    const b = this.#current;
    if (e.kind === "continuation") {
      // The command grew: read it again (no output came yet, so the block starts over).
      if (b) {
        this.#current = {
          ...spanOf(b),
          lastLine: l.line,
          byteEnd: l.byteEnd,
          ...this.#head(e.command),
        };
      }
      return undefined;
    }
    if (b === undefined) {
      this.#current = { ...span(l, false), ...this.#head(undefined) };
      feed(this.#current, l);
    } else {
      feed(b, l);
    }
    return undefined;
  }

  /**
   * Ends the input.
   *
   * @returns The last block, if any line came.
   */
  end(): SplitBlock | undefined {
    const done = this.#current;
    this.#current = undefined;
    return done;
  }

  #head(command: TranscriptCommand | undefined): BlockHead {
    return classify(command, this.#file);
  }
}

function span(l: ByteLine, isCommand: boolean): BlockSpan {
  return {
    firstLine: l.line,
    lastLine: l.line,
    byteStart: l.byteStart,
    byteEnd: isCommand ? l.byteEnd : l.byteStart,
    nonBlank: 0,
    sample: [],
    startedAt: null,
  };
}

function spanOf(b: SplitBlock): BlockSpan {
  const { firstLine, lastLine, byteStart, byteEnd, nonBlank, sample, startedAt } = b;
  return { firstLine, lastLine, byteStart, byteEnd, nonBlank, sample, startedAt };
}

/** What a command's tool makes of its output. */
function classify(command: TranscriptCommand | undefined, file: string): BlockHead {
  if (command === undefined) {
    return {
      kind: "implicit",
      command,
      args: undefined,
      parser: new RedisBenchmarkParser({ file }),
    };
  }
  const skip = (reason: string): BlockHead => ({ kind: "skip", command, reason });
  const tool = command.parsed.tool;
  switch (tool) {
    case "redis-benchmark":
    case "valkey-benchmark": {
      try {
        const args = parseBenchmarkArgs(command.parsed.args);
        return {
          kind: "benchmark",
          command,
          args,
          parser: new RedisBenchmarkParser({ file, args }),
        };
      } catch (e) {
        return skip(`${file}:${command.line}: ${(e as Error).message}`);
      }
    }
    case "redis-cli":
    case "valkey-cli":
      return { kind: "capture", command };
    case "docker":
      if (command.parsed.args[0] === "stats") return { kind: "capture", command };
      return skip("docker command other than stats");
    case "memtier_benchmark":
      return { kind: "memtier", command };
    default:
      return skip("");
  }
}

/** Adds an output line to a block: its span, sample, `script(1)` banner and parser. */
function feed(b: SplitBlock, l: ByteLine): void {
  b.lastLine = l.line;
  b.byteEnd = l.byteEnd;
  if (l.text.trim() === "") return;
  b.nonBlank++;
  if (b.sample.length < 50) b.sample.push(l.text);
  if (b.startedAt === null) {
    const banner = readScriptBanner(l.text);
    if (banner !== null) {
      if (banner.command !== null && b.kind === "implicit" && b.command === undefined) {
        nameCommand(b, banner.command, l.line);
      }
      b.startedAt = banner.startedAt;
    }
  }
  if (b.kind === "benchmark" || b.kind === "implicit") b.parser.push(l.text, l.line, l.terminated);
}

/** Gives output with no prompt the benchmark command its `script(1)` banner names. */
function nameCommand(b: ImplicitBlock, command: string, line: number): void {
  const c = readPrompt(`$ ${command}`, line);
  if (!c || (c.parsed.tool !== "redis-benchmark" && c.parsed.tool !== "valkey-benchmark")) return;
  try {
    b.args = parseBenchmarkArgs(c.parsed.args);
    b.parser.setArgs(b.args);
    b.command = { ...c, prompt: "script" };
  } catch { /* a command kvlab cannot read: keep the output without it */ }
}
