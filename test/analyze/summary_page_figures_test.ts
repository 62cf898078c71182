// The summary page's figures: the page's title (`kvlab summary --title`) on every figure, as
// drawn.
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { summaryPage } from "../../src/analyze/summary_page/page.ts";
import { drawn } from "../_support/vega_view.ts";
import { cli } from "../cli/_cli.ts";
import { nightlyHistory, writeNightlyHistory } from "../_support/history.ts";

const environment = {
  by: "label",
  arms: ["redis", "valkey"],
  table: pl.DataFrame({ arm: ["redis", "valkey"], runs: [20, 20] }),
  config: pl.DataFrame({ key: [] }),
  configOnlyIn: {},
  configMissing: ["redis", "valkey"],
};

/** Five runs per arm of SET and GET at 1 and 10 clients, with p50 and p99. */
function results(): pl.DataFrame {
  const rows: Record<string, unknown>[] = [];
  for (const [label, f] of [["redis", 1], ["valkey", 1.2]] as const) {
    for (const test of ["SET", "GET"]) {
      for (const clients of [1, 10]) {
        for (let rep = 0; rep < 5; rep++) {
          const ops = 10_000 * clients ** 0.5 * f * (1 + rep * 0.01);
          rows.push({
            test,
            label,
            clients,
            ops_per_sec: ops,
            p50_latency_ms: 0.1 * clients / f,
            p99_latency_ms: 0.3 * clients / f * (1 + rep * 0.02),
          });
        }
      }
    }
  }
  return pl.DataFrame(rows);
}

Deno.test("summaryPage(): the page's title reaches every figure", async () => {
  const title = "Valkey 8.0 vs Redis 7.2 on a 2-core VM";
  const page = summaryPage({ results: results(), environment }, {
    title,
    by: "label",
    arms: ["redis", "valkey"],
    baseline: "redis",
  });
  assert.deepEqual(page.figures.map((f) => f.name), [
    "throughput",
    "ratio",
    "delta-valkey",
    "scaling",
  ]);
  for (const f of page.figures) {
    const { items, width } = await drawn(f.spec);
    const titles = items.filter((i) => i.role === "title-text").map((i) => i.text ?? "");
    assert.ok(titles.some((t) => t.includes(title)), `${f.name}: ${titles.join(" | ")}`);
    // the figure's own title is kept
    assert.ok(titles.join(" ").length > title.length + 5, `${f.name}: ${titles.join(" | ")}`);
    for (const t of items.filter((i) => i.role === "title-text")) {
      assert.ok(t.x2 <= width + 0.5, `${f.name}: the title ends at ${t.x2} > ${width}`);
    }
  }
});

Deno.test("kvlab summary --title reaches a history page's figures too", async () => {
  // one nightly history (no arms): the page of its change points
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-history-title-" });
  writeNightlyHistory(`${dir}/nightly`, nightlyHistory(1));
  const ingest = await cli(["ingest", `${dir}/nightly`, "--data", `${dir}/data`]);
  assert.equal(ingest.code, 0, ingest.stderr);
  const r = await cli(["summary", `${dir}/data`, "-o", `${dir}/out`, "--title", "Nightly"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(Deno.readTextFileSync(`${dir}/out/summary.md`), /one history \(no arms/);
  const svgs = [...Deno.readDirSync(`${dir}/out/figures`)].filter((e) => e.name.endsWith(".svg"));
  assert.ok(svgs.length > 0);
  for (const e of svgs) {
    assert.match(Deno.readTextFileSync(`${dir}/out/figures/${e.name}`), />Nightly: /, e.name);
  }
  Deno.removeSync(dir, { recursive: true });
});
