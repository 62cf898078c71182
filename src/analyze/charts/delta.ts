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
  factorLabel,
  GROUP,
  keysBefore,
  pctLabel,
  ratioDomain,
  type Rec,
  referenceRule,
  runsPhrase,
  testOrder,
  valueLabels,
  withGroups,
} from "./_common.ts";
import { colorFor } from "./color.ts";
import type { ChartOptions, VegaLiteSpec } from "./theme.ts";

const PERCENTILES = ["avg", "p50", "p95", "p99"] as const;

/**
 * A change along one dimension (from {@link delta}): the throughput factor per test (bars
 * from a line at 1, labelled `2.32×`) beside the latency change in % per test and percentile
 * (bars from 0, labelled `-53.0 %`). Each group of `delta`'s rows (test and each parameter
 * that varies within a side, e.g. `clients` 10 and 50) gets its own row of panels: nothing is
 * stacked or summed.
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
  const from = String(recs[0]?.from ?? "from");
  const to = String(recs[0]?.to ?? "to");
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
  const panels = { tests: testOrder(recs), from, to, lat, values };
  const head = base(
    options.title ?? `${to} vs ${from}`,
    options.subtitle ??
      `${runsPhrase(recs.flatMap((r) => [r.from_n, r.to_n]))}; ${
        values.some((r) => typeof r.ci_low === "number") ||
          lat.some((r) => typeof r.ci_low === "number")
          ? "whiskers: 95 % interval (delta); verdicts in the tooltips"
          : "no whiskers (under 4 runs per side)"
      }`,
  );
  if (extra.length === 0) return { ...head, ...panelRow(panels, null) };
  return {
    ...head,
    vconcat: groups.map((g) => ({ title: g, ...panelRow(panels, g) })),
    resolve: { scale: { color: "shared" } },
  };
}

interface Panels {
  tests: string[];
  from: string;
  to: string;
  lat: Rec[];
  values: Rec[];
}

/** The two panels of one group (all rows when `group` is null). */
function panelRow(p: Panels, group: string | null): VegaLiteSpec {
  const mine = (rows: Rec[]) => rows.filter((r) => group === null || r[GROUP] === group);
  const x = {
    field: "test",
    type: "nominal",
    sort: p.tests,
    title: "test",
    axis: { labelAngle: -40 },
  };
  return {
    hconcat: [factorPanel(p, mine(p.values), x), latencyPanel(p, mine(p.lat), x)],
    resolve: { scale: { color: "independent" } },
  };
}

/** Bars of the throughput factor per test, with their intervals and labels. */
function factorPanel(p: Panels, rows: Rec[], x: VegaLiteSpec): VegaLiteSpec {
  const domain = ratioDomain(rows.flatMap((r) => [r.throughput_factor, r.ci_low, r.ci_high]));
  return {
    width: Math.max(300, p.tests.length * 40),
    height: 280,
    data: { values: rows },
    layer: [
      {
        mark: { type: "bar", color: colorFor(p.to) },
        encoding: {
          x,
          y: {
            field: "throughput_factor",
            type: "quantitative",
            title: `throughput factor (${p.to} / ${p.from}, ×)`,
            scale: { domain, nice: false },
          },
          y2: { datum: 1 },
          tooltip: [{ field: "test" }, { field: "throughput_factor", format: ".3f" }, {
            field: "verdict",
          }],
        },
      },
      referenceRule(1),
      {
        transform: [{ filter: "datum.ci_low != null" }],
        mark: { type: "rule", color: "#222", strokeWidth: 1.5 },
        encoding: {
          x,
          y: { field: "ci_low", type: "quantitative" },
          y2: { field: "ci_high" },
        },
      },
      ...valueLabels("throughput_factor", { reference: 1, encoding: { x } }),
    ],
  };
}

/** Bars of the latency changes per test and percentile, with their intervals and labels. */
function latencyPanel(p: Panels, rows: Rec[], x: VegaLiteSpec): VegaLiteSpec {
  return {
    width: Math.max(300, p.tests.length * 60),
    height: 280,
    data: { values: rows },
    layer: [
      {
        mark: { type: "bar" },
        encoding: {
          x,
          xOffset: { field: "latency", sort: PERCENTILES },
          y: {
            field: "change_pct",
            type: "quantitative",
            title: `latency change (%, ${p.to} vs ${p.from})`,
            scale: {
              domain: changeDomain(
                rows.flatMap((r) => [r.change_pct, r.ci_low, r.ci_high]),
              ),
            },
          },
          color: {
            field: "latency",
            type: "nominal",
            title: "latency",
            sort: PERCENTILES,
            scale: { domain: PERCENTILES, scheme: "blues" },
          },
          tooltip: [{ field: "test" }, { field: "latency" }, {
            field: "change_pct",
            format: ".1f",
          }, { field: "verdict" }],
        },
      },
      referenceRule(0),
      {
        transform: [{ filter: "datum.ci_low != null" }],
        mark: { type: "rule", color: "#222", strokeWidth: 1.5 },
        encoding: {
          x,
          xOffset: { field: "latency", sort: PERCENTILES },
          y: { field: "ci_low", type: "quantitative" },
          y2: { field: "ci_high" },
        },
      },
      ...valueLabels("change_pct", {
        reference: 0,
        encoding: { x, xOffset: { field: "latency", sort: PERCENTILES } },
        fontSize: 10,
        upright: true,
      }),
    ],
  };
}
