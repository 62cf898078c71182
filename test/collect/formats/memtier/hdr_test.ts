import assert from "node:assert/strict";
import {
  decodeMemtierHistogram,
  memtierPercentileMs,
  mergeMemtierHistograms,
  parseHdrFileName,
  parseHdrIntervalLog,
  parseHdrPercentiles,
  parseMemtierJson,
} from "../../../../src/collect/formats/memtier/mod.ts";
import { ParseError } from "../../../../src/errors.ts";

import { MEMTIER_RUNS, readTestdata as read, testdataFiles } from "../../../_support/testdata.ts";

/** Every `--hdr-file-prefix` file, with the JSON of the same run. */
const HDR = testdataFiles(["corpus", "real"], /memtier[-_]2\.3\.0_.*_hdr_.*\.(txt|hgrm)$/);

/** The JSON block and type a HDR file describes. */
function jsonTypeOf(path: string) {
  const name = parseHdrFileName(path.split("/").pop()!)!;
  const json = parseMemtierJson(read(path.replace(/_hdr_.*$/, ".json")));
  const runs = json.blocks.filter((b) => b.aggregate === null);
  // run-count files without --print-all-runs have no per-run block: only run 1 = BEST here
  const block = runs.find((b) => b.runIndex === name.runIndex) ??
    (name.runIndex === 1 ? json.blocks.find((b) => b.aggregate === "best") : undefined);
  const test = name.test === "FULL" ? "TOTALS" : name.test;
  return { name, type: block?.types.find((x) => x.test === test) };
}

Deno.test("parseHdrIntervalLog() and parseHdrPercentiles() read every HDR fixture", async (t) => {
  assert.ok(HDR.length >= 30);
  for (const f of HDR.filter((p) => p.endsWith(".hgrm"))) {
    await t.step(`${f}: the histogram is the JSON's, counts match the .txt`, () => {
      const log = parseHdrIntervalLog(read(f), { file: f });
      assert.ok(log.complete);
      assert.equal(log.formatVersion, "1.2");
      assert.equal(log.intervals.length, 1);
      const h = decodeMemtierHistogram(log.intervals[0].compressed);
      const txt = parseHdrPercentiles(read(f.replace(/\.hgrm$/, ".txt")));
      assert.ok(txt.complete);
      assert.equal(h.totalCount, txt.totalCount);
      assert.equal(txt.rows.at(-1)!.totalCount, txt.totalCount);
      assert.equal(log.intervals[0].intervalMaxMs, txt.maxLatencyMs);
      assert.equal((h.mean / 1000).toFixed(3), txt.meanLatencyMs!.toFixed(3));
      const { name, type } = jsonTypeOf(f);
      assert.match(
        log.title!,
        name.test === "FULL" ? /^Full Run/ : new RegExp(`^${name.test} command`),
      );
      if (type) {
        assert.equal(h.totalCount, type.count);
        assert.equal(log.intervals[0].compressed, type.histogram);
      }
    });
  }
});

Deno.test("memtierPercentileMs() computes percentiles as memtier prints them", async (t) => {
  let differsFromJs = 0;
  for (const f of MEMTIER_RUNS.map((run) => run + ".json")) {
    await t.step(f, () => {
      for (const block of parseMemtierJson(read(f)).blocks) {
        for (const type of block.types) {
          if (!type.count || type.derived.includes("percentiles")) continue;
          const h = decodeMemtierHistogram(type.histogram!);
          for (const p of type.percentiles) {
            assert.equal(
              memtierPercentileMs(h, p.percentile),
              p.latencyMs,
              `${block.title} ${type.test} p${p.percentile}`,
            );
            if (h.getValueAtPercentile(p.percentile) / 1000 !== p.latencyMs) differsFromJs++;
          }
        }
      }
    });
  }
  // why the function exists: hdr-histogram-js rounds the target count up
  assert.ok(differsFromJs > 0);
});

Deno.test("mergeMemtierHistograms() adds histograms exactly", () => {
  const json = parseMemtierJson(
    read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-runcount2-test5s.json"),
  );
  const avg = json.blocks.at(-1)!;
  const [set, get] = avg.types;
  const merged = mergeMemtierHistograms([set.histogram!, get.histogram!]);
  assert.equal(merged.histogram.totalCount, set.count! + get.count!);
  assert.equal(decodeMemtierHistogram(merged.compressed).totalCount, merged.histogram.totalCount);
  const p100 = (c: string) => memtierPercentileMs(decodeMemtierHistogram(c), 100)!;
  assert.equal(p100(merged.compressed), Math.max(p100(set.histogram!), p100(get.histogram!)));
  assert.throws(() => mergeMemtierHistograms([]), RangeError);
});

Deno.test("HDR parsers handle cut and foreign text", async (t) => {
  const txt = read(
    "corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratelimit500-test10s_hdr_SET_command_run_1.txt",
  );
  const hgrm = read(
    "corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratelimit500-test10s_hdr_SET_command_run_1.hgrm",
  );
  await t.step("a percentile file cut before its footer", () => {
    const cut = parseHdrPercentiles(txt.slice(0, txt.indexOf("#[Mean") - 20));
    assert.equal(cut.complete, false);
    assert.equal(cut.totalCount, null);
    assert.ok(cut.rows.length > 10);
  });
  await t.step("an interval log cut inside its histogram", () => {
    const cut = parseHdrIntervalLog(hgrm.slice(0, hgrm.length - 30));
    assert.deepEqual([cut.complete, cut.intervals.length], [false, 0]);
    assert.equal(cut.title, "SET command HDR latency histogram results");
  });
  await t.step("other text throws with its line", () => {
    assert.throws(
      () => parseHdrPercentiles("Value Percentile\nhello\n", { file: "a.txt" }),
      (e) => e instanceof ParseError && e.line === 2 && e.file === "a.txt",
    );
    assert.throws(() => parseHdrIntervalLog(txt), ParseError);
    assert.throws(() => decodeMemtierHistogram("HISTFAAAnope"), TypeError);
    assert.throws(() => decodeMemtierHistogram("hello"), TypeError);
  });
  await t.step("file names", () => {
    assert.deepEqual(parseHdrFileName("p_hdr_INCR_command_run_3.txt"), {
      prefix: "p_hdr",
      test: "INCR",
      runIndex: 3,
      format: "percentiles",
    });
  });
});
