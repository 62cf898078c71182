// Commands with nothing to show for a dataset exit 1 and name the command that shows it:
// compare, plot ratio/latency and summary on fixed-rate steps point to `kvlab sweep`; sweep and
// plot sweep on data without steps point to `kvlab compare`.
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
      ["compare", ["compare", "--data", sweep]],
      ["plot ratio", ["plot", "ratio", "--data", sweep, "-o", `${out}/r.svg`]],
      ["plot latency", ["plot", "latency", "--data", sweep, "-o", `${out}/l.svg`]],
      ["plot throughput", ["plot", "throughput", "--data", sweep, "-o", `${out}/t.svg`]],
      ["summary", ["summary", sweep, "-o", `${out}/summary`]],
    ] as const
  ) {
    await t.step(`kvlab ${name} on fixed-rate steps points to kvlab sweep`, async () => {
      const r = await cli([...args]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(r.stdout, "");
      assert.match(r.stderr, new RegExp(`error: kvlab ${name} has nothing to show`));
      assert.match(r.stderr, /`kvlab sweep --data /);
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
  for (const d of [sweep, out, plain.replace(/\/data$/, "")]) {
    Deno.removeSync(d, { recursive: true });
  }
});
