/**
 * memtier_benchmark outputs in UTF-16 (issue 21): stdout and JSON, little-endian with a BOM
 * (PowerShell's `>`) and big-endian without one, ingest like their UTF-8 originals
 * (`test/testdata/real/`), with the same numbers.
 */

import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/load.ts";
import { Dataset } from "../../src/store/dataset.ts";
import { allBytes, HOSTILE, kvlab, leaked } from "./_cli.ts";
import { utf16 } from "../_support/utf16.ts";

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
  const run = Dataset.open(data).runFacts(["run_id", "source_path", "status"])
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

/** The tests, rates, latencies and stored command of each run in `data`, in order. */
function runsOf(data: string): string[] {
  const runs = Dataset.open(data).runFacts(["run_id", "status", "command"]);
  const results = loadTable(data, "results").toRecords();
  return runs.map((run) =>
    [
      run.status,
      run.command,
      ...results.filter((r) => r.run_id === run.run_id)
        .map((r) => `${r.test}:${r.ops_per_sec}:${r.p50_latency_ms}`),
    ].join(" ")
  );
}

Deno.test("hostile: UTF-16 transcripts and redis-benchmark outputs without a BOM ingest like UTF-8", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-utf16-nobom-" });
  const originals = [
    // a transcript with passwords in its commands (redacted the same way)
    `${HOSTILE}continued-redis-benchmark-7.0.15.txt`,
    new URL("../testdata/corpus/redis-benchmark_7.0.15_redis-7.0.15_csv.csv", import.meta.url)
      .pathname,
  ];
  for (const [i, original] of originals.entries()) {
    const text = Deno.readTextFileSync(original);
    const want = `${dir}/utf8-${i}`;
    const r0 = await kvlab(["ingest", original, "--data", want]);
    assert.equal(r0.code, 0, r0.printed);
    for (const order of ["le", "be"] as const) {
      await t.step(`${original.split("/").at(-1)}, UTF-16 ${order.toUpperCase()}`, async () => {
        const file = `${dir}/in-${i}-${order}.txt`;
        Deno.writeFileSync(file, utf16(text, { le: order === "le", bom: false }));
        const data = `${dir}/d-${i}-${order}`;
        const r = await kvlab(["ingest", file, "--data", data]);
        assert.equal(r.code, 0, r.printed);
        assert.match(r.stdout, /: 1 run \(1 complete\)/, r.printed);
        assert.deepEqual(runsOf(data), runsOf(want));
        assert.ok(runsOf(data)[0].split(" ").length > 3, "tests were read");
        // the transcript's passwords are redacted in UTF-16 too: in no file written, nothing printed
        const secrets = ["ContSecret52", "ContSecret53"];
        assert.deepEqual(leaked(allBytes(data).text, secrets), []);
        assert.deepEqual(leaked(r.printed, secrets), []);
      });
    }
  }
  Deno.removeSync(dir, { recursive: true });
});
