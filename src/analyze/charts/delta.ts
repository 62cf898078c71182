/**
 * A change along one dimension: throughput factor beside latency change per test, one row of
 * panels per group.
 *
 * @module
 */

import type pl from "nodejs-polars";
import {
  base,
  changeDomain,
  clipWhiskers,
  CUT_NOTE,
  factorLabel,
  GROUP,
  keysBefore,
  pctLabel,
  ratioDomain,
  type Rec,
  referenceRule,
  runsPhrase,
  testAxis,
  testOrder,
  valueLabels,
  verdictEncoding,
  verdictLegend,
  whiskerCuts,
  whiskerDomain,
  whiskerLayer,
  withGroups,
} from "./_common.ts";
import { colorFor } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

const PERCENTILES = ["avg", "p50", "p95", "p99"] as const;

/**
 * The percentiles' colours in the delta figure: grey, blue, amber, crimson (each pair at least
 * `MIN_DELTA_E` apart; four blues were hard to tell apart).
 *
 * @example
 * ```ts
 * import { deltaE, MIN_DELTA_E, PERCENTILE_COLORS } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const colors = Object.values(PERCENTILE_COLORS);
 * for (const a of colors) {
 *   for (const b of colors) if (a !== b) assert.ok(deltaE(a, b) >= MIN_DELTA_E);
 * }
 * ```
 */
export const PERCENTILE_COLORS: Readonly<Record<(typeof PERCENTILES)[number], string>> = {
  avg: "#9D9D9D",
  p50: "#2C7FB8",
  p95: "#F0A30A",
  p99: "#A21E3C",
};

/**
 * The scales every panel shares: the percentiles' colours (fill and outline: one legend) and the
 * verdicts' legend.
 */
const SHARED = { color: "shared", stroke: "shared", fill: "shared" } as const;

/** The widest two panels side by side may be (px, plots only): a figure about 800 px wide. */
const SIDE_BY_SIDE_PX = 620;

/**
 * A change along one dimension (from {@link delta}): the throughput factor per test (bars
 * from a line at 1, labelled `2.32×`) beside the latency change in % per test and percentile
 * (bars from 0, labelled `-53.0 %`; avg, p50, p95 and p99 in four colours told apart). Each bar
 * shows `delta`'s verdict as the ratio chart does (solid when better or worse, hollow when
 * inconclusive, with a legend), its interval as a whisker with the value label beside it (never
 * across it), cut at the axis with a mark when it would stretch the axis beyond the bars. Each
 * group of `delta`'s rows (test and each parameter that varies within a side, e.g. `clients` 10
 * and 50) gets its own row of panels, every row on the same two axes: nothing is stacked or
 * summed. The two panels stand one above the other when side by side they would be too wide.
 *
 * @param d A frame from `delta`.
 * @param options Title and subtitle.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { delta, deltaChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["GET", "GET"], transport: ["tcp", "rdma"],
 *   ops_per_sec: [100, 232], p50_latency_ms: [0.2, 0.1] });
 * const spec = deltaChart(delta(df, { dimension: "transport", from: "tcp", to: "rdma" }));
 * const panels = spec.hconcat as { data: { values: { value_label: string }[] } }[];
 * assert.equal(panels[0].data.values[0].value_label, "2.32×");
 * assert.equal(panels[1].data.values[0].value_label, "-50.0 %");
 * assert.match(JSON.stringify(spec.title), /one run per side/);
 * ```
 */
export function deltaChart(d: pl.DataFrame, options: ChartOptions = {}): VegaLiteSpec {
  const recs = d.toRecords() as Rec[];
  const keys = keysBefore(d.columns, "from");
  const extra = keys.filter((k) => k !== "test");
  const { values, groups } = withGroups(
    recs.map((r) => ({
      ...r,
      value_label: typeof r.throughput_factor === "number" ? factorLabel(r.throughput_factor) : "",
      value_label_at: r.throughput_factor,
      ci_low: r.throughput_factor_ci_low ?? null,
      ci_high: r.throughput_factor_ci_high ?? null,
      verdict: r.throughput_verdict ?? null,
    })),
    extra,
  );
  const lat = latencyRows(values);
  const whiskers = values.some((r) => typeof r.ci_low === "number") ||
    lat.some((r) => typeof r.ci_low === "number");
  // one axis per kind of panel across every group: the same baseline in each row
  const factorDomain = whiskerDomain(
    values.map((r) => r.throughput_factor),
    values.flatMap((r) => [r.ci_low, r.ci_high]),
    ratioDomain,
  );
  const changeAxis = whiskerDomain(
    lat.map((r) => r.change_pct),
    lat.flatMap((r) => [r.ci_low, r.ci_high]),
    changeDomain,
  );
  const factors = clipWhiskers(values, factorDomain, factorLabel);
  const changes = clipWhiskers(lat, changeAxis, pctLabel);
  const tests = testOrder(recs);
  const panels: Panels = {
    tests,
    from: String(recs[0]?.from ?? "from"),
    to: String(recs[0]?.to ?? "to"),
    lat: changes,
    values: factors,
    factorDomain,
    changeDomain: changeAxis,
    verdicts: [...factors, ...changes].map((r) => r.verdict),
    widths: panelWidths(tests.length),
  };
  const cut = [...factors, ...changes].some((r) => r.ci_low_cut !== null || r.ci_high_cut !== null);
  const head = base(
    options.title ?? `${panels.to} vs ${panels.from}`,
    options.subtitle ?? [
      `${runsPhrase(recs.flatMap((r) => [r.from_n, r.to_n]))}; ${
        whiskers
          ? "whiskers: 95 % interval (delta); bars hollow where delta's verdict is inconclusive"
          : "no whiskers (under 4 runs per side)"
      }`,
      ...(cut ? [CUT_NOTE] : []),
    ],
  );
  if (extra.length === 0) return { ...head, ...panelRow(panels, null) };
  return {
    ...head,
    vconcat: groups.map((g) => ({ title: g, ...panelRow(panels, g) })),
    resolve: { scale: SHARED },
  };
}

/** Each row's latency changes, one per percentile it has. */
function latencyRows(values: Rec[]): Rec[] {
  const lat: Rec[] = [];
  for (const r of values) {
    for (const p of PERCENTILES) {
      const v = r[`${p}_latency_change_pct`];
      if (typeof v === "number") {
        lat.push({
          test: r.test,
          [GROUP]: r[GROUP],
          latency: p,
          change_pct: v,
          ci_low: r[`${p}_latency_change_ci_low_pct`] ?? null,
          ci_high: r[`${p}_latency_change_ci_high_pct`] ?? null,
          verdict: r[`${p}_latency_verdict`] ?? null,
          value_label: pctLabel(v),
          value_label_at: v,
        });
      }
    }
  }
  return lat;
}

/**
 * The panels' widths: a factor bar per test and four latency bars per test, each wide enough
 * for an upright label beside its whisker; side by side while both fit, else one above the other
 * at the theme's width.
 */
function panelWidths(tests: number): { factor: number; latency: number; stacked: boolean } {
  const factor = Math.max(240, tests * 50);
  const latency = Math.max(300, tests * 4 * 30);
  if (factor + latency <= SIDE_BY_SIDE_PX) return { factor, latency, stacked: false };
  return { factor: WIDTH, latency: Math.max(WIDTH, tests * 4 * 30), stacked: true };
}

interface Panels {
  tests: string[];
  from: string;
  to: string;
  lat: Rec[];
  values: Rec[];
  /** The factor axis of every group. */
  factorDomain: [number, number];
  /** The latency change axis of every group. */
  changeDomain: [number, number];
  /** Every verdict drawn (the one verdict legend lists them). */
  verdicts: unknown[];
  widths: { factor: number; latency: number; stacked: boolean };
}

/** The two panels of one group (all rows when `group` is null). */
function panelRow(p: Panels, group: string | null): VegaLiteSpec {
  const mine = (rows: Rec[]) => rows.filter((r) => group === null || r[GROUP] === group);
  const x = {
    field: "test",
    type: "nominal",
    sort: p.tests,
    title: "test",
    axis: testAxis(p.tests, p.widths.factor),
  };
  const both = [factorPanel(p, mine(p.values), x), latencyPanel(p, mine(p.lat), x)];
  return {
    ...(p.widths.stacked ? { vconcat: both } : { hconcat: both }),
    resolve: { scale: SHARED },
  };
}

/** Bars of the throughput factor per test, with their intervals and labels. */
function factorPanel(p: Panels, rows: Rec[], x: VegaLiteSpec): VegaLiteSpec {
  const y = {
    type: "quantitative",
    scale: { domain: p.factorDomain, nice: false, clamp: true },
  };
  return {
    width: p.widths.factor,
    height: p.widths.stacked ? 220 : 280,
    data: { values: rows },
    layer: [
      {
        mark: { type: "bar", strokeWidth: 1.5 },
        encoding: {
          x,
          y: {
            ...y,
            field: "throughput_factor",
            title: `throughput factor (${p.to} / ${p.from}, ×)`,
          },
          y2: { datum: 1 },
          ...verdictEncoding({ value: colorFor(p.to) }),
          tooltip: [{ field: "test" }, { field: "throughput_factor", format: ".3f" }, {
            field: "verdict",
          }],
        },
      },
      referenceRule(1),
      whiskerLayer({ x }, y),
      ...whiskerCuts({ x }, y),
      verdictLegend({ x, y: { ...y, field: "throughput_factor" } }, p.verdicts),
      ...valueLabels("throughput_factor", {
        reference: 1,
        encoding: { x },
        beside: rows.some((r) => typeof r.ci_low === "number"), // beside the whisker, not across
      }),
    ],
  };
}

/** Bars of the latency changes per test and percentile, with their intervals and labels. */
function latencyPanel(p: Panels, rows: Rec[], x: VegaLiteSpec): VegaLiteSpec {
  const xOffset = { field: "latency", sort: PERCENTILES };
  const px = { ...x, axis: testAxis(p.tests, p.widths.latency) };
  const y = { type: "quantitative", scale: { domain: p.changeDomain, nice: false, clamp: true } };
  return {
    width: p.widths.latency,
    height: p.widths.stacked ? 220 : 280,
    data: { values: rows },
    layer: [
      {
        mark: { type: "bar", strokeWidth: 1.5 },
        encoding: {
          x: px,
          xOffset,
          y: { ...y, field: "change_pct", title: `latency change (%, ${p.to} vs ${p.from})` },
          ...verdictEncoding({
            field: "latency",
            type: "nominal",
            title: "latency",
            sort: PERCENTILES,
            scale: { domain: PERCENTILES, range: PERCENTILES.map((q) => PERCENTILE_COLORS[q]) },
          }),
          tooltip: [{ field: "test" }, { field: "latency" }, {
            field: "change_pct",
            format: ".1f",
          }, { field: "verdict" }],
        },
      },
      referenceRule(0),
      whiskerLayer({ x: px, xOffset }, y),
      ...whiskerCuts({ x: px, xOffset }, y),
      verdictLegend({ x: px, xOffset, y: { ...y, field: "change_pct" } }, p.verdicts),
      ...valueLabels("change_pct", {
        reference: 0,
        encoding: { x: px, xOffset },
        fontSize: 10,
        upright: true,
        beside: rows.some((r) => typeof r.ci_low === "number"),
      }),
    ],
  };
}
