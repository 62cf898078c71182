/**
 * Issue 19's "done when" for `kvlab compare --format json`: A/A datasets with 2, 3, 5 and 10
 * runs per arm (20 tests × 10 datasets each) have at most 8 % of cells called better or worse;
 * a true +10 % throughput shift (CV 3 %, 5 runs per arm) is called better in at least 90 % of
 * cells; one run per arm is never better, worse or "no difference". The `redis-benchmark --csv`
 * outputs are generated in-process (seeded) and ingested through the library with `--label`'s
 * option; compare runs through the CLI's command tree in-process.
 */
import assert from "node:assert/strict";
import { seededRandom } from "../../src/random.ts";
import { ingestPaths } from "../../src/collect/mod.ts";
import { cli, compareLabelsJson } from "./_cli.ts";
import { CSV_TESTS as TESTS } from "../_support/history.ts";

/** One `redis-benchmark --csv` output: every test at `rps × shift` with noise of CV `cv`. */
function csv(rand: () => number, shift: number, cv: number): string {
  const z = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const q = (x: number, d: number) => `"${x.toFixed(d)}"`;
  const lines = [
    '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",' +
    '"p99_latency_ms","max_latency_ms"',
  ];
  for (const [i, t] of TESTS.entries()) {
    const rps = (50_000 + 1000 * i) * shift * (1 + cv * z());
    const lat = 0.5 * (50_000 / rps);
    lines.push(
      [
        `"${t}"`,
        q(rps, 2),
        q(lat, 3),
        q(lat / 3, 3),
        q(lat, 3),
        q(lat * 1.4, 3),
        q(lat * 2, 3),
        q(lat * 8, 3),
      ]
        .join(","),
    );
  }
  return lines.join("\n") + "\n";
}

/** A dataset of two arms A and B, `n` runs each (interleaved files), B shifted by `shift`. */
async function dataset(seed: number, n: number, shift: number, cv: number): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-calib-" });
  const rand = seededRandom(seed);
  for (const label of ["A", "B"]) Deno.mkdirSync(`${dir}/${label}`);
  for (let rep = 0; rep < n; rep++) {
    Deno.writeTextFileSync(`${dir}/A/run-${rep}.csv`, csv(rand, 1, cv));
    Deno.writeTextFileSync(`${dir}/B/run-${rep}.csv`, csv(rand, shift, cv));
  }
  for (const label of ["A", "B"]) {
    const out = await ingestPaths([`${dir}/${label}`], {
      data: `${dir}/data`,
      server: "redis",
      label,
    });
    assert.ok(out.every((o) => o.status === "ingested"), JSON.stringify(out.map((o) => o.error)));
  }
  return `${dir}/data`;
}

/** `kvlab compare --format json` over a dataset: the verdicts. */
async function verdicts(data: string): Promise<string[]> {
  const rows = await compareLabelsJson<{ verdict: string }>(data, "A");
  assert.equal(rows.length, TESTS.length);
  return rows.map((r) => r.verdict);
}

Deno.test("kvlab compare --format json: calibrated on generated redis-benchmark --csv data", async (t) => {
  for (const n of [2, 3, 5, 10]) {
    await t.step(`A/A, ${n} runs per arm: at most 8 % of cells better or worse`, async () => {
      const all: string[] = [];
      for (let d = 0; d < 10; d++) {
        all.push(...await verdicts(await dataset(100 * n + d, n, 1, 0.05)));
      }
      const called = all.filter((v) => v === "better" || v === "worse").length;
      assert.ok(called <= 0.08 * all.length, `${called} of ${all.length} cells called`);
    });
  }
  await t.step("+10 % throughput, CV 3 %, 5 runs per arm: at least 90 % better", async () => {
    const all: string[] = [];
    for (let d = 0; d < 10; d++) all.push(...await verdicts(await dataset(900 + d, 5, 1.1, 0.03)));
    const better = all.filter((v) => v === "better").length;
    assert.ok(better >= 0.9 * all.length, `${better} of ${all.length} cells better`);
  });
  await t.step("one run per arm: every cell inconclusive, with the warning", async () => {
    const data = await dataset(7, 1, 10.49, 0.03);
    assert.deepEqual(new Set(await verdicts(data)), new Set(["inconclusive"]));
    const r = await cli(["compare", "--data", data, "--format", "json"]);
    assert.match(r.stderr, /warning: one run per arm in every cell \(20 cells\)/);
    assert.match(r.stderr, /0 of 20 cells differ/);
  });
});
