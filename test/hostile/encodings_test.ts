/**
 * memtier_benchmark outputs in UTF-16 (issue 21): stdout and JSON, little-endian with a BOM
 * (PowerShell's `>`) and big-endian without one, ingest like their UTF-8 originals
 * (`test/testdata/real/`), with the same numbers.
 */

import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/load.ts";
import { runFacts } from "../../src/store/layout.ts";
import { HOSTILE, kvlab } from "./_cli.ts";

const REAL = new URL("../testdata/real/", import.meta.url).pathname;

/** Each UTF-16 fixture and the UTF-8 original it was converted from. */
const CASES: [string, string][] = [
  ["utf16le-bom-memtier-2.3.0-stdout.txt", "memtier-2.3.0_redis-7.0.15_ratelimit100-pct4.txt"],
  ["utf16be-nobom-memtier-2.3.0-stdout.txt", "memtier-2.3.0_redis-7.0.15_ratelimit100-pct4.txt"],
  [
    "utf16le-bom-memtier-2.3.0-json.json",
    "memtier-2.3.0_valkey-8.0.1_t2c5-pipeline4-requests2000.json",
  ],
  [
    "utf16be-nobom-memtier-2.3.0-json.json",
    "memtier-2.3.0_valkey-8.0.1_t2c5-pipeline4-requests2000.json",
  ],
];

/** The ops/s of each test of the run ingested from `file`, in order. */
function opsOf(data: string, file: string): string[] {
  const run = runFacts(data, ["run_id", "source_path", "status"])
    .find((r) => String(r.source_path).endsWith(file));
  assert.ok(run, `a run of ${file}`);
  assert.equal(run.status, "complete", file);
  const results = loadTable(data, "results").toRecords()
    .filter((r) => r.run_id === run.run_id);
  return results.map((r) => `${r.test}:${r.ops_per_sec}:${r.p50_latency_ms}`);
}

Deno.test("hostile: UTF-16 memtier stdout and JSON ingest like UTF-8", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-utf16-" });
  for (const [i, [file, original]] of CASES.entries()) {
    await t.step(file, async () => {
      const data = `${dir}/d${i}`;
      // each file copied alone (the original's siblings stay out of its run)
      Deno.mkdirSync(`${dir}/in${i}`);
      Deno.copyFileSync(HOSTILE + file, `${dir}/in${i}/${file}`);
      Deno.copyFileSync(REAL + original, `${dir}/in${i}/${original}`);
      const r = await kvlab([
        "ingest",
        `${dir}/in${i}/${file}`,
        `${dir}/in${i}/${original}`,
        "--data",
        data,
      ]);
      assert.equal(r.code, 0, r.printed);
      assert.match(r.stdout, new RegExp(`${file}: 1 run \\(1 complete\\)`), r.printed);
      const ops = opsOf(data, file);
      assert.ok(ops.length > 0 && ops.every((o) => !o.includes("null:null")), ops.join());
      assert.deepEqual(ops, opsOf(data, original));
    });
  }
  Deno.removeSync(dir, { recursive: true });
});
