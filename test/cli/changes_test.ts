import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { cli } from "./_cli.ts";
import { newRunId, writeRun } from "../../src/store/writer.ts";
import { minimalRun, resultRow } from "../_support/stored.ts";
import { summaryPage } from "../../src/analyze/summary_page/page.ts";
import { whatChangedSection } from "../../src/analyze/changes/summary.ts";
import { nightlyHistory, wideHistory, writeNightlyHistory } from "../_support/history.ts";
import { MAX_CHANGE_PANELS } from "../../src/analyze/charts/changes.ts";
import { svgSize } from "../../src/analyze/export.ts";

/** `kvlab changes --data DATA ARGS…`. */
const changes = (data: string, ...args: string[]) => cli(["changes", "--data", data, ...args]);

/** `kvlab plot changes --data DATA ARGS…`. */
const plotChanges = (data: string, ...args: string[]) =>
  cli(["plot", "changes", "--data", data, ...args]);

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
        const r = await changes(`${dir}/data`, "--order-by", "source_path", "--format", "json");
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
        if (seed === 1) {
          // one history, no arms: the summary page is its change points
          const sum = await cli(["summary", `${dir}/data`, "-o", `${dir}/summary`]);
          assert.equal(sum.code, 0, sum.stderr);
          const md = Deno.readTextFileSync(`${dir}/summary/summary.md`);
          assert.match(md, /## What changed/);
          assert.equal(md.match(/^\| [A-Z_0-9]+ \| \d+ \|/gm)?.length, rows.length);
          assert.ok(Deno.statSync(`${dir}/summary/figures/changes.svg`).size > 0);
        }
      } finally {
        Deno.removeSync(dir, { recursive: true });
      }
    });
  }
});

Deno.test("kvlab changes orders by a tag, says what else differs, and plots the history", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-changes-tag-" });
  try {
    // one ingest per build, tagged build=1…60 (natural order: 9 before 10); the server
    // version moves at build 41, and SET with it
    const history = nightlyHistory(7, { nights: 60, shifts: 0 });
    const set = history.find((h) => h.title === "SET")!;
    set.opsPerSec = set.opsPerSec.map((v, i) => (i < 40 ? v : v * 0.92));
    writeNightlyHistory(`${dir}/nightly`, history);
    for (let i = 0; i < 60; i++) {
      const night = [...Deno.readDirSync(`${dir}/nightly`)].map((e) => e.name).sort()[i];
      const r = await cli([
        "ingest",
        `${dir}/nightly/${night}`,
        "--data",
        `${dir}/data`,
        "--server",
        "redis",
        "--server-version",
        i < 40 ? "7.2.4" : "7.2.5",
        "--tag",
        `build=${i + 1}`,
      ]);
      assert.equal(r.code, 0, r.stderr);
    }
    const r = await changes(`${dir}/data`, "--order-by", "tag:build", "--format", "json");
    assert.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as Record<string, unknown>[];
    assert.deepEqual(rows.map((x) => [x.test, x.index, x.order_before, x.order_after]), [
      ["SET", 40, "40", "41"],
    ]);
    assert.equal(rows[0].verdict, "worse");
    assert.ok(Math.abs((rows[0].change_pct as number) + 8) < 1.5);
    assert.equal(rows[0].also_differs, "server_version 7.2.4 vs 7.2.5");
    // for people: Markdown in a pipe
    const md = await changes(`${dir}/data`, "--order-by", "tag:build");
    assert.match(md.stdout, /^\| test \| index \|/);
    assert.match(md.stdout, /\| SET \| 40 \| 40 \| 41 \|/);
    // a --min-change above the step leaves it out
    const big = await changes(
      `${dir}/data`,
      "--order-by",
      "tag:build",
      "--min-change",
      "10%",
      "--format",
      "json",
    );
    assert.deepEqual(JSON.parse(big.stdout), []);
    assert.match(big.stderr, /no change point/);
    const plot = await plotChanges(
      `${dir}/data`,
      "--order-by",
      "tag:build",
      "--test",
      "SET",
      "-o",
      `${dir}/changes.svg`,
    );
    assert.equal(plot.code, 0, plot.stderr);
    assert.match(Deno.readTextFileSync(`${dir}/changes.svg`), /1 change point \(red\)/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("kvlab changes rejects bad options with exit code 2", async () => {
  for (const args of [["--max-pvalue", "0"], ["--window", "2"], ["--min-change", "-1"]]) {
    const r = await changes("nowhere", ...args);
    assert.equal(r.code, 2, args.join(" "));
  }
});

Deno.test("summaryPage() of arms with a history has a What changed section", () => {
  const n = 40;
  const arm = (label: string, step: number) => ({
    run_id: Array.from({ length: n }, (_, i) => `${label}-${i}`),
    test: Array(n).fill("SET"),
    label: Array(n).fill(label),
    source_path: Array.from({ length: n }, (_, i) => `${label}/night-${i}.csv`),
    ops_per_sec: Array.from({ length: n }, (_, i) => (i < step ? 100 : 90) + ((i * 7) % 5) - 2),
  });
  const a = arm("a", 20);
  const b = arm("b", n);
  const results = pl.DataFrame(
    Object.fromEntries(Object.keys(a).map((k) => [k, [...a[k as "test"], ...b[k as "test"]]])),
  );
  const environment = {
    by: "label",
    arms: ["a", "b"],
    table: pl.DataFrame({ arm: ["a", "b"], runs: [n, n] }),
    config: pl.DataFrame({ key: [] }),
    configOnlyIn: {},
    configMissing: ["a", "b"],
  };
  const page = summaryPage({ results, environment }, {
    title: "t",
    by: "label",
    arms: ["a", "b"],
    baseline: "a",
  });
  assert.match(page.markdown, /## What changed/);
  assert.match(page.markdown, /\| SET \| a \| 20 \| night-19.csv \| night-20.csv \|/);
  assert.ok(page.figures.some((f) => f.name === "changes"));
});

/** `redis-benchmark -q` outputs, one per night: SET at `set(i)` ops/s, GET near 80,000. */
function quietNights(dir: string, nights: number, set: (i: number) => number): string {
  Deno.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < nights; i++) {
    const get = 80_000 + ((i * 37) % 400);
    Deno.writeTextFileSync(
      `${dir}/night-${String(i).padStart(2, "0")}.txt`,
      `SET: ${set(i).toFixed(2)} requests per second, p50=0.503 msec\n` +
        `GET: ${get.toFixed(2)} requests per second, p50=0.327 msec\n`,
    );
  }
  return dir;
}

Deno.test("kvlab changes from a stored rate of 0: no Infinity, the same empty change in every format", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-changes-zero-" });
  try {
    // a broken server measured 0 ops/s for 20 nights, stored complete by an older kvlab (this
    // one stores redis-benchmark's "0.00 requests per second" as no rate): written as it did
    for (let i = 0; i < 40; i++) {
      const id = newRunId(new Date(Date.UTC(2026, 0, 1 + i)));
      const row = (test: string, index: number, ops: number) => resultRow(id, { test, index, ops });
      await writeRun(`${dir}/data`, {
        run: minimalRun(id, {
          source_path: `${dir}/nightly/night-${String(i).padStart(2, "0")}.txt`,
        }),
        tables: {
          results: [
            row("SET", 0, i < 20 ? 0 : 50_000 + ((i * 53) % 500)),
            row("GET", 1, 80_000 + ((i * 37) % 400)),
          ],
        },
        raw: [],
      });
    }
    const printed: Record<string, { stdout: string; stderr: string }> = {};
    for (const format of ["csv", "text", "md", "json"]) {
      const r = await changes(`${dir}/data`, "--format", format);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /Infinity|NaN/, format);
      assert.match(r.stderr, /change \(%\) left empty where the mean before is 0.*: SET at 20/);
      printed[format] = r;
    }
    const [row] = JSON.parse(printed.json.stdout);
    assert.deepEqual([row.test, row.index, row.mean_before_ops_per_sec], ["SET", 20, 0]);
    assert.equal(row.change_pct, null);
    assert.equal(row.verdict, "better"); // from 0 to 50,000 ops/s
    const csv = printed.csv.stdout.trim().split("\n");
    assert.equal(csv[1].split(",")[csv[0].split(",").indexOf("change_pct")], "");
    assert.match(
      printed.md.stdout,
      /\| SET \| 20 \|.*\| 0\.00 \| 50\d{3}\.\d\d \| {2}\| better \|/,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("kvlab changes and plot changes say which runs have no tag:<key> to order by", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-changes-untagged-" });
  try {
    // 40 builds, 6 ingested without their build tag
    const untagged = new Set([3, 9, 17, 22, 30, 38]);
    quietNights(`${dir}/nightly`, 40, (i) => (i < 20 ? 50_000 : 45_000) + ((i * 53) % 500));
    for (let i = 0; i < 40; i++) {
      const tag = untagged.has(i) ? [] : ["--tag", `build=${i + 1}`];
      const file = `${dir}/nightly/night-${String(i).padStart(2, "0")}.txt`;
      assert.equal((await cli(["ingest", file, "--data", `${dir}/data`, ...tag])).code, 0);
    }
    const c = await changes(`${dir}/data`, "--order-by", "tag:build");
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stderr, /^left out 12 results of 6 runs with no tag:build$/m);
    // only SET: 6 of its results
    const one = await changes(`${dir}/data`, "--order-by", "tag:build", "--test", "SET");
    assert.match(one.stderr, /^left out 6 results of 6 runs with no tag:build$/m);
    const plot = await plotChanges(
      `${dir}/data`,
      "--order-by",
      "tag:build",
      "-o",
      `${dir}/changes.vl.json`,
    );
    assert.equal(plot.code, 0, plot.stderr);
    assert.match(plot.stderr, /left out 12 results of 6 runs with no tag:build/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the summary's What changed says which results have no started_at", () => {
  const n = 40;
  const results = pl.DataFrame({
    run_id: Array.from({ length: n }, (_, i) => `r${i}`),
    test: Array(n).fill("SET"),
    // the first 5 runs were ingested from files: no start time
    started_at: Array.from({ length: n }, (_, i) => i < 5 ? null : new Date(Date.UTC(2026, 0, i))),
    ops_per_sec: Array.from({ length: n }, (_, i) => (i < 20 ? 100 : 90) + ((i * 7) % 5) - 2),
  });
  const section = whatChangedSection(results)!;
  assert.ok(section.lines.includes("Left out: 5 results of 5 runs with no started_at."));
});

Deno.test("plot changes and summary of a wide history draw at most MAX_CHANGE_PANELS series", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-changes-wide-" });
  try {
    // 300 tests × 30 nights, 30 % 12 % slower from night 15 (2,000 tests drew nothing:
    // "Maximum call stack size exceeded"; 1,000 drew a 1522 × 316,962 px PNG)
    writeNightlyHistory(`${dir}/nightly`, wideHistory(9, { tests: 300, changed: 0.3 }));
    assert.equal((await cli(["ingest", `${dir}/nightly`, "--data", `${dir}/data`])).code, 0);
    const plot = await plotChanges(`${dir}/data`, "-o", `${dir}/c.svg`);
    assert.equal(plot.code, 0, plot.stderr);
    const svg = Deno.readTextFileSync(`${dir}/c.svg`);
    assert.ok(svgSize(svg).height < (MAX_CHANGE_PANELS + 4) * 160, `${svgSize(svg).height} px`);
    assert.match(
      svg,
      /20 of the \d+ series that changed \(the largest changes\); \d+ more changed/,
    );
    const sum = await cli(["summary", `${dir}/data`, "-o", `${dir}/summary`]);
    assert.equal(sum.code, 0, sum.stderr);
    const page = Deno.readTextFileSync(`${dir}/summary/summary.md`);
    assert.match(page, /The chart draws the 20 of the \d+ series that changed with the largest/);
    const figure = Deno.readTextFileSync(`${dir}/summary/figures/changes.svg`);
    assert.ok(svgSize(figure).height < (MAX_CHANGE_PANELS + 4) * 160);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
