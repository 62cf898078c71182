/**
 * Outputs other people published (`../shared/corpus/realworld/`, read there, never copied into this
 * repository): each file ingested alone gives the runs and numbers its MANIFEST says a person
 * reads in it (issue 32). A run is matched by its order in the file; a test by its name, with
 * ops/s and, where the file prints them, latencies.
 */
import assert from "node:assert/strict";
import { ingestFile } from "../../../src/collect/ingest/ingest.ts";
import { loadTable } from "../../../src/analyze/load.ts";
import { SHARED } from "../../_support/shared.ts";
import { withTempDir } from "../../_support/temp.ts";

const DIR = `${SHARED}corpus/realworld/`;

/** What one test of a run holds: ops/s, or [ops/s, p50, p99, p99.9] (null: not printed). */
type Numbers = number | (number | null)[];

/** One run a person reads in a file. */
interface Expected {
  /** The run's label (a heading or a `--- name` line above it), when the file names the runs. */
  label?: string;
  /** Tests by name (a memtier summary block's as `TEST best`, `TEST worst`, `TEST average`). */
  tests: Record<string, Numbers>;
  /** The run's tool, and its stored command, when the file shows the command. */
  tool?: string;
  command?: RegExp;
  /** Columns every results row of the run holds (the command's flags filling the output). */
  columns?: Record<string, unknown>;
}

/** A file, and its runs in the file's order. */
const FILES: Record<string, Expected[]> = {
  "01_redisdoc-2x-default-indented.txt": [{
    tests: { SET: 114293.71, GET: 81234.77, INCR: 68458.59, LPUSH: 88109.25, LPOP: 71994.96 },
  }],
  "02_redisdoc-242-quiet-oldnames.txt": [{
    tool: "redis-benchmark",
    command: /^numactl -C 6 \.\/redis-benchmark -q -n 100000 -s \/tmp\/redis\.sock -d 256$/,
    columns: { data_size_bytes: 256 },
    tests: {
      PING_INLINE: 200803.22,
      PING: 200803.22,
      MSET: 78064.01,
      SET: 198412.69,
      GET: 198019.80,
      INCR: 200400.80,
      LPUSH: 200000,
      LPOP: 198019.80,
      SADD: 203665.98,
      SPOP: 200803.22,
      LPUSH_FOR_LRANGE: 200000,
      LRANGE_100: 42123.00,
      LRANGE_300: 15015.02,
      LRANGE_500: 10159.50,
      LRANGE_600: 7548.31,
    },
  }],
  "03_redisdoc-backtick-le-transcript.txt": [{
    tool: "redis-benchmark",
    columns: { requests: 1000000, clients: 50, keyspace: 100000 },
    tests: { SET: 72144.87 },
  }],
  "04_redka-7x-full-two-servers.md": [
    {
      label: "Original Redis",
      tests: { SET: [155521.00, 0.151, 1.023, null], GET: [170940.17, 0.143, 0.463, null] },
    },
    {
      label: "Redka",
      tests: { SET: [48285.85, 0.975, 1.543, null], GET: [40833.00, 1.183, 1.943, null] },
    },
  ],
  "05_redka-60-legacy-two-servers.md": [
    { label: "Original Redis", tests: { SET: 51786.64, GET: 51282.05 } },
    { label: "Redka", tests: { SET: 22629.55, GET: 20424.84 } },
  ],
  "06_prototypedb-quiet-multirun.md": [
    { tests: { PING_INLINE: 1267427.12, PING_MBULK: 1695633.75, SET: 906412.88, GET: 970402.69 } },
    { tests: { PING_INLINE: 1281640.50, PING_MBULK: 1706484.62, GET: 1514577.75 } },
    { tests: { PING_INLINE: 1869158.75, PING_MBULK: 1845869.88, SET: 905592.06, GET: 844416.31 } },
    { tests: { PING_INLINE: 1825150.50, PING_MBULK: 1833180.62, GET: 1789549.12 } },
    { tests: { TOTALS: 152198.57, SET: 13850.07, GET: 138348.50 } },
    { tests: { PING_INLINE: 1817355.75, PING_MBULK: 1806684.75, GET: 1789709.25 } },
    { tests: { TOTALS: 264510.03, SET: 24070.41, GET: 240439.62 } },
    { tests: { TOTALS: 448812.59, SET: 40841.95, GET: 407970.64 } },
  ],
  "07_unikraft-csv-noheader-blog.md": [
    { tests: { SET: 265252.00, GET: 276701.72 } },
    { tests: { SET: 495785.84, GET: 514138.81 } },
  ],
  "08_rbadmin-6.2.0-csv-header.txt": [{
    tests: { SET: [139082.06, 0.167, 0.735, null], GET: [136986.30, 0.183, 0.391, null] },
  }],
  "09_rbadmin-6.2.4-csv-warning-customcmd.txt": [{
    tests: { JSON_GET_JSONSL_1: [19920.32, 0.183, 0.287, null] },
  }],
  "10_rbadmin-6.0-csv-noheader-fullsuite.csv": [{
    tests: {
      PING_INLINE: 134048.27,
      PING_MBULK: 132802.12,
      SET: 145985.41,
      GET: 137931.03,
      INCR: 141843.97,
      LPUSH: 143678.17,
      RPUSH: 154083.20,
      LPOP: 147710.48,
      RPOP: 149253.73,
      SADD: 141442.72,
      HSET: 144092.22,
      SPOP: 136986.30,
      ZADD: 147710.48,
      ZPOPMIN: 134048.27,
      LPUSH_FOR_LRANGE: 142450.14,
      LRANGE_100: 70821.53,
      LRANGE_300: 20475.02,
      LRANGE_500: 14019.35,
      LRANGE_600: 11755.03,
      MSET: 104275.29,
    },
  }],
  "11_rbadmin-6.2-csv-header-fullsuite.csv": [{
    tests: {
      PING_INLINE: [160771.70, 0.143, 0.535, null],
      PING_MBULK: 142653.36,
      SET: [151057.41, 0.167, 0.383, null],
      GET: [143678.17, 0.175, 0.423, null],
      LPUSH_FOR_LRANGE: 156006.25,
      LRANGE_600: 13616.56,
      MSET: [142045.45, 0.295, 0.607, null],
    },
  }],
  "12_rbadmin-6.2.0-csv-embedded-quotes.txt": [{
    tests: {
      "JSON_SET_PASS_100_SCLR_0_STR_B_SUB_DOC_SCLR_10_STR_C_ARR_1_2_3_SCLR_20_STR_D_ARRAY_OF_DOCS_1_SCLR_11_STR_E_ARR_4_5_6_SCLR_21_STR_F_SCLR_12_STR_G_ARR_7_8_9_SCLR_22_STR_H_2":
        [73391.80, 0.199, 0.423, null],
    },
  }],
  "13_virtualclient-csv-bom.txt": [{
    tests: {
      PING_INLINE: [3154.38, 15.935, 27.935, null],
      SET: [3340.12, 15.927, 27.951, null],
      GET: [3066.73, 15.935, 27.983, null],
      MSET: [3040.53, 15.927, 35.903, null],
    },
  }],
  "14_codingchallenges-quiet-p50.md": [
    { tests: { SET: [139470.02, 0.191, null, null], GET: [148367.95, 0.183, null, null] } },
    { tests: { SET: [145560.41, 0.183, null, null], GET: [142653.36, 0.183, null, null] } },
    { tests: { SET: [166666.66, 0.159, null, null], GET: [175131.36, 0.159, null, null] } },
  ],
  "15_valkey-blog-rpi-quiet-multirun.md": [
    { tests: { SET: 173040.33, GET: 307031.00 } },
    { tests: { SET: 394368.41, GET: 438058.53 } },
    { tests: { SET: 345494.75, GET: 327858.09 } },
    { tests: { SET: 609050.44, GET: 521186.22 } },
    { tests: { SET: 632791.25, GET: 888573.00 } },
    { tests: { SET: [1122838.50, 0.575, null, null], GET: [1188071.75, 0.511, null, null] } },
  ],
  "16_rede-cr-only-line-endings.md": [{
    tool: "redis-benchmark",
    command: /^\.\/redis-benchmark -t rede -n 1000000$/,
    tests: {
      REDE_PUSH: 170183.80,
      REDE_PUSH_10000_SECOND_ELEMENTS: 149342.89,
      REDE_PUSH_15_SECOND_ELEMENTS: 151653.02,
      REDE_PUSH_10_SECOND_ELEMENTS: 141063.61,
      REDE_PUSH_5_SECOND_ELEMENTS: 136425.66,
      REDE_POLL: 156666.14,
    },
  }],
  "17_windows-redis-3.2.100-blog.md": [{
    tool: "redis-benchmark",
    command: /^redis-benchmark -h 127\.0\.0\.1 -p 6380 -c 50 -n 10000 -t set$/,
    columns: { clients: 50, requests: 10000 },
    tests: { SET: 46948.36 },
  }],
  "20_memcrs-memtier1x-two-runs.md": [
    { label: "memix", tests: { TOTALS: 305385.01, SET: 152692.50, GET: 152692.50 } },
    { label: "memcached", tests: { TOTALS: 225161.71, SET: 112580.85, GET: 112580.85 } },
  ],
  "21_memcrs-memtier2x-two-runs.md": [
    {
      label: "Rust",
      tests: { TOTALS: [147763.74, 0.231, 0.727, 3.823], SET: 73881.87, GET: 73881.87 },
    },
    {
      label: "Memcached",
      tests: { TOTALS: [861413.62, 0.151, 0.319, 0.599], SET: 430706.81, GET: 430706.81 },
    },
  ],
  "22_memcrs-memtier-doc-many-runs.txt": [
    {
      label: "memcached",
      tests: { TOTALS: [552.73, 1.759, 2.431, 2.767], SET: 50.25, GET: 502.48 },
    },
    { label: "memix", tests: { TOTALS: [449.94, 2.223, 2.447, 3.343], SET: 40.90, GET: 409.04 } },
    {
      label: "memix after improving writes",
      tests: { TOTALS: [535.71, 1.839, 2.863, 3.695], SET: 48.70, GET: 487.00 },
    },
    {
      label: "memix after refactoring to Connections",
      tests: { TOTALS: [542.09, 1.815, 2.431, 3.023], SET: 49.28, GET: 492.81 },
    },
  ],
  "23_virtualclient-memtier-bom-p90p95.txt": [{
    tests: { TOTALS: [132291.67, 1.359, 4.575, 8.703], SET: 39687.53, GET: 92604.15 },
  }],
  "24_virtualclient-memtier-port-prefix-histogram.txt": [{
    tests: { TOTALS: [355987.03, 0.335, 0.839, 1.543], SET: 35598.74, GET: 320388.28 },
  }],
  "25_aiven-memtier-best-worst-aggregated.md": [{
    tests: {
      "TOTALS best": [4808.23, 20.607, 49.151, 111.103],
      "SET best": 2404.11,
      "GET best": 2404.11,
      "TOTALS worst": [4498.20, 21.631, 47.871, 109.567],
      "SET worst": 2249.10,
      "TOTALS average": [4624.02, 21.247, 47.359, 101.887],
      "GET average": 2312.01,
    },
  }],
  "27_rbadmin-memtier-1.3.0-runcount3.json": [{
    tests: {
      "TOTALS best": 35004.47,
      "MSET best": 17502.54,
      "MGET best": 17501.94,
      "TOTALS worst": 34019.94,
      "TOTALS average": 34458.60,
      "MGET average": 17229.03,
    },
  }],
  "28_rbadmin-memtier-1.3.1.json": [{
    tests: {
      TOTALS: [184008.96, 1.055, 2.039, 2.831],
      SET: [16744.82, 1.055, 2.015, 2.895],
      GET: 167264.14,
    },
  }],
  "29_pkb-memtier-2x-pretty.json": [{
    tests: { TOTALS: [90018.1, 0.231, 1.415, 2.575], SET: 9001.83, GET: 81016.28 },
  }],
};

/** The key of a results row: its test, and its summary block when it has one. */
const keyOf = (r: Record<string, unknown>) => r.aggregate ? `${r.test} ${r.aggregate}` : r.test;

/** A number as printed (two decimals for rates, three for ms), for messages. */
const near = (a: unknown, b: number) => typeof a === "number" && Math.abs(a - b) < 1e-6;

Deno.test({
  name: "outputs other people published are read with the numbers a person reads in them",
  ignore: !(() => {
    try {
      return Deno.statSync(DIR).isDirectory;
    } catch {
      if (Deno.env.get("CI") === "true") throw new Error(`${DIR} is missing (the shared corpus)`);
      return false;
    }
  })(),
  fn: async (t) => {
    const listed = [...Deno.readDirSync(DIR)].map((e) => e.name)
      .filter((n) => n !== "MANIFEST.md").sort();
    assert.deepEqual(listed, Object.keys(FILES).sort(), "every file of the corpus has a case");
    for (const [file, expected] of Object.entries(FILES)) {
      await t.step(file, () =>
        withTempDir("kvlab-realworld-", async (dir) => {
          const out = await ingestFile(DIR + file, { data: `${dir}/d` });
          assert.equal(out.status, "ingested", String(out.error));
          const runs = loadTable(`${dir}/d`, "runs").toRecords()
            .filter((r) => r.tool !== "redis-cli")
            .sort((a, b) => Number(a.source_line_start ?? 0) - Number(b.source_line_start ?? 0));
          const results = loadTable(`${dir}/d`, "results").toRecords();
          assert.equal(
            runs.length,
            expected.length,
            `${file}: runs at lines ${runs.map((r) => r.source_line_start)}`,
          );
          expected.forEach((want, i) => {
            const run = runs[i];
            const where = `${file}, run ${i + 1} (line ${run.source_line_start})`;
            if (want.label !== undefined) assert.equal(run.label, want.label, where);
            if (want.tool !== undefined) assert.equal(run.tool, want.tool, where);
            if (want.command) assert.match(String(run.command), want.command, where);
            const rows = results.filter((r) => r.run_id === run.run_id);
            // every line of the file has its own number (a file of CR-only line ends too)
            const lines = rows.map((r) => r.source_line);
            assert.equal(new Set(lines).size, lines.length, `${where}: lines ${lines}`);
            for (const [column, value] of Object.entries(want.columns ?? {})) {
              for (const r of rows) assert.equal(r[column], value, `${where}: ${r.test} ${column}`);
            }
            for (const [key, numbers] of Object.entries(want.tests)) {
              const row = rows.find((r) => keyOf(r) === key);
              assert.ok(row, `${where}: no test ${key} (has ${rows.map(keyOf)})`);
              const [ops, p50, p99, p999] = typeof numbers === "number" ? [numbers] : numbers;
              const got = [
                row.ops_per_sec,
                row.p50_latency_ms,
                row.p99_latency_ms,
                row.p999_latency_ms,
              ];
              const wanted = [ops, p50, p99, p999];
              wanted.forEach((w, k) => {
                if (w === undefined || (w === null && k > 0 && typeof numbers === "number")) return;
                const ok = w === null ? got[k] === null : near(got[k], w);
                assert.ok(
                  ok,
                  `${where}: ${key} ${["ops/s", "p50", "p99", "p99.9"][k]} ${
                    got[k]
                  }, expected ${w}`,
                );
              });
            }
          });
        }));
    }
  },
});
