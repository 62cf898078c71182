import assert from "node:assert/strict";
import { cli } from "./_cli.ts";
import { nightlyHistory, writeNightlyHistory } from "../_support/history.ts";

/** The `test` kvlab stores for a redis-benchmark title. */
function testName(title: string): string {
  if (title === "LPUSH (needed to benchmark LRANGE)") return "LPUSH_FOR_LRANGE";
  return title.replace(/\s*\(.*\)$/, "").toUpperCase().replace(/[^A-Z0-9]+/g, "_");
}

Deno.test("kvlab changes finds the true shifts of 150-night histories ingested as one folder", async (t) => {
  for (const seed of [1, 2, 3]) {
    await t.step(`seed ${seed}`, async () => {
      const dir = Deno.makeTempDirSync({ prefix: "kvlab-changes-" });
      try {
        const history = nightlyHistory(seed);
        writeNightlyHistory(`${dir}/nightly`, history);
        const ingest = await cli(["ingest", `${dir}/nightly`, "--data", `${dir}/data`]);
        assert.equal(ingest.code, 0, ingest.stderr);
        const r = await cli([
          "changes",
          "--data",
          `${dir}/data`,
          "--order-by",
          "source_path",
          "--format",
          "json",
        ]);
        assert.equal(r.code, 0, r.stderr);
        const rows = JSON.parse(r.stdout) as {
          test: string;
          index: number;
          change_pct: number;
          p_value: number;
        }[];
        assert.ok(rows.every((x) => typeof x.change_pct === "number" && x.p_value <= 0.001));
        let truth = 0;
        let found = 0;
        let falsePoints = 0;
        for (const h of history) {
          const got = rows.filter((x) => x.test === testName(h.title)).map((x) => x.index);
          truth += h.shifts.length;
          found += h.shifts.filter((s) => got.some((g) => Math.abs(g - s) <= 2)).length;
          falsePoints += got.filter((g) => !h.shifts.some((s) => Math.abs(g - s) <= 2)).length;
        }
        assert.equal(truth, 27);
        assert.equal(new Set(rows.map((x) => x.test)).size <= 20, true);
        assert.ok(found >= 26, `seed ${seed}: found ${found} of ${truth} true shifts`);
        assert.ok(falsePoints <= 2, `seed ${seed}: ${falsePoints} false change points`);
      } finally {
        Deno.removeSync(dir, { recursive: true });
      }
    });
  }
});
