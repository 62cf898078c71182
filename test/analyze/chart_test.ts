import assert from "node:assert/strict";
import pl from "nodejs-polars";
import {
  changesChart,
  changeSeries,
  chartFormat,
  colorEncoding,
  colorFor,
  compare,
  containerChart,
  crossovers,
  delta,
  deltaChart,
  deltaE,
  FONT,
  latencyChart,
  latencySpectrum,
  latencySteps,
  loadResults,
  loadTable,
  memoryChart,
  mimeBundle,
  MIN_DELTA_E,
  ratioChart,
  saveChart,
  scaling,
  scalingChart,
  svgSize,
  throughputChart,
  toPng,
  toSvg,
  type VegaLiteSpec,
} from "../../src/analyze/mod.ts";
import { containerStatsRows, ingestFile } from "../../src/collect/mod.ts";
import { nightlyHistory } from "../_support/history.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const SNAP = new URL("./__snapshots__/", import.meta.url).pathname;

/** Numbers rounded to 1 decimal and ids renumbered, so only real changes show. */
function normalize(svg: string): string {
  const ids = new Map<string, string>();
  return svg
    .replace(/(id="|url\(#|href="#)([\w-]+)/g, (_m, pre, id) => {
      if (!ids.has(id)) ids.set(id, `id${ids.size}`);
      return pre + ids.get(id);
    })
    .replace(/-?\d+\.\d+/g, (n) => String(Math.round(Number(n) * 10) / 10))
    .replace(/></g, ">\n<");
}

/**
 * Compares a chart's normalized SVG with its stored snapshot; writes `<name>-changed.svg`
 * beside it on mismatch. `UPDATE_SNAPSHOTS=1` writes new snapshots instead (never under CI).
 */
async function snapshot(name: string, spec: VegaLiteSpec): Promise<void> {
  const svg = normalize(await toSvg(spec));
  const path = `${SNAP}${name}.svg`;
  if (Deno.env.get("UPDATE_SNAPSHOTS") === "1" && Deno.env.get("CI") !== "true") {
    Deno.mkdirSync(SNAP, { recursive: true });
    Deno.writeTextFileSync(path, svg);
    return;
  }
  let want: string;
  try {
    want = Deno.readTextFileSync(path);
  } catch {
    throw new Error(
      `no snapshot ${path}: run with UPDATE_SNAPSHOTS=1 and look at it before committing`,
    );
  }
  if (svg !== want) {
    Deno.writeTextFileSync(`${SNAP}${name}-changed.svg`, svg);
    assert.fail(`${name}: chart changed; see ${SNAP}${name}-changed.svg`);
  }
}

async function seed(study: string, arms: [string, string][]): Promise<string> {
  const data = Deno.makeTempDirSync({ prefix: `kvlab-chart-${study}-` });
  for (const [file, server] of arms) {
    await ingestFile(`${ROOT}data/raw/${study}/${file}`, { data, server });
  }
  return data;
}

Deno.test("chart snapshots (normalized SVG)", async (t) => {
  const s1 = loadResults(
    await seed("valkey-vs-redis", [["valkey-8.0.1.txt", "valkey"], ["redis-6.0.16.txt", "redis"]]),
  );
  await t.step(
    "throughputChart() of seed 001",
    () => snapshot("throughput-seed001", throughputChart(s1)),
  );
  await t.step(
    "ratioChart() of seed 001",
    () => snapshot("ratio-seed001", ratioChart(compare(s1, { by: "server", baseline: "redis" }))),
  );
  const s3 = loadResults(
    await seed("rdma-vs-tcp", [["rdma.txt", "valkey"], ["tcp.txt", "valkey"]]),
  );
  await t.step(
    "deltaChart() of seed 003",
    () =>
      snapshot(
        "delta-seed003",
        deltaChart(delta(s3, { dimension: "transport", from: "tcp", to: "rdma" })),
      ),
  );
  const clients = [1, 2, 4, 8, 16, 32, 64, 128];
  const s2 = pl.DataFrame({
    test: [...clients, ...clients].map(() => "SET"),
    server: [...clients.map(() => "dragonfly"), ...clients.map(() => "redis")],
    clients: [...clients, ...clients],
    ops_per_sec: [
      2217.32,
      4021.99,
      8207.76,
      15476.01,
      26968.31,
      39939.89,
      52767.00,
      57385.52,
      2437.10,
      4721.11,
      9020.48,
      17048.82,
      29695.61,
      44350.43,
      53059.89,
      55254.50,
    ],
  });
  await t.step("scalingChart() of seed 002 with its crossover", () =>
    snapshot(
      "scaling-seed002",
      scalingChart(scaling(s2, { x: "clients", by: "server" }), {
        crossovers: crossovers(s2, {
          x: "clients",
          by: "server",
          baseline: "redis",
          candidate: "dragonfly",
        }),
      }),
    ));
  const mem = await seed("dragonfly-vs-redis-memory", [
    ["large-keys-redis.txt", "redis"],
    ["large-keys-dragonfly.txt", "dragonfly"],
  ]);
  const memory = loadTable(mem, "memory").join(loadTable(mem, "runs").select("run_id", "server"), {
    on: "run_id",
  });
  await t.step(
    "memoryChart() of seed 002 with the difference panel",
    () =>
      snapshot(
        "memory-seed002",
        memoryChart(memory, { baseline: "redis", candidate: "dragonfly" }),
      ),
  );
  await t.step("containerChart() of a memtier run against a Redis container", () => {
    // the docker stats a run of `memtier --ratio 1:0 -t 2 -c 20 -d 256 --test-time 5` stored,
    // against kvlab/redis:7.0.15 (--memory 256m --cpus 1), and that run's TOTALS per second
    const jsonl = Deno.readTextFileSync(
      `${ROOT}test/testdata/docker-stats_28.2.2_redis-7.0.15-container_memtier-2.3.0-run.jsonl`,
    );
    const samples = jsonl.trimEnd().split("\n").map((text, i) => ({ text, atMs: 621 + 1000 * i }));
    const stats = pl.DataFrame(containerStatsRows("r1", samples)).withColumns(
      pl.lit("redis").alias("label"),
    );
    const throughput = pl.DataFrame({
      label: Array(6).fill("redis"),
      second: [0, 1, 2, 3, 4, 5],
      count: [24500, 26201, 20681, 21071, 23871, 40],
    });
    return snapshot(
      "container-memtier",
      containerChart(stats, { throughput, by: "label", memoryLimitBytes: 256 * 2 ** 20 }),
    );
  });
  const data = Deno.makeTempDirSync({ prefix: "kvlab-chart-lat-" });
  await ingestFile(`${ROOT}test/testdata/corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt`, {
    data,
    server: "redis",
  });
  await ingestFile(`${ROOT}test/testdata/corpus/valkey-benchmark_8.0.1_valkey-8.0.1_full.txt`, {
    data,
    server: "valkey",
  });
  const dist = loadTable(data, "latency_distribution").join(
    loadTable(data, "runs").select("run_id", "server"),
    { on: "run_id" },
  );
  await t.step(
    "latencyChart() of the corpus reports",
    () =>
      snapshot(
        "latency-corpus",
        latencyChart(latencySpectrum(dist.filter(pl.col("test").eq(pl.lit("GET"))))),
      ),
  );
  await t.step(
    "latencyChart() of the corpus reports as bucket steps",
    () =>
      snapshot(
        "latency-steps-corpus",
        latencyChart(latencySteps(dist.filter(pl.col("test").eq(pl.lit("GET"))))),
      ),
  );
  await t.step("changesChart() of a generated 150-night history", () => {
    const lpush = nightlyHistory(1).find((h) => h.title === "LPUSH")!;
    const n = lpush.opsPerSec.length;
    const df = pl.DataFrame({
      run_id: Array.from({ length: n }, (_, i) => `run-${i}`),
      test: Array(n).fill("LPUSH"),
      source_path: Array.from({ length: n }, (_, i) => `nightly/${String(i).padStart(3, "0")}.csv`),
      ops_per_sec: lpush.opsPerSec,
    });
    const spec = changesChart(changeSeries(df, { orderBy: "source_path" }), {
      orderBy: "source_path",
    });
    return snapshot("changes-history-seed001", spec);
  });
});

Deno.test("toPng() decodes to the size of the SVG at 2×, with text drawn", async () => {
  const spec = throughputChart(
    pl.DataFrame({ test: ["SET"], server: ["redis"], ops_per_sec: [1] }),
    { title: "スループット" },
  );
  const svg = await toSvg(spec);
  const { width, height } = svgSize(svg);
  const png = await toPng(spec);
  const view = new DataView(png.buffer, png.byteOffset);
  assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10]);
  assert.equal(new TextDecoder().decode(png.subarray(12, 16)), "IHDR");
  assert.equal(view.getUint32(16), Math.round(width * 2));
  assert.ok(Math.abs(view.getUint32(20) - height * 2) <= 1);
  assert.ok(width >= 700 && width <= 900, `figure width ${width} px`);
  assert.match(svg, /スループット/);
  // the Japanese glyphs are drawn (resvg draws nothing for text it has no font for)
  const canvas = (text: string) =>
    `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><text x="4" y="28" font-size="24" font-family="${FONT}">${text}</text></svg>`;
  const blank = await toPng(canvas(""));
  const jp = await toPng(canvas("スループット"));
  assert.notDeepEqual(
    jp,
    blank,
    "CJK text rendered as nothing: is fonts-ipafont-gothic installed?",
  );
  assert.ok(jp.length > blank.length + 200);
});

Deno.test("saveChart() writes by extension and rejects others", async () => {
  const dir = Deno.makeTempDirSync();
  const spec = throughputChart(
    pl.DataFrame({ test: ["SET"], server: ["valkey"], ops_per_sec: [100] }),
  );
  for (const ext of ["svg", "png", "html", "vl.json"]) {
    await saveChart(spec, `${dir}/sub/fig.${ext}`);
  }
  assert.match(Deno.readTextFileSync(`${dir}/sub/fig.svg`), /^<svg/);
  assert.deepEqual(JSON.parse(Deno.readTextFileSync(`${dir}/sub/fig.vl.json`)), spec);
  assert.match(Deno.readTextFileSync(`${dir}/sub/fig.html`), /vegaEmbed\("#chart"/);
  await assert.rejects(saveChart(spec, `${dir}/fig.jpeg`), /invalid chart format/);
  assert.deepEqual([...Deno.readDirSync(`${dir}/sub`)].map((e) => e.name).sort(), [
    "fig.html",
    "fig.png",
    "fig.svg",
    "fig.vl.json",
  ]);
  assert.equal(chartFormat("x.SVG"), "svg");
  const bundle = await mimeBundle(spec);
  assert.deepEqual(Object.keys(bundle).sort(), [
    "application/vnd.vegalite.v5+json",
    "image/svg+xml",
    "text/plain",
  ]);
});

Deno.test("one stable colour per server, distinct within a chart", () => {
  assert.equal(colorFor("redis"), colorFor("redis"));
  assert.notEqual(colorFor("redis"), colorFor("valkey"));
  const spec = throughputChart(
    pl.DataFrame({
      test: ["SET", "SET", "SET"],
      label: ["redis", "redis-io2", "redis-io4"],
      ops_per_sec: [1, 2, 3],
    }),
    { by: "label" },
  );
  const range =
    ((spec.layer as VegaLiteSpec[])[0].encoding as { color: { scale: { range: string[] } } }).color
      .scale.range;
  assert.equal(new Set(range).size, 3);
  assert.equal(range[0], colorFor("redis"));
});

Deno.test("kvlab compare and plot on a dataset with repetitions", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-cli-cmp-" });
  // five -q runs per arm, valkey 20 % faster on SET, the same on GET (±0.3 % noise)
  for (let rep = 0; rep < 5; rep++) {
    const noise = 1 + (rep - 2) * 0.003;
    for (const [server, f] of [["redis", 1], ["valkey", 1.2]] as const) {
      Deno.writeTextFileSync(
        `${dir}/${server}-${rep}.txt`,
        `$ redis-benchmark -q -n 100000 -t set,get\nSET: ${
          (100000 * f * noise).toFixed(2)
        } requests per second, p50=0.231 msec\n` +
          `GET: ${(100000 * noise).toFixed(2)} requests per second, p50=0.239 msec\n`,
      );
      const o = await ingestFile(`${dir}/${server}-${rep}.txt`, { data: `${dir}/data`, server });
      assert.equal(o.status, "ingested");
    }
  }
  const run = (...args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${ROOT}src/cli.ts`, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
  const out = await run(
    "compare",
    "--data",
    `${dir}/data`,
    "--by",
    "server",
    "--baseline",
    "redis",
  );
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const lines = text.trim().split("\n");
  assert.equal(
    lines[0],
    "| test | server | baseline n | candidate n | baseline median (ops/s) | candidate median (ops/s) | ratio | ratio ci low | ratio ci high | verdict | q value |",
  );
  assert.match(
    lines[2],
    /^\| SET \| valkey \| 5 \| 5 \| 100000\.00 \| 120000\.00 \| 1\.20 \| 1\.19 \| 1\.21 \| better \| 0\.016 \|$/,
  );
  assert.match(
    lines[3],
    /^\| GET \| valkey \| 5 \| 5 \| 100000\.00 \| 100000\.00 \| 1\.00 \| 0\.99 \| 1\.01 \| no difference \| 1\.000 \|$/,
  );
  for (const f of ["ratio.svg", "ratio.png"]) {
    const p = await run(
      "plot",
      "ratio",
      "--data",
      `${dir}/data`,
      "--baseline",
      "redis",
      "-o",
      `${dir}/${f}`,
    );
    assert.equal(p.code, 0, new TextDecoder().decode(p.stderr));
    assert.ok(Deno.statSync(`${dir}/${f}`).size > 1000);
  }
  const bad = await run("plot", "pie", "--data", `${dir}/data`, "-o", `${dir}/x.svg`);
  assert.notEqual(bad.code, 0);
  assert.match(new TextDecoder().decode(bad.stderr), /invalid chart kind: pie/);
});

Deno.test("charts keep the arm column when arms are labels (value labels never clobber it)", () => {
  const rows = ["before", "after"].flatMap((label, k) =>
    [1, 2, 3].flatMap((rep) =>
      ["SET", "GET"].map((test) => ({
        run_id: `${label}-${rep}`,
        label,
        test,
        ops_per_sec: 1000 * (1 + k * 0.1) + rep,
      }))
    )
  );
  const df = pl.DataFrame(rows);
  const cmp = compare(df, { by: "label", baseline: "before" });
  for (const spec of [ratioChart(cmp, { by: "label" })]) {
    const values = (spec.data as { values: Record<string, unknown>[] }).values;
    assert.deepEqual([...new Set(values.map((v) => v.label))], ["after"]);
    assert.ok(values.every((v) => typeof v.value_label === "string"));
  }
});

Deno.test("colorEncoding() keeps the arms of one chart apart by at least MIN_DELTA_E", () => {
  // issue 22: two redis variants drawn in #FF9896 and #F4A582 (ΔE 18) read as one arm
  for (
    const arms of [
      ["redis", "redis-io2", "redis-io4", "redis-io8"],
      ["Redis 1 thread", "Redis io-threads 2", "Redis io-threads 4", "Redis io-threads 8"],
      ["valkey", "valkey-io2", "valkey-io4", "valkey-io8"],
      ["redis", "redis-io4", "valkey", "valkey-io4"],
      ["redis · 1 client", "redis · 10 clients", "redis · 50 clients"],
    ]
  ) {
    const range = (colorEncoding("arm", arms).scale as { range: string[] }).range;
    for (let i = 0; i < range.length; i++) {
      for (let j = i + 1; j < range.length; j++) {
        assert.ok(
          deltaE(range[i], range[j]) >= MIN_DELTA_E,
          `${arms[i]} ${range[i]} and ${arms[j]} ${range[j]}: ΔE ${deltaE(range[i], range[j])}`,
        );
      }
    }
  }
});
