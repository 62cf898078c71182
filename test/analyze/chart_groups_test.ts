/**
 * Charts match the numbers: each chart kind, built from a dataset where `clients` varies within
 * each arm and rendered by the real Vega view, plots exactly compare/delta/scaling's value for
 * every group, one mark per group (nothing stacked, pooled or hidden).
 */
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import * as vega from "vega";
import * as vl from "vega-lite";
import {
  compare,
  delta,
  latencyChart,
  latencyDistributionBy,
  latencySpectrum,
  latencySteps,
  loadResults,
  loadTable,
  memoryChart,
  memoryDifference,
  memoryTable,
  PLOTS,
  scaling,
  type VegaLiteSpec,
} from "../../src/analyze/mod.ts";
import { ingestFile } from "../../src/collect/mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const CORPUS = `${ROOT}test/testdata/corpus`;
type Rec = Record<string, unknown>;

/**
 * A captured full report with its client count, throughputs and latencies changed: the same
 * bytes the parser reads from redis-benchmark, at another operating point.
 */
function variant(text: string, clients: number, tp: number, lat: number): string {
  const ms = (x: string) => (Number(x) * lat).toFixed(3);
  return text
    .replace(/\b50 parallel clients/g, `${clients} parallel clients`)
    .replace(
      /([\d.]+) requests per second/g,
      (_m, x) => `${(Number(x) * tp).toFixed(2)} requests per second`,
    )
    .replace(/<= ([\d.]+) milliseconds/g, (_m, x) => `<= ${ms(x)} milliseconds`)
    .replace(
      /(avg\s+min\s+p50\s+p95\s+p99\s+max\s*\n\s*)([\d. ]+)/g,
      (_m, head, nums: string) => head + nums.replace(/[\d.]+/g, ms),
    );
}

/** redis and valkey, each at 10 and 50 clients, two repetitions each: 8 runs. */
async function groupedDataset(): Promise<string> {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-chart-groups-" });
  const files = {
    redis: `${CORPUS}/redis-benchmark_7.0.15_redis-7.0.15_full.txt`,
    valkey: `${CORPUS}/valkey-benchmark_8.0.1_valkey-8.0.1_full.txt`,
  };
  for (const [server, file] of Object.entries(files)) {
    const text = Deno.readTextFileSync(file);
    for (const [clients, tp, lat] of [[50, 1, 1], [10, 0.45, 0.3]]) {
      // 4 runs per arm: the fewest that give compare an interval (whiskers to check)
      for (const rep of [0, 1, 2, 3]) {
        const path = `${dir}/${server}-c${clients}-${rep}.txt`;
        Deno.writeTextFileSync(path, variant(text, clients, tp * (1 + rep * 0.01), lat));
        const o = await ingestFile(path, { data: `${dir}/data`, server });
        assert.equal(o.status, "ingested", String(o.error));
      }
    }
  }
  return `${dir}/data`;
}

/** A drawn mark item and the panel (group item) it is drawn in. */
interface Drawn {
  item: Rec & { datum: Rec; x: number; y: number; width?: number; height?: number };
  panel: unknown;
}

/** Renders a spec with the real Vega view; returns the items of marks (not guides) by type. */
async function render(spec: VegaLiteSpec): Promise<Map<string, Drawn[]>> {
  const compiled = vl.compile(structuredClone(spec) as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  await view.runAsync();
  const out = new Map<string, Drawn[]>();
  const walk = (node: Rec) => {
    for (const it of (node.items ?? []) as Rec[]) {
      if (node.role === "mark" && node.marktype !== "group") {
        const list = out.get(node.marktype as string) ?? [];
        list.push({ item: it as Drawn["item"], panel: (node as { group?: unknown }).group });
        out.set(node.marktype as string, list);
      }
      walk(it);
    }
  };
  walk((view.scenegraph() as unknown as { root: Rec }).root);
  view.finalize();
  return out;
}

const key = (r: Rec, cols: string[]) => cols.map((c) => String(r[c])).join("|");
const close = (a: unknown, b: unknown) =>
  typeof a === "number" && typeof b === "number" && Math.abs(a - b) <= 1e-9 * Math.abs(b);

/**
 * Bars of one panel never overlap (each group its own mark) and all start from one reference
 * pixel (nothing stacked); their lengths are proportional to |value − reference|.
 */
function assertSideBySide(bars: Drawn[], field: string, reference: number): void {
  const panels = new Map<unknown, Drawn[]>();
  for (const b of bars) panels.set(b.panel, [...(panels.get(b.panel) ?? []), b]);
  for (const list of panels.values()) {
    const spans = list.map((b) => [b.item.x, b.item.x + b.item.width!]).sort((p, q) => p[0] - q[0]);
    for (let i = 1; i < spans.length; i++) {
      assert.ok(spans[i][0] >= spans[i - 1][1] - 1e-6, `bars overlap: ${JSON.stringify(spans)}`);
    }
    const base = list.map((b) =>
      (b.item.datum[field] as number) >= reference ? b.item.y + b.item.height! : b.item.y
    );
    for (const p of base) assert.ok(Math.abs(p - base[0]) < 0.01, `bars start at ${base}`);
    const scale = list.map((b) =>
      b.item.height! / Math.abs((b.item.datum[field] as number) - reference)
    ).filter(Number.isFinite);
    for (const s of scale) assert.ok(Math.abs(s / scale[0] - 1) < 1e-6, "bar length ≠ value");
  }
}

Deno.test("charts plot compare's values per group when clients vary within arms", async (t) => {
  const data = await groupedDataset();
  const results = loadResults(data);
  const cmp = compare(results, { by: "server", baseline: "redis" });
  const cmpRows = cmp.toRecords() as Rec[];
  assert.deepEqual(cmp.columns.slice(0, 3), ["test", "clients", "server"]);
  assert.equal(cmp.height, 2 * new Set(cmpRows.map((r) => r.test)).size);

  await t.step("throughputChart(): a bar per arm and group, at compare's medians", async () => {
    const marks = await render(PLOTS.throughput.build(results, {}));
    const want = new Map<string, Rec>();
    for (const r of cmpRows) {
      for (const side of ["baseline", "candidate"]) {
        want.set(
          key({ ...r, server: side === "baseline" ? "redis" : r.server }, [
            "test",
            "clients",
            "server",
          ]),
          {
            value: r[`${side}_median_ops_per_sec`],
            min: r[`${side}_min_ops_per_sec`],
            max: r[`${side}_max_ops_per_sec`],
          },
        );
      }
    }
    const bars = marks.get("rect")!;
    assert.equal(bars.length, want.size);
    for (const b of bars) {
      const w = want.get(key(b.item.datum, ["test", "clients", "server"]))!;
      assert.ok(close(b.item.datum.value, w.value), `${key(b.item.datum, ["test", "clients"])}`);
    }
    assertSideBySide(bars, "value", 0);
    const whiskers = marks.get("rule")!.filter((r) => "min" in r.item.datum);
    assert.equal(whiskers.length, want.size);
    for (const r of whiskers) {
      const w = want.get(key(r.item.datum, ["test", "clients", "server"]))!;
      assert.ok(close(r.item.datum.min, w.min) && close(r.item.datum.max, w.max));
    }
  });

  await t.step("ratioChart(): a bar per compare row with its interval and label", async () => {
    const marks = await render(PLOTS.ratio.build(results, { baseline: "redis" }));
    const want = new Map(cmpRows.map((r) => [key(r, ["test", "clients", "server"]), r]));
    const bars = marks.get("rect")!;
    assert.equal(bars.length, cmp.height);
    for (const b of bars) {
      const w = want.get(key(b.item.datum, ["test", "clients", "server"]))!;
      assert.ok(close(b.item.datum.ratio, w.ratio));
    }
    assertSideBySide(bars, "ratio", 1);
    const ci = marks.get("rule")!.filter((r) => "ci_low" in r.item.datum);
    assert.equal(ci.length, cmp.height);
    for (const r of ci) {
      const w = want.get(key(r.item.datum, ["test", "clients", "server"]))!;
      assert.ok(close(r.item.datum.ci_low, w.ratio_ci_low));
      assert.ok(close(r.item.datum.ci_high, w.ratio_ci_high));
    }
    const labels = marks.get("text")!.filter((x) => "ratio" in x.item.datum);
    assert.equal(labels.length, cmp.height);
    for (const l of labels) assert.match(String(l.item.text), /^[+-]\d+\.\d %$|^\d\.\d\d×$/);
  });

  await t.step("deltaChart(): factor and latency bars per group, none stacked", async () => {
    const spec = PLOTS.delta.build(results, { dimension: "server", from: "redis", to: "valkey" });
    const d = delta(results, { dimension: "server", from: "redis", to: "valkey" });
    const rows = new Map((d.toRecords() as Rec[]).map((r) => [key(r, ["test", "clients"]), r]));
    const marks = await render(spec);
    const factors = marks.get("rect")!.filter((b) => "throughput_factor" in b.item.datum);
    assert.equal(factors.length, d.height);
    for (const b of factors) {
      const k = key(b.item.datum, ["test", "clients"]);
      assert.ok(close(b.item.datum.throughput_factor, rows.get(k)!.throughput_factor));
      // the same number compare reports as the ratio of medians
      const c = cmpRows.find((r) => key(r, ["test", "clients"]) === k)!;
      assert.ok(close(b.item.datum.throughput_factor, c.ratio));
    }
    assertSideBySide(factors, "throughput_factor", 1);
    const lat = marks.get("rect")!.filter((b) => "change_pct" in b.item.datum);
    const latencies = (d.toRecords() as Rec[]).flatMap((r) =>
      ["avg", "p50", "p95", "p99"].filter((p) => typeof r[`${p}_latency_change_pct`] === "number")
        .map((p) => ({ r, p }))
    );
    assert.equal(lat.length, latencies.length);
    for (const b of lat) {
      const g = String(b.item.datum.group);
      const r = [...rows.values()].find((r) =>
        r.test === b.item.datum.test && g === `clients ${r.clients}`
      )!;
      assert.ok(close(b.item.datum.change_pct, r[`${b.item.datum.latency}_latency_change_pct`]));
    }
    assertSideBySide(lat, "change_pct", 0);
  });

  await t.step(
    "scalingChart(): a point per test, arm and clients at scaling's medians",
    async () => {
      const curve = scaling(results, { x: "clients", by: "server" }).toRecords() as Rec[];
      const marks = await render(PLOTS.scaling.build(results, {}));
      const points = marks.get("line")!;
      assert.equal(points.length, curve.length);
      const series = new Set(
        points.map((p) => `${String(p.panel)}|${p.item.datum.server}|${p.item.mark}`),
      );
      assert.ok(series.size >= 1);
      for (const p of points) {
        const k = key(p.item.datum, ["test", "server", "clients"]);
        const w = curve.find((r) => key(r, ["test", "server", "clients"]) === k)!;
        assert.ok(close(p.item.datum.median_ops_per_sec, w.median_ops_per_sec));
        // and compare's median of the same group
        const c = cmpRows.find((r) =>
          key(r, ["test", "clients"]) === key(p.item.datum, ["test", "clients"])
        )!;
        const side = p.item.datum.server === "redis" ? "baseline" : "candidate";
        assert.ok(close(p.item.datum.median_ops_per_sec, c[`${side}_median_ops_per_sec`]));
      }
      // one line per test and arm: its points share a mark, and tests × arms marks are drawn
      const lines = new Set(points.map((p) => p.item.mark));
      assert.equal(lines.size, new Set(curve.map((r) => key(r, ["test", "server"]))).size);
    },
  );

  await t.step("latencyChart(): a stepped line per test, arm and clients", async () => {
    const dist = latencyDistributionBy(data, "server");
    const spec = PLOTS.latency.build(dist, {});
    const marks = await render(spec);
    const lines = marks.get("line")!;
    const steps = latencySteps(dist, { by: ["server", "clients"] }).toRecords() as Rec[];
    assert.equal(lines.length, steps.length);
    const groups = (r: Rec) => key(r, ["test", "server", "clients"]);
    const byLine = new Map<unknown, Drawn[]>();
    for (const l of lines) byLine.set(l.item.mark, [...(byLine.get(l.item.mark) ?? []), l]);
    assert.equal(byLine.size, new Set(steps.map(groups)).size);
    for (const list of byLine.values()) {
      assert.equal(new Set(list.map((l) => groups(l.item.datum))).size, 1, "a line mixes groups");
      assert.ok(typeof list[0].item.stroke === "string", "line without a stroke");
      assert.equal((list[0].item.mark as Rec).marktype, "line");
    }
    // every percentile the spectrum reports lies on its group's step function
    const spectrum = latencySpectrum(dist, { by: ["server", "clients"] }).toRecords() as Rec[];
    for (const s of spectrum) {
      if ((s.percentile as number) <= 0 || (s.percentile as number) >= 100) continue;
      const line = lines.filter((l) => groups(l.item.datum) === groups(s))
        .map((l) => l.item.datum).filter((d) => (d.nines as number) < (s.nines as number) - 1e-12);
      const at = line.sort((a, b) => (a.nines as number) - (b.nines as number)).at(-1)!;
      assert.equal(at.latency_ms, s.latency_ms, `${groups(s)} p${s.percentile}`);
    }
  });
});

Deno.test("latencyChart() draws lines when the arm column is a number (clients)", async () => {
  const data = await groupedDataset();
  // as your-first-study does: the spectrum by clients, clients as colour
  const dist = loadTable(data, "latency_distribution").join(
    loadResults(data).select("run_id", "test_index", "clients"),
    { on: ["run_id", "test_index"] },
  );
  for (
    const frame of [
      latencySpectrum(dist, { by: ["clients"] }),
      latencySteps(dist, { by: ["clients"] }),
    ]
  ) {
    const marks = await render(latencyChart(frame, { by: "clients" }));
    const lines = marks.get("line")!;
    assert.equal(
      lines.length,
      frame.height -
        (frame.columns.includes("percentile")
          ? frame.filter(pl.col("percentile").eq(0)).height
          : 0),
    );
    const strokes = new Set(lines.map((l) => l.item.stroke));
    assert.equal(strokes.size, 2, `strokes: ${[...strokes]}`);
    for (const s of strokes) assert.match(String(s), /^#[0-9a-f]{6}$/i);
  }
});

Deno.test("memoryChart() plots memoryDifference's values for seed 002", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-chart-mem-" });
  for (const server of ["redis", "dragonfly"]) {
    const o = await ingestFile(
      `${ROOT}data/raw/dragonfly-vs-redis-memory/large-keys-${server}.txt`,
      {
        data: dir,
        server,
      },
    );
    assert.equal(o.status, "ingested");
  }
  const memory = loadTable(dir, "memory").join(loadTable(dir, "runs").select("run_id", "server"), {
    on: "run_id",
  });
  const diff = memoryDifference(memoryTable(memory), "redis", "dragonfly").toRecords() as Rec[];
  const marks = await render(memoryChart(memory, { baseline: "redis", candidate: "dragonfly" }));
  const bars = marks.get("rect")!;
  const views: Record<string, string> = { container: "container", malloc: "malloc", RSS: "rss" };
  const want = diff.flatMap((r) =>
    Object.values(views).filter((v) => typeof r[`${v}_difference_pct`] === "number")
  );
  assert.equal(bars.length, want.length);
  assert.ok(bars.length >= 6);
  for (const b of bars) {
    const r = diff.find((r) => r.size === b.item.datum.size)!;
    assert.ok(
      close(b.item.datum.difference_pct, r[`${views[b.item.datum.view as string]}_difference_pct`]),
    );
    assert.ok((b.item.datum.difference_pct as number) < -1, "dragonfly uses less");
  }
  assertSideBySide(bars, "difference_pct", 0);
});
