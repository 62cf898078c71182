import assert from "node:assert/strict";
import { kvlabProcess } from "./_support/kvlab.ts";
import { ROOT, TESTDATA as DATA } from "./_support/testdata.ts";

/** `kvlab ARGS…` as a separate process, with the tasks' permissions. */
const kvlab = (...args: string[]) => kvlabProcess(args);

const QUIET = DATA + "corpus/valkey-benchmark_8.0.1_valkey-8.0.1_quiet.txt";

Deno.test("kvlab ingest: one clear line per bad file, a non-zero exit, the others ingested", async () => {
  const dir = Deno.makeTempDirSync();
  Deno.writeTextFileSync(`${dir}/bad.txt`, "not a benchmark\n");
  const lab1 = ["--data", `${dir}/ds`, "--server", "valkey", "--tag", "host=lab1"];
  const r = await kvlab("ingest", `${dir}/bad.txt`, QUIET, ...lab1);
  assert.equal(r.code, 1);
  const errLines = r.stderr.trim().split("\n");
  assert.equal(errLines.length, 2);
  assert.match(
    errLines[0],
    new RegExp(
      `^error ${dir}/bad\\.txt:1:1: expected redis-benchmark / valkey-benchmark output .*--csv.*found "not a benchmark"`,
    ),
  );
  assert.match(errLines[1], /^1 file could not be ingested$/);
  assert.match(
    r.stdout,
    /^ingested .*valkey-benchmark_8\.0\.1_valkey-8\.0\.1_quiet\.txt: 1 run \(1 complete\), 6 tests$/m,
  );

  const t = await kvlab(
    "table",
    "results",
    "--data",
    `${dir}/ds`,
    "--format",
    "csv",
    "--columns",
    "test,ops_per_sec,p50_latency_ms",
  );
  assert.equal(t.code, 0);
  assert.equal(
    t.stdout,
    "test,ops_per_sec,p50_latency_ms\nSET,71428.57,0.415\nGET,81300.81,0.383\nINCR,79681.28,0.439\n" +
      "LPUSH,64724.92,0.423\nLPUSH_FOR_LRANGE,58309.04,0.455\nLRANGE_100,42105.27,0.543\n",
  );
  const runs = await kvlab("table", "runs", "--data", `${dir}/ds`, "--format", "json");
  const rows = JSON.parse(runs.stdout);
  assert.equal(rows[0].server, "valkey");
  // tags are an object in JSON output (a string of JSON before)
  assert.deepEqual(rows[0].tags, { host: "lab1" });
  // the same bytes with the same labels: skipped
  const again = await kvlab("ingest", QUIET, ...lab1);
  assert.equal(again.code, 0);
  assert.match(again.stdout, /^duplicate .*: same bytes already ingested as run \S+/);
  // the same bytes under another server: ingested, and flagged as a copy
  const other = await kvlab("ingest", QUIET, "--data", `${dir}/ds`, "--server", "redis");
  assert.equal(other.code, 0);
  assert.match(
    other.stdout,
    /^ {2}flagged: the same bytes were ingested before as \S+quiet\.txt under other labels/m,
  );
  const shas = JSON.parse(
    (await kvlab("table", "runs", "--data", `${dir}/ds`, "--format", "json")).stdout,
  )
    .map((r: { raw_sha256: string }) => r.raw_sha256);
  assert.equal(shas.length, 2);
  assert.equal(shas[0], shas[1]);
});

Deno.test("kvlab --help and bad arguments", async () => {
  for (const cmd of [[], ["ingest"], ["table"], ["demo"]]) {
    const h = await kvlab(...cmd, "--help");
    assert.equal(h.code, 0, cmd.join(" "));
    assert.match(h.stdout, /Usage: kvlab/);
  }
  const bad = await kvlab("table", "results", "--data", "/nonexistent-kvlab", "--format", "xml");
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /invalid format: xml/);
  const cols = await kvlab(
    "table",
    "runs",
    "--data",
    Deno.makeTempDirSync(),
    "--columns",
    "run_id,nosuch",
  );
  assert.notEqual(cols.code, 0);
  assert.match(cols.stderr, /invalid column: nosuch \(table runs has: run_id, schema_version/);
  const interval = await kvlab(
    "sample",
    "--url",
    "redis://127.0.0.1:1",
    "--data",
    "/tmp/x",
    "--interval",
    "abc",
    "--duration",
    "1",
  );
  assert.notEqual(interval.code, 0);
  assert.match(interval.stderr, /invalid --interval: abc \(expected seconds from 0.05 to 86400\)/);
  const tag = await kvlab("ingest", "x", "--data", "/tmp/x", "--tag", "novalue");
  assert.notEqual(tag.code, 0);
  assert.match(tag.stderr, /expected k=v/);
});

Deno.test("kvlab --version prints kvlab's and Deno's versions", async () => {
  for (const flag of ["--version", "-V"]) {
    const r = await kvlab(flag);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `kvlab 0.1.0 (deno ${Deno.version.deno})\n`);
  }
});

Deno.test("kvlab exit codes: 2 for usage errors, 1 for failures", async () => {
  const usage: [string[], RegExp][] = [
    [["--nope"], /unknown option '--nope'/],
    [["nosuch"], /unknown command 'nosuch'/],
    [[], /Usage: kvlab/],
    [["table", "results"], /required option '--data <dir>' not specified/],
    [["table", "results", "--data"], /option '--data <dir>' argument missing/],
    [["compare", "--data", "/nonexistent-kvlab", "--format", "xml"], /invalid format: xml/],
    [["plot", "pie", "--data", "/nonexistent-kvlab", "-o", "x.svg"], /invalid chart kind: pie/],
    [["ingest", "x", "--data", "/tmp/x", "--tag", "novalue"], /expected k=v/],
  ];
  for (const [args, message] of usage) {
    const r = await kvlab(...args);
    assert.equal(r.code, 2, `kvlab ${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  const failures: [string[], RegExp][] = [
    [["table", "results", "--data", "/nonexistent-kvlab"], /no such dataset directory/],
    [["compare", "--data", Deno.makeTempDirSync()], /fewer than two arms: the data has no results/],
    [["run", "/nonexistent-kvlab/plan.yaml", "--data", "/tmp/x"], /No such file/],
  ];
  for (const [args, message] of failures) {
    const r = await kvlab(...args);
    assert.equal(r.code, 1, `kvlab ${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});

Deno.test({
  name: "kvlab table on a terminal: aligned text; piped: Markdown",
  ignore: !hasScript(),
  fn: async () => {
    const dir = Deno.makeTempDirSync();
    const ingest = await kvlab("ingest", QUIET, "--data", `${dir}/ds`, "--server", "valkey");
    assert.equal(ingest.code, 0, ingest.stderr);
    const args = [
      "table",
      "results",
      "--data",
      `${dir}/ds`,
      "--columns",
      "server,test,ops_per_sec",
    ];
    // script(1) gives the command a pseudo-terminal as stdout
    const command = [Deno.execPath(), "run", "--allow-all", ROOT + "src/cli.ts", ...args]
      .map((a) => `'${a}'`).join(" ");
    const tty = await new Deno.Command("script", {
      args: ["-qec", command, "/dev/null"],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const text = new TextDecoder().decode(tty.stdout).replace(/\r\n/g, "\n");
    assert.equal(tty.code, 0, text);
    assert.equal(
      text.split("\n").slice(0, 4).join("\n"),
      "server  test              ops_per_sec\n" +
        "------  ----------------  -----------\n" +
        "valkey  SET                  71428.57\n" +
        "valkey  GET                  81300.81",
    );
    const piped = await kvlab(...args);
    assert.match(
      piped.stdout,
      /^\| server \| test \| ops_per_sec \|\n\|---\|---\|---:\|\n\| valkey \| SET \| 71428\.57 \|\n/,
    );
  },
});

function hasScript(): boolean {
  let has = false;
  try {
    has = new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch { /* not installed */ }
  if (!has) {
    const why = "the terminal-table test needs script(1) (util-linux) for a pseudo-terminal";
    if (Deno.env.get("CI") === "true") throw new Error(why);
    // deno-lint-ignore no-console
    console.log(`skipped: ${why}`);
  }
  return has;
}
