/**
 * Bounded memory on HdrHistograms (issue 21): a compressed histogram that inflates past 16 MiB
 * (a decompression bomb: 600 MiB took 1.41 GB before) or whose header asks for an absurd range
 * is not decoded; the JSON keeps its results with a warning naming the file and line, an
 * interval log is refused at its line.
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { deflateSync } from "node:zlib";
import { ParseError } from "../../../../src/errors.ts";
import { parseHdrIntervalLog } from "../../../../src/collect/formats/memtier/hdr.ts";
import { parseMemtierJson } from "../../../../src/collect/formats/memtier/json/parse.ts";
import { memtierRows } from "../../../../src/collect/formats/memtier/rows.ts";

const REAL = new URL("../../../testdata/real/", import.meta.url).pathname;
const JSON_TEXT = Deno.readTextFileSync(
  `${REAL}memtier-2.3.0_redis-7.0.15_ratelimit100-pct4.json`,
);
const REAL_HIST = /"Compressed Histogram": "(HISTF[^"]+)"/.exec(JSON_TEXT)![1];

/** A compressed V2 histogram with the given header and `payload` bytes of zero counts. */
function histogram(digits: number, lowest: bigint, highest: bigint, payload: number): string {
  const cookie = Buffer.from(REAL_HIST, "base64").subarray(0, 4);
  const inner = Buffer.alloc(40 + payload);
  inner.writeUInt32BE(0x1c849303, 0);
  inner.writeUInt32BE(payload, 4);
  inner.writeUInt32BE(0, 8);
  inner.writeUInt32BE(digits, 12);
  inner.writeBigInt64BE(lowest, 16);
  inner.writeBigInt64BE(highest, 24);
  inner.writeDoubleBE(1, 32);
  const z = deflateSync(inner);
  const head = Buffer.alloc(8);
  cookie.copy(head, 0);
  head.writeUInt32BE(z.length, 4);
  return Buffer.concat([head, z]).toString("base64");
}

const BOMB = histogram(3, 1n, 6_000_000_000n, 64 << 20); // inflates to 64 MiB
const WIDE = histogram(5, 1n, 2n ** 62n, 16); // a counts array for 2^62 at 5 digits

Deno.test("a memtier JSON histogram that is a bomb or absurdly wide is not decoded", async (t) => {
  for (
    const [name, bad, message] of [
      ["64 MiB inflated", BOMB, /inflates to more than 16 MiB/],
      ["a range of 2^62 at 5 digits", WIDE, /at most 5 digits and a range of 2\^50/],
    ] as const
  ) {
    await t.step(name, () => {
      assert.ok(BOMB.length < 200_000, `${BOMB.length} characters`);
      const text = JSON_TEXT.replace(REAL_HIST, bad);
      const line = text.slice(0, text.indexOf(bad)).split("\n").length;
      const rows = memtierRows(
        { json: parseMemtierJson(text, { file: "bomb.json" }), jsonFile: "bomb.json" },
        "r",
      );
      const w = rows.warnings.find((w) => message.test(w));
      assert.ok(w, rows.warnings.join("\n"));
      assert.match(w, new RegExp(`^[^:]*: ?bomb\\.json:${line}: `));
      // the results stay; the bad histogram is not stored
      assert.ok(rows.results.some((r) => r.test === "SET"));
      assert.ok(!rows.hdr_histograms.some((h) => h.compressed === bad));
    });
  }
});

Deno.test("parseHdrIntervalLog() refuses a bomb at its file and line", () => {
  const log = "#[StartTime: 1.000 (seconds since epoch)]\n" +
    `0.000,1.000,0.500,${REAL_HIST}\n1.000,1.000,0.500,${BOMB}\n`;
  assert.throws(
    () => parseHdrIntervalLog(log, { file: "x.hgrm" }),
    (e) => e instanceof ParseError && /x\.hgrm:3:1: .*inflates to more than 16 MiB/.test(e.message),
  );
});
