import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { ingestFile, ingestPaths } from "../../../src/collect/mod.ts";
import { loadTable } from "../../../src/analyze/mod.ts";
import { Dataset } from "../../../src/store/dataset.ts";

const DATA = new URL("../../testdata/", import.meta.url).pathname;

/** Every memtier run of the fixtures: folder and base name, with the names of its files. */
function memtierRuns(): { dir: string; base: string; files: string[] }[] {
  const out = new Map<string, { dir: string; base: string; files: string[] }>();
  for (const dir of ["corpus", "real"]) {
    for (const e of Deno.readDirSync(DATA + dir)) {
      if (!/^memtier[-_]2\.3\.0_/.test(e.name)) continue;
      const base = e.name.replace(/(_hdr_.*|\.stderr\.txt|\.txt|\.json)$/, "");
      const key = `${dir}/${base}`;
      if (!out.has(key)) out.set(key, { dir, base, files: [] });
      out.get(key)!.files.push(e.name);
    }
  }
  return [...out.values()].sort((a, b) => a.base < b.base ? -1 : 1);
}

/** A printed stdout table row: its block, type and cells by header. */
interface PrintedRow {
  title: string;
  type: string;
  cells: Record<string, number | null>;
}

/** The tables a memtier stdout prints, read here without kvlab's parser. */
function printedRows(text: string): PrintedRow[] {
  const lines = text.split("\n");
  const out: PrintedRow[] = [];
  for (let i = 0; i + 2 < lines.length; i++) {
    const title = lines[i].trim();
    if (!/^=+$/.test(lines[i + 1].trim()) || !/^Type\s/.test(lines[i + 2])) continue;
    const header = lines[i + 2].trim().split(/\s{2,}/);
    for (let j = i + 4; j < lines.length && lines[j].trim() !== ""; j++) {
      const cells = lines[j].trim().split(/\s+/);
      const row: PrintedRow = { title, type: cells[0], cells: {} };
      header.forEach((h, k) => row.cells[h] = cells[k] === "---" ? null : Number(cells[k]));
      out.push(row);
    }
  }
  return out;
}

const TESTS: Record<string, string> = { Sets: "SET", Gets: "GET", Totals: "TOTALS", Incrs: "INCR" };

/** The results row a printed row is: same block (aggregate, run) and test. */
function storedRow(results: Record<string, unknown>[], p: PrintedRow) {
  const agg = p.title.startsWith("BEST")
    ? "best"
    : p.title.startsWith("WORST")
    ? "worst"
    : p.title.startsWith("AGGREGATED")
    ? "average"
    : null;
  const run = /^RUN #(\d+)/.exec(p.title)?.[1];
  return results.find((r) =>
    r.test === TESTS[p.type] && r.aggregate === agg &&
    (agg !== null || r.run_index === (run ? Number(run) : 1))
  );
}

/** Equal to the printed value, to the printed precision. */
function printed(stored: unknown, shown: number | null, what: string): void {
  if (shown === null) return;
  assert.equal(typeof stored, "number", what);
  assert.ok(Math.abs((stored as number) - shown) <= 0.005 + 1e-9, `${what}: ${stored} vs ${shown}`);
}

Deno.test("ingestPaths() reads every memtier run of the fixtures as one run", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-mt-ingest-" });
  const data = `${dir}/data`;
  const runs = memtierRuns();
  assert.equal(runs.length, 13);
  for (const r of runs) {
    for (const f of r.files) Deno.copyFileSync(`${DATA}${r.dir}/${f}`, `${dir}/${f}`);
  }
  const outcomes = await ingestPaths([dir], { data, server: "redis" });
  assert.deepEqual(
    outcomes.map((o) => [o.status, o.error?.message]),
    runs.map(() => ["ingested", undefined]),
  );
  const results = loadTable(data, "results").toRecords();
  const hdr = loadTable(data, "hdr_histograms").toRecords();
  for (const r of runs) {
    await t.step(r.base, () => {
      const o = outcomes.find((x) => x.path.includes(`/${r.base}.`))!;
      assert.equal(o.runs.length, 1);
      const id = o.runs[0].runId;
      const m = Dataset.open(data).runManifest(id)!;
      assert.equal(m.tool, "memtier_benchmark");
      assert.equal(m.tool_version, "2.3.0");
      const json = r.files.some((f) => f.endsWith(".json"));
      const format = r.base.includes("sigkill") ? "progress" : json ? "json" : "stdout";
      assert.equal(m.output_format, format);
      // every file of the run, byte for byte (none holds a secret)
      const raw = Dataset.open(data).runRaw(id);
      assert.deepEqual(raw.map((x) => x.name).sort(), [...r.files].sort());
      for (const x of raw) assert.deepEqual(x.bytes, Deno.readFileSync(`${dir}/${x.name}`));
      // one hdr_histograms row per interval log
      const logs = r.files.filter((f) => f.endsWith(".hgrm")).length;
      assert.equal(hmine(hdr, id).filter((h) => h.source === "hgrm").length, logs);
      const stdout = Deno.readTextFileSync(`${dir}/${r.base}.txt`);
      const mineResults = results.filter((x) => x.run_id === id);
      if (r.base.includes("sigkill")) {
        // killed: stdout empty, JSON cut after its configuration; the last progress only
        assert.equal(m.status, "incomplete");
        assert.deepEqual(mineResults.map((x) => [x.test, x.ops_per_sec]), [["TOTALS", null]]);
        return;
      }
      // interrupted (a sub-second run whose printed duration cannot be true is a request-count
      // run, timed by its last progress line: SCHEMA.md)
      const cut = r.base.includes("sigint");
      assert.equal(m.status, cut ? "incomplete" : "complete");
      const rows = printedRows(stdout);
      assert.ok(rows.length >= 2);
      for (const p of rows) {
        const ops = p.cells["Ops/sec"];
        if (p.type !== "Totals" && !ops) continue; // a type with no requests
        const s = storedRow(mineResults, p);
        assert.ok(s, `${p.title} ${p.type}`);
        const what = `${p.title} ${p.type}`;
        // memtier's printed rate: stored as is, or (when its own duration is wrong, see
        // SCHEMA.md) kept in tool_ops_per_sec beside the rate kvlab can justify
        const printedOps = s.tool_ops_per_sec ?? s.ops_per_sec;
        if (m.status === "complete") printed(printedOps, ops, `${what} ops/sec`);
        printed(s.p50_latency_ms, p.cells["p50 Latency"] ?? null, `${what} p50`);
        printed(s.p99_latency_ms, p.cells["p99 Latency"] ?? null, `${what} p99`);
        printed(s.p999_latency_ms, p.cells["p99.9 Latency"] ?? null, `${what} p99.9`);
        // the JSON prints Totals latency as 0.000: derived, it equals the table's (memtier's own
        // JSON gives other types of the aggregated block the mean of the runs' means)
        if (p.type === "Totals") {
          printed(s.avg_latency_ms, p.cells["Avg. Latency"], `${what} avg latency`);
        }
      }
    });
  }
  await t.step("the same files again are one duplicate per run", async () => {
    const again = await ingestPaths([dir], { data, server: "redis" });
    assert.deepEqual(again.map((o) => o.status), runs.map(() => "duplicate"));
  });
  Deno.removeSync(dir, { recursive: true });
});

function hmine(rows: Record<string, unknown>[], id: string) {
  return rows.filter((h) => h.run_id === id);
}

Deno.test("ingestFile() reads memtier files alone", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-mt-alone-" });
  const data = `${dir}/data`;
  const base = "memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s";
  const one = (name: string, as = name) => {
    Deno.mkdirSync(`${dir}/${as}.d`);
    Deno.copyFileSync(`${DATA}corpus/${name}`, `${dir}/${as}.d/${as}`);
    return `${dir}/${as}.d/${as}`;
  };
  await t.step("stdout: the table's numbers, complete", async () => {
    const o = await ingestFile(one(`${base}.txt`), { data });
    assert.equal(o.status, "ingested", o.error?.message);
    const m = Dataset.open(data).runManifest(o.runs[0].runId)!;
    assert.deepEqual([m.status, m.output_format, m.tool], [
      "complete",
      "stdout",
      "memtier_benchmark",
    ]);
    const rows = loadTable(data, "results").filter(pl.col("run_id").eq(pl.lit(o.runs[0].runId)))
      .sort("test_index").toRecords();
    assert.deepEqual(
      rows.map((r) => [r.test, r.ops_per_sec, r.avg_latency_ms, r.p999_latency_ms]),
      [
        ["SET", 3018.37, 0.60264, 6.431],
        ["GET", 30174.96, 0.60153, 6.559],
        ["TOTALS", 33193.33, 0.60163, 6.559],
      ],
    );
  });
  await t.step("a cut stdout: incomplete", async () => {
    const text = Deno.readTextFileSync(`${DATA}corpus/${base}.txt`);
    Deno.mkdirSync(`${dir}/cut`);
    Deno.writeTextFileSync(`${dir}/cut/cut.txt`, text.slice(0, text.indexOf("Gets")));
    const o = await ingestFile(`${dir}/cut/cut.txt`, { data });
    assert.equal(o.status, "ingested", o.error?.message);
    assert.equal(o.runs[0].status, "incomplete");
    assert.match(String(Dataset.open(data).runManifest(o.runs[0].runId)!.error), /cut short/);
  });
  await t.step(".hgrm alone: hdr_histograms rows only, status from the log", async () => {
    const o = await ingestFile(one(`${base}_hdr_SET_command_run_1.hgrm`), { data });
    assert.equal(o.status, "ingested", o.error?.message);
    assert.deepEqual([o.runs[0].status, o.runs[0].tests], ["complete", 0]);
    const h = loadTable(data, "hdr_histograms").filter(pl.col("run_id").eq(pl.lit(o.runs[0].runId)))
      .toRecords();
    assert.deepEqual(h.map((r) => [r.test, r.test_index, r.run_index]), [["SET", null, 1]]);
    const text = Deno.readTextFileSync(`${DATA}corpus/${base}_hdr_GET_command_run_1.hgrm`);
    Deno.writeTextFileSync(`${dir}/cut/x_hdr_GET_command_run_1.hgrm`, text.slice(0, -40));
    const cut = await ingestFile(`${dir}/cut/x_hdr_GET_command_run_1.hgrm`, { data });
    assert.equal(cut.runs[0]?.status, "failed", cut.error?.message);
  });
  await t.step("an HDR percentile .txt alone: a clear error", async () => {
    const o = await ingestFile(one(`${base}_hdr_FULL_RUN_1.txt`), { data });
    assert.equal(o.status, "error");
    assert.match(o.error!.message, /HDR percentile \.txt is kept only with its run's other files/);
  });
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("ingestFile() reads a memtier_benchmark command in a transcript", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-mt-transcript-" });
  const data = `${dir}/data`;
  const base = `${DATA}corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s`;
  const stdout = Deno.readTextFileSync(`${base}.txt`);
  const text = [
    "$ redis-benchmark -q -t set -n 10",
    "SET: 1000.00 requests per second",
    "$ memtier_benchmark -s 127.0.0.1 -p 6379 -a s3cretPW -t 2 -c 10 --ratio=1:10 -d 256 \\",
    "    --test-time=10",
    Deno.readTextFileSync(`${base}.stderr.txt`) + stdout,
  ].join("\n");
  Deno.writeTextFileSync(`${dir}/session.txt`, text);
  const o = await ingestFile(`${dir}/session.txt`, { data, server: "redis" });
  assert.equal(o.status, "ingested", o.error?.message);
  assert.deepEqual(o.runs.map((r) => [r.tool, r.status]).sort(), [
    ["memtier_benchmark", "complete"],
    ["redis-benchmark", "complete"],
  ]);
  const id = o.runs.find((r) => r.tool === "memtier_benchmark")!.runId;
  const m = Dataset.open(data).runManifest(id)!;
  assert.match(String(m.command), /^memtier_benchmark -s 127\.0\.0\.1 -p 6379 -a \*\*\* -t 2/);
  assert.equal(m.target, "127.0.0.1:6379");
  assert.equal(m.source_line_start, 3);
  const rows = loadTable(data, "results").filter(pl.col("run_id").eq(pl.lit(id)))
    .sort("test_index").toRecords();
  // the command fills what stdout does not print; memtier's defaults for the flags not given
  assert.deepEqual(
    rows.map((r) => [r.test, r.ops_per_sec, r.clients, r.data_size_bytes, r.pipeline, r.keyspace]),
    [
      ["SET", 3018.37, 20, 256, 1, 10_000_001],
      ["GET", 30174.96, 20, 256, 1, 10_000_001],
      ["TOTALS", 33193.33, 20, 256, 1, 10_000_001],
    ],
  );
  // lines are the transcript's
  const lines = text.split("\n");
  assert.match(lines[Number(rows[0].source_line) - 1], /^Sets\s+3018\.37/);
  // the per-second progress from stderr
  assert.ok(loadTable(data, "time_series").filter(pl.col("run_id").eq(pl.lit(id))).height > 5);
  // the password is in no stored byte
  for (const r of Dataset.open(data).runRaw(id)) {
    assert.ok(!new TextDecoder().decode(r.bytes).includes("s3cretPW"));
  }
  Deno.removeSync(dir, { recursive: true });
});
