// What `--help` and usage errors tell a new user: every format and tool, required options
// marked, one wording per default, the unknown-command suggestion visible, and `plot delta`
// needing no --dimension/--from/--to when the arms are clear.
import assert from "node:assert/strict";
import { PLAN_KINDS } from "../../src/collect/mod.ts";
import { cli, labelledDataset } from "./_cli.ts";

const help = async (...args: string[]) => (await cli([...args, "--help"])).stdout;

Deno.test("kvlab help texts", async (t) => {
  await t.step("ingest names memtier_benchmark, and --tag shows no `{}` default", async () => {
    const h = await help("ingest");
    assert.match(h, /memtier_benchmark outputs/);
    assert.match(h.replace(/\s+/g, " "), /--tool <name> tool, .*memtier_benchmark\)/);
    assert.doesNotMatch(h, /default: \{\}/);
  });
  await t.step("required options are marked", async () => {
    assert.match(await help("table"), /--data <dir> +dataset directory \(required\)/);
    assert.match((await help("plot")).replace(/\s+/g, " "), /--output <file> .* \(required\)/);
    assert.doesNotMatch(await help("table"), /--columns <list>.*\(required\)/);
  });
  await t.step(
    "sweep --format lists text; report names KVLAB_DATA; run every plan kind",
    async () => {
      assert.match(await help("sweep"), /md \(the tables\), text, csv or json/);
      assert.match(await help("report"), /KVLAB_DATA/);
      const run = (await help("run")).replace(/\s+/g, " ");
      for (const kind of Object.keys(PLAN_KINDS)) {
        assert.match(run, new RegExp(`${kind} \\(`), kind);
      }
    },
  );
  await t.step("--baseline's default is worded one way", async () => {
    for (const cmd of ["compare", "plot", "summary"]) {
      assert.match(
        (await help(cmd)).replace(/\s+/g, " "),
        /--baseline <value> the baseline arm \(default: the arm measured first\)/,
        cmd,
      );
    }
  });
  await t.step("an unknown command: the suggestion, not 60 lines of help", async () => {
    const r = await cli(["sweeep"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command 'sweeep'\n\(Did you mean sweep\?\)/);
    assert.ok(r.stderr.trim().split("\n").length <= 4, r.stderr);
  });
  await t.step("plot delta over two arms needs no --dimension/--from/--to", async () => {
    const data = await labelledDataset(["a", "b"], 2);
    const out = Deno.makeTempDirSync({ prefix: "kvlab-help-" });
    const r = await cli([
      "plot",
      "delta",
      "--data",
      data,
      "-o",
      `${out}/d.vl.json`,
      "--by",
      "label",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const spec = Deno.readTextFileSync(`${out}/d.vl.json`);
    assert.match(spec, /"b"|b vs a|from a to b|a → b/);
    const three = await labelledDataset(["a", "b", "c"], 2);
    const r3 = await cli([
      "plot",
      "delta",
      "--data",
      three,
      "-o",
      `${out}/d3.svg`,
      "--by",
      "label",
    ]);
    assert.equal(r3.code, 1);
    assert.match(r3.stderr, /delta needs --dimension, --from and --to/);
    for (const d of [data, three]) Deno.removeSync(d.replace(/\/data$/, ""), { recursive: true });
    Deno.removeSync(out, { recursive: true });
  });
});
