/**
 * Chart builders: pure functions from DataFrames to Vega-Lite specs (nothing renders or writes;
 * see export.ts). One theme for blog figures — readable at 800 px wide, axis titles with units,
 * a font stack with a CJK fallback — and one stable colour per server across every chart.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { median } from "./_stats.ts";
import { metricTitle } from "./units.ts";

export { metricTitle } from "./units.ts";

/** A Vega-Lite spec (a plain JSON object). */
export type VegaLiteSpec = Record<string, unknown>;

/** The Vega-Lite schema the specs declare. */
export const VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json";

/** Fonts: a Latin sans first, then Japanese (Debian's fonts-ipafont-gothic), then any sans. */
export const FONT = "DejaVu Sans, IPAGothic, IPAPGothic, Noto Sans CJK JP, sans-serif";

/** The blog theme, used as each spec's `config`. */
export const THEME: VegaLiteSpec = {
  font: FONT,
  background: "white",
  padding: 16,
  title: {
    fontSize: 18,
    fontWeight: "bold",
    anchor: "start",
    offset: 14,
    subtitleFontSize: 13,
    subtitleColor: "#555",
  },
  axis: {
    labelFontSize: 13,
    titleFontSize: 14,
    titleFontWeight: "normal",
    gridColor: "#e6e6e6",
    domainColor: "#888",
    tickColor: "#888",
  },
  legend: { labelFontSize: 13, titleFontSize: 13, titleFontWeight: "normal", orient: "bottom" },
  header: { labelFontSize: 14, titleFontSize: 14 },
  view: { stroke: null },
  bar: { cornerRadiusEnd: 1 },
};

/** Plot width that, with axes and padding, makes a figure about 800 px wide. */
export const WIDTH = 640;

/** Colours of known servers; others get one from {@link PALETTE} by a hash of their name. */
export const SERVER_COLORS: Readonly<Record<string, string>> = {
  redis: "#D62728",
  valkey: "#1F5FBF",
  dragonfly: "#7B3FBF",
  keydb: "#E8890C",
  hotkv: "#2CA02C",
  elasticache: "#8C564B",
  memorystore: "#17BECF",
  unknown: "#7F7F7F",
  tcp: "#4C78A8",
  rdma: "#F58518",
  tls: "#54A24B",
  unix: "#B279A2",
};

/** Fallback colours (Tableau 10 without the ones above). */
export const PALETTE = [
  "#4C78A8",
  "#F58518",
  "#54A24B",
  "#B279A2",
  "#FF9DA6",
  "#9D755D",
  "#BAB0AC",
  "#EECA3B",
  "#72B7B2",
];

/** Shades for variants of a known server (`redis-io4`, `valkey 8.1`): same hue, told apart. */
export const SHADES: Readonly<Record<string, readonly string[]>> = {
  redis: ["#FF9896", "#67000D", "#F4A582"],
  valkey: ["#9ECAE1", "#08306B", "#41B6C4"],
  dragonfly: ["#C5B0D5", "#3F007D", "#E7298A"],
  keydb: ["#FDD0A2", "#7F2704", "#FEC44F"],
};

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * The colour of an arm, the same in every chart: a known server's own colour; a variant of one
 * (`redis-io4`, `valkey 8.0.1`) a shade of the same hue picked by its name; anything else a
 * stable pick from the palette.
 *
 * @example
 * ```ts
 * import { colorFor } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(colorFor("valkey"), "#1F5FBF");
 * assert.notEqual(colorFor("redis-io4"), colorFor("redis"));
 * assert.equal(colorFor("my-arm"), colorFor("my-arm"));
 * ```
 */
export function colorFor(name: string): string {
  const n = name.toLowerCase();
  if (SERVER_COLORS[n]) return SERVER_COLORS[n];
  for (const [k, shades] of Object.entries(SHADES)) {
    if (n.startsWith(k + "-") || n.startsWith(k + " ") || n.startsWith(k + "_")) {
      return shades[hash(n) % shades.length];
    }
  }
  return PALETTE[hash(n) % PALETTE.length];
}

/**
 * A colour encoding whose scale maps each arm to {@link colorFor}; when two arms of one chart
 * would share a colour, the later one (in sorted order) takes the next free palette colour.
 */
export function colorEncoding(
  field: string,
  values: readonly string[],
  title?: string,
): VegaLiteSpec {
  const domain = armOrder(values);
  const used = new Set<string>();
  const range: string[] = [];
  for (const arm of [...domain].sort()) {
    let c = colorFor(arm);
    if (used.has(c)) {
      c = [...PALETTE, ...Object.values(SHADES).flat()].find((p) => !used.has(p)) ?? c;
    }
    used.add(c);
    range.push(c);
  }
  const byArm = new Map([...domain].sort().map((a, i) => [a, range[i]]));
  return {
    field,
    type: "nominal",
    title: title ?? field,
    scale: { domain, range: domain.map((a) => byArm.get(a)!) },
    sort: domain,
  };
}

/** Arms in a stable order (by name), whatever order the runs were read in. */
export function armOrder(values: readonly unknown[]): string[] {
  return [...new Set(values.map(String))].sort((a, b) => a.localeCompare(b));
}

type Rec = Record<string, unknown>;

function base(title: string | undefined, subtitle?: string): VegaLiteSpec {
  return {
    $schema: VEGA_LITE_SCHEMA,
    ...(title ? { title: subtitle ? { text: title, subtitle } : title } : {}),
    config: THEME,
  };
}

function testOrder(records: Rec[]): string[] {
  return [...new Set(records.map((r) => String(r.test)))];
}

/** Options shared by the chart builders. */
export interface ChartOptions {
  title?: string;
  subtitle?: string;
}

/**
 * Throughput (or another metric) by test, one bar per arm (median of repetitions) with a
 * min–max whisker when there are repetitions.
 *
 * @param results A results frame (loadResults): `test`, the `by` column and the metric.
 */
export function throughputChart(
  results: pl.DataFrame,
  options: ChartOptions & { by?: string; metric?: string } = {},
): VegaLiteSpec {
  const by = options.by ?? "server";
  const metric = options.metric ?? "ops_per_sec";
  const recs = results.select("test", by, metric).toRecords() as Rec[];
  const groups = new Map<string, { test: string; arm: string; v: number[] }>();
  for (const r of recs) {
    if (typeof r[metric] !== "number") continue;
    const k = `${r.test}\u0000${r[by]}`;
    const g = groups.get(k) ?? { test: String(r.test), arm: String(r[by]), v: [] };
    g.v.push(r[metric] as number);
    groups.set(k, g);
  }
  const values = [...groups.values()].sort((a, b) =>
    a.test.localeCompare(b.test) || a.arm.localeCompare(b.arm)
  ).map((g) => ({
    test: g.test,
    [by]: g.arm,
    value: median(g.v),
    min: Math.min(...g.v),
    max: Math.max(...g.v),
    n: g.v.length,
  }));
  const tests = testOrder(recs);
  const arms = values.map((v) => String(v[by]));
  const x = {
    field: "test",
    type: "nominal",
    title: "test",
    sort: tests,
    axis: { labelAngle: -40 },
  };
  return {
    ...base(
      options.title ?? `${metricTitle(metric).replace(/ \(.*\)$/, "")} by test`,
      options.subtitle,
    ),
    width: WIDTH,
    height: 360,
    data: { values },
    encoding: { x, xOffset: { field: by, sort: armOrder(arms) } },
    layer: [
      {
        mark: { type: "bar" },
        encoding: {
          y: { field: "value", type: "quantitative", title: metricTitle(metric) },
          color: colorEncoding(by, arms),
          tooltip: [{ field: "test" }, { field: by }, {
            field: "value",
            title: "median",
            format: ",.2f",
          }, { field: "n" }],
        },
      },
      {
        transform: [{ filter: "datum.n > 1" }],
        mark: { type: "rule", color: "#333" },
        encoding: { y: { field: "min", type: "quantitative" }, y2: { field: "max" } },
      },
    ],
  };
}

/**
 * Ratio of each arm to the baseline per test (from {@link compare}): bars from 1, confidence
 * whiskers, and a line at 1.
 */
export function ratioChart(
  cmp: pl.DataFrame,
  options: ChartOptions & { by?: string } = {},
): VegaLiteSpec {
  const by = options.by ?? "server";
  const recs = cmp.toRecords() as Rec[];
  const values = recs.map((r) => ({
    test: r.test,
    [by]: r[by],
    ratio: r.ratio,
    ci_low: r.ratio_ci_low ?? null,
    ci_high: r.ratio_ci_high ?? null,
    verdict: r.verdict,
  }));
  const baseline = String(recs[0]?.baseline ?? "baseline");
  const arms = values.map((v) => String(v[by]));
  const x = {
    field: "test",
    type: "nominal",
    title: "test",
    sort: testOrder(recs),
    axis: { labelAngle: -40 },
  };
  const xOffset = { field: by, sort: armOrder(arms) };
  return {
    ...base(
      options.title ?? `ratio to ${baseline} by test`,
      options.subtitle ??
        (values.some((v) => v.ci_low !== null)
          ? "median ratio; whiskers: 95% bootstrap interval"
          : "median ratio; one run per arm, so no interval: differences of a few % may be noise"),
    ),
    width: WIDTH,
    height: 320,
    data: { values },
    layer: [
      {
        mark: { type: "bar" },
        encoding: {
          x,
          xOffset,
          y: {
            field: "ratio",
            type: "quantitative",
            title: `ratio to ${baseline}`,
            scale: { zero: false },
          },
          y2: { datum: 1 },
          color: colorEncoding(by, arms),
          tooltip: [
            { field: "test" },
            { field: by },
            { field: "ratio", format: ".3f" },
            { field: "ci_low", format: ".3f" },
            { field: "ci_high", format: ".3f" },
            { field: "verdict" },
          ],
        },
      },
      {
        transform: [{ filter: "datum.ci_low != null" }],
        mark: { type: "rule", color: "#222", strokeWidth: 1.5 },
        encoding: {
          x,
          xOffset,
          y: { field: "ci_low", type: "quantitative" },
          y2: { field: "ci_high" },
        },
      },
      { mark: { type: "rule", color: "#000", strokeDash: [4, 3] }, encoding: { y: { datum: 1 } } },
    ],
  };
}

const NINES_LABELS =
  "datum.value == 0 ? '0%' : datum.value == 1 ? '90%' : datum.value == 2 ? '99%' : datum.value == 3 ? '99.9%' : datum.value == 4 ? '99.99%' : datum.value == 5 ? '99.999%' : datum.value == 6 ? 'max' : ''";

/**
 * Latency spectrum (from {@link latencySpectrum}): latency against percentile on a "nines"
 * axis (50 %, 90 %, 99 %, 99.9 % … evenly spaced), log latency axis, one line per arm, one
 * panel per test.
 */
export function latencyChart(
  spectrum: pl.DataFrame,
  options: ChartOptions & { by?: string } = {},
): VegaLiteSpec {
  const by = options.by ?? "server";
  const recs = spectrum.toRecords() as Rec[];
  const arms = recs.map((r) => String(r[by]));
  const tests = testOrder(recs);
  const single = tests.length === 1;
  const layer = {
    width: WIDTH,
    height: single ? 340 : 260,
    mark: { type: "line", point: true, interpolate: "monotone" },
    encoding: {
      x: {
        field: "nines",
        type: "quantitative",
        title: "percentile",
        scale: { domain: [0, 6] },
        axis: {
          values: [0, 1, 2, 3, 4, 5, 6],
          labelExpr: NINES_LABELS,
          labelOverlap: false,
          grid: true,
        },
      },
      y: {
        field: "latency_ms",
        type: "quantitative",
        title: "latency (ms)",
        scale: { type: "log" },
      },
      color: colorEncoding(by, arms),
      tooltip: [{ field: "test" }, { field: by }, { field: "percentile" }, {
        field: "latency_ms",
        format: ".3f",
      }, { field: "count" }],
    },
  };
  const head = base(
    options.title ?? "latency by percentile",
    options.subtitle ?? "runs merged as histograms",
  );
  if (single) return { ...head, data: { values: recs }, ...layer };
  return {
    ...head,
    data: { values: recs },
    facet: { field: "test", type: "nominal", title: null, sort: tests },
    columns: 1,
    spec: layer,
  };
}

/**
 * Scaling curves (from {@link scaling}): the median metric against `x` (log-2 axis for counts)
 * per arm and test, with crossover points (from {@link crossovers}) marked.
 */
export function scalingChart(
  curve: pl.DataFrame,
  options: ChartOptions & { x?: string; by?: string; metric?: string; crossovers?: pl.DataFrame } =
    {},
): VegaLiteSpec {
  const x = options.x ?? "clients";
  const by = options.by ?? "server";
  const metric = options.metric ?? "ops_per_sec";
  const recs = curve.toRecords() as Rec[];
  const arms = recs.map((r) => String(r[by]));
  const cross = (options.crossovers?.toRecords() as Rec[] | undefined ?? []).filter((c) =>
    c.crossover_x !== null
  );
  const tests = testOrder(recs);
  const xEnc = {
    field: x,
    type: "quantitative",
    title: x.replace(/_/g, " "),
    scale: { type: "log", base: 2 },
    axis: { tickCount: 8 },
  };
  const layers: VegaLiteSpec[] = [
    {
      mark: { type: "line", point: true },
      encoding: {
        x: xEnc,
        y: { field: `median_${metric}`, type: "quantitative", title: metricTitle(metric) },
        color: colorEncoding(by, arms),
        tooltip: [{ field: "test" }, { field: by }, { field: x }, {
          field: `median_${metric}`,
          format: ",.2f",
        }, { field: "n" }],
      },
    },
  ];
  if (cross.length > 0) {
    layers.push(
      {
        data: { values: cross },
        mark: { type: "rule", strokeDash: [5, 4], color: "#444" },
        encoding: { x: { field: "crossover_x", type: "quantitative" } },
      },
      {
        data: {
          values: cross.map((c) => ({ ...c, label: `${c.candidate} ahead from ${c.crossover_x}` })),
        },
        mark: {
          type: "text",
          align: "right",
          dx: -6,
          dy: 12,
          baseline: "top",
          fontSize: 13,
          color: "#222",
        },
        encoding: {
          x: { field: "crossover_x", type: "quantitative" },
          y: { value: 0 },
          text: { field: "label" },
        },
      },
    );
  }
  const head = base(
    options.title ??
      `${metricTitle(metric).replace(/ \(.*\)$/, "")} against ${x.replace(/_/g, " ")}`,
    options.subtitle ?? "medians of repetitions",
  );
  if (tests.length === 1) {
    return { ...head, width: WIDTH, height: 360, data: { values: recs }, layer: layers };
  }
  return {
    ...head,
    data: { values: recs },
    facet: { field: "test", type: "nominal", title: null, sort: tests },
    columns: 2,
    spec: { width: 300, height: 220, layer: layers },
  };
}

/**
 * A change along one dimension (from {@link delta}): throughput factor per test (line at 1)
 * beside the latency change in % per test and percentile (line at 0).
 */
export function deltaChart(d: pl.DataFrame, options: ChartOptions = {}): VegaLiteSpec {
  const recs = d.toRecords() as Rec[];
  const tests = testOrder(recs);
  const testAxis = {
    field: "test",
    type: "nominal",
    sort: tests,
    title: "test",
    axis: { labelAngle: -40 },
  };
  const from = String(recs[0]?.from ?? "from");
  const to = String(recs[0]?.to ?? "to");
  const lat: Rec[] = [];
  for (const r of recs) {
    for (const p of ["avg", "p50", "p95", "p99"]) {
      const v = r[`${p}_latency_change_pct`];
      if (typeof v === "number") lat.push({ test: r.test, latency: p, change_pct: v });
    }
  }
  return {
    ...base(options.title ?? `${to} vs ${from}`, options.subtitle ?? "medians of repetitions"),
    hconcat: [
      {
        width: 300,
        height: 300,
        data: { values: recs },
        layer: [
          {
            mark: { type: "bar", color: colorFor(to) },
            encoding: {
              x: testAxis,
              y: {
                field: "throughput_factor",
                type: "quantitative",
                title: `throughput factor (${to} / ${from})`,
              },
              tooltip: [{ field: "test" }, { field: "throughput_factor", format: ".2f" }],
            },
          },
          { mark: { type: "rule", strokeDash: [4, 3] }, encoding: { y: { datum: 1 } } },
        ],
      },
      {
        width: 300,
        height: 300,
        data: { values: lat },
        layer: [
          {
            mark: { type: "bar" },
            encoding: {
              x: testAxis,
              xOffset: { field: "latency", sort: ["avg", "p50", "p95", "p99"] },
              y: { field: "change_pct", type: "quantitative", title: "latency change (%)" },
              color: {
                field: "latency",
                type: "nominal",
                title: "latency",
                sort: ["avg", "p50", "p95", "p99"],
                scale: { scheme: "blues" },
              },
              tooltip: [{ field: "test" }, { field: "latency" }, {
                field: "change_pct",
                format: ".1f",
              }],
            },
          },
          { mark: { type: "rule" }, encoding: { y: { datum: 0 } } },
        ],
      },
    ],
    resolve: { scale: { color: "independent" } },
  };
}

const VIEW_TITLES: Record<string, string> = {
  container_memory_bytes: "container (docker stats)",
  used_memory_bytes: "malloc (INFO used_memory)",
  used_memory_rss_bytes: "RSS (INFO used_memory_rss)",
  process_rss_bytes: "process RSS (/proc)",
};

/**
 * Memory against key count (from the `memory` table): one panel per memory view, one line per
 * arm, log axes so 100k and 100M keys share a figure.
 */
export function memoryChart(
  memory: pl.DataFrame,
  options: ChartOptions & { by?: string } = {},
): VegaLiteSpec {
  const by = options.by ?? "server";
  const recs = memory.toRecords() as Rec[];
  const values: Rec[] = [];
  for (const r of recs) {
    for (const view of Object.keys(VIEW_TITLES)) {
      const v = r[view];
      if (typeof v === "number" && typeof r.keys === "number") {
        values.push({ [by]: r[by], keys: r.keys, view: VIEW_TITLES[view], mib: v / 1024 / 1024 });
      }
    }
  }
  const views = Object.values(VIEW_TITLES).filter((t) => values.some((v) => v.view === t));
  const arms = values.map((v) => String(v[by]));
  return {
    ...base(
      options.title ?? "memory against keys",
      options.subtitle ?? "log–log; each point one measurement",
    ),
    data: { values },
    facet: { field: "view", type: "nominal", title: null, sort: views },
    columns: Math.min(3, views.length),
    spec: {
      width: views.length > 1 ? 200 : WIDTH,
      height: 220,
      mark: { type: "line", point: true },
      encoding: {
        x: {
          field: "keys",
          type: "quantitative",
          title: "keys (DBSIZE)",
          scale: { type: "log" },
          axis: { format: "~s" },
        },
        y: { field: "mib", type: "quantitative", title: "memory (MiB)", scale: { type: "log" } },
        color: colorEncoding(by, arms),
        order: { field: "keys", type: "quantitative" },
        tooltip: [{ field: by }, { field: "view" }, { field: "keys", format: "," }, {
          field: "mib",
          format: ",.2f",
          title: "MiB",
        }],
      },
    },
  };
}
