import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { deliveryLatencyChart, publishedTableRows, toSvg } from "../../../src/analyze/mod.ts";
import { ParseError } from "../../../src/errors.ts";
import { parsePublishedSweep } from "../../../src/published_sweep.ts";

const TABLES = new URL("../../../data/raw/fixed-rate-latency/published-tables.md", import.meta.url);

Deno.test("publishedTableRows() reads seed 000's published tables", async (t) => {
  const md = Deno.readTextFileSync(TABLES);

  await t.step("the pub/sub delivery table: 3 rates × 6 arms, every cell p50 / p99", () => {
    const rows = publishedTableRows(md);
    assert.equal(rows.height, 18);
    assert.deepEqual(
      [...new Set(rows.getColumn("requested_ops_per_sec").toArray())],
      [21000, 107000, 215000],
    );
    assert.ok(rows.getColumn("approximate").toArray().every((x) => x === true));
    assert.ok(rows.getColumn("verdict").toArray().every((x) => x === "sustained"));
    const cell = (arm: string, rate: number) =>
      rows.filter(pl.col("arm").eq(pl.lit(arm)).and(pl.col("requested_ops_per_sec").eq(rate)))
        .select("server", "io_threads", "p50_latency_ms", "p99_latency_ms").toRecords()[0];
    assert.deepEqual(cell("Redis 1スレッド", 215000), {
      server: "redis",
      io_threads: 1,
      p50_latency_ms: 0.51,
      p99_latency_ms: 1.03,
    });
    assert.deepEqual(cell("Valkey I/Oスレッド8", 21000), {
      server: "valkey",
      io_threads: 8,
      p50_latency_ms: 0.12,
      p99_latency_ms: 0.78,
    });
    assert.deepEqual(cell("HotKV", 107000), {
      server: "hotkv",
      io_threads: null,
      p50_latency_ms: 0.1,
      p99_latency_ms: 1.02,
    });
  });

  await t.step("the 816-connection request table: NS with the rate reached, then -", () => {
    const rows = publishedTableRows(md, "リクエスト/秒").filter(
      pl.col("arm").eq(pl.lit("Redis 1スレッド")),
    );
    // the first table with that header is the 816-connection one
    assert.deepEqual(rows.getColumn("verdict").toArray(), [
      "sustained",
      "sustained",
      "sustained",
      "NS",
      "skipped",
      "skipped",
      "skipped",
      "skipped",
    ]);
    assert.equal(rows.getColumn("achieved_ops_per_sec").toArray()[3], 258000);
    assert.equal(rows.getColumn("requested_ops_per_sec").toArray()[3], 399840);
  });

  await t.step("a missing table or a bad cell is a ParseError at its line", () => {
    assert.throws(() => publishedTableRows("no table"), ParseError);
    const bad = "| 配信/秒 | A |\n|---|---|\n| 1,000 | 0.1 - 0.2 |\n";
    assert.throws(() => publishedTableRows(bad, "配信/秒", "t.md"), /t\.md:3:1/);
  });

  await t.step("ingest reads the same cells with the same one parser", () => {
    const short = "| 配信/秒 | A | B |\n|---|---|---|\n| 1,000 | 0.1 / 0.2 |\n";
    assert.throws(
      () => publishedTableRows(short, "配信/秒", "t.md"),
      /t\.md:3:1: expected a rate and 2 cells/,
    );
    assert.throws(
      () => parsePublishedSweep(short, "t.md"),
      /t\.md:3:1: expected a rate and 2 cells/,
    );
    const [table] = parsePublishedSweep(md, "published-tables.md")
      .filter((x) => x.header === "リクエスト/秒");
    const rows = publishedTableRows(md, "リクエスト/秒").toRecords();
    const cells = table.cells[0].flatMap((_, i) => table.arms.map((_, k) => table.cells[k][i]));
    assert.deepEqual(
      rows.map((
        r,
      ) => [r.requested_ops_per_sec, r.verdict, r.p99_latency_ms, r.achieved_ops_per_sec]),
      cells.map((c) => [c.requestedOpsPerSec, c.verdict, c.p99LatencyMs, c.achievedOpsPerSec]),
    );
  });
});

Deno.test("deliveryLatencyChart() draws p50 and p99 per arm against the target rate", async () => {
  const rows = publishedTableRows(Deno.readTextFileSync(TABLES)).withColumns(
    pl.lit("PUBSUB_ONE_TO_ONE").alias("test"),
  );
  const spec = deliveryLatencyChart(rows, { by: "arm" });
  const svg = await toSvg(spec);
  assert.match(svg, /target delivery rate/);
  assert.match(svg, /Valkey I\/Oスレッド8/);
  // one line per arm and percentile: 6 arms × 2
  assert.equal((svg.match(/class="mark-line role-mark/g) ?? []).length, 12);
});
