/**
 * Text from a dataset, a file or a server made inert where it leaves kvlab: one function per
 * output kind. {@link terminalText} for everything the CLI prints (escape sequences and other
 * control characters shown, not obeyed), {@link markdownText} for Markdown pages and tables
 * (HTML and Markdown syntax shown as text), {@link csvCell} for CSV cells (no live spreadsheet
 * formula, as OWASP's CSV-injection advice says).
 *
 * @module
 */

// C0 controls but tab and line feed, DEL, C1 controls (a lone 0x9b is a CSI on some
// terminals), and the bidirectional overrides and isolates that reorder what a reader sees.
// deno-lint-ignore no-control-regex
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function shown(c: string): string {
  const n = c.charCodeAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16)}`;
}

/**
 * Text as a terminal may show it: control characters (escape sequences, carriage returns,
 * backspaces, C1 controls, bidirectional overrides) written as visible `\xNN` / `\uNNNN`; tab
 * and line feed are kept.
 *
 * @param text Any text.
 * @returns The text with nothing a terminal obeys; the same string when there was nothing.
 *
 * @example
 * ```ts
 * import { terminalText } from "./safe.ts";
 * import assert from "node:assert/strict";
 * assert.equal(terminalText("a\x1b]0;pwned\x07b\rc\n"), "a\\x1b]0;pwned\\x07b\\x0dc\n");
 * assert.equal(terminalText("p50\t0.2 ms\n"), "p50\t0.2 ms\n");
 * assert.equal(terminalText("x\u202eevil"), "x\\u202eevil");
 * ```
 */
export function terminalText(text: string): string {
  CONTROLS.lastIndex = 0;
  return CONTROLS.test(text) ? text.replace(CONTROLS, shown) : text;
}

const HTML = /[&<>"]/g;
const ENTITY: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/**
 * A value as Markdown prose or a table cell shows it literally: HTML escaped (`<script>`,
 * `<img onerror=…>` become text), `\` escaped first (so no backslash the text holds can undo
 * an escape: `\[x\](…)` stays text, `x\|y` stays one cell), `|` escaped (it would end a
 * table cell), `[` `]` and `` ` `` escaped (no link, image or code span made of a label), no GFM
 * autolink (`https://…`, `www.…`, `a@b.c` are shown, not linked: the `:` of `://`, the `.` of
 * `www.` and `@` are escaped), line breaks as spaces, control characters as in
 * {@link terminalText}. Rendered (CommonMark, GFM), the text reads as it was given.
 *
 * @param text A label, server name, version, config key … from a dataset.
 * @returns The text, safe to place in a Markdown page or table.
 *
 * @example
 * ```ts
 * import { markdownText } from "./safe.ts";
 * import assert from "node:assert/strict";
 * assert.equal(markdownText("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
 * assert.equal(markdownText('7.0<img src=x onerror="a()">'), "7.0&lt;img src=x onerror=&quot;a()&quot;&gt;");
 * assert.equal(markdownText("a|b [x](javascript:y)"), "a\\|b \\[x\\](javascript:y)");
 * assert.equal(markdownText("\\[x\\](y) a\\|b"), "\\\\\\[x\\\\\\](y) a\\\\\\|b");
 * assert.equal(markdownText("https://e.example www.e.example a@e.example"), "https\\://e.example www\\.e.example a\\@e.example");
 * assert.equal(markdownText("redis 7.0.15"), "redis 7.0.15");
 * ```
 */
export function markdownText(text: string): string {
  return terminalText(text.replace(/\r?\n/g, " "))
    .replace(HTML, (c) => ENTITY[c])
    .replace(/[\\|[\]`@]|:(?=\/\/)|(?<=\bwww)\./gi, (c) => `\\${c}`);
}

// Controls but tab, line feed and carriage return (which CSV quotes) inside a cell.
// deno-lint-ignore no-control-regex
const CSV_CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

// A plain number: left as a number (OWASP's guard is for text that starts like a formula).
const NUMBER = /^[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|Infinity)$/;

/**
 * A CSV cell a spreadsheet reads as text, never as a formula (OWASP, CSV injection): a cell
 * starting with `=`, `+`, `-`, `@`, tab or carriage return gets a leading `'`, unless it is a
 * plain number (`-1.5`, `-Infinity`); control characters are shown as in {@link terminalText}. Quoting
 * (commas, quotes, line feeds) is the CSV writer's.
 *
 * @param text A cell's text.
 * @returns The cell, inert.
 *
 * @example
 * ```ts
 * import { csvCell } from "./safe.ts";
 * import assert from "node:assert/strict";
 * assert.equal(csvCell('=HYPERLINK("http://x","y")'), `'=HYPERLINK("http://x","y")`);
 * assert.equal(csvCell("+cmd|' /C calc'!A0"), "'+cmd|' /C calc'!A0");
 * assert.equal(csvCell("@SUM(A1)"), "'@SUM(A1)");
 * assert.equal(csvCell("\t=1+1"), "'\t=1+1");
 * assert.equal(csvCell("-1.5e-3"), "-1.5e-3");
 * assert.equal(csvCell("redis-7"), "redis-7");
 * ```
 */
export function csvCell(text: string): string {
  const guard = /^[=+\-@\t\r]/.test(text) && !NUMBER.test(text) ? "'" : "";
  const c = text.replace(CSV_CONTROLS, shown);
  return guard + c;
}
