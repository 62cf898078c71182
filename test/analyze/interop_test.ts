import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { DuckDBInstance } from "@duckdb/node-api";
import { compare, loadResults } from "../../src/analyze/mod.ts";
import { ingestPaths } from "../../src/collect/mod.ts";
import { compactDataset } from "../../src/store/compact.ts";

/** Three repetitions per arm of a `-q` output, numbers varied. */
function writeArms(dir: string): void {
  const rates: Record<string, number[]> = { redis: [100, 104, 101], valkey: [120, 118, 125] };
  for (const [server, list] of Object.entries(rates)) {
    Deno.mkdirSync(`${dir}/${server}`, { recursive: true });
    list.forEach((r, i) =>
      Deno.writeTextFileSync(
        `${dir}/${server}/rep${i}.txt`,
        `SET: ${(r * 1000).toFixed(2)} requests per second, p50=0.${i + 1}00 msec\n` +
          `GET: ${(r * 1100).toFixed(2)} requests per second, p50=0.${i + 2}00 msec\n`,
      )
    );
  }
}

/** Medians per arm and test, as DuckDB reads the dataset by glob (SCHEMA.md, "Layout"). */
async function duckMedians(data: string): Promise<Map<string, number>> {
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const glob = (t: string) =>
      `read_parquet('${data}/batches/*/${t}.*parquet', union_by_name=true)`;
    const reader = await conn.runAndReadAll(
      `SELECT r.server, x.test, median(x.ops_per_sec) AS m FROM ${glob("results")} x ` +
        `JOIN ${glob("runs")} r USING (run_id) WHERE x.complete GROUP BY 1, 2`,
    );
    return new Map(
      reader.getRowObjects().map((o) => [`${o.server}/${o.test}`, Number(o.m)]),
    );
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

Deno.test("DuckDB reads a dataset by glob and gets kvlab compare's medians", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-duckdb-" });
  writeArms(dir);
  for (const server of ["redis", "valkey"]) {
    // one ingest call per file: several batches, as many writers would leave them
    for (const f of [...Deno.readDirSync(`${dir}/${server}`)]) {
      await ingestPaths([`${dir}/${server}/${f.name}`], { data: `${dir}/data`, server });
    }
  }
  const kvlab = () => {
    const c = compare(loadResults(`${dir}/data`), { by: "server", baseline: "redis" });
    const out = new Map<string, number>();
    for (const r of c.toRecords()) {
      out.set(`redis/${r.test}`, r.baseline_median_ops_per_sec as number);
      out.set(`valkey/${r.test}`, r.candidate_median_ops_per_sec as number);
    }
    return out;
  };
  const expected = new Map([
    ["redis/SET", 101_000],
    ["redis/GET", 111_100],
    ["valkey/SET", 120_000],
    ["valkey/GET", 132_000],
  ]);
  await t.step("before compaction", async () => {
    assert.deepEqual(kvlab(), expected);
    assert.deepEqual(await duckMedians(`${dir}/data`), expected);
  });
  await t.step("after compaction", async () => {
    const r = compactDataset(`${dir}/data`);
    assert.equal(r.batchesAfter, 1);
    assert.deepEqual(kvlab(), expected);
    assert.deepEqual(await duckMedians(`${dir}/data`), expected);
  });
  await t.step("polars reads the same globs", () => {
    const df = pl.scanParquet(`${dir}/data/batches/*/results.*parquet`).collectSync();
    assert.equal(df.height, 12);
  });
  Deno.removeSync(dir, { recursive: true });
});
