/**
 * Splits shell transcripts and blog pastes into (command, output) blocks: `$ command`,
 * `[user@host ~]$ command`, `user@host:~$ command`, `root@host:~# command`, zsh's
 * `user@host dir % command`, PowerShell's `PS C:\…> command`, cmd.exe's `C:\…>command`, and
 * bare `./src/redis-benchmark …` lines, with `\` continuations joined. Output before the first
 * command is a block with no command.
 *
 * {@link TranscriptSplitter} works line by line (for streaming); {@link splitTranscript} splits
 * a whole text. Both are pure.
 *
 * @module
 */

import { type Line, splitLines, stripAnsi } from "../../text/lines.ts";
import { parseCommand, type ParsedCommand } from "./command.ts";
import { programs } from "./registry.ts";

/** A command typed at a prompt, as found in a transcript. */
export interface TranscriptCommand {
  /** The command line as typed, continuations joined with a space (not yet redacted). */
  text: string;
  /** The prompt before it (`$`, `[ec2-user@bastin ~]$`), or `""` for a bare tool line. */
  prompt: string;
  /** The machine named in the prompt (`bastin` in `[ec2-user@bastin ~]$`), if any. */
  host: string | undefined;
  /** The tool and its arguments. */
  parsed: ParsedCommand;
  /** Line of the prompt. */
  line: number;
  /** Last line of the command (after continuations). */
  lastLine: number;
}

/** A command and the output lines that followed it. */
export interface TranscriptBlock {
  /** `undefined` for output before the first command (or a file with no prompts at all). */
  command: TranscriptCommand | undefined;
  /** The output lines. */
  output: Line[];
}

const PROMPTS: RegExp[] = [
  // [user@host ~]$ cmd   /   [root@host dir]# cmd
  /^\s*\[([^\]@\s]+)@([^\]\s]+)[^\]]*\][$#]\s+(\S.*)$/,
  // user@host:~/dir$ cmd
  /^\s*([\w.-]+)@([\w.-]+)(?::[^$#\s]*)?[$#]\s+(\S.*)$/,
  // $ cmd
  /^\s*()()\$\s+(\S.*)$/,
  // zsh: user@host dir % cmd   /   % cmd
  /^\s*([\w.-]+)@([\w.-]+)\s+\S+\s+%\s+(\S.*)$/,
  /^\s*()()%\s+(\S.*)$/,
  // PowerShell: PS C:\Users\me> cmd
  /^\s*()()PS\s+[A-Za-z]:\\[^>]*>\s*(\S.*)$/,
  // cmd.exe: C:\Users\me\Redis-x64-3.2.100>redis-benchmark …
  /^\s*()()[A-Za-z]:\\[^>]*>\s*(\S.*)$/,
];
/**
 * A line that is just a tool invocation with a flag (`./src/redis-benchmark -q …`,
 * `memtier_benchmark -t 2 …`): a program a format reads, maybe with a path.
 */
const BARE = new RegExp(
  String.raw`^\s*((?:\.{0,2}[\/\\])?(?:[\w.:-]+[\/\\])*(?:` +
    programs().map((p) => p.replace(/[.+]/g, "\\$&")).join("|") +
    String.raw`)(?:\.exe)?)(\s+-[ -~]*)\s*$`,
);

/** A character every prompt of {@link PROMPTS} holds. */
const PROMPT_CHARS = /[$#%>]/;
/** A program's name, which a bare command line holds. */
const PROGRAM_WORD = new RegExp(programs().map((p) => p.replace(/[.+]/g, "\\$&")).join("|"));

/**
 * Reads a line as a command at a prompt, or returns `undefined`.
 *
 * @example
 * ```ts
 * import { readPrompt } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const c = readPrompt("[ec2-user@bastin ~]$ redis-benchmark -h db -q", 7)!;
 * assert.equal(c.host, "bastin");
 * assert.equal(c.parsed.tool, "redis-benchmark");
 * assert.equal(readPrompt("SET: 1.00 requests per second", 1), undefined);
 * ```
 */
export function readPrompt(text: string, line: number): TranscriptCommand | undefined {
  const t = stripAnsi(text);
  // most lines are output: a prompt holds one of $ # % >, a bare command a program's name
  const prompted = PROMPT_CHARS.test(t);
  for (let i = 0; prompted && i < PROMPTS.length; i++) {
    const m = PROMPTS[i].exec(t);
    if (m) {
      const prompt = t.slice(0, t.length - m[3].length).trim();
      return {
        text: m[3].trim(),
        prompt,
        host: m[2] === "" ? undefined : m[2],
        parsed: parseCommand(m[3]),
        line,
        lastLine: line,
      };
    }
  }
  const b = PROGRAM_WORD.test(t) ? BARE.exec(t) : null;
  if (b) {
    return {
      text: t.trim(),
      prompt: "",
      host: undefined,
      parsed: parseCommand(t),
      line,
      lastLine: line,
    };
  }
  return undefined;
}

/** What {@link TranscriptSplitter.push} saw in a line. */
export type TranscriptEvent =
  | { kind: "command"; command: TranscriptCommand }
  | { kind: "continuation"; command: TranscriptCommand }
  | { kind: "output"; line: Line };

/**
 * Line-by-line transcript reader: tells, for each line, whether it starts a command, continues
 * one (`\` at the end of the previous line), or is output of the current command.
 *
 * @example
 * ```ts
 * import { TranscriptSplitter } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const s = new TranscriptSplitter();
 * assert.equal(s.push({ text: "$ redis-benchmark -q \\", line: 1, terminated: true }).kind, "command");
 * const e = s.push({ text: "  -t set", line: 2, terminated: true });
 * assert.equal(e.kind, "continuation");
 * assert.equal(e.kind === "continuation" && e.command.text, "redis-benchmark -q -t set");
 * assert.equal(s.push({ text: "SET: 1.00 requests per second", line: 3, terminated: true }).kind, "output");
 * ```
 */
export class TranscriptSplitter {
  #pending: TranscriptCommand | undefined;

  /** Classifies one line. */
  push(l: Line): TranscriptEvent {
    if (this.#pending) {
      const cmd = this.#pending;
      const piece = stripAnsi(l.text).trim().replace(/^>\s+/, "");
      const cont = piece.endsWith("\\");
      cmd.text = `${cmd.text} ${piece.replace(/\\+$/, "").trim()}`.trim();
      cmd.parsed = parseCommand(cmd.text);
      cmd.lastLine = l.line;
      this.#pending = cont ? cmd : undefined;
      return { kind: "continuation", command: cmd };
    }
    const cmd = readPrompt(l.text, l.line);
    if (cmd === undefined) return { kind: "output", line: l };
    if (/\\+\s*$/.test(cmd.text)) {
      cmd.text = cmd.text.replace(/\\+\s*$/, "").trim();
      cmd.parsed = parseCommand(cmd.text);
      this.#pending = cmd;
    }
    return { kind: "command", command: cmd };
  }
}

/**
 * Splits a whole transcript into blocks. Blocks with no output lines are kept (a command that
 * printed nothing), so every command typed is listed.
 *
 * @example
 * ```ts
 * import { splitTranscript } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const blocks = splitTranscript(
 *   "$ redis-cli -p 6380 dbsize\n(integer) 99998\n$ redis-benchmark -q -t get\nGET: 1.00 requests per second\n",
 * );
 * assert.equal(blocks.length, 2);
 * assert.equal(blocks[0].command?.parsed.tool, "redis-cli");
 * assert.deepEqual(blocks[1].output.map((l) => l.text), ["GET: 1.00 requests per second"]);
 * ```
 */
export function splitTranscript(text: string): TranscriptBlock[] {
  const splitter = new TranscriptSplitter();
  const blocks: TranscriptBlock[] = [];
  let current: TranscriptBlock = { command: undefined, output: [] };
  for (const l of splitLines(text)) {
    const e = splitter.push(l);
    if (e.kind === "command") {
      if (current.command !== undefined || current.output.some((o) => o.text.trim() !== "")) {
        blocks.push(current);
      }
      current = { command: e.command, output: [] };
    } else if (e.kind === "output") {
      current.output.push(e.line);
    }
  }
  if (current.command !== undefined || current.output.some((o) => o.text.trim() !== "")) {
    blocks.push(current);
  }
  return blocks;
}
