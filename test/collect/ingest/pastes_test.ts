/**
 * How people paste outputs (issue 32), each class made here from kvlab's own captures of the
 * tools, so that the rule is general and not fitted to one published file: no final newline,
 * Markdown indentation, elided lines, several runs under headings or label lines, prompts and
 * wrappers of other shells, Redis 2.4's test titles, CR-only line ends, and a paste mixing a
 * readable report, an unreadable one and prose (nothing lost without a word).
 */
import assert from "node:assert/strict";
import { ingestFile } from "../../../src/collect/ingest/ingest.ts";
import { loadTable } from "../../../src/analyze/load.ts";
import { readTestdata } from "../../_support/testdata.ts";
import { withTempDir } from "../../_support/temp.ts";
import { cli } from "../../cli/_cli.ts";

const FULL = readTestdata("corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt");
const QUIET = readTestdata("corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt");
const MEMTIER = readTestdata("corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s.txt");

/** The runs of a text ingested alone: each with its label, tool, command and results by test. */
async function runsOf(text: string, name = "paste.md") {
  return await withTempDir("kvlab-paste-", async (dir) => {
    Deno.writeTextFileSync(`${dir}/${name}`, text);
    const out = await ingestFile(`${dir}/${name}`, { data: `${dir}/d` });
    assert.equal(out.status, "ingested", String(out.error));
    const results = loadTable(`${dir}/d`, "results").toRecords();
    const runs = loadTable(`${dir}/d`, "runs").toRecords()
      .sort((a, b) => Number(a.source_line_start) - Number(b.source_line_start));
    return {
      skipped: out.skipped,
      runs: runs.map((r) => ({
        label: r.label,
        tool: r.tool,
        status: r.status,
        command: r.command,
        rows: Object.fromEntries(
          results.filter((x) => x.run_id === r.run_id).map((x) => [String(x.test), x]),
        ) as Record<string, Record<string, unknown>>,
      })),
    };
  });
}

/** The tests and rates of a run, for comparing two readings of one output. */
const rates = (rows: Record<string, Record<string, unknown>>) =>
  Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, [v.ops_per_sec, v.p50_latency_ms]]));

Deno.test("a paste is read as the tool printed it", async (t) => {
  const plain = await runsOf(FULL);
  const memtier = await runsOf(MEMTIER, "memtier.txt");

  await t.step("no final newline: the last line printed to its end is whole", async () => {
    const cut = await runsOf(FULL.trimEnd());
    assert.deepEqual(rates(cut.runs[0].rows), rates(plain.runs[0].rows));
    assert.equal(cut.runs[0].status, "complete");
    const m = await runsOf(MEMTIER.trimEnd(), "memtier.txt");
    assert.deepEqual(rates(m.runs[0].rows), rates(memtier.runs[0].rows));
    assert.equal(m.runs[0].status, "complete");
    // a line cut inside its number is still cut
    const inside = await runsOf(FULL.trimEnd().slice(0, -2));
    assert.equal(inside.runs[0].status, "incomplete");
  });

  await t.step("indented as a Markdown code block, '<=' in backticks", async () => {
    const indented = FULL.split("\n").map((l) => (l === "" ? l : `    ${l}`)).join("\n");
    assert.deepEqual(rates((await runsOf(indented)).runs[0].rows), rates(plain.runs[0].rows));
    const legacy = "====== SET ======\n  100 requests completed in 0.01 seconds\n" +
      "  50 parallel clients\n  3 bytes payload\n  keep alive: 1\n\n" +
      "97.00% `<=` 1 milliseconds\n100.00% `<=` 2 milliseconds\n10000.00 requests per second\n";
    const read = await runsOf(legacy.replaceAll(/^/gm, "    "));
    assert.deepEqual(Object.keys(read.runs[0].rows), ["SET"]);
    assert.equal(read.runs[0].rows.SET.ops_per_sec, 10000);
  });

  await t.step("memtier with elided lines keeps its table", async () => {
    const lines = MEMTIER.split("\n");
    const from = lines.indexOf("Request Latency Distribution") + 4;
    const elided = [...lines.slice(0, from), "<<<< many lines", ...lines.slice(from + 20)];
    const read = await runsOf(elided.join("\n"), "memtier.txt");
    assert.deepEqual(rates(read.runs[0].rows), rates(memtier.runs[0].rows));
  });

  await t.step("several runs under headings and label lines, labelled by them", async () => {
    const text =
      `# Redis\n\n${QUIET}\n## Valkey, 8 io-threads\n\n${QUIET}\n--- memtier on Redis\n` +
      `${MEMTIER}\n\nValkey:\n=======\n${MEMTIER}`;
    const read = await runsOf(text);
    assert.deepEqual(read.runs.map((r) => [r.label, r.tool]), [
      ["Redis", "unknown"],
      ["Valkey, 8 io-threads", "unknown"],
      ["memtier on Redis", "memtier_benchmark"],
      ["Valkey", "memtier_benchmark"],
    ]);
    assert.deepEqual(rates(read.runs[3].rows), rates(memtier.runs[0].rows));
    // with --label-from none: one run per output that the headings do not split
    await withTempDir("kvlab-paste-", async (dir) => {
      Deno.writeTextFileSync(`${dir}/p.md`, `# Redis\n\n${QUIET}\n# Valkey\n\n${QUIET}`);
      const out = await ingestFile(`${dir}/p.md`, { data: `${dir}/d`, labelFrom: "none" });
      assert.equal(out.runs.length, 1);
    });
  });

  await t.step("prompts and wrappers of other shells name the tool", async () => {
    for (
      const line of [
        "C:\\Users\\me\\Redis-x64-3.2.100>redis-benchmark -q -t set,get",
        "PS C:\\bench> redis-benchmark.exe -q -t set,get",
        "me@mac ~ % redis-benchmark -q -t set,get",
        "root@box:~# sudo -u bench numactl -C 6 ./keydb-benchmark -q -t set,get",
        "$ docker exec -it redis redis-benchmark -q -t set,get",
        "$ env LANG=C timeout 60 valkey-benchmark -q -t set,get",
      ]
    ) {
      const read = await runsOf(`${line}\n${QUIET.split("\n").slice(2, 4).join("\n")}\n`);
      assert.equal(read.runs.length, 1, line);
      assert.match(String(read.runs[0].tool), /^(redis|keydb|valkey)-benchmark$/, line);
      assert.ok(String(read.runs[0].command).length > 10, line);
    }
  });

  await t.step("Redis 2.4's titles stay distinct, as today's names", async () => {
    const old = [
      "PING (inline): 1000.00 requests per second",
      "PING: 2000.00 requests per second",
      "LPUSH: 3000.00 requests per second",
      "LPUSH (again, in order to bench LRANGE): 4000.00 requests per second",
      "LRANGE (first 100 elements): 5000.00 requests per second",
      "LRANGE (first 450 elements): 6000.00 requests per second",
    ].join("\n") + "\n";
    const rows = (await runsOf(old)).runs[0].rows;
    assert.deepEqual(
      Object.entries(rows).map(([k, v]) => [k, v.ops_per_sec, v.test_title]),
      [
        ["PING_INLINE", 1000, "PING (inline)"],
        ["PING", 2000, "PING"],
        ["LPUSH", 3000, "LPUSH"],
        ["LPUSH_FOR_LRANGE", 4000, "LPUSH (again, in order to bench LRANGE)"],
        ["LRANGE_100", 5000, "LRANGE (first 100 elements)"],
        ["LRANGE_500", 6000, "LRANGE (first 450 elements)"],
      ],
    );
  });

  await t.step("CR-only line ends: the same numbers, each line its own number", async () => {
    const read = await runsOf(`$ redis-benchmark -q\r${QUIET.replaceAll("\n", "\r")}`);
    assert.equal(read.runs[0].tool, "redis-benchmark");
    assert.deepEqual(rates(read.runs[0].rows), rates((await runsOf(QUIET)).runs[0].rows));
    const lines = Object.values(read.runs[0].rows).map((r) => r.source_line);
    assert.equal(new Set(lines).size, lines.length);
  });
});

Deno.test("a paste mixing a readable report, an unreadable one and prose loses nothing silently", async () => {
  await withTempDir("kvlab-paste-mixed-", async (dir) => {
    const broken = MEMTIER.replace(/^Totals .*$/m, "Totals     12.5 oops");
    const text = `# What we ran\n\nSome prose about the machine.\n\n# Redis\n\n${QUIET}\n` +
      `# memtier\n\n${broken}\nMore prose.\n`;
    Deno.writeTextFileSync(`${dir}/mixed.md`, text);
    const r = await cli(["ingest", `${dir}/mixed.md`, "--data", `${dir}/d`]);
    assert.equal(r.code, 0, r.stderr);
    const line = text.split("\n").findIndex((l) => l.startsWith("Totals")) + 1;
    assert.match(
      r.stdout,
      new RegExp(`1 block of tool output or commands not read:\\n  \\S*mixed\\.md:${line}:`),
    );
    const runs = loadTable(`${dir}/d`, "runs").toRecords();
    assert.deepEqual(runs.map((x) => x.label), ["Redis"]);
    // the same unreadable report alone: the file is refused, naming where
    Deno.writeTextFileSync(`${dir}/only.txt`, broken);
    const only = await cli(["ingest", `${dir}/only.txt`, "--data", `${dir}/d2`]);
    assert.equal(only.code, 1);
    assert.match(only.stderr, /only\.txt:\d+:1: expected a memtier table row/);
  });
});
