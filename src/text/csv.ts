/**
 * A small reader for one CSV record on one line, as redis-benchmark `--csv` prints them.
 *
 * @module
 */

/**
 * Splits one CSV line into fields. Fields may be quoted with `"`; `""` inside quotes is a quote.
 * Returns `undefined` when the quotes do not balance (a cut line).
 *
 * @example
 * ```ts
 * import { splitCsvLine } from "./csv.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(splitCsvLine('"SET","41562.76"'), ["SET", "41562.76"]);
 * assert.deepEqual(splitCsvLine('a,"b ""c""",d'), ["a", 'b "c"', "d"]);
 * assert.equal(splitCsvLine('"SET","415'), undefined);
 * ```
 */
export function splitCsvLine(line: string): string[] | undefined {
  const fields: string[] = [];
  let i = 0;
  const n = line.length;
  while (true) {
    if (i < n && line[i] === '"') {
      let value = "";
      i++;
      while (true) {
        const q = line.indexOf('"', i);
        if (q < 0) return undefined;
        value += line.slice(i, q);
        if (line[q + 1] === '"') {
          value += '"';
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      fields.push(value);
      if (i >= n) return fields;
      if (line[i] !== ",") return undefined;
      i++;
    } else {
      const c = line.indexOf(",", i);
      if (c < 0) {
        fields.push(line.slice(i));
        return fields;
      }
      fields.push(line.slice(i, c));
      i = c + 1;
    }
  }
}
