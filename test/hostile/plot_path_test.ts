/**
 * `kvlab plot -o` with paths a user of the tasks cannot or should not write: each refused with
 * the path and what to do (never Deno's "run again with the --allow-all flag"); `saveChart`
 * with `folders: "parent"` creating a missing folder only when its parent exists.
 *
 * @module
 */

import assert from "node:assert/strict";
import { saveChart } from "../../src/analyze/export.ts";
import { kvlab } from "./_cli.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const REPORT = ROOT + "test/testdata/corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt";

Deno.test("kvlab plot -o refuses a system folder with the path, not with --allow-all", async (t) => {
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
});

Deno.test("saveChart() with folders: parent creates one missing folder, never a tree", async () => {
  // `kvlab plot -o` is to pass `{ folders: "parent" }` (a path a person typed)
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-savechart-" });
  const spec = { mark: "point", data: { values: [{ x: 1 }] } };
  await assert.rejects(
    saveChart(spec, `${dir}/nonexistent/dir/x.svg`, { folders: "parent" }),
    new TypeError(
      `cannot write ${dir}/nonexistent/dir/x.svg: folder ${dir}/nonexistent does not exist ` +
        `(create it first, or choose another path)`,
    ),
  );
  assert.throws(() => Deno.statSync(`${dir}/nonexistent`), Deno.errors.NotFound);
  await saveChart(spec, `${dir}/charts/x.svg`, { folders: "parent" });
  assert.ok(Deno.statSync(`${dir}/charts/x.svg`).size > 0);
  // programs that choose their own paths (saveFigure) still get the whole tree
  await saveChart(spec, `${dir}/figures/nb/x.vl.json`);
  assert.ok(Deno.statSync(`${dir}/figures/nb/x.vl.json`).isFile);
  await assert.rejects(saveChart(spec, "/sys/x.svg"), /\/sys is a system folder/);
});
