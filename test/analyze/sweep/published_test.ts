import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { deliveryLatencyChart, publishedSteps, toSvg } from "../../../src/analyze/mod.ts";
import { writePublishedSweep } from "../../../src/collect/ingest/published_sweep.ts";

import { PUBLISHED_TABLES as TABLES, REDIS_816_VERDICTS } from "../../_support/published_sweep.ts";

/** Seed 000's dataset as `deno task data` writes it, in a folder of its own. */
function publishedDataset(): string {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-published-" });
  writePublishedSweep(Deno.readTextFileSync(TABLES), data);
  return data;
}

Deno.test("publishedSteps() reads seed 000's published tables from the dataset", async (t) => {
  const data = publishedDataset();

  await t.step("the pub/sub delivery table: 3 rates × 6 arms, every cell p50 / p99", () => {
    const rows = publishedSteps(data, { test: "PUBSUB_ONE_TO_ONE" });
    assert.equal(rows.height, 18);
    assert.deepEqual(
      [...new Set(rows.getColumn("requested_ops_per_sec").toArray())],
      [21000, 107000, 215000],
    );
    assert.ok(rows.getColumn("verdict").toArray().every((x) => x === "sustained"));
    const cell = (arm: string, rate: number) =>
      rows.filter(pl.col("label").eq(pl.lit(arm)).and(pl.col("requested_ops_per_sec").eq(rate)))
        .select("server", "server_io_threads", "p50_latency_ms", "p99_latency_ms").toRecords()[0];
    assert.deepEqual(cell("Redis 1 thread", 215000), {
      server: "redis",
      server_io_threads: 1,
      p50_latency_ms: 0.51,
      p99_latency_ms: 1.03,
    });
    assert.deepEqual(cell("Valkey io-threads 8", 21000), {
      server: "valkey",
      server_io_threads: 8,
      p50_latency_ms: 0.12,
      p99_latency_ms: 0.78,
    });
    assert.deepEqual(cell("HotKV", 107000), {
      server: "hotkv",
      server_io_threads: null,
      p50_latency_ms: 0.1,
      p99_latency_ms: 1.02,
    });
  });

  await t.step("the 816-connection request table: NS with the rate reached, then -", () => {
    const rows = publishedSteps(data, { test: "GET", clients: 816 }).filter(
      pl.col("label").eq(pl.lit("Redis 1 thread")),
    );
    assert.deepEqual(rows.getColumn("verdict").toArray(), REDIS_816_VERDICTS);
    assert.equal(rows.getColumn("achieved_ops_per_sec").toArray()[3], 258000);
    assert.equal(rows.getColumn("requested_ops_per_sec").toArray()[3], 399840);
  });

  await t.step("every table, in the published order; a table it does not hold is refused", () => {
    const all = publishedSteps(data);
    const tables = [...new Set(all.toRecords().map((r) => `${r.test} ${r.clients}`))];
    assert.deepEqual(tables, ["GET 816", "GET 48", "PUBSUB_ONE_TO_ONE 64"]);
    assert.throws(
      () => publishedSteps(data, { test: "GET", clients: 7 }),
      /no published table of GET at 7 connections \(the dataset holds GET at 816, GET at 48, /,
    );
  });

  await t.step("a dataset without published runs is refused", () => {
    const empty = Deno.makeTempDirSync({ prefix: "kvlab-published-" });
    assert.throws(() => publishedSteps(empty), /no published tables in the dataset/);
    Deno.removeSync(empty, { recursive: true });
  });
  Deno.removeSync(data, { recursive: true });
});

Deno.test("deliveryLatencyChart() draws p50 and p99 per arm against the target rate", async () => {
  const data = publishedDataset();
  const spec = deliveryLatencyChart(publishedSteps(data, { test: "PUBSUB_ONE_TO_ONE" }), {
    by: "label",
  });
  const svg = await toSvg(spec);
  assert.match(svg, /target delivery rate/);
  assert.match(svg, /Valkey io-threads 8/);
  // one line per arm and percentile: 6 arms × 2
  assert.equal((svg.match(/class="mark-line role-mark/g) ?? []).length, 12);
  Deno.removeSync(data, { recursive: true });
});
