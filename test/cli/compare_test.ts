import assert from "node:assert/strict";
import { cli, labelledDataset } from "./_cli.ts";
import { newRunId, writeRun } from "../../src/store/writer.ts";
import { minimalRun, resultRow } from "../_support/stored.ts";

Deno.test("kvlab compare: arms by default, hints, and fewer than two arms", async (t) => {
  const data = await labelledDataset(["before", "after"]);

  await t.step(
    "without --by, the runs' labels are the arms and the first is the baseline",
    async () => {
      const r = await cli(["compare", "--data", data]);
      assert.equal(r.code, 0, r.stderr);
      const err = r.stderr.split("\n");
      assert.equal(err[0], "comparing by label (before, after), baseline before");
      // the small-n warning, as demo and summary print it, and the table's line
      assert.match(err[1], /^warning: 2 of 2 cells have fewer than 4 runs per arm \(3 to 3\)/);
      assert.match(err[2], /^0 of 2 cells differ .* 2 inconclusive\.$/);
      const lines = r.stdout.trim().split("\n");
      assert.match(lines[0], /^\| test \| label \| baseline n \| candidate n \| baseline median/);
      assert.match(lines[2], /^\| SET \| after \| 3 \| 3 \| 100000\.12 \| 110000\.14 \| 1\.10 \|/);
    },
  );

  await t.step("--by server, one server: says so and suggests --by label", async () => {
    const r = await cli(["compare", "--data", data, "--by", "server", "--baseline", "redis"]);
    assert.equal(r.code, 1);
    assert.doesNotMatch(r.stderr, /invalid baseline/);
    assert.equal(
      r.stderr,
      "error: fewer than two arms: server has one value (redis); try --by label (values: before, after)\n",
    );
  });

  await t.step("a baseline that is not an arm names the arms", async () => {
    const r = await cli(["compare", "--data", data, "--baseline", "during"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /invalid baseline: during \(values of label: before, after\)/);
  });

  await t.step("--by server splits when the arms run different servers", async () => {
    const mixed = await labelledDataset(["a", "b"], 2, (l) => (l === "a" ? "redis" : "valkey"));
    // labels split too and win the default; --by server is honoured
    const r = await cli(["compare", "--data", mixed, "--by", "server", "--format", "csv"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.split("\n")[1], /^SET,valkey,redis,2,2,/);
  });

  await t.step(
    "one arm: compare, plot ratio and plot delta fail naming what the data holds",
    async () => {
      const one = await labelledDataset(["only"], 2);
      const c = await cli(["compare", "--data", one]);
      assert.equal(c.code, 1);
      assert.equal(c.stdout, "");
      assert.match(
        c.stderr,
        /^error: fewer than two arms: label has one value \(only\), server has one value \(redis\), /,
      );
      const out = Deno.makeTempDirSync();
      const p = await cli(["plot", "ratio", "--data", one, "-o", `${out}/r.svg`]);
      assert.equal(p.code, 1);
      assert.match(p.stderr, /fewer than two arms: label has one value \(only\)/);
      const sides = ["--data", one, "--dimension", "label", "--from", "only", "--to", "other"];
      const d = await cli(["plot", "delta", ...sides, "-o", `${out}/d.svg`]);
      assert.equal(d.code, 1);
      assert.match(d.stderr, /fewer than two values: label has one value \(only\)/);
      assert.throws(() => Deno.statSync(`${out}/r.svg`), Deno.errors.NotFound);
      const dl = await cli(["delta", ...sides]);
      assert.equal(dl.code, 1);
      assert.match(dl.stderr, /fewer than two values: label has one value \(only\)/);
    },
  );

  await t.step("plot ratio without --by or --baseline draws the labels", async () => {
    const out = Deno.makeTempDirSync();
    const r = await cli(["plot", "ratio", "--data", data, "-o", `${out}/r.vl.json`]);
    assert.equal(r.code, 0, r.stderr);
    const spec = JSON.parse(Deno.readTextFileSync(`${out}/r.vl.json`));
    assert.match(JSON.stringify(spec), /"label":"after"/);
  });
});

Deno.test("kvlab compare and delta: formats", async (t) => {
  const data = await labelledDataset(["before", "after"]);

  await t.step(
    "--format csv: every column, full precision, snake_case names with units",
    async () => {
      const r = await cli(["compare", "--data", data, "--format", "csv"]);
      assert.equal(r.code, 0, r.stderr);
      const [header, set] = r.stdout.split("\n");
      assert.equal(
        header,
        "test,label,baseline,baseline_n,candidate_n,baseline_median_ops_per_sec," +
          "candidate_median_ops_per_sec,baseline_min_ops_per_sec,baseline_max_ops_per_sec," +
          "candidate_min_ops_per_sec,candidate_max_ops_per_sec,ratio,ratio_ci_low,ratio_ci_high," +
          "verdict,direction,shift_ratio,p_value,q_value,verdict_note,unstable,also_differs," +
          "unstable_details,runs_needed,runs_needed_observed",
      );
      const cells = set.split(",");
      assert.equal(cells[5], "100000.12");
      assert.equal(cells[6], "110000.14");
      assert.ok(cells[11].length > 6, `ratio at full precision: ${cells[11]}`);
      assert.equal(Number(cells[11]), 110000.14 / 100000.12);
    },
  );

  await t.step("--format json: numbers at full precision under the column names", async () => {
    const r = await cli(["compare", "--data", data, "--format", "json"]);
    assert.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout);
    assert.equal(rows[0].test, "SET");
    assert.equal(rows[0].ratio, 110000.14 / 100000.12);
    // 3 runs per arm: no interval reaches 95 % coverage, and no verdict
    assert.equal(rows[0].ratio_ci_low, null);
    assert.equal(rows[0].verdict, "inconclusive");
    assert.equal(rows[0].verdict_note, "fewer than 4 runs per arm");
    assert.equal(rows[0].p_value, 0.1);
    assert.notEqual(rows[0].shift_ratio, Number(rows[0].shift_ratio.toFixed(2)));
    assert.equal(rows[0].baseline_median_ops_per_sec, 100000.12);
  });

  await t.step("Markdown in a pipe, aligned text on a terminal, Markdown when asked", async () => {
    const piped = await cli(["compare", "--data", data]);
    assert.match(piped.stdout, /^\| test \| label \|/);
    const tty = await cli(["compare", "--data", data], true);
    const lines = tty.stdout.trimEnd().split("\n");
    assert.ok(
      lines[0].startsWith("test  label  baseline n  candidate n  baseline median (ops/s)"),
      lines[0],
    );
    assert.ok(lines[1].startsWith("----  -----  ----------"), lines[1]);
    assert.doesNotMatch(tty.stdout, /\|/);
    // every row as wide as the rule: the columns line up
    const width = lines[1].length;
    for (const l of lines.slice(2)) assert.ok(l.length <= width, l);
    assert.equal(lines[2].indexOf("after"), lines[0].indexOf("label"));
    const md = await cli(["compare", "--data", data, "--format", "md"], true);
    assert.equal(md.stdout, piped.stdout);
  });

  await t.step("delta: compact for people, every column in CSV", async () => {
    const args = [
      "delta",
      "--data",
      data,
      "--dimension",
      "label",
      "--from",
      "before",
      "--to",
      "after",
    ];
    const md = await cli(args);
    assert.equal(md.code, 0, md.stderr);
    const header = md.stdout.split("\n")[0];
    assert.match(header, /throughput factor/);
    assert.doesNotMatch(header, /from p50 latency/);
    const csv = await cli([...args, "--format", "csv"]);
    assert.match(csv.stdout.split("\n")[0], /from_p50_latency_ms,to_p50_latency_ms/);
    assert.equal(Number(csv.stdout.split("\n")[1].split(",")[7]), 110000.14 / 100000.12);
  });
});

Deno.test("kvlab compare and delta against a baseline of 0 ops/s: no ratio, no Infinity or NaN", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-compare-zero-" });
  try {
    // the broken server's 0 ops/s stored as an older kvlab did (this one stores redis-benchmark's
    // "0.00 requests per second" as no rate)
    for (const [label, set] of [["broken", 0], ["fixed", 50_000]] as const) {
      for (let i = 0; i < 4; i++) {
        const id = newRunId(new Date(Date.UTC(2026, 0, 1 + i + (set ? 10 : 0))));
        await writeRun(`${dir}/data`, {
          run: minimalRun(id, { label, source_path: `${dir}/${label}/${i}.txt` }),
          tables: {
            results: [
              resultRow(id, { test: "SET", index: 0, ops: set + (set ? i * 10 : 0) }, {
                p50_latency_ms: 0.5 + i / 100,
              }),
            ],
          },
          raw: [],
        });
      }
    }
    for (const format of ["csv", "text", "md", "json"]) {
      for (const cmd of [["compare"], ["delta", "--dimension", "label"]]) {
        const args = [...cmd, "--data", `${dir}/data`, "--format", format];
        const r = await cli(
          cmd[0] === "delta" ? [...args, "--from", "broken", "--to", "fixed"] : args,
        );
        assert.equal(r.code, 0, r.stderr);
        assert.doesNotMatch(r.stdout, /Infinity|NaN/, `${cmd[0]} ${format}`);
      }
    }
    const c = JSON.parse(
      (await cli(["compare", "--data", `${dir}/data`, "--format", "json"])).stdout,
    );
    assert.deepEqual(
      [c[0].baseline_median_ops_per_sec, c[0].ratio, c[0].verdict_note],
      [0, null, "values not all positive"],
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
