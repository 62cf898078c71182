import assert from "node:assert/strict";
import { ParseError } from "../../../src/errors.ts";
import {
  parsePublishedSweep,
  writePublishedSweep,
} from "../../../src/collect/ingest/published_sweep.ts";
import { loadTable } from "../../../src/analyze/load.ts";

const TABLES = new URL("../../../data/raw/fixed-rate-latency/published-tables.md", import.meta.url);

Deno.test("parsePublishedSweep() reads seed 000's three tables", async (t) => {
  const md = Deno.readTextFileSync(TABLES);

  await t.step("each table's test, connections, arms and cells", () => {
    const tables = parsePublishedSweep(md, "published-tables.md");
    assert.deepEqual(tables.map((x) => [x.header, x.test, x.clients, x.arms.length]), [
      ["リクエスト/秒", "GET", 816, 6],
      ["リクエスト/秒", "GET", 48, 6],
      ["配信/秒", "PUBSUB_ONE_TO_ONE", 64, 6],
    ]);
    const deliveries = tables[2];
    assert.deepEqual(
      deliveries.arms.map((a) => [a.printed, a.label, a.server, a.ioThreads]).slice(1, 4),
      [
        ["Dragonfly", "Dragonfly", "dragonfly", null],
        ["Redis 1スレッド", "Redis 1 thread", "redis", 1],
        ["Redis I/Oスレッド8", "Redis io-threads 8", "redis", 8],
      ],
    );
    assert.ok(deliveries.cells.flat().every((c) => c.approximate && c.verdict === "sustained"));
  });

  await t.step("a bad cell or a short row is a ParseError at its line", () => {
    assert.deepEqual(parsePublishedSweep("no table", "t.md"), []);
    const bad = "| 配信/秒 | A |\n|---|---|\n| 1,000 | 0.1 - 0.2 |\n";
    assert.throws(() => parsePublishedSweep(bad, "t.md"), ParseError);
    assert.throws(() => parsePublishedSweep(bad, "t.md"), /t\.md:3:1: expected `p50 \/ p99`/);
    const short = "| 配信/秒 | A | B |\n|---|---|---|\n| 1,000 | 0.1 / 0.2 |\n";
    assert.throws(
      () => parsePublishedSweep(short, "t.md"),
      /t\.md:3:1: expected a rate and 2 cells/,
    );
  });
});

Deno.test("writePublishedSweep() stores each arm's server and io-threads on its runs", () => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-published-" });
  assert.deepEqual(writePublishedSweep(Deno.readTextFileSync(TABLES), data), {
    runs: 18,
    tests: 83,
  });
  const runs = loadTable(data, "runs").toRecords();
  assert.ok(runs.every((r) => r.output_format === "published"));
  const arms = new Map(runs.map((r) => [r.label, [r.server, r.server_io_threads]]));
  assert.deepEqual(Object.fromEntries(arms), {
    "HotKV": ["hotkv", null],
    "Dragonfly": ["dragonfly", null],
    "Redis 1 thread": ["redis", 1],
    "Redis io-threads 8": ["redis", 8],
    "Valkey 1 thread": ["valkey", 1],
    "Valkey io-threads 8": ["valkey", 8],
  });
  Deno.removeSync(data, { recursive: true });
});
