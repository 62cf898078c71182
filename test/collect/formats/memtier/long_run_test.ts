/**
 * Bounded reading of memtier JSON (issue 21): a valid 36-hour run (130,000 Time-Serie seconds)
 * ingests (no `push(...rows)` overflowing the stack), and a deeply nested text is refused with
 * its file and line instead of "Maximum call stack size exceeded".
 */

import assert from "node:assert/strict";
import { ParseError } from "../../../../src/errors.ts";
import { parseMemtierJson } from "../../../../src/collect/formats/memtier/json/parse.ts";
import { memtierRows } from "../../../../src/collect/formats/memtier/rows.ts";

const REAL = new URL("../../../testdata/real/", import.meta.url).pathname;
const TEXT = Deno.readTextFileSync(`${REAL}memtier-2.3.0_redis-7.0.15_ratelimit100-pct4.json`);
const SECONDS = 130_000;

/** The real JSON with its first Time-Serie (ALL STATS, Sets) grown to `n` seconds. */
function longRun(n: number): string {
  const start = TEXT.indexOf('"Time-Serie":{') + '"Time-Serie":{'.length;
  const end = TEXT.indexOf("\n\t\t\t\t}", start);
  const second = (i: number) =>
    `${i ? "," : ""}"${i}":{"Bytes RX": 400,"Bytes TX": 5580,"Count": 80,` +
    `"Average Latency": 0.214,"Accumulated Latency": 17,"Min Latency": 0.034,` +
    `"Max Latency": 0.878,"p50.00": 0.191,"p90.00": 0.311,"p99.00": 0.639,"p99.99": 0.639}\n`;
  const body: string[] = ["\n"];
  for (let i = 0; i < n; i++) body.push(second(i));
  return TEXT.slice(0, start) + body.join("") + TEXT.slice(end);
}

Deno.test("memtierRows() reads a 36-hour run's 130,000 seconds", () => {
  const json = parseMemtierJson(longRun(SECONDS), { file: "long.json" });
  const rows = memtierRows({ json, jsonFile: "long.json" }, "r");
  const set = rows.results.find((r) => r.test === "SET" && r.aggregate === null)!;
  const series = rows.time_series.filter((s) => s.test_index === set.test_index);
  assert.equal(series.length, SECONDS);
  assert.ok(json.complete && rows.complete, rows.reason ?? "");
});

Deno.test("parseMemtierJson() refuses nesting deeper than memtier's, naming the file and line", () => {
  const deep = "[".repeat(200_000) + "]".repeat(200_000);
  assert.throws(
    () => parseMemtierJson(`{\n"ALL STATS":\n${deep}}`, { file: "deep.json" }),
    (e) => e instanceof ParseError && /deep\.json:3:\d+: .*levels of nesting/.test(e.message),
  );
});
