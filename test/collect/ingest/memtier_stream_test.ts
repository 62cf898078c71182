/**
 * memtier JSON ingested in chunks (issue 21: bounded memory): the rows written are those the
 * whole-text parser makes, on every fixture and on files cut short; UTF-16 files and the
 * redacted raw copy still work; a 36-hour run ingests; deep nesting is refused naming the file.
 * Memory itself is measured by `deno task bench --only rss`, not here.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import pl from "nodejs-polars";
import { ingestFile } from "../../../src/collect/mod.ts";
import { loadTable } from "../../../src/analyze/mod.ts";
import {
  MemtierJsonReader,
  parseMemtierJson,
} from "../../../src/collect/formats/memtier/json/parse.ts";
import { memtierRows } from "../../../src/collect/formats/memtier/rows.ts";
import { tableFrame } from "../../../src/frame.ts";
import { decodeText } from "../../../src/text/decode.ts";
import { redactText } from "../../../src/text/redact.ts";
import { utf16 } from "../../_support/utf16.ts";
import { Dataset } from "../../../src/store/dataset.ts";
import {
  MEMTIER_RUNS,
  MEMTIER_SIGINT_RUN,
  MEMTIER_SIGKILL_RUN,
  TESTDATA as DATA,
} from "../../_support/testdata.ts";

const FIXTURES = [
  ...[...MEMTIER_RUNS, MEMTIER_SIGINT_RUN, MEMTIER_SIGKILL_RUN].map((run) => run + ".json"),
  "hostile/memtier-2.3.0_authenticate.json",
  "hostile/memtier-2.3.0_authenticate-unescaped.json",
  "hostile/utf16le-bom-memtier-2.3.0-json.json",
  "hostile/utf16be-nobom-memtier-2.3.0-json.json",
];
const TABLES = ["results", "latency_distribution", "time_series", "hdr_histograms"] as const;

/** A table's rows as sorted JSON lines, the run id left out. */
function lines(df: pl.DataFrame): string[] {
  return df.drop("run_id").toRecords().map((r) =>
    JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? String(v) : v))
  ).sort();
}

/** Ingests `bytes` as a JSON alone in a folder; the dataset and the run. */
async function ingestAlone(bytes: Uint8Array, name = "run.json") {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-stream-" });
  Deno.writeFileSync(`${dir}/${name}`, bytes);
  const out = await ingestFile(`${dir}/${name}`, { data: `${dir}/data`, server: "redis" });
  return { dir, data: `${dir}/data`, out };
}

/** What the whole-text parser makes of the same bytes, as frames. */
function wholeTextTables(bytes: Uint8Array, name = "run.json") {
  const json = parseMemtierJson(redactText(decodeText(bytes)), { file: name });
  const rows = memtierRows({ json, jsonFile: name }, "r");
  return { rows, frames: TABLES.map((t) => tableFrame(t, rows[t] as never)) };
}

async function assertSameAsWholeText(bytes: Uint8Array, what: string): Promise<void> {
  const { dir, data, out } = await ingestAlone(bytes);
  try {
    const whole = wholeTextTables(bytes);
    assert.equal(out.status, "ingested", `${what}: ${out.error?.message}`);
    assert.equal(out.runs[0].status === "complete", whole.rows.complete, what);
    for (const [i, t] of TABLES.entries()) {
      const stored = lines(loadTable(data, t));
      assert.deepEqual(stored, lines(whole.frames[i]), `${what}: ${t}`);
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("ingest of a memtier JSON in chunks writes the rows of the whole-text parser", async (t) => {
  for (const f of FIXTURES) {
    await t.step(f, () => assertSameAsWholeText(Deno.readFileSync(DATA + f), f));
  }
  await t.step("a file cut short anywhere (a killed run): read as far as it goes", async () => {
    const bytes = Deno.readFileSync(
      DATA + "real/memtier-2.3.0_redis-7.0.15_runcount3-allruns.json",
    );
    for (const end of [1500, 4000, 9000, 30_000, 60_001, 90_003, bytes.length - 3]) {
      await assertSameAsWholeText(bytes.subarray(0, end), `cut at ${end}`);
    }
  });
});

Deno.test("MemtierJsonReader split anywhere gives parseMemtierJson's result and series", () => {
  const text = Deno.readTextFileSync(
    DATA + "real/memtier-2.3.0_redis-7.0.15_runcount3-allruns.json",
  );
  const whole = parseMemtierJson(text, { file: "r.json" });
  fc.assert(
    fc.property(fc.array(fc.nat({ max: text.length }), { maxLength: 12 }), (cuts) => {
      const seconds: unknown[][] = [];
      const reader = new MemtierJsonReader({
        file: "r.json",
        onSecond: (s, at) =>
          (seconds[at.block] ??= [])[at.type] = [
            ...((seconds[at.block]?.[at.type] as unknown[]) ?? []),
            s,
          ],
      });
      let at = 0;
      for (const c of [...cuts, text.length].sort((a, b) => a - b)) {
        reader.push(text.slice(at, c));
        at = c;
      }
      const json = reader.end();
      assert.deepEqual(
        json.blocks.map((b) => b.types.map((t) => ({ ...t, timeSeries: [], series: undefined }))),
        whole.blocks.map((b) => b.types.map((t) => ({ ...t, timeSeries: [], series: undefined }))),
      );
      whole.blocks.forEach((b, i) =>
        b.types.forEach((t, j) => {
          assert.deepEqual(seconds[i]?.[j] ?? [], t.timeSeries);
          assert.equal(json.blocks[i].types[j].series?.seconds ?? 0, t.timeSeries.length);
        })
      );
    }),
    { numRuns: 40 },
  );
});

Deno.test("ingest of a UTF-16 memtier JSON (LE with a BOM, BE without) in chunks", async () => {
  const text = Deno.readTextFileSync(
    DATA + "real/memtier-2.3.0_redis-7.0.15_runcount3-allruns.json",
  );
  const utf8 = new TextEncoder().encode(text);
  const { dir, data } = await ingestAlone(utf8);
  try {
    const want = TABLES.map((t) => lines(loadTable(data, t)));
    for (const [le, bom] of [[true, true], [false, false]]) {
      const other = await ingestAlone(utf16(text, { le, bom }));
      try {
        assert.equal(other.out.status, "ingested", other.out.error?.message);
        assert.deepEqual(TABLES.map((t) => lines(loadTable(other.data, t))), want);
        // the raw copy is kept as UTF-8 text, as for a whole-text read
        const raw = Dataset.open(other.data).runRaw(other.out.runs[0].runId)[0];
        assert.equal(new TextDecoder().decode(raw.bytes), text);
      } finally {
        Deno.removeSync(other.dir, { recursive: true });
      }
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("ingest of a memtier JSON redacts authenticate in the raw copy written in chunks", async () => {
  const bytes = Deno.readFileSync(DATA + "hostile/memtier-2.3.0_authenticate.json");
  const { dir, data, out } = await ingestAlone(bytes);
  try {
    const raw = Dataset.open(data).runRaw(out.runs[0].runId)[0];
    const stored = new TextDecoder().decode(raw.bytes);
    assert.equal(stored, redactText(decodeText(bytes)));
    assert.notEqual(stored, new TextDecoder().decode(bytes));
    assert.equal(Dataset.open(data).runManifest(out.runs[0].runId)?.raw_redacted, true);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("ingest of a 36-hour memtier run (130,000 Time-Serie seconds) in chunks", async () => {
  const text = Deno.readTextFileSync(
    DATA + "real/memtier-2.3.0_redis-7.0.15_ratelimit100-pct4.json",
  );
  const start = text.indexOf('"Time-Serie":{') + '"Time-Serie":{'.length;
  const end = text.indexOf("\n\t\t\t\t}", start);
  const body: string[] = ["\n"];
  for (let i = 0; i < 130_000; i++) {
    body.push(
      `${i ? "," : ""}"${i}":{"Bytes RX": 400,"Bytes TX": 5580,"Count": 80,` +
        `"Average Latency": 0.214,"Accumulated Latency": 17,"Min Latency": 0.034,` +
        `"Max Latency": 0.878,"p50.00": 0.191,"p90.00": 0.311,"p99.00": 0.639,"p99.99": 0.639}\n`,
    );
  }
  const long = text.slice(0, start) + body.join("") + text.slice(end);
  const { dir, data, out } = await ingestAlone(new TextEncoder().encode(long));
  try {
    assert.equal(out.status, "ingested", out.error?.message);
    assert.equal(out.runs[0].status, "complete");
    const series = loadTable(data, "time_series").filter(pl.col("test").eq(pl.lit("SET")));
    assert.equal(series.height, 130_000);
    assert.equal(series.getColumn("second").max(), 129_999);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("ingest of a memtier JSON nested too deep names the file and line", async () => {
  const deep = `{\n"configuration": {"threads": 1},\n"ALL STATS":\n${"[".repeat(200_000)}`;
  const { dir, out } = await ingestAlone(new TextEncoder().encode(deep), "deep.json");
  try {
    assert.equal(out.status, "error");
    assert.match(out.error!.message, /deep\.json:4:\d+: at most 64 levels of nesting/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a memtier JSON made one line is refused naming the file and line, not held", async () => {
  // memtier writes one key per line; `jq -c` output of a long run is one line
  const text = JSON.stringify({ "ALL STATS": { pad: "x".repeat((16 << 20) + 10) } });
  const { dir, out } = await ingestAlone(new TextEncoder().encode(text), "flat.json");
  try {
    assert.equal(out.status, "error");
    assert.match(out.error!.message, /flat\.json:1: line 1 is more than 1 MiB with no line break/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
