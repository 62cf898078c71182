/**
 * Ratio of each arm to the baseline per test and group, with confidence whiskers.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { metricName } from "../units.ts";
import {
  base,
  clipWhiskers,
  CUT_NOTE,
  factorLabel,
  keysBefore,
  ratioDomain,
  type Rec,
  referenceRule,
  rowsPerGroup,
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
import { armOrder, colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

/** Options of {@link ratioChart}. */
export interface RatioChartOptions extends ChartOptions {
  /** The column whose values are the arms (compare's `by`). @default {"server"} */
  by?: string;
  /** The confidence of compare's interval, for the subtitle. @default {0.95} */
  confidence?: number;
}

/** The metric of a compare() frame, from its `baseline_median_<metric>` column. */
function metricOf(columns: readonly string[]): string {
  const c = columns.find((c) => c.startsWith("baseline_median_"));
  return c ? c.slice("baseline_median_".length) : "ops_per_sec";
}

/**
 * Ratio of each arm to the baseline per test (from {@link compare}): one bar per row of the
 * compare frame — its groups (test and each parameter that varies within an arm) as compare
 * made them, a parameter's values in panels of their own — from a reference line at 1 on an
 * axis around 1, labelled at the bar's end as a factor (`1.04×`, `2.13×`), with compare's
 * interval (Moses' interval of the Hodges–Lehmann ratio) as the whisker where there are 4 or
 * more repetitions per arm.
 *
 * @param cmp A frame from `compare`.
 * @param options Arm column, title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { compare, ratioChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET", "SET"], server: ["redis", "valkey"], ops_per_sec: [100, 103.7] });
 * const spec = ratioChart(compare(df, { by: "server", baseline: "redis" }));
 * const [bar] = (spec.data as { values: { ratio: number; value_label: string }[] }).values;
 * assert.equal(bar.value_label, "1.04×");
 * assert.match(JSON.stringify(spec.title), /one run per side/);
 * ```
 */
export function ratioChart(cmp: pl.DataFrame, options: RatioChartOptions = {}): VegaLiteSpec {
  const by = options.by ?? "server";
  const metric = metricOf(cmp.columns);
  const keys = keysBefore(cmp.columns, "baseline", by);
  const extra = keys.filter((k) => k !== "test");
  const recs = cmp.toRecords() as Rec[];
  // one style on every ratio chart: a factor (`1.04×`, `0.66×`)
  const { values, groups } = withGroups(
    recs.map((r) => ({
      ...Object.fromEntries(keys.map((k) => [k, r[k]])),
      [by]: r[by],
      ratio: r.ratio,
      ci_low: r.ratio_ci_low ?? null,
      ci_high: r.ratio_ci_high ?? null,
      verdict: r.verdict,
      n: `${r.baseline_n} vs ${r.candidate_n}`,
      value_label: factorLabel(r.ratio as number),
      // at the bar's end (the label sits beside the whisker, not at its tip)
      value_label_at: r.ratio,
    })),
    extra,
  );
  const baseline = String(recs[0]?.baseline ?? "baseline");
  const arms = values.map((v) => String(v[by]));
  const domain = whiskerDomain(
    values.map((v) => v.ratio),
    values.flatMap((v) => [v.ci_low, v.ci_high]),
    ratioDomain,
  );
  const x = {
    field: "test",
    type: "nominal",
    title: "test",
    sort: testOrder(recs),
    axis: testAxis(testOrder(recs), WIDTH),
  };
  const xOffset = { field: by, sort: armOrder(arms) };
  const y = { type: "quantitative", scale: { domain, zero: false, nice: false, clamp: true } };
  const name = metricName(metric);
  const unit = {
    width: WIDTH,
    height: extra.length ? 240 : 320,
    layer: [
      {
        // compare's verdict, drawn: solid when better or worse, hollow when inconclusive
        mark: { type: "bar", strokeWidth: 1.5 },
        encoding: {
          x,
          xOffset,
          y: {
            ...y,
            field: "ratio",
            title: `${name} ratio (${armOrder(arms).join(", ")} / ${baseline})`,
          },
          y2: { datum: 1 },
          ...verdictEncoding(colorEncoding(by, arms)),
          tooltip: [
            { field: "test" },
            ...extra.map((field) => ({ field })),
            { field: by },
            { field: "ratio", format: ".4f" },
            { field: "ci_low", format: ".4f" },
            { field: "ci_high", format: ".4f" },
            { field: "n", title: "runs" },
            { field: "verdict" },
          ],
        },
      },
      whiskerLayer({ x, xOffset }, y),
      ...whiskerCuts({ x, xOffset }, y),
      referenceRule(1),
      verdictLegend({ x, xOffset, y: { ...y, field: "ratio" } }, values.map((v) => v.verdict)),
      ...valueLabels("ratio", {
        reference: 1,
        encoding: { x, xOffset },
        fontSize: 11,
        upright: WIDTH * Math.max(1, groups.length) / values.length < 44,
        beside: true,
      }),
    ],
  };
  const drawnValues = clipWhiskers(values, domain, factorLabel);
  const head = base(
    options.title ?? `${name}: ${armOrder(arms).join(", ")} relative to ${baseline}`,
    options.subtitle ?? ratioSubtitle(drawnValues, options.confidence ?? 0.95),
  );
  return rowsPerGroup(head, { values: drawnValues, unit, groups });
}

/** What the bars and whiskers of a ratio chart are, from compare's n and intervals. */
function ratioSubtitle(values: Rec[], confidence: number): string | string[] {
  const runs = runsPhrase(values.flatMap((r) => String(r.n).split(" vs ").map(Number)));
  if (values.some((r) => typeof r.ci_low === "number")) {
    const line = `bars: ratio of ${runs}; whiskers: ${
      Math.round(confidence * 100)
    } % interval (compare)`;
    return values.some((r) => r.ci_low_cut !== null || r.ci_high_cut !== null)
      ? [line, CUT_NOTE]
      : line;
  }
  return `${runs}, so no interval: differences of a few % may be noise`;
}
