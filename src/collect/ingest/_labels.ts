/**
 * Where a person splits a paste into runs: a Markdown heading (`# Original Redis`, `### Redka`),
 * a label line (`--- memcached`, `-- memix after improving writes`), or a short name on a line
 * of its own just before output (`Rust:`, `memix`, or a name underlined `=====`). The heading or
 * label names the runs below it, until the next one. Lines a format reads as its own (`ALL
 * STATS`, `Summary:`) are never labels. Pure.
 *
 * @module
 */

import { segments } from "../../text/lines.ts";
import { FORMATS } from "../formats/registry.ts";
import { readPrompt } from "../formats/transcript.ts";

/** A label line: its text, and whether it is one at once or only when output follows it. */
export interface LabelLine {
  label: string;
  /** `now`: a heading or a `--- name` line; `ahead`: a name, if output comes next. */
  when: "now" | "ahead";
}

/** Whether a line (one `\r`-drawn piece of it, trimmed) is one some format reads as its own. */
export function recognizedLine(text: string): boolean {
  return segments(text).some((s) => {
    const t = s.trim();
    return t !== "" && FORMATS.some((f) => f.recognizes(t));
  });
}

/**
 * What a line says as a label, or null.
 *
 * @param text The line.
 * @returns The label and when it counts, or null.
 *
 * @example
 * ```ts
 * import { labelLine } from "./_labels.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(labelLine("# Original Redis"), { label: "Original Redis", when: "now" });
 * assert.deepEqual(labelLine("-- memix after improving writes"), {
 *   label: "memix after improving writes", when: "now",
 * });
 * assert.deepEqual(labelLine("Rust:"), { label: "Rust", when: "ahead" });
 * assert.deepEqual(labelLine("memix"), { label: "memix", when: "ahead" });
 * assert.equal(labelLine("-- /memcached --protocol=binary -p 11211"), null);
 * assert.equal(labelLine("ALL STATS"), null);
 * assert.equal(labelLine("Summary:"), null);
 * assert.equal(labelLine("Some prose, with words."), null);
 * ```
 */
export function labelLine(text: string): LabelLine | null {
  const t = text.trim();
  if (t === "" || t.length > 80) return null;
  const label = labelShape(t);
  // a line a format reads as its own (`ALL STATS`, `Summary:`) is never a label
  return label === null || recognizedLine(t) ? null : label;
}

/** What a trimmed line's shape makes of it as a label, before asking the formats. */
function labelShape(t: string): LabelLine | null {
  const heading = /^#{1,6}\s+(.*?)\s*#*$/.exec(t);
  if (heading && heading[1] !== "") return { label: heading[1], when: "now" };
  const dashed = /^-{2,3}\s+(\S.*)$/.exec(t);
  // `-- /memcached --protocol=binary …`: a command noted, not a name
  if (dashed && !/(^\.{0,2}\/)|\s-{1,2}[\w-]/.test(dashed[1])) {
    return { label: dashed[1].trim(), when: "now" };
  }
  const colon = /^([A-Za-z][^:]{0,39}):$/.exec(t);
  if (colon) return { label: colon[1].trim(), when: "ahead" };
  if (/^[A-Za-z][\w.+-]{0,39}$/.test(t)) return { label: t, when: "ahead" };
  return null;
}

/**
 * Whether a line starts output: a command at a prompt, a line a format reads, or the underline
 * of a heading (`=====`, `-----`).
 *
 * @param text The line.
 * @returns Whether a name just above it labels what follows.
 *
 * @example
 * ```ts
 * import { startsOutput } from "./_labels.ts";
 * import assert from "node:assert/strict";
 * assert.ok(startsOutput("[RUN #1 100%,   2 secs]  0 threads: 400000 ops"));
 * assert.ok(startsOutput("$ redis-benchmark -q"));
 * assert.ok(startsOutput("====="));
 * assert.ok(!startsOutput("- `-n` - this will run 1,000,000 operations"));
 * ```
 */
export function startsOutput(text: string): boolean {
  const t = text.trim();
  return /^(={3,}|-{3,})$/.test(t) || readPrompt(text, 0) !== undefined || recognizedLine(t);
}
