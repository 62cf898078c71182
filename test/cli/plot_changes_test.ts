// `kvlab changes` and `kvlab plot changes` on one history with the same options show the same
// change points and outliers (issue 31): plot changes takes --window, --max-pvalue and
// --min-change, draws the nights on its x axis, and rings the one-night dip that changes lists
// apart from its change points.
import assert from "node:assert/strict";
import { cli } from "./_cli.ts";
import { withTempDir } from "../_support/temp.ts";

/** A night's date folder (night 0 is 2026-03-01). */
const night = (i: number) => new Date(Date.UTC(2026, 2, 1 + i)).toISOString().slice(0, 10);

/**
 * 40 nights of `redis-benchmark -q` in dated folders: SET 8 % slower from night 24, GET at half
 * for night 9 only; a little noise.
 */
function nightly(dir: string): string {
  for (let i = 0; i < 40; i++) {
    // every night's output differs (ingest skips an output it stored already)
    const wiggle = 1 + (((i * 37) % 11) - 5) / 1000 + i / 1e6;
    const set = (i < 24 ? 100_000 : 92_000) * wiggle;
    const get = (i === 9 ? 60_000 : 120_000) * wiggle;
    Deno.mkdirSync(`${dir}/nightly/${night(i)}`, { recursive: true });
    Deno.writeTextFileSync(
      `${dir}/nightly/${night(i)}/bench.txt`,
      `SET: ${set.toFixed(2)} requests per second, p50=0.503 msec\n` +
        `GET: ${get.toFixed(2)} requests per second, p50=0.327 msec\n`,
    );
  }
  return `${dir}/nightly`;
}

type Spec = {
  data: { values: { series: string; label: string; change: boolean; outlier: boolean }[] };
  spec: { layer: { encoding: { x: { type: string; field: string } } }[] };
  title: { subtitle: string[] };
};

Deno.test("plot changes draws what changes finds, with the same options, over the nights", async () => {
  await withTempDir("kvlab-plot-changes-", async (dir) => {
    const data = `${dir}/data`;
    assert.equal((await cli(["ingest", nightly(dir), "--data", data])).code, 0);
    for (
      const options of [[], ["--window", "12", "--max-pvalue", "0.01"], ["--min-change", "10%"]]
    ) {
      const said = options.join(" ") || "defaults";
      const c = await cli(["changes", "--data", data, "--format", "json", ...options]);
      assert.equal(c.code, 0, c.stderr);
      const o = await cli([
        "changes",
        "--data",
        data,
        "--format",
        "json",
        "--outliers",
        ...options,
      ]);
      assert.equal(o.code, 0, o.stderr);
      const out = `${dir}/c-${options.length}.vl.json`;
      const p = await cli(["plot", "changes", "--data", data, "-o", out, ...options]);
      assert.equal(p.code, 0, `${said}: ${p.stderr}`);
      const spec = JSON.parse(Deno.readTextFileSync(out)) as Spec;
      const drawn = (mark: "change" | "outlier") =>
        spec.data.values.filter((v) => v[mark]).map((v) => `${v.series} ${v.label}`).sort();
      const listed = (rows: Record<string, unknown>[], order: string) =>
        rows.map((r) => `${r.test} ${String(r[order]).split("/").at(-2)}`).sort();
      assert.deepEqual(drawn("change"), listed(JSON.parse(c.stdout), "order_after"), said);
      assert.deepEqual(drawn("outlier"), listed(JSON.parse(o.stdout), "order_value"), said);
      // the x axis is the night, as a date
      const x = spec.spec.layer[0].encoding.x;
      assert.deepEqual([x.field, x.type], ["label", "temporal"]);
    }
    // the history as it is: SET's step on 2026-03-25, GET's dip on 2026-03-10, apart
    const c = await cli(["changes", "--data", data, "--format", "json"]);
    assert.deepEqual(
      (JSON.parse(c.stdout) as { test: string; index: number }[]).map((r) => [r.test, r.index]),
      [["SET", 24]],
    );
    assert.match(c.stderr, /1 single-run outlier \(not change points; .*\): --outliers prints/);
    // a step of 8 % is below --min-change 10 %: the chart leaves it out too
    const big = JSON.parse(Deno.readTextFileSync(`${dir}/c-2.vl.json`)) as Spec;
    assert.equal(big.data.values.filter((v) => v.change).length, 0);
    // for people, the outliers in their own section with their night
    const md = await cli(["changes", "--data", data]);
    assert.match(md.stdout, /^\*\*Change points\*\*\n\n\| test \| index \|/);
    assert.match(md.stdout, /\*\*Single-run outliers: one run far from the other runs/);
    assert.match(md.stdout, /\| GET \| 9 \| 2026-03-10 \| (?:59|60)\d{3}\.\d\d \|/);
  });
});

Deno.test("plot changes labels tags in their order on its x axis", async () => {
  await withTempDir("kvlab-plot-changes-tags-", async (dir) => {
    const data = `${dir}/data`;
    nightly(dir);
    for (let i = 0; i < 40; i++) {
      const r = await cli([
        "ingest",
        `${dir}/nightly/${night(i)}`,
        "--data",
        data,
        "--tag",
        `commit=${1000 + i}-c${i}`,
      ]);
      assert.equal(r.code, 0, r.stderr);
    }
    const out = `${dir}/c.vl.json`;
    const p = await cli(["plot", "changes", "--data", data, "--order-by", "tag:commit", "-o", out]);
    assert.equal(p.code, 0, p.stderr);
    const spec = JSON.parse(Deno.readTextFileSync(out)) as Spec;
    const x = spec.spec.layer[0].encoding.x as unknown as { type: string; sort: string[] };
    assert.equal(x.type, "ordinal");
    assert.deepEqual(x.sort.slice(0, 3), ["1000-c0", "1001-c1", "1002-c2"]);
    assert.equal(x.sort.length, 40);
    assert.equal(
      spec.title.subtitle[0],
      "throughput (ops/s): 2 series, 40 runs in order of tag:commit",
    );
    assert.deepEqual(spec.data.values.filter((v) => v.change).map((v) => v.label), ["1024-c24"]);
  });
});
