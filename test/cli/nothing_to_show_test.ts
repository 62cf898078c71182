// Commands with nothing to show for a dataset exit 1 and name the command that shows it:
// plot ratio/latency/throughput on fixed-rate steps point to `kvlab sweep` and `kvlab compare`
// (compare and summary show fixed-rate steps rate by rate since issue 31); sweep and plot sweep
// on data without steps point to `kvlab compare`; compare with no test both arms ran says so.
import assert from "node:assert/strict";
import { writePublishedSweep } from "../../src/collect/mod.ts";
import { PUBLISHED_TABLES as PUBLISHED } from "../_support/published_sweep.ts";
import { cli, labelledDataset } from "./_cli.ts";

Deno.test("commands with nothing to show exit 1 naming the command that shows it", async (t) => {
  const sweep = Deno.makeTempDirSync({ prefix: "kvlab-nothing-" });
  writePublishedSweep(Deno.readTextFileSync(PUBLISHED), sweep);
  const out = Deno.makeTempDirSync({ prefix: "kvlab-nothing-out-" });

  for (
    const [name, args] of [
      ["plot ratio", ["plot", "ratio", "--data", sweep, "-o", `${out}/r.svg`]],
      ["plot latency", ["plot", "latency", "--data", sweep, "-o", `${out}/l.svg`]],
      ["plot throughput", ["plot", "throughput", "--data", sweep, "-o", `${out}/t.svg`]],
    ] as const
  ) {
    await t.step(`kvlab ${name} on fixed-rate steps points to kvlab sweep`, async () => {
      const r = await cli([...args]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, new RegExp(`error: kvlab ${name} has nothing to show`));
      assert.match(r.stderr, /`kvlab sweep --data /);
      assert.match(r.stderr, /`kvlab compare --data .*` compares the arms rate by rate/);
    });
  }
  await t.step("nothing was written", () => {
    assert.deepEqual([...Deno.readDirSync(out)], []);
  });

  const plain = await labelledDataset(["a", "b"], 2);
  for (
    const [name, args] of [
      ["sweep", ["sweep", "--data", plain]],
      ["plot sweep", ["plot", "sweep", "--data", plain, "-o", `${out}/s.svg`]],
    ] as const
  ) {
    await t.step(`kvlab ${name} without fixed-rate steps points to kvlab compare`, async () => {
      const r = await cli([...args]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stderr, new RegExp(`error: kvlab ${name} has nothing to show`));
      assert.match(r.stderr, /`kvlab compare --data /);
    });
  }

  await t.step("kvlab plot latency without distributions says so", async () => {
    // `-q` output prints no latency distribution
    const r = await cli(["plot", "latency", "--data", plain, "-o", `${out}/l.svg`]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /holds no latency distribution/);
    assert.doesNotMatch(r.stderr, /TypeError|Cannot read/);
  });

  await t.step("the same commands still work where there is something to show", async () => {
    const r = await cli(["compare", "--data", plain, "--format", "csv"]);
    assert.equal(r.code, 0, r.stderr);
    const s = await cli(["sweep", "--data", sweep]);
    assert.equal(s.code, 0, s.stderr);
  });

  await t.step("kvlab compare and summary show fixed-rate steps rate by rate", async () => {
    const c = await cli(["compare", "--data", sweep]);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /\| p99 verdict \|/);
    const s = await cli(["summary", sweep, "-o", `${out}/summary`]);
    assert.equal(s.code, 0, s.stderr);
    assert.match(
      Deno.readTextFileSync(`${out}/summary/summary.md`),
      /^## Fixed-rate latency: each arm against HotKV, rate by rate$/m,
    );
  });

  await t.step("kvlab compare with no test both arms ran says so (exit 1)", async () => {
    // a ran SET only, b GET only: no cell has both arms (was an empty table, `|  |`, exit 0)
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-nothing-apart-" });
    for (const [label, test] of [["a", "SET"], ["b", "GET"]]) {
      Deno.writeTextFileSync(
        `${dir}/${label}.txt`,
        `${test}: 100000.00 requests per second, p50=0.503 msec\n`,
      );
      const i = await cli([
        "ingest",
        `${dir}/${label}.txt`,
        "--data",
        `${dir}/data`,
        "--label",
        label,
      ]);
      assert.equal(i.code, 0, i.stderr);
    }
    const r = await cli(["compare", "--data", `${dir}/data`]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /error: kvlab compare has nothing to show: no test or fixed-rate step/);
    assert.match(r.stderr, /`kvlab table results --data /);
    Deno.removeSync(dir, { recursive: true });
  });
  for (const d of [sweep, out, plain.replace(/\/data$/, "")]) {
    Deno.removeSync(d, { recursive: true });
  }
});
