/**
 * Issue 36's sample-size advice through `kvlab compare`: a dataset of two arms, 5 runs each at a
 * CV of 5 % and a true +2 % shift (too few runs to tell), prints one line saying how many runs
 * per arm the inconclusive cells would need, and carries the per-cell figure in JSON and CSV;
 * `--min-effect 10` needs fewer; and the figure of a cell, simulated at that cell's spread with
 * compare's own rule, tells ±5 % in about 80 % of cells (below 80 % at 0.75×, at or above it at
 * 1.25×: within ±25 %). The outputs are generated in-process (seeded) and ingested.
 */
import assert from "node:assert/strict";
import { ingestPaths } from "../../src/collect/mod.ts";
import { loadResults } from "../../src/analyze/load.ts";
import { cellVerdict } from "../../src/analyze/compare/verdict.ts";
import { pooledLogSd } from "../../src/analyze/sequential/sample_size.ts";
import { normal, sample } from "../analyze/sequential/_simulate.ts";
import { cli } from "./_cli.ts";

const TESTS = ["SET", "GET", "INCR"];

/** One `redis-benchmark --csv` output: each test at `rps × shift` with noise of CV `cv`. */
function csv(z: () => number, shift: number, cv: number): string {
  const lines = [
    '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",' +
    '"p95_latency_ms","p99_latency_ms","max_latency_ms"',
  ];
  for (const [i, t] of TESTS.entries()) {
    const rps = (50_000 + 1000 * i) * shift * (1 + cv * z());
    lines.push(`"${t}","${rps.toFixed(2)}","0.500","0.100","0.500","0.700","1.000","4.000"`);
  }
  return lines.join("\n") + "\n";
}

async function dataset(): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-advice-" });
  const z = normal(36);
  for (const [label, shift] of [["A", 1], ["B", 1.02]] as const) {
    Deno.mkdirSync(`${dir}/${label}`);
    for (let rep = 0; rep < 5; rep++) {
      Deno.writeTextFileSync(`${dir}/${label}/run-${rep}.csv`, csv(z, shift, 0.05));
    }
    const out = await ingestPaths([`${dir}/${label}`], {
      data: `${dir}/data`,
      server: "redis",
      label,
    });
    assert.ok(out.every((o) => o.status === "ingested"));
  }
  return `${dir}/data`;
}

/** The share of simulated cells (n runs per arm, log-sd `sd`, +5 %) compare calls better. */
function power(seed: number, n: number, sd: number): number {
  const z = normal(seed);
  let better = 0;
  for (let i = 0; i < 300; i++) {
    const v = cellVerdict(sample(z, n, 100, sd), sample(z, n, 105, sd), { direction: "higher" });
    if (v.verdict === "better") better++;
  }
  return better / 300;
}

Deno.test("kvlab compare says how many runs an inconclusive cell needs, and the figure holds", async () => {
  const data = await dataset();
  const args = ["compare", "--data", data, "--by", "label", "--baseline", "A"];
  const md = await cli([...args, "--format", "md"]);
  assert.equal(md.code, 0, md.stderr);
  assert.match(
    md.stderr,
    /Runs needed: the \d+ inconclusive cells would need \d+(–\d+)? runs per arm \(now 5\) to tell ±5 % at 5 % with 80 % power/,
  );
  assert.doesNotMatch(md.stdout, /runs_needed/); // one line, not a column, for people
  const json = await cli([...args, "--format", "json"]);
  const rows = JSON.parse(json.stdout) as {
    test: string;
    verdict: string;
    runs_needed: number | null;
  }[];
  assert.equal(rows.length, TESTS.length);
  for (const r of rows) {
    assert.equal(r.verdict, "inconclusive");
    assert.ok(r.runs_needed! > 5, JSON.stringify(r));
  }
  const csvOut = await cli([...args, "--format", "csv"]);
  assert.match(csvOut.stdout.split("\n")[0], /,runs_needed,runs_needed_observed$/);
  const wide = JSON.parse((await cli([...args, "--format", "json", "--min-effect", "10"])).stdout);
  assert.ok(wide[0].runs_needed < rows[0].runs_needed!);
  assert.equal((await cli([...args, "--min-effect", "0"])).code, 2);
  // the figure of the first cell, simulated at its own spread with compare's rule
  const results = loadResults(data).toRecords() as {
    test: string;
    label: string;
    ops_per_sec: number;
  }[];
  const of = (label: string) =>
    results.filter((r) => r.test === rows[0].test && r.label === label).map((r) => r.ops_per_sec);
  const sd = pooledLogSd(of("A"), of("B"))!;
  const n = rows[0].runs_needed!;
  const [low, high] = [power(1, Math.floor(0.75 * n), sd), power(2, Math.ceil(1.25 * n), sd)];
  assert.ok(low < 0.8 && high >= 0.8, `n = ${n} (log-sd ${sd}): ${low} at 0.75n, ${high} at 1.25n`);
});
