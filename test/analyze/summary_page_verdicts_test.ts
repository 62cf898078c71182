import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { summaryPage } from "../../src/analyze/summary_page/page.ts";

const environment = {
  by: "label",
  arms: ["a", "b"],
  table: pl.DataFrame({ arm: ["a", "b"], runs: [5, 5] }),
  config: pl.DataFrame({ key: [] }),
  configOnlyIn: {},
  configMissing: ["a", "b"],
};

Deno.test("summaryPage(): verdicts, the table's line, and an unstable cell flagged", () => {
  // SET: b drifts up run after run (5 runs); GET: steady on both sides, 20 % faster on b
  const set = { a: [100, 101, 99, 100, 100.5], b: [100, 104, 108, 112, 116] };
  const get = { a: [200, 201, 199, 200, 200.5], b: [240, 241, 239, 240, 240.5] };
  const rows = (test: string, v: Record<string, number[]>) =>
    ["a", "b"].flatMap((label) => v[label].map((ops) => ({ test, label, ops_per_sec: ops })));
  const results = pl.DataFrame([...rows("SET", set), ...rows("GET", get)]);
  const page = summaryPage({ results, environment }, {
    title: "t",
    by: "label",
    arms: ["a", "b"],
    baseline: "a",
  });
  const md = page.markdown;
  assert.match(
    md,
    /^1 of 2 cells differ \(better or worse at 5 % each; 1 after Benjamini–Hochberg, q < 0\.05\); 0 no difference \(interval within ±5 %\); 1 inconclusive\. 1 cell unstable \(see unstable\)\.$/m,
  );
  assert.match(
    md,
    /^- b: better in 1, worse in 0, no difference in 0, inconclusive in 1 of 2 groups\.$/m,
  );
  const header = md.split("\n").find((l) => l.startsWith("| test | label |"))!;
  assert.match(header, /\| verdict \| q value \| unstable \|$/);
  assert.match(
    md,
    /^\| SET \| b \| .* \| inconclusive \| .* \| candidate: drift \+16\.0 % over 5 runs \|$/m,
  );
  assert.match(md, /^\| GET \| b \| .* \| better \| 0\.016 \| {2}\|$/m);
  // the method, stated where the table is
  assert.match(md, /exact rank-sum test at 5 % with at least 4 runs per arm/);
});

Deno.test("summaryPage(): an unstable cell's reason is short in each table, its details once (issue 31)", () => {
  const n = 5;
  const steal = [37.04, 21.3, 0, 12.71, 30.5];
  const rows = ["a", "b"].flatMap((label) =>
    Array.from({ length: n }, (_, i) => ({
      test: "GET",
      label,
      ops_per_sec: 100 + (i * 3) % 5,
      p50_latency_ms: 0.2 + ((i * 3) % 5) / 100,
      p99_latency_ms: 0.9 + ((i * 3) % 5) / 100,
      noise_disturbance: label === "b" && steal[i] > 0 ? `steal ${steal[i].toFixed(1)} %` : null,
    }))
  );
  const page = summaryPage({ results: pl.DataFrame(rows), environment }, {
    title: "t",
    by: "label",
    arms: ["a", "b"],
    baseline: "a",
  });
  const md = page.markdown;
  const short = "candidate: 4/5 runs disturbed (steal ≤ 37 %)";
  // the three tables (throughput, p50, p99) each say it in short
  assert.equal(md.split(`| ${short} |`).length - 1, 3);
  const tables = md.split("\n").filter((l) => l.startsWith("|"));
  assert.ok(tables.every((l) => l.length < 300), "no row of a table is long");
  // the details, once, under their own heading
  const details = md.slice(md.indexOf("## Details: unstable cells"));
  assert.ok(details.length > 0 && md.includes("## Details: unstable cells"));
  const line = details.split("\n").filter((l) => l.startsWith("- "));
  assert.deepEqual(line, [
    "- GET · b: candidate: runs disturbed (steal 37.0 %; steal 21.3 %; steal 12.7 %; " +
    "steal 30.5 %) (throughput, p50 latency, p99 latency)",
  ]);
});
