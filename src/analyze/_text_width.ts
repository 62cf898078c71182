/**
 * Text widths for Vega's layout, from DejaVu Sans' advance widths (the theme's first font, and
 * resvg's default). Without a canvas Vega guesses 0.8 em per character, about a third too wide
 * for this font: axis titles then reach past their plot and push it down (blank bands under
 * chart titles), and legend labels are cut with "…" long before their limit. Private to the
 * analyze folder (`export.ts` installs it).
 *
 * @module
 */

// DejaVu Sans advance widths in em (units per em 2048), regular weight
const NARROW = new Set([..."iljIJ.,:;!|'`"]);
const EM: Record<string, number> = {
  " ": 0.318,
  "%": 0.95,
  "(": 0.39,
  ")": 0.39,
  "/": 0.337,
  "-": 0.361,
  "_": 0.5,
  "×": 0.838,
  "·": 0.318,
  "…": 1,
  "m": 0.974,
  "w": 0.818,
  "M": 0.863,
  "W": 0.989,
  "f": 0.352,
  "t": 0.392,
  "r": 0.411,
  "s": 0.521,
  "c": 0.55,
  "z": 0.525,
  "+": 0.838,
  "=": 0.838,
  "<": 0.838,
  ">": 0.838,
  '"': 0.46,
  "#": 0.838,
};

/** The advance width of one character, in em. */
function charEm(c: string): number {
  if (c in EM) return EM[c];
  if (NARROW.has(c)) return 0.29;
  if (c >= "0" && c <= "9") return 0.636;
  if (c >= "a" && c <= "z") return 0.615;
  if (c >= "A" && c <= "Z") return 0.7;
  // CJK and other wide scripts (IPAGothic): a full em
  return c.charCodeAt(0) > 0x2e80 ? 1 : 0.62;
}

/**
 * The width in px of `text` drawn as Vega's text `item` would draw it (its font size, bold
 * about 10 % wider), at most the item's `limit` (Vega cuts longer text with "…").
 *
 * @param item A Vega text item (`fontSize`, `fontWeight`, `limit`).
 * @param text The text (a line of it).
 * @returns The width, px.
 *
 * @example
 * ```ts
 * import { textWidth } from "./_text_width.ts";
 * import assert from "node:assert/strict";
 * assert.equal(Math.round(textWidth({ fontSize: 10 }, "99.999")), 35);
 * assert.equal(textWidth({ fontSize: 10, limit: 20 }, "a long legend label"), 20);
 * ```
 */
export function textWidth(
  item: { fontSize?: number; fontWeight?: string | number; limit?: number },
  text: unknown,
): number {
  const s = text == null ? "" : String(text).trim();
  const size = item.fontSize != null ? Number(item.fontSize) || 0 : 11;
  const bold = item.fontWeight === "bold" || Number(item.fontWeight) >= 600 ? 1.1 : 1;
  let em = 0;
  for (const c of s) em += charEm(c);
  const w = em * size * bold;
  return item.limit && item.limit > 0 ? Math.min(w, item.limit) : w;
}
