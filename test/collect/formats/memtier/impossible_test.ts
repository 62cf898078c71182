/**
 * Impossible values in memtier_benchmark output (issue 21): kvlab's one rule
 * (`src/collect/impossible.ts`, the one redis-benchmark outputs get) applied to memtier's JSON
 * and stdout. Each case edits one number of a real output; the test is then not complete, the
 * value is not kept, and a warning names the file and line.
 */

import assert from "node:assert/strict";
import { parseMemtierJson } from "../../../../src/collect/formats/memtier/json/parse.ts";
import { parseMemtierReport } from "../../../../src/collect/formats/memtier/report.ts";
import { memtierRows } from "../../../../src/collect/formats/memtier/rows.ts";
import { ingestFile } from "../../../../src/collect/mod.ts";
import { loadTable } from "../../../../src/analyze/mod.ts";
import { Dataset } from "../../../../src/store/dataset.ts";

const REAL = new URL("../../../testdata/real/", import.meta.url).pathname;
const NAME = "memtier-2.3.0_redis-7.0.15_ratelimit100-pct4";
const JSON_TEXT = Deno.readTextFileSync(`${REAL}${NAME}.json`);
const STDOUT = Deno.readTextFileSync(`${REAL}${NAME}.txt`);

/** The JSON with its first `from` (in ALL STATS' Sets) replaced. */
function editJson(from: string, to: string) {
  assert.ok(JSON_TEXT.includes(from), from);
  const text = JSON_TEXT.replace(from, to);
  return memtierRows({ json: parseMemtierJson(text, { file: "x.json" }), jsonFile: "x.json" }, "r");
}

function editStdout(from: string, to: string) {
  assert.ok(STDOUT.includes(from), from);
  const text = STDOUT.replace(from, to);
  return memtierRows(
    { report: parseMemtierReport(text, { file: "x.txt" }), reportFile: "x.txt" },
    "r",
  );
}

function lineOf(text: string, needle: string): number {
  return text.slice(0, text.indexOf(needle)).split("\n").length;
}

Deno.test("memtierRows() keeps no impossible value as a complete result", async (t) => {
  await t.step("the real outputs are complete and warn of nothing impossible", () => {
    const j = editJson("", "");
    const s = editStdout("", "");
    assert.ok(j.complete && s.complete);
    assert.deepEqual([...j.warnings, ...s.warnings].filter((w) => /impossible/.test(w)), []);
  });
  const jsonCases: [string, string, string, RegExp][] = [
    ['"Ops/sec": 78.50', '"Ops/sec": -78.50', "ops_per_sec", /ops_per_sec = -78\.5 \(negative\)/],
    ['"Count": 236', '"Count": -236', "requests", /requests = -236 \(negative\)/],
    ['"Ops/sec": 78.50', '"Ops/sec": 1e300', "ops_per_sec", /above 1000000000 operations/],
    ['"Ops/sec": 78.50', '"Ops/sec": "fast"', "ops_per_sec", /ops_per_sec = NaN \(not a finite/],
    [
      '"Average Latency": 0.219',
      '"Average Latency": -0.219',
      "avg_latency_ms",
      /avg_latency_ms = -0\.219 \(negative\)/,
    ],
  ];
  for (const [from, to, field, message] of jsonCases) {
    await t.step(`JSON ${to}`, () => {
      const rows = editJson(from, to);
      const set = rows.results.find((r) => r.test === "SET" && r.aggregate === null)!;
      assert.equal(set[field as keyof typeof set], null);
      assert.equal(set.complete, false);
      assert.equal(rows.complete, false);
      const line = lineOf(JSON_TEXT, from);
      const w = rows.warnings.find((w) => message.test(w));
      assert.ok(w, rows.warnings.join("\n"));
      assert.match(w, /^x\.json:\d+: impossible value in SET: /);
      assert.ok(Number(/:(\d+):/.exec(w)![1]) <= line + 20, `${w} near line ${line}`);
    });
  }
  await t.step("JSON p50 5 > p99 0.5: percentiles out of order", () => {
    const from = '"p50.00": 0.151\n\t\t\t\t,"p90.00": 0.295\n\t\t\t\t,"p99.00": 3.375';
    const rows = editJson(from, from.replace("0.151", "5").replace("3.375", "0.5"));
    const set = rows.results.find((r) => r.test === "SET" && r.aggregate === null)!;
    assert.deepEqual([set.p50_latency_ms, set.p99_latency_ms, set.complete], [null, null, false]);
    assert.ok(
      rows.warnings.some((w) => /p50_latency_ms = 5 is above/.test(w)),
      rows.warnings.join("\n"),
    );
  });
  await t.step("stdout: a negative Ops/sec, and Totals no longer its types' sum", () => {
    const rows = editStdout("Sets           78.50", "Sets          -78.50");
    assert.equal(rows.complete, false);
    const line = lineOf(STDOUT, "Sets           78.50");
    assert.ok(
      rows.warnings.includes(
        `x.txt:${line}: impossible value in SET: ops_per_sec = -78.5 (negative); not kept`,
      ),
      rows.warnings.join("\n"),
    );
  });
  await t.step("stdout: p50 above p99", () => {
    const from = "0.22037         0.15100         0.29500         3.37500";
    const rows = editStdout(from, "0.22037         5.00000         0.29500         0.50000");
    assert.equal(rows.complete, false);
    assert.ok(
      rows.warnings.some((w) => /x\.txt:\d+: .*out of order/.test(w)),
      rows.warnings.join("\n"),
    );
  });
  await t.step("stdout: Totals that do not add up", () => {
    const rows = editStdout("Totals        391.18", "Totals        991.18");
    assert.equal(rows.complete, false);
    assert.ok(rows.warnings.some((w) => /991\.18 is not the sum of its parts \(391\.18\)/.test(w)));
  });
});

/** The messages of a manifest's warnings. */
const messages = (warnings: unknown) =>
  ((warnings ?? []) as { message: string }[]).map((w) => w.message);

Deno.test("an impossible value in one second of a Time-Serie is not kept, read whole or in chunks", async () => {
  // line 91: the first second of ALL STATS' Sets (its key "0" at line 88)
  const from = '\t\t\t\t\t,"Count": 80\n';
  assert.equal(JSON_TEXT.split("\n")[90] + "\n", from);
  const whole = editJson(from, '\t\t\t\t\t,"Count": "x"\n');
  const check = (
    rows: { complete: boolean; warnings: string[] },
    seconds: Record<string, unknown>[],
  ) => {
    assert.equal(rows.complete, false);
    assert.ok(
      rows.warnings.some((w) =>
        /x\.json:88: impossible value in SET, second 0: count = NaN/.test(w)
      ),
      rows.warnings.join("\n"),
    );
    const bad = seconds.filter((s) => s.test === "SET" && s.source_line === 88);
    assert.deepEqual(bad.map((s) => s.count), [null]);
  };
  check(whole, whole.time_series as unknown as Record<string, unknown>[]);
  // the chunked path (kvlab ingest): the second is handed over after the rows are made
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-mt-second-" });
  try {
    Deno.writeTextFileSync(`${dir}/x.json`, JSON_TEXT.replace(from, '\t\t\t\t\t,"Count": "x"\n'));
    const out = await ingestFile(`${dir}/x.json`, { data: `${dir}/d`, server: "redis" });
    const m = Dataset.open(`${dir}/d`).runManifest(out.runs[0].runId)!;
    assert.equal(m.status, "incomplete");
    const series = loadTable(`${dir}/d`, "time_series").toRecords();
    check({ complete: false, warnings: messages(m.warnings) }, series);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("an impossible value of a memtier command in a transcript names the transcript and line", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-mt-transcript-" });
  try {
    // two commands: the second one's Sets are negative (they were reported as `stdout:<line>`)
    const block = `$ memtier_benchmark -s 127.0.0.1 -p 6379 --test-time=3\n${STDOUT}`;
    const bad = block.replace("Sets           78.50", "Sets          -78.50");
    const text = block + bad;
    const line = lineOf(block, "Sets           78.50") + block.split("\n").length - 1;
    assert.match(text.split("\n")[line - 1], /^Sets {10}-78\.50/);
    const file = `${dir}/session.txt`;
    Deno.writeTextFileSync(file, text);
    const out = await ingestFile(file, { data: `${dir}/d`, server: "redis" });
    const m = Dataset.open(`${dir}/d`).runManifest(out.runs[1].runId)!;
    assert.equal(m.status, "incomplete");
    assert.ok(
      messages(m.warnings).includes(
        `${file}:${line}: impossible value in SET: ops_per_sec = -78.5 (negative); not kept`,
      ),
      messages(m.warnings).join("\n"),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
