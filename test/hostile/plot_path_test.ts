/**
 * `kvlab plot -o` with paths a user of the tasks cannot or should not write: each refused with
 * the path and what to do (never Deno's "run again with the --allow-all flag"), and missing
 * folders created only one level deep.
 *
 * @module
 */

import assert from "node:assert/strict";
import { kvlab } from "./_cli.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const REPORT = ROOT + "test/testdata/corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt";

Deno.test("kvlab plot -o refuses system folders and missing parents, clearly", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-plotpath-" });
  const data = `${dir}/data`;
  const ingest = await kvlab(["ingest", REPORT, "--data", data]);
  assert.equal(ingest.code, 0, ingest.printed);
  const plot = (out: string) => kvlab(["plot", "throughput", "--data", data, "-o", out]);

  await t.step("a path under /proc", async () => {
    const r = await plot("/proc/x.png");
    assert.equal(r.code, 1, r.printed);
    assert.equal(
      r.stderr,
      "error: cannot write /proc/x.png: /proc is a system folder, not for files; choose another path\n",
    );
    assert.ok(!r.printed.includes("--allow-all"));
  });
  await t.step("a folder whose parent is missing is not created", async () => {
    const r = await plot(`${dir}/nonexistent/dir/x.svg`);
    assert.equal(r.code, 1, r.printed);
    assert.match(
      r.stderr,
      /^error: cannot write \S+\/nonexistent\/dir\/x\.svg: folder \S+\/nonexistent does not exist \(create it first, or choose another path\)\n$/,
    );
    assert.throws(() => Deno.statSync(`${dir}/nonexistent`), Deno.errors.NotFound);
  });
  await t.step("a missing folder whose parent exists is created", async () => {
    const r = await plot(`${dir}/charts/x.svg`);
    assert.equal(r.code, 0, r.printed);
    assert.ok(Deno.statSync(`${dir}/charts/x.svg`).size > 0);
  });
});
