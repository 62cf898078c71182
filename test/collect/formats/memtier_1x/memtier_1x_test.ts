/**
 * memtier_benchmark 1.x stdout (one mean `Latency` column, no percentiles), read by the
 * `memtier-1x` format: a paste alone, and a `memtier_benchmark …` command's output in a
 * transcript. The output is memc-rs's published run (`../shared/corpus/realworld/`, read there,
 * never copied into this repository).
 */
import assert from "node:assert/strict";
import { ingestFile } from "../../../../src/collect/ingest/ingest.ts";
import { loadTable } from "../../../../src/analyze/load.ts";
import { requireShared } from "../../../_support/shared.ts";

const PASTE = "20_memcrs-memtier1x-two-runs.md";

/** The first run of the paste (its `memix` heading, progress line and ALL STATS table). */
function firstRun(): string | null {
  const text = requireShared(`corpus/realworld/${PASTE}`, "memtier 1.x paste");
  if (text === null) return null;
  const lines = text.split("\n");
  const end = lines.indexOf("memcached");
  return lines.slice(1, end).join("\n").trimEnd() + "\n";
}

Deno.test("memtier 1.x stdout is read by its own format", async (t) => {
  const run = firstRun();
  if (run === null) return;
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-memtier1x-" });
  try {
    await t.step("a paste alone: its table, latency as the mean", async () => {
      Deno.writeTextFileSync(`${dir}/memix.txt`, run);
      const out = await ingestFile(`${dir}/memix.txt`, { data: `${dir}/a`, server: "memix" });
      assert.equal(out.status, "ingested", String(out.error));
      assert.deepEqual(out.runs.map((r) => [r.tool, r.status]), [[
        "memtier_benchmark",
        "complete",
      ]]);
      const rows = loadTable(`${dir}/a`, "results").sort("source_line").toRecords();
      assert.deepEqual(
        rows.map((
          r,
        ) => [r.test, r.ops_per_sec, r.hits_per_sec, r.avg_latency_ms, r.p50_latency_ms]),
        [
          ["SET", 152692.5, null, 0.23, null],
          ["GET", 152692.5, 152692.5, 0.229, null],
          ["TOTALS", 305385.01, 152692.5, 0.23, null],
        ],
      );
      const runs = loadTable(`${dir}/a`, "runs").toRecords();
      assert.equal(runs[0].output_format, "stdout-1x");
    });

    await t.step("a transcript: the command's flags, the output's numbers", async () => {
      const text = `$ memtier_benchmark -s 127.0.0.1 -p 11211 -P memcache_text -t 4 -c 50\n${run}`;
      Deno.writeTextFileSync(`${dir}/session.txt`, text);
      const out = await ingestFile(`${dir}/session.txt`, { data: `${dir}/b`, server: "memix" });
      assert.equal(out.status, "ingested", String(out.error));
      const runs = loadTable(`${dir}/b`, "runs").toRecords();
      assert.deepEqual(
        runs.map((r) => [r.tool, r.output_format, r.target, r.source_line_start]),
        [["memtier_benchmark", "stdout-1x", "127.0.0.1:11211", 1]],
      );
      const totals = loadTable(`${dir}/b`, "results").toRecords().find((r) => r.test === "TOTALS")!;
      assert.deepEqual([totals.ops_per_sec, totals.clients, totals.threads], [305385.01, 200, 4]);
      // its table's lines are the transcript's
      assert.equal(
        totals.source_line,
        text.split("\n").findIndex((l) => l.startsWith("Totals")) + 1,
      );
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
