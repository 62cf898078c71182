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
 * import { splitLines } from "./_lines.ts";
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
 * import { stripAnsi } from "./_lines.ts";
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
 * import { segments } from "./_lines.ts";
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

/**
 * Whether a line is the banner `script(1)` writes at the start or end of a capture.
 *
 * @example
 * ```ts
 * import { isScriptBanner } from "./_lines.ts";
 * import assert from "node:assert/strict";
 * assert.ok(isScriptBanner('Script started on 2026-11-29 21:16:37+00:00 [COMMAND="x"]'));
 * assert.ok(!isScriptBanner("SET: 1.00 requests per second"));
 * ```
 */
export function isScriptBanner(text: string): boolean {
  return /^Script (started|done) on /.test(text);
}

/**
 * Whether a text looks binary: NUL bytes or many control characters.
 *
 * @example
 * ```ts
 * import { looksBinary } from "./_lines.ts";
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
