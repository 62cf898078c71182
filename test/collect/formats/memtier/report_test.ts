import assert from "node:assert/strict";
import {
  parseMemtierProgress,
  parseMemtierReport,
} from "../../../../src/collect/formats/memtier/mod.ts";
import { ParseError } from "../../../../src/errors.ts";

import { readTestdata as read, testdataFiles } from "../../../_support/testdata.ts";

/** Every memtier stdout fixture (`.txt` that is neither stderr nor an HDR file). */
const STDOUT = testdataFiles(["corpus", "real"], /\/memtier[-_]2\.3\.0_[^/]*\.txt$/)
  .filter((p) => !/stderr|_hdr_/.test(p));

/** Table rows read naively: every line starting with a type label and numbers or `---`. */
function naiveRows(text: string): string[][] {
  return text.split("\n").filter((l) => /^[A-Z][a-z]+s?\s+[\d.]+\s/.test(l)).map((l) =>
    l.trim().split(/\s+/)
  );
}

Deno.test("parseMemtierReport() reads every memtier stdout fixture", async (t) => {
  assert.ok(STDOUT.length >= 9, STDOUT.join());
  for (const f of STDOUT) {
    await t.step(f, () => {
      const text = read(f);
      const r = parseMemtierReport(text, { file: f });
      if (text === "") {
        assert.equal(r.complete, false); // the SIGKILL run printed nothing
        return;
      }
      assert.ok(r.complete, f);
      assert.deepEqual(r.warnings, []);
      const rows = r.blocks.flatMap((b) => b.rows);
      const naive = naiveRows(text);
      assert.equal(rows.length, naive.length);
      rows.forEach((row, i) => {
        const cells = naive[i].map((c) => (c === "---" ? null : Number(c)));
        assert.equal(row.label, naive[i][0]);
        assert.equal(row.opsPerSec, cells[1]);
        assert.equal(row.kbPerSec, cells.at(-1));
        const lat = [row.avgLatencyMs, ...row.percentiles.map((p) => p.latencyMs)];
        if (row.avgLatencyMs !== null) assert.ok(cells.includes(lat[0]));
      });
      const dist = text.split("\n").filter((l) => /^[A-Z]+\s+-?\d+\.\d{3}\s+\d+\.\d{3}$/.test(l));
      assert.equal(r.blocks.flatMap((b) => b.distributions).length, dist.length);
    });
  }
});

Deno.test("parseMemtierReport() reads the columns from the header", async (t) => {
  await t.step("run count 2: three blocks, the aggregated one last", () => {
    const r = parseMemtierReport(
      read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-runcount2-test5s.txt"),
    );
    assert.deepEqual(r.blocks.map((b) => [b.aggregate, b.runCount]), [
      ["best", null],
      ["worst", null],
      ["average", 2],
    ]);
    const totals = r.blocks[2].rows[3];
    assert.deepEqual(
      [totals.opsPerSec, totals.hitsPerSec, totals.avgLatencyMs, totals.p50LatencyMs],
      [43962.52, 39964.02, 0.51673, 0.343],
    );
    assert.deepEqual([totals.p99LatencyMs, totals.p999LatencyMs, totals.kbPerSec], [
      4.047,
      8.703,
      12765.58,
    ]);
  });
  await t.step("--print-percentiles 50,90,99,99.99", () => {
    const r = parseMemtierReport(read("real/memtier-2.3.0_redis-7.0.15_ratelimit100-pct4.txt"));
    const sets = r.blocks[0].rows[0];
    assert.deepEqual(sets.percentiles.map((p) => p.percentile), [50, 90, 99, 99.99]);
    assert.equal(sets.p999LatencyMs, null);
  });
  await t.step("arbitrary commands: no Hits/Misses columns", () => {
    const r = parseMemtierReport(read("real/memtier-2.3.0_valkey-8.0.1_command-set-incr.txt"));
    assert.deepEqual(r.blocks[0].rows.map((x) => [x.test, x.hitsPerSec]), [
      ["SET", null],
      ["INCR", null],
      ["TOTALS", null],
    ]);
    assert.equal(r.blocks[0].rows[1].opsPerSec, 10610.6);
  });
  await t.step("preload with -n allkeys: a note before the run information", () => {
    const r = parseMemtierReport(
      read("corpus/memtier_2.3.0_redis-7.0.15_preload-allkeys-100k.txt"),
    );
    assert.deepEqual(r.notes, ["setting requests to 5000"]);
    assert.equal(r.runInformation?.requestsPerClient, 5000);
    assert.equal(r.blocks[0].rows[1].avgLatencyMs, null); // Gets: ---
    assert.deepEqual(r.blocks[0].distributions, []); // --hide-histogram
  });
  await t.step("cluster columns", () => {
    const text = "ALL STATS\n" + "=".repeat(40) + "\n" +
      "Type         Ops/sec     Hits/sec   Misses/sec    MOVED/sec      ASK/sec    Avg. Latency       KB/sec \n" +
      "-".repeat(40) + "\n" +
      "Totals         10.00         1.00         0.00         2.00         3.00         0.50000         1.00 \n";
    const row = parseMemtierReport(text).blocks[0].rows[0];
    assert.deepEqual([row.movedPerSec, row.askPerSec, row.avgLatencyMs], [2, 3, 0.5]);
  });
});

Deno.test("parseMemtierReport() marks a cut report incomplete", async (t) => {
  const text = read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-runcount2-test5s.txt");
  const lines = text.split("\n");
  await t.step("every cut at a line end before the last one", () => {
    for (let n = 0; n < lines.length - 2; n++) {
      const r = parseMemtierReport(lines.slice(0, n).join("\n") + "\n");
      assert.equal(r.complete, false, `cut after ${n} lines`);
    }
  });
  await t.step("a cut inside a row stops before it", () => {
    const at = text.indexOf("Gets        31647.73") + 15;
    const r = parseMemtierReport(text.slice(0, at));
    assert.equal(r.complete, false);
    assert.deepEqual(r.blocks[0].rows.map((x) => x.test), ["SET"]);
  });
  await t.step("a row that does not fit the header throws with its line", () => {
    const bad = lines.slice(0, 12).join("\n").replace("Gets        31647.73", "Gets  x");
    assert.throws(
      () => parseMemtierReport(bad + "\n", { file: "r.txt" }),
      (e) => e instanceof ParseError && e.file === "r.txt" && e.line === 11,
    );
  });
});

Deno.test("parseMemtierProgress() reads memtier's stderr", async (t) => {
  const stderrFiles = testdataFiles(["corpus", "real"], /memtier[-_]2\.3\.0_.*\.stderr\.txt$/);
  for (const f of stderrFiles) {
    await t.step(`every progress update of ${f}`, () => {
      const text = read(f);
      const e = parseMemtierProgress(text);
      const naive = text.split(/[\r\n]/).filter((s) => /^\[RUN #\d+ \d+%/.test(s));
      assert.equal(e.progress.length, naive.length);
      e.progress.forEach((p, i) => {
        const m = /(\d+) ops,\s+(\d+) \(avg:\s+(\d+)\) ops\/sec/.exec(naive[i])!;
        assert.deepEqual([p.ops, p.opsPerSec, p.avgOpsPerSec], [+m[1], +m[2], +m[3]]);
      });
      assert.deepEqual(e.other, []);
    });
  }
  await t.step("the preload ends at 100 % with 0 threads", () => {
    const e = parseMemtierProgress(
      read("corpus/memtier_2.3.0_redis-7.0.15_preload-allkeys-100k.stderr.txt"),
    );
    const last = e.progress.at(-1)!;
    assert.deepEqual([last.percent, last.threads, last.ops, last.avgLatencyMs], [
      100,
      0,
      100000,
      0.57,
    ]);
    assert.equal(last.avgBytesPerSec, Math.round(10.06 * 1024 * 1024));
    assert.ok(e.complete);
  });
  await t.step("run count 2: updates of both runs, files written", () => {
    const e = parseMemtierProgress(
      read("corpus/memtier_2.3.0_redis-7.0.15_t2c10-runcount2-test5s.stderr.txt"),
    );
    assert.deepEqual([...new Set(e.progress.map((p) => p.runIndex))], [1, 2]);
    assert.equal(e.files.length, 13); // 12 HDR files and the JSON
  });
  await t.step("SIGINT: the interrupt notice", () => {
    const e = parseMemtierProgress(
      read("real/memtier-2.3.0_redis-7.0.15_sigint-at-1.5s.stderr.txt"),
    );
    assert.deepEqual(e.interrupted.map((i) => [i.runIndex, i.afterS]), [[1, 1.5]]);
    assert.ok(e.complete);
  });
  await t.step("SIGKILL: cut after a progress update", () => {
    const e = parseMemtierProgress(
      read("real/memtier-2.3.0_redis-7.0.15_sigkill-at-1.5s.stderr.txt"),
    );
    assert.equal(e.complete, false);
    assert.equal(e.progress.length, 1);
  });
  await t.step("nan latency and connection errors", () => {
    const e = parseMemtierProgress(
      "[RUN #1 5%,   0 secs]  1 threads  2 conns 3 conn errors:           0 ops,       0 (avg:       0) " +
        "ops/sec, 0.00KB/sec (avg: 0.00KB/sec), -nan (avg: -nan) msec latency\r",
    );
    assert.deepEqual([e.progress[0].connectionErrors, e.progress[0].latencyMs], [3, null]);
  });
});
