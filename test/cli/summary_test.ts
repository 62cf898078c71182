import assert from "node:assert/strict";
import { findTool } from "../../src/collect/tools/find.ts";
import type { LocalServerOptions } from "../../src/collect/redis_server.ts";
import { withServers } from "../_support/servers.ts";
import { cli, labelledDataset } from "./_cli.ts";

/**
 * A dataset made by `kvlab run` on two local servers: redis-server and valkey-server when
 * valkey is found, else two redis-servers under two labels. Clients vary within the arms.
 */
async function twoServerDataset(): Promise<{ data: string; arms: [string, string] }> {
  const valkey = findTool("valkey-server");
  if (!valkey) {
    if (Deno.env.get("CI") === "true") throw new Error("valkey-server is required under CI=true");
    // deno-lint-ignore no-console -- one line saying what was skipped and why
    console.log("valkey-server not found (.ci/install builds it): two redis-servers instead");
  }
  const arms: [string, string] = valkey ? ["redis", "valkey"] : ["redis-a", "redis-b"];
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-summary-" });
  // the second server is valkey-server when found (withServers passes the options on whole)
  const options: LocalServerOptions[] = [{}, valkey ? { program: valkey } : {}];
  await withServers(options, async ([a, b]) => {
    const plan = {
      name: "summary",
      tool: "redis-benchmark",
      servers: [{ name: arms[0], url: a.url }, { name: arms[1], url: b.url }],
      tests: ["set", "get"],
      requests: 2000,
      matrix: { clients: [1, 10] },
      repetitions: 2,
      pause_s: 0,
    };
    Deno.writeTextFileSync(`${dir}/plan.json`, JSON.stringify(plan));
    const r = await cli(["run", `${dir}/plan.json`, "--data", `${dir}/data`]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /8 cells: 8 complete/);
  });
  return { data: `${dir}/data`, arms };
}

/** The Markdown table that follows a `## <heading>` line: headers and rows of cells. */
function tableAfter(md: string, heading: RegExp): { headers: string[]; rows: string[][] } {
  const lines = md.split("\n");
  const start = lines.findIndex((l) => heading.test(l));
  assert.ok(start >= 0, `no heading ${heading}`);
  const first = lines.findIndex((l, i) => i > start && l.startsWith("|"));
  const table: string[] = [];
  for (let i = first; i < lines.length && lines[i].startsWith("|"); i++) table.push(lines[i]);
  const cells = (l: string) => l.slice(2, -2).split(" | ");
  return { headers: cells(table[0]), rows: table.slice(2).map(cells) };
}

/** Decimals a page cell shows: `42918.46` → 2, `3` → 0. */
const decimals = (s: string) => s.includes(".") ? s.split(".")[1].length : 0;

/** Checks every cell of a page's compare table against `kvlab compare --format json`. */
async function checkCompareTable(
  md: string,
  data: string,
  metric: string,
  heading: RegExp,
): Promise<number> {
  const c = await cli(["compare", "--data", data, "--metric", metric, "--format", "json"]);
  assert.equal(c.code, 0, c.stderr);
  const expected = JSON.parse(c.stdout) as Record<string, unknown>[];
  const { headers, rows } = tableAfter(md, heading);
  assert.equal(rows.length, expected.length, "one page row per compare row");
  const column: Record<string, string> = {
    "test": "test",
    "clients": "clients",
    "label": "label",
    "baseline n": "baseline_n",
    "candidate n": "candidate_n",
    "ratio": "ratio",
    "ratio ci low": "ratio_ci_low",
    "ratio ci high": "ratio_ci_high",
    "verdict": "verdict",
    "q value": "q_value",
    "unstable": "unstable",
  };
  let checked = 0;
  rows.forEach((row, i) => {
    const want = expected[i];
    headers.forEach((h, j) => {
      const key = column[h] ??
        (/^baseline median/.test(h)
          ? `baseline_median_${metric}`
          : /^candidate median/.test(h)
          ? `candidate_median_${metric}`
          : undefined);
      assert.ok(key, `unexpected column ${h}`);
      const v = want[key];
      const cell = row[j];
      if (typeof v === "number") {
        assert.equal(cell, v.toFixed(decimals(cell)), `${h} of row ${i}`);
        assert.ok(/^-?\d/.test(cell), `${h} of row ${i} is a number: ${cell}`);
        checked++;
      } else assert.equal(cell, String(v ?? ""), `${h} of row ${i}`);
    });
  });
  return checked;
}

Deno.test({
  name: "kvlab summary: the page and its figures for a dataset of two local servers",
  fn: async (t) => {
    const { data, arms: [base, cand] } = await twoServerDataset();
    const out = Deno.makeTempDirSync({ prefix: "kvlab-summary-out-" });
    const r = await cli(["summary", data, "-o", `${out}/page/`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, `summarizing by label (${base}, ${cand}), baseline ${base}\n`);
    assert.match(r.stdout, new RegExp(`^wrote ${out}/page/summary\\.md and 5 figures`));
    const md = Deno.readTextFileSync(`${out}/page/summary.md`);

    await t.step("environment, config, runs per cell and the n < 3 warning", () => {
      const env = tableAfter(md, /^## Environment$/);
      assert.deepEqual(env.headers.slice(0, 4), ["arm", "runs", "server", "tool"]);
      assert.deepEqual(env.rows.map((r) => r[0]), [base, cand]);
      assert.ok(env.rows.every((r) => r[1] === "4"));
      if (cand === "valkey") assert.match(env.rows[1][2], /^valkey 8\./);
      assert.match(md, /Server config that differs|configs .* do not differ/);
      const counts = tableAfter(md, /^## Runs per cell$/);
      assert.deepEqual(counts.headers, ["test", "clients", `${base} n`, `${cand} n`]);
      assert.equal(counts.rows.length, 4);
      assert.match(md, /> \*\*Warning:\*\* 4 of 4 cells have fewer than 4 runs per arm/);
    });

    await t.step("every number of the compare tables equals compare's", async () => {
      const n = await checkCompareTable(md, data, "ops_per_sec", /^## Throughput: each arm/);
      // clients, n, n, medians, ratio and q per row (2 runs per arm: no interval)
      assert.equal(n, 4 * 7);
      const p99 = await checkCompareTable(md, data, "p99_latency_ms", /^## P99 latency: each arm/);
      assert.equal(p99, 4 * 7);
    });

    await t.step("the delta table matches kvlab delta", async () => {
      const sides = ["--dimension", "label", "--from", base, "--to", cand];
      const d = await cli(["delta", "--data", data, ...sides, "--format", "json"]);
      const want = JSON.parse(d.stdout) as Record<string, number>[];
      const { headers, rows } = tableAfter(md, new RegExp(`^## From ${base} to ${cand}$`));
      const factor = headers.indexOf("throughput factor");
      assert.deepEqual(
        rows.map((r) => r[factor]),
        want.map((w) => w.throughput_factor.toFixed(2)),
      );
    });

    await t.step("every figure is referenced and is a non-empty PNG and SVG", () => {
      const refs = [...md.matchAll(/\]\((figures\/[^)]+)\)/g)].map((m) => m[1]);
      const names = ["throughput", "ratio", "latency", `delta-${cand}`, "scaling"];
      for (const name of names) {
        assert.ok(refs.includes(`figures/${name}.png`), `${name}.png referenced`);
        assert.ok(refs.includes(`figures/${name}.svg`), `${name}.svg referenced`);
        const png = Deno.readFileSync(`${out}/page/figures/${name}.png`);
        assert.deepEqual([...png.slice(1, 4)], [0x50, 0x4e, 0x47], `${name}.png is a PNG`);
        assert.ok(png.length > 10_000, `${name}.png has content`);
        const svg = Deno.readTextFileSync(`${out}/page/figures/${name}.svg`);
        assert.match(svg, /^<svg/);
        assert.match(svg, /<path/, `${name}.svg draws marks`);
      }
      for (const ref of refs) Deno.statSync(`${out}/page/${ref}`);
    });

    await t.step("without -o the page goes in <dataset>/summary", async () => {
      const d = await cli(["summary", data, "--baseline", cand, "--title", "T"]);
      assert.equal(d.code, 0, d.stderr);
      const page = Deno.readTextFileSync(`${data}/summary/summary.md`);
      assert.match(
        page,
        new RegExp(`^# T\\n[^]*Arms by \`label\`: ${base}, ${cand} \\(baseline\\)`),
      );
    });
  },
});

Deno.test("kvlab summary: usage errors exit 2, one arm exits 1 naming it", async (t) => {
  await t.step("no dataset, an unknown option, an empty path: exit 2", async () => {
    assert.equal((await cli(["summary"])).code, 2);
    assert.equal((await cli(["summary", "ds", "--nope"])).code, 2);
    const empty = await cli(["summary", ""]);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /invalid dataset: ""/);
  });

  await t.step("one arm: exit 1 naming the arm, nothing written", async () => {
    const one = await labelledDataset(["only"], 2);
    const out = Deno.makeTempDirSync();
    const r = await cli(["summary", one, "-o", `${out}/page`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: fewer than two arms: label has one value \(only\)/);
    assert.throws(() => Deno.statSync(`${out}/page`), Deno.errors.NotFound);
  });

  await t.step("a baseline that is not an arm names the arms", async () => {
    const data = await labelledDataset(["before", "after"], 1);
    const r = await cli(["summary", data, "--baseline", "during"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /invalid baseline: during \(values of label: before, after\)/);
  });

  await t.step("ingested -q outputs: no latency figure, one run per arm warned", async () => {
    const data = await labelledDataset(["before", "after"], 1);
    const r = await cli(["summary", data]);
    assert.equal(r.code, 0, r.stderr);
    const md = Deno.readTextFileSync(`${data}/summary/summary.md`);
    assert.match(md, /one run per arm in every cell/);
    assert.doesNotMatch(md, /figures\/latency/);
    assert.match(md, /No server config recorded for before, after/);
  });
});
