/**
 * Ratio of each arm to the baseline per test, with confidence whiskers.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { base, type Rec, testOrder } from "./_common.ts";
import { armOrder, colorEncoding } from "./color.ts";
import { type ChartOptions, type VegaLiteSpec, WIDTH } from "./theme.ts";

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
