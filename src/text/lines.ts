/**
 * Line handling shared by the text parsers: physical lines with their numbers, CRLF, terminal
 * overwrites (`\r`), ANSI escapes and `script(1)` banners.
 *
 * @module
 */

/** One physical line of a text. */
export interface Line {
  /** The line without its `\n` / `\r\n` ending. */
  text: string;
  /** 1-based line number. */
  line: number;
  /** Whether the line ended with `\n` (the last line of a cut file does not). */
  terminated: boolean;
}

/**
 * Splits a text into physical lines on `\n`, dropping a `\r` before it.
 *
 * @example
 * ```ts
 * import { splitLines } from "./lines.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual([...splitLines("a\r\nb")], [
 *   { text: "a", line: 1, terminated: true },
 *   { text: "b", line: 2, terminated: false },
 * ]);
 * ```
 */
export function* splitLines(text: string, firstLine = 1): Generator<Line> {
  let start = 0;
  let line = firstLine;
  while (start < text.length) {
    const nl = text.indexOf("\n", start);
    if (nl < 0) {
      yield { text: stripCr(text.slice(start)), line, terminated: false };
      return;
    }
    yield { text: stripCr(text.slice(start, nl)), line, terminated: true };
    start = nl + 1;
    line++;
  }
}

function stripCr(s: string): string {
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

const ANSI =
  // deno-lint-ignore no-control-regex
  /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>]/g;

/**
 * Removes ANSI escape sequences (colors, cursor moves, line clears) from a line.
 *
 * @example
 * ```ts
 * import { stripAnsi } from "./lines.ts";
 * import assert from "node:assert/strict";
 * assert.equal(stripAnsi("\x1b[0G\x1b[2Kmin: 0, max: 1"), "min: 0, max: 1");
 * ```
 */
export function stripAnsi(text: string): string {
  return text.includes("\x1b") ? text.replace(ANSI, "") : text;
}

/**
 * Splits a physical line into what a terminal would have drawn in turn: the pieces between
 * carriage returns, ANSI escapes removed, blank pieces dropped.
 *
 * @example
 * ```ts
 * import { segments } from "./lines.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(segments(" \rSET: rps=1.0 (overall: 1.0)\r   \r====== SET ======"), [
 *   "SET: rps=1.0 (overall: 1.0)",
 *   "====== SET ======",
 * ]);
 * ```
 */
export function segments(text: string): string[] {
  const clean = stripAnsi(text);
  if (!clean.includes("\r")) return clean.trim() === "" ? [] : [clean];
  const out: string[] = [];
  for (const piece of clean.split("\r")) if (piece.trim() !== "") out.push(piece);
  return out;
}

const SCRIPT_BANNER = /^Script (started|done) on /;
const SCRIPT_STARTED = "Script started on ";
const SCRIPT_DATE = /^Script started on (\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)([+-]\d\d:?\d\d|Z)?/;
const SCRIPT_COMMAND = /\[COMMAND="((?:[^"\\]|\\.)*)"/;

/**
 * Whether a line is the banner `script(1)` writes at the start or end of a capture.
 *
 * @param text One line.
 * @returns True for `Script started on …` and `Script done on …` lines.
 *
 * @example
 * ```ts
 * import { isScriptBanner } from "./lines.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isScriptBanner('Script started on 2026-11-29 21:16:37+00:00 [COMMAND="x"]'));
 * assert.ok(isScriptBanner('Script done on 2026-11-29 21:16:38+00:00 [COMMAND_EXIT_CODE="0"]'));
 * assert.ok(!isScriptBanner("SET: 1.00 requests per second"));
 * ```
 */
export function isScriptBanner(text: string): boolean {
  return SCRIPT_BANNER.test(text);
}

/** What the banner `script(1)` writes at the start of a capture says. */
export interface ScriptBanner {
  /** The command given with `script -c`, unescaped (not redacted), or null. */
  command: string | null;
  /** When the capture started, or null when the banner's date is not one kvlab reads. */
  startedAt: Date | null;
  /**
   * Where the command is in the line, as written (escaped): `text.slice(start, end)`; null when
   * there is no command. Redaction rewrites that range.
   */
  commandAt: { start: number; end: number } | null;
}

/**
 * Reads a `script(1)` start banner (`Script started on 2026-11-29 21:36:02+00:00
 * [COMMAND="redis-benchmark -q" …]`): the one place kvlab understands it.
 *
 * @param text One line.
 * @returns The command and start time, or null when the line is not a start banner.
 *
 * @example
 * ```ts
 * import { readScriptBanner } from "./lines.ts";
 * import assert from "node:assert/strict";
 * const b = readScriptBanner(
 *   'Script started on 2026-11-29 21:36:02+00:00 [COMMAND="redis-cli \\"x\\" -q" <not executed on terminal>]',
 * )!;
 * assert.equal(b.command, 'redis-cli "x" -q');
 * assert.equal(b.startedAt?.toISOString(), "2026-11-29T21:36:02.000Z");
 * assert.equal(readScriptBanner("Script started on 2026")?.startedAt, null);
 * assert.equal(readScriptBanner("SET: 1.00 requests per second"), null);
 * ```
 */
export function readScriptBanner(text: string): ScriptBanner | null {
  if (!text.startsWith(SCRIPT_STARTED)) return null;
  const m = SCRIPT_DATE.exec(text);
  let startedAt: Date | null = null;
  if (m) {
    const d = new Date(`${m[1]}T${m[2]}${m[3] ?? "Z"}`);
    if (!Number.isNaN(d.getTime())) startedAt = d;
  }
  const c = SCRIPT_COMMAND.exec(text);
  if (!c) return { command: null, startedAt, commandAt: null };
  const start = c.index + '[COMMAND="'.length;
  return {
    command: c[1].replace(/\\(.)/g, "$1"),
    startedAt,
    commandAt: { start, end: start + c[1].length },
  };
}

/**
 * Whether a text looks binary: NUL bytes or many control characters.
 *
 * @example
 * ```ts
 * import { looksBinary } from "./lines.ts";
 * import assert from "node:assert/strict";
 * assert.ok(looksBinary("\u0000\u0001\u0002abc"));
 * assert.ok(!looksBinary("SET: 1.00 requests per second\r\n"));
 * ```
 */
export function looksBinary(sample: string): boolean {
  if (sample.includes("\u0000")) return true;
  let control = 0;
  const n = Math.min(sample.length, 4096);
  for (let i = 0; i < n; i++) {
    const c = sample.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 27) || c === 0xfffd) control++;
  }
  return n > 0 && control / n > 0.1;
}
