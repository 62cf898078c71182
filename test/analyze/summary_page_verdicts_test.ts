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
