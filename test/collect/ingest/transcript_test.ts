import assert from "node:assert/strict";
import {
  parseBenchmarkArgs,
  parseCommand,
  parseRedisBenchmark,
  readPrompt,
  redactArgv,
  redactCommandLine,
  redactRawText,
  splitTranscript,
  type TranscriptBlock,
} from "../../../src/collect/mod.ts";
import { type Block, BlockSplitter } from "../../../src/collect/ingest/_blocks.ts";
import { isScriptBanner, readScriptBanner, splitLines } from "../../../src/text/lines.ts";

import { csvRow } from "../../_support/redis_benchmark.ts";
import { TESTDATA } from "../../_support/testdata.ts";

const SEEDS = TESTDATA + "seeds/";
const REAL = TESTDATA + "real/";

function benchmarkBlocks(text: string): TranscriptBlock[] {
  return splitTranscript(text).filter((b) =>
    b.command?.parsed.tool === "redis-benchmark" || b.command?.parsed.tool === "valkey-benchmark"
  );
}

function parseBlock(b: TranscriptBlock) {
  return parseRedisBenchmark(b.output.map((l) => l.text).join("\n") + "\n", {
    firstLine: b.output[0]?.line ?? 1,
    args: parseBenchmarkArgs(b.command!.parsed.args),
  });
}

// Seed 001: valkey-benchmark -q -n 100000 on valkey-server and on redis-server, as printed.
const SEED1_VALKEY: [string, number, number][] = [
  ["PING_INLINE", 109170.30, 0.231],
  ["PING_MBULK", 109051.26, 0.231],
  ["SET", 109769.48, 0.231],
  ["GET", 109769.48, 0.231],
  ["INCR", 109649.12, 0.231],
  ["LPUSH", 110375.27, 0.231],
  ["RPUSH", 110011.00, 0.231],
  ["LPOP", 111358.58, 0.231],
  ["RPOP", 111358.58, 0.231],
  ["SADD", 109529.02, 0.231],
  ["HSET", 109289.62, 0.231],
  ["SPOP", 110011.00, 0.231],
  ["ZADD", 110011.00, 0.231],
  ["ZPOPMIN", 110011.00, 0.231],
  ["LPUSH_FOR_LRANGE", 110497.24, 0.231],
  ["LRANGE_100", 64350.06, 0.391],
  ["LRANGE_300", 29824.04, 0.839],
  ["LRANGE_500", 20321.07, 1.231],
  ["LRANGE_600", 17652.25, 1.423],
  ["MSET", 111482.72, 0.231],
  ["XADD", 110864.74, 0.231],
];
const SEED1_REDIS: [string, number, number][] = [
  ["PING_INLINE", 108459.87, 0.231],
  ["PING_MBULK", 108342.37, 0.239],
  ["SET", 107874.87, 0.239],
  ["GET", 107874.87, 0.239],
  ["INCR", 107642.62, 0.239],
  ["LPUSH", 106496.27, 0.239],
  ["RPUSH", 107642.62, 0.239],
  ["LPOP", 109051.26, 0.231],
  ["RPOP", 108342.37, 0.239],
  ["SADD", 108695.65, 0.231],
  ["HSET", 106951.88, 0.239],
  ["SPOP", 109170.30, 0.231],
  ["ZADD", 106269.93, 0.239],
  ["ZPOPMIN", 107642.62, 0.239],
  ["LPUSH_FOR_LRANGE", 106496.27, 0.239],
  ["LRANGE_100", 63734.86, 0.391],
  ["LRANGE_300", 28810.14, 0.863],
  ["LRANGE_500", 20096.46, 1.239],
  ["LRANGE_600", 17394.33, 1.439],
  ["MSET", 110619.47, 0.231],
  ["XADD", 111607.14, 0.231],
];

Deno.test("splitTranscript() with seed 001: two -q runs of 21 tests each", () => {
  const blocks = benchmarkBlocks(Deno.readTextFileSync(SEEDS + "seed-001.txt"));
  assert.equal(blocks.length, 2);
  const [valkey, redis] = blocks.map(parseBlock);
  for (const [run, want] of [[valkey, SEED1_VALKEY], [redis, SEED1_REDIS]] as const) {
    assert.equal(run.format, "quiet");
    assert.equal(run.complete, true);
    assert.deepEqual(run.tests.map((t) => [t.test, t.opsPerSec, t.p50LatencyMs]), want);
    assert.ok(run.tests.every((t) => t.requests === 100000 && t.clients === 50));
  }
  assert.equal(blocks[0].command!.text, "./src/valkey-benchmark -q -n 100000");
  assert.equal(blocks[0].command!.line, 104);
  assert.equal(blocks[1].command!.line, 134);
});

Deno.test("splitTranscript() with seed 003: RDMA and TCP reports", () => {
  const blocks = benchmarkBlocks(Deno.readTextFileSync(SEEDS + "seed-003.txt"));
  assert.equal(blocks.length, 2);
  const [rdmaBlock, tcpBlock] = blocks;
  // the RDMA command has no prompt in the post; the TCP one continues over two lines
  assert.equal(rdmaBlock.command!.prompt, "");
  assert.equal(
    tcpBlock.command!.text,
    "./redis-benchmark -h HOST -c 30 -n 10000000 -r 1000000000 --threads 8 -d 512 -t ping,set,get,lrange_100",
  );
  const rdma = parseBlock(rdmaBlock);
  const tcp = parseBlock(tcpBlock);
  assert.equal(parseBenchmarkArgs(rdmaBlock.command!.parsed.args).transport, "rdma");
  assert.equal(parseBenchmarkArgs(tcpBlock.command!.parsed.args).transport, "tcp");
  const row = (r: typeof rdma) => r.tests.map(csvRow);
  assert.deepEqual(row(rdma), [
    ["PING_INLINE", 519426.53, 0.056, 0.000, 0.055, 0.079, 0.087, 374.271],
    ["PING_MBULK", 579642.94, 0.050, 0.000, 0.055, 0.063, 0.071, 387.839],
    ["SET", 395335.03, 0.073, 0.000, 0.071, 0.103, 0.127, 299.007],
    ["GET", 424826.91, 0.068, 0.000, 0.071, 0.095, 0.103, 308.479],
    ["LPUSH_FOR_LRANGE", 369740.44, 0.079, 0.000, 0.079, 0.111, 0.119, 247.295],
    ["LRANGE_100", 22079.35, 1.047, 0.000, 1.071, 1.919, 2.311, 230.271],
  ]);
  assert.deepEqual(row(tcp), [
    ["PING_INLINE", 201987.56, 0.140, 0.024, 0.135, 0.223, 0.271, 2.647],
    ["PING_MBULK", 210172.33, 0.135, 0.024, 0.135, 0.215, 0.263, 1.327],
    ["SET", 175116.02, 0.162, 0.032, 0.159, 0.247, 0.295, 9.639],
    ["GET", 183163.59, 0.155, 0.024, 0.151, 0.231, 0.287, 17.839],
    ["LPUSH_FOR_LRANGE", 173547.84, 0.164, 0.024, 0.159, 0.255, 0.311, 31.311],
    ["LRANGE_100", 22607.81, 1.168, 0.064, 1.191, 1.359, 1.519, 70.399],
  ]);
  for (const r of [rdma, tcp]) {
    assert.equal(r.complete, true);
    assert.ok(r.tests.every((t) => t.clients === 30 && t.dataSizeBytes === 512 && t.threads === 8));
    assert.ok(r.tests.every((t) => t.requests === 10000000));
  }
  assert.equal(rdma.tests[0].durationS, 19.25);
  assert.equal(tcp.tests[0].hostConfigSave, "3600 1 300 100 60 10000");
  assert.equal(rdma.tests[0].hostConfigSave, null); // the RDMA build printed no host configuration
});

Deno.test("splitTranscript() with seed 004: ≤6.0 report, -q, -q -c 100 and headerless --csv", () => {
  const text = Deno.readTextFileSync(SEEDS + "seed-004.txt");
  const blocks = benchmarkBlocks(text).filter((b) => b.command!.prompt !== "");
  assert.equal(blocks.length, 4);
  assert.ok(blocks.every((b) => b.command!.host === "bastin"));
  const [full, quiet, c100, csv] = blocks.map(parseBlock);
  assert.equal(full.format, "full-legacy");
  assert.deepEqual(
    full.tests.map((t) => [t.test, t.opsPerSec, t.requests, t.durationS, t.clients]),
    [
      ["PING_INLINE", 38138.82, 100000, 2.62, 50],
    ],
  );
  assert.deepEqual(full.tests[0].distribution.map((d) => [d.percentile, d.latencyMs]), [
    [12.45, 1],
    [98.95, 2],
    [99.54, 3],
    [99.75, 4],
    [99.90, 5],
    [99.97, 6],
    [100.00, 6],
  ]);
  assert.equal(quiet.format, "quiet-legacy");
  assert.equal(quiet.tests.length, 18);
  assert.deepEqual(quiet.tests[1], {
    ...quiet.tests[1],
    test: "PING_MBULK",
    testTitle: "PING_BULK",
    opsPerSec: 35958.29,
  });
  assert.deepEqual(quiet.tests[15], {
    ...quiet.tests[15],
    test: "LRANGE_500",
    testTitle: "LRANGE_500 (first 450 elements)",
    opsPerSec: 12241.40,
  });
  assert.deepEqual(c100.tests.map((t) => [t.test, t.opsPerSec, t.clients]), [
    ["SET", 45766.59, 100],
    ["GET", 42789.90, 100],
  ]);
  assert.equal(csv.format, "csv-legacy");
  assert.deepEqual(csv.tests.map((t) => [t.test, t.opsPerSec, t.clients, t.requests]), [
    ["SET", 41562.76, 100, 100000],
    ["GET", 38491.14, 100, 100000],
  ]);
});

Deno.test("splitTranscript() with seed 002: ≤6.0 fills, -q fills and cut client-scaling pastes", () => {
  const blocks = benchmarkBlocks(Deno.readTextFileSync(SEEDS + "seed-002.txt"));
  const runs = blocks.map((b) => ({ cmd: b.command!, run: parseBlock(b) }));
  const first = runs[0];
  assert.equal(first.cmd.text, "redis-benchmark -p 6379 -t set -r 100000 -n 1000000");
  assert.deepEqual(
    first.run.tests.map((t) => [t.test, t.opsPerSec, t.requests, t.keyspace, t.durationS]),
    [
      ["SET", 50092.67, 1000000, 100000, 19.96],
    ],
  );
  const quiet = runs.filter((r) => r.run.format === "quiet-legacy").map((r) =>
    r.run.tests[0].opsPerSec
  );
  assert.deepEqual(quiet, [
    48732.94,
    50012.50,
    49925.11,
    50314.46,
    50449.00,
    48732.94,
    50012.50,
    49925.11,
    50314.46,
    50449.00,
  ]);
  // "SET: 2217.32" is the last progress value the author copied, not a result
  const scaling = runs.filter((r) => /-c \d+ -t set/.test(r.cmd.text));
  assert.equal(scaling.length, 16);
  for (const s of scaling) {
    assert.equal(s.run.complete, false);
    assert.equal(s.run.tests[0].complete, false);
    assert.equal(s.run.tests[0].opsPerSec, null);
  }
  assert.equal(scaling[0].run.tests[0].lastProgressOpsPerSec, 2217.32);
  assert.equal(scaling[0].run.tests[0].clients, 1);
  const big = runs.find((r) => r.cmd.text.endsWith("-n 90000000") && r.cmd.text.includes("6380"))!;
  assert.equal(big.run.tests[0].opsPerSec, 43865.72);
  assert.equal(big.run.tests[0].distribution[0].percentile, 37.5);
  assert.equal(big.run.tests[0].distribution[0].latencyMs, 0);
});

Deno.test("readPrompt() and parseCommand() read prompts, wrappers and pipes", () => {
  assert.equal(readPrompt("root@db1:~# redis-cli info", 1)!.host, "db1");
  assert.equal(readPrompt("$", 1), undefined);
  assert.equal(readPrompt("valkey-benchmark", 1), undefined); // a file listing, not a command
  assert.equal(readPrompt("    redis-benchmark -t set で大量のキーを作る", 1), undefined);
  assert.deepEqual(parseCommand("redis-cli -p 6379 info memory | grep human").args, [
    "-p",
    "6379",
    "info",
    "memory",
  ]);
  assert.equal(parseCommand("REDISCLI_AUTH=x time ./redis-benchmark -q").tool, "redis-benchmark");
});

Deno.test("redaction of commands and raw captures", async (t) => {
  await t.step("argv and command lines", () => {
    assert.deepEqual(redactArgv(["redis-benchmark", "--pass", "pw", "--user", "bob"]), [
      "redis-benchmark",
      "--pass",
      "***",
      "--user",
      "***",
    ]);
    assert.equal(
      redactCommandLine('valkey-benchmark -u "redis://bob:pw@h:6379" -a "x y" -q'),
      "valkey-benchmark -u redis://***:***@h:6379 -a *** -q",
    );
    assert.equal(
      redactCommandLine("redis-cli CONFIG SET requirepass pw"),
      "redis-cli CONFIG SET requirepass ***",
    );
  });
  await t.step("a script(1) capture keeps its lines and loses its password", () => {
    const raw = Deno.readTextFileSync(
      new URL(
        "../../testdata/real/redis-benchmark-7.0.15_script-q-requirepass.txt",
        import.meta.url,
      ),
    );
    assert.ok(raw.includes("s3cretpw"));
    const red = redactRawText(raw);
    assert.ok(!red.includes("s3cretpw"));
    assert.equal(red.split("\n").length, raw.split("\n").length);
    assert.deepEqual(parseRedisBenchmark(red).tests, parseRedisBenchmark(raw).tests);
  });
});

Deno.test("BlockSplitter splits lines into blocks by kind, with byte ranges", async (t) => {
  const split = (text: string): Block[] => {
    const s = new BlockSplitter("t.txt");
    const out: Block[] = [];
    let at = 0;
    for (const l of splitLines(text)) {
      const len = new TextEncoder().encode(l.text).length + (l.terminated ? 1 : 0);
      const done = s.push({ ...l, byteStart: at, byteEnd: at + len });
      at += len;
      if (done) out.push(done);
    }
    const last = s.end();
    if (last) out.push(last);
    return out;
  };

  await t.step("a transcript: prose, captures, benchmarks, skipped commands", () => {
    const text = [
      "Some prose.",
      "$ redis-cli -p 6380 dbsize",
      "(integer) 99998",
      "$ redis-benchmark -q \\",
      "  -t set -n 10",
      "SET: 1.00 requests per second",
      "$ memtier_benchmark -s h",
      "ALL STATS",
      "$ ls",
      "$ redis-benchmark -n lots",
      "$ docker ps",
      "",
    ].join("\n");
    const blocks = split(text);
    // a block is read by a format (by its command, or by what its text is) or skipped
    const kind = (b: Block) =>
      b.kind === "skip" ? "skip" : b.command === undefined ? "text" : b.chosen?.name;
    assert.deepEqual(blocks.map((b) => [kind(b), b.firstLine, b.lastLine, b.nonBlank]), [
      ["text", 1, 1, 1],
      ["redis-cli-dbsize", 2, 3, 1],
      ["redis-benchmark", 4, 6, 1],
      ["memtier-stdout", 7, 8, 1],
      ["skip", 9, 9, 0],
      ["skip", 10, 10, 0],
      ["skip", 11, 11, 0],
    ]);
    const [, , bench, , ls, bad, docker] = blocks;
    // the continuation is part of the command, and its flags reach the reader
    assert.equal(bench.command?.text, "redis-benchmark -q -t set -n 10");
    assert.equal(
      bench.kind === "read" && bench.reader?.finish("r").tables.results?.[0].requests,
      10,
    );
    assert.equal(ls.kind === "skip" && ls.reason, "");
    assert.match(bad.kind === "skip" ? bad.reason : "", /^t\.txt:10: /);
    assert.equal(
      docker.kind === "skip" && docker.reason,
      "t.txt:11: docker command other than stats",
    );
    // byte ranges cover the file without gaps
    assert.equal(blocks[0].byteStart, 0);
    for (let i = 1; i < blocks.length; i++) {
      assert.equal(blocks[i].byteStart, blocks[i - 1].byteEnd);
    }
    assert.equal(blocks.at(-1)!.byteEnd, new TextEncoder().encode(text).length);
  });

  await t.step("a script(1) capture names its command and start time", () => {
    const text = Deno.readTextFileSync(REAL + "redis-benchmark-7.0.15_script-q-requirepass.txt");
    const [b] = split(text);
    assert.equal(b.kind, "read");
    if (b.kind !== "read") return;
    assert.equal(b.command?.prompt, "script");
    assert.equal(b.command?.parsed.tool, "redis-benchmark");
    assert.equal(b.startedAt?.toISOString(), "2026-11-29T21:36:02.000Z");
    const rows = b.reader?.finish("r").tables.results ?? [];
    assert.deepEqual(rows.map((x) => x.requests), [5000, 5000]);
  });
});

Deno.test("readScriptBanner() is the one reader of script(1) banners", () => {
  const banner =
    'Script started on 2026-11-29 21:36:02+00:00 [COMMAND="redis-benchmark -a s3cret -q" <not executed on terminal>]';
  const b = readScriptBanner(banner)!;
  assert.equal(b.command, "redis-benchmark -a s3cret -q");
  assert.equal(banner.slice(b.commandAt!.start, b.commandAt!.end), b.command);
  assert.equal(
    readScriptBanner("Script started on 2026-11-29T21:36:02Z")?.startedAt?.getTime(),
    Date.parse("2026-11-29T21:36:02Z"),
  );
  assert.equal(readScriptBanner("Script started on Fri Nov 29 21:36:02 2026")?.startedAt, null);
  assert.equal(
    readScriptBanner('Script done on 2026-11-29 21:36:03+00:00 [COMMAND_EXIT_CODE="0"]'),
    null,
  );
  assert.ok(isScriptBanner('Script done on 2026-11-29 21:36:03+00:00 [COMMAND_EXIT_CODE="0"]'));
  // redaction rewrites the banner's command through the same reader
  assert.equal(
    redactRawText(`\x1b[0m${banner}\n`),
    `\x1b[0m${banner.replace("s3cret", "***")}\n`,
  );
});
