/**
 * The block splitter of ingest: lines of a raw output or transcript in, blocks out. A block is
 * one command and its output, or output with no command before it; the registry's formats say
 * which format reads it (the command's program, or the text itself), and a lines format's reader
 * is fed as the lines come. Pure: no file access, no clock.
 *
 * @module
 */

import { readScriptBanner } from "../../text/lines.ts";
import type { ByteLine } from "../../text/read_lines.ts";
import { FormatDetector } from "../formats/detect.ts";
import type { LineReader, OutputFormat } from "../formats/format.ts";
import { FALLBACK_FORMAT, formatForCommand, formatsForCommand } from "../formats/registry.ts";
import { readPrompt, type TranscriptCommand, TranscriptSplitter } from "../formats/transcript.ts";
import { labelLine, startsOutput } from "./_labels.ts";

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
  /** The heading or label line above the block (`# Redka`, `--- memix`), if any. */
  label?: string;
}

/**
 * A block a format reads: a command's output (the command chose the format), or output with no
 * command before it (a raw output file, or the text before a transcript's first prompt), whose
 * format its text tells.
 */
export type ReadBlock =
  & BlockSpan
  & {
    kind: "read";
    command: TranscriptCommand | undefined;
    /**
     * The format that reads it, once known: the command's, when only one of its program's
     * formats accepts it; else the one its text is recognised as.
     */
    chosen: OutputFormat | undefined;
    /** What the output is, line by line, while that is not known. */
    detector: FormatDetector | undefined;
    /** The format that reads it when its text is recognised as none of the detector's. */
    fallback: OutputFormat;
    /** The reader of a lines format, fed as lines come; undefined until it is known. */
    reader: LineReader | undefined;
    /** Lines of output with no command kept until its format is known (bounded). */
    held: { text: string; line: number; terminated: boolean }[];
    heldChars: number;
  };

/** A command whose output kvlab does not read; a non-empty reason is reported. */
export type SkipBlock = BlockSpan & { kind: "skip"; command: TranscriptCommand; reason: string };

/** One block of a file. */
export type Block = ReadBlock | SkipBlock;

/** Characters of output with no command held while its format is not known yet. */
const HELD_MAX_CHARS = 4 << 20;

/**
 * The format a read block is read with: its command's, or the one its text was recognised as,
 * or the fallback that says what it expected.
 *
 * @param b The block.
 * @returns The format.
 */
export function blockFormat(b: ReadBlock): OutputFormat {
  return b.chosen ?? b.detector?.best ?? b.fallback;
}

/**
 * Splits lines into blocks as they come: {@link push} returns the block a new command ends,
 * {@link end} the last one. The current block can be inspected (for its reader) meanwhile.
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
 * assert.equal(done?.kind === "read" && done.chosen?.name, "redis-cli-dbsize");
 * assert.equal(done?.lastLine, 2);
 * s.push(line("SET: 1.00 requests per second", 4));
 * const last = s.end();
 * assert.equal(last?.kind === "read" && last.reader?.finish("r").tests, 1);
 * ```
 */
export class BlockSplitter {
  readonly #file: string;
  readonly #labels: boolean;
  readonly #prompts = new TranscriptSplitter();
  #current: Block | undefined;
  #sawCommand = false;
  /** The heading or label the blocks from here on are named by. */
  #label: string | undefined;
  /**
   * A name on a line of its own (and the blank lines after it): a label when output comes next,
   * else lines of the current block.
   */
  #held: { label: string; lines: ByteLine[] } | undefined;
  /** Whether the line before was blank (or there was none). */
  #afterBlank = true;

  /**
   * @param file The file's path, for parse errors and skip reasons.
   * @param o `labels`: whether headings and label lines split runs and name them (default true).
   */
  constructor(file: string, o: { labels?: boolean } = {}) {
    this.#file = file;
    this.#labels = o.labels ?? true;
  }

  /** The block being read, if any. */
  get current(): Block | undefined {
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
  push(l: ByteLine): Block | undefined {
    const afterBlank = this.#afterBlank;
    this.#afterBlank = l.text.trim() === "";
    return this.#push(l, afterBlank);
  }

  #push(l: ByteLine, afterBlank: boolean): Block | undefined {
    const e = this.#prompts.push(l);
    if (this.#held) {
      // a held name labels what follows when output starts here
      if (e.kind === "output" && l.text.trim() === "") {
        this.#held.lines.push(l);
        return undefined;
      }
      const held = this.#held;
      this.#held = undefined;
      if (e.kind === "command" || startsOutput(l.text)) {
        const done = this.#relabel(held.label);
        if (e.kind === "command") return this.#command(l, e.command) ?? done;
        this.#current = this.#block(span(l, false), undefined);
        this.#feed(this.#current, l);
        return done;
      }
      for (const h of held.lines) this.#output(h);
    }
    if (e.kind === "output" && this.#labels && this.#splittable()) {
      const label = labelLine(l.text);
      if (label?.when === "now") return this.#relabel(label.label);
      // a bare name (`memix`, `Rust:`) between the outputs of a format read line by line is
      // rather its next test's title (`PING_MBULK` above `====== PING_MBULK ======`)
      // a name stands apart: after a blank line (or at the start), not under a reply (`OK`)
      if (label && !this.#streaming() && afterBlank) {
        this.#held = { label: label.label, lines: [l] };
        return undefined;
      }
    }
    if (e.kind === "command") return this.#command(l, e.command);
    const b = this.#current;
    if (e.kind === "continuation") {
      // The command grew: read it again (no output came yet, so the block starts over).
      if (b) {
        this.#current = this.#block(
          { ...spanOf(b), lastLine: l.line, byteEnd: l.byteEnd },
          e.command,
        );
      }
      return undefined;
    }
    this.#output(l);
    return undefined;
  }

  /**
   * Ends the input.
   *
   * @returns The last block, if any line came.
   */
  end(): Block | undefined {
    if (this.#held) { for (const h of this.#held.lines) this.#output(h); }
    this.#held = undefined;
    const done = this.#end(this.#current);
    this.#current = undefined;
    return done;
  }

  /** A command at a prompt: the block it ends, if any; its own block starts. */
  #command(l: ByteLine, command: TranscriptCommand): Block | undefined {
    this.#sawCommand = true;
    const done = this.#end(this.#current);
    this.#current = this.#block(span(l, true), command);
    return done;
  }

  /** An output line: into the current block, or the start of one with no command. */
  #output(l: ByteLine): void {
    if (this.#current === undefined) this.#current = this.#block(span(l, false), undefined);
    this.#feed(this.#current, l);
  }

  /**
   * A heading or label: the current block ends before its lines, which belong to no block (they
   * are no tool's output), and the blocks that follow are named by it.
   */
  #relabel(label: string): Block | undefined {
    this.#label = label;
    const done = this.#end(this.#current);
    this.#current = undefined;
    return done;
  }

  /** Whether the current block is read line by line (its format a lines format). */
  #streaming(): boolean {
    const b = this.#current;
    return b?.kind === "read" && b.reader !== undefined;
  }

  /**
   * Whether a label may end the current block: none is open, or it is read (or may yet be read)
   * by a format whose runs are results. A capture's text (an INFO reply's `# CPU`) is never split.
   */
  #splittable(): boolean {
    const b = this.#current;
    if (b === undefined || b.kind === "skip") return true;
    if (b.chosen) return b.chosen.results;
    return b.detector?.best?.results ?? true;
  }

  /** A block's head: what its command makes of its output. */
  #block(s: BlockSpan, command: TranscriptCommand | undefined): Block {
    if (this.#label !== undefined) s = { ...s, label: this.#label };
    const read = (formats: readonly OutputFormat[] | undefined): ReadBlock => {
      // one format, or a lines format first: read as the lines come; else told by the text
      const chosen = formats && (formats.length === 1 || formats[0].reading === "lines")
        ? formats[0]
        : undefined;
      return {
        ...s,
        kind: "read",
        command,
        chosen,
        detector: chosen ? undefined : new FormatDetector(formats),
        // a command's output no format recognises is read by its tool's usual format
        fallback: formats?.find((f) => !f.variant) ?? formats?.[0] ?? FALLBACK_FORMAT,
        reader: chosen?.reading === "lines"
          ? chosen.reader({ file: this.#file, command: command?.parsed })
          : undefined,
        held: [],
        heldChars: 0,
      };
    };
    if (command === undefined) return read(undefined);
    const f = formatForCommand(command.parsed);
    if (f === null) return { ...s, kind: "skip", command, reason: "" };
    if ("skip" in f) {
      return { ...s, kind: "skip", command, reason: `${this.#file}:${command.line}: ${f.skip}` };
    }
    return read(formatsForCommand(command.parsed));
  }

  /** Adds an output line to a block: its span, sample, `script(1)` banner and reader. */
  #feed(b: Block, l: ByteLine): void {
    b.lastLine = l.line;
    b.byteEnd = l.byteEnd;
    if (l.text.trim() !== "") {
      b.nonBlank++;
      if (b.sample.length < 50) b.sample.push(l.text);
      if (b.startedAt === null) this.#banner(b, l);
    }
    if (b.kind !== "read") return;
    if (b.reader) return b.reader.push(l.text, l.line, l.terminated);
    if (b.detector === undefined) return; // a text format: read whole at the end
    b.detector.push(l.text);
    if (b.detector.formats.some((f) => f.reading === "lines")) {
      b.held.push({ text: l.text, line: l.line, terminated: l.terminated });
      b.heldChars += l.text.length;
    }
    if (b.detector.decided || b.heldChars > HELD_MAX_CHARS) this.#start(b);
  }

  /**
   * Output with no command whose format is known (or can be known no better): a lines format's
   * reader is made and given the lines held so far.
   */
  #start(b: ReadBlock): void {
    const f = blockFormat(b);
    if (f.reading === "lines") {
      b.reader = f.reader({ file: this.#file, command: b.command?.parsed });
      for (const h of b.held) b.reader.push(h.text, h.line, h.terminated);
    }
    b.detector = undefined;
    b.chosen = f;
    b.held = [];
    b.heldChars = 0;
  }

  #end(b: Block | undefined): Block | undefined {
    if (b?.kind === "read" && b.detector !== undefined) this.#start(b);
    return b;
  }

  /**
   * A `script(1)` banner: when the capture started, and, for output with no command, the
   * command it names (its flags then reach the reader).
   */
  #banner(b: Block, l: ByteLine): void {
    const banner = readScriptBanner(l.text);
    if (banner === null) return;
    b.startedAt = banner.startedAt;
    if (banner.command === null || b.kind !== "read" || b.command !== undefined) return;
    const c = readPrompt(`$ ${banner.command}`, l.line);
    if (!c) return;
    // a command of the format the output is read with: its flags reach the reader
    const f = formatForCommand(c.parsed);
    if (!f || !("format" in f) || f.format !== blockFormat(b)) return;
    b.command = { ...c, prompt: "script" };
    b.reader?.learnCommand?.(c.parsed);
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

function spanOf(b: Block): BlockSpan {
  const { firstLine, lastLine, byteStart, byteEnd, nonBlank, sample, startedAt } = b;
  return { firstLine, lastLine, byteStart, byteEnd, nonBlank, sample, startedAt };
}
