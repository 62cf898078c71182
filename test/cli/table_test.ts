import assert from "node:assert/strict";
import { cli, labelledDataset } from "./_cli.ts";

Deno.test("kvlab table results joins the run columns", async (t) => {
  const data = await labelledDataset(["before", "after"], 1);

  await t.step("shown after run_id by default", async () => {
    const r = await cli(["table", "results", "--data", data, "--format", "csv"]);
    assert.equal(r.code, 0, r.stderr);
    const [header, first] = r.stdout.split("\n");
    assert.match(
      header,
      /^run_id,label,server,server_version,tool,tool_version,transport,server_io_threads,test_index,test,/,
    );
    assert.match(first, /^\S+?,(before|after),redis,,redis-benchmark,,tcp,,0,SET,/);
  });

  await t.step("selectable with --columns, with any other run column", async () => {
    const r = await cli([
      "table",
      "results",
      "--data",
      data,
      "--format",
      "csv",
      "--columns",
      "label,server,test,ops_per_sec,status",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.trim().split("\n");
    assert.equal(rows[0], "label,server,test,ops_per_sec,status");
    assert.deepEqual(
      rows.slice(1).sort(),
      [
        "after,redis,GET,89820,complete",
        "after,redis,SET,109780.14,complete",
        "before,redis,GET,89820,complete",
        "before,redis,SET,99800.12,complete",
      ],
    );
  });

  await t.step("an unknown column lists the joined ones", async () => {
    const r = await cli(["table", "results", "--data", data, "--columns", "label,nosuch"]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /invalid column: nosuch \(table results has: run_id, test_index, .*label/,
    );
  });

  await t.step("aligned text on a terminal, Markdown in a pipe", async () => {
    const cols = ["--columns", "label,test,ops_per_sec"];
    const tty = await cli(["table", "results", "--data", data, ...cols], true);
    const lines = tty.stdout.trimEnd().split("\n");
    assert.equal(lines[0], "label   test  ops_per_sec");
    assert.equal(lines[1], "------  ----  -----------");
    // rounded by unit, as compare's tables are (rates to 2 decimals)
    assert.deepEqual(lines.slice(2).sort(), [
      "after   GET      89820.00",
      "after   SET     109780.14",
      "before  GET      89820.00",
      "before  SET      99800.12",
    ]);
    const piped = await cli(["table", "results", "--data", data, ...cols]);
    assert.match(piped.stdout, /^\| label \| test \| ops_per_sec \|\n\|---\|---\|---:\|\n/);
  });

  await t.step(
    "on a terminal, results show their main columns and say how to see all",
    async () => {
      const tty = await cli(["table", "results", "--data", data], true);
      const width = Math.max(...tty.stdout.split("\n").map((l) => l.length));
      assert.ok(width <= 200, `${width} characters wide`);
      assert.match(tty.stdout.split("\n")[0], /^run_id +label +server +tool +test +clients/);
      assert.match(tty.stderr, /^showing \d+ of \d+ columns: --columns a,b,c picks others/);
      const csv = await cli(["table", "results", "--data", data, "--format", "csv"]);
      assert.ok(csv.stdout.split("\n")[0].split(",").length > 30, "CSV keeps every column");
    },
  );
});
