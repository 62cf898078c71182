/**
 * The timeline of a failover run (`failover_intervals`, `failover_events`): the achieved rate
 * and the errors per 100 ms over the target, and the p99 latency from the intended send, the
 * action marked and the unavailable window of {@link failoverReport} shaded.
 *
 * @module
 */

import { THEME, VEGA_LITE_SCHEMA, type VegaLiteSpec, WIDTH } from "../charts/theme.ts";
import {
  type FailoverEvent,
  type FailoverInterval,
  failoverReport,
  type FailoverReportOptions,
} from "./report.ts";

/**
 * The timeline of a failover run: the achieved rate (requests completed per second, in each
 * 100 ms interval) over the target, the errors per second beneath it, and the p99 latency from
 * the intended send (log scale), on one time axis with the action (and its completion) marked
 * by rules and the unavailable window shaded.
 *
 * @param intervals Its `failover_intervals` rows.
 * @param events Its `failover_events` rows.
 * @param o The report's options, and a title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import { failoverChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const rows = Array.from({ length: 20 }, (_, i) => ({ interval: i, start_ms: i * 100,
 *   width_ms: 100, requested_ops_per_sec: 1000, sent: 100, completed: i === 8 ? 0 : 100,
 *   errors: i === 8 ? 100 : 0, p99_latency_ms: 0.4 }));
 * const spec = failoverChart(rows, [{ event: "action", elapsed_ms: 810, action: "kill" }]);
 * const panels = spec.vconcat as { layer: { data?: { values: unknown[] } }[] }[];
 * assert.equal(panels.length, 2);
 * assert.match(JSON.stringify(spec.title), /window 100 ms/);
 * ```
 */
// long: two panels of layers (rate, errors, target, p99, rules, the window) in one spec
export function failoverChart(
  intervals: readonly FailoverInterval[],
  events: readonly FailoverEvent[],
  o: FailoverReportOptions & { title?: string } = {},
): VegaLiteSpec {
  const r = failoverReport(intervals, events, o);
  const rows = [...intervals].sort((a, b) => a.interval - b.interval);
  const values = rows.map((x) => ({
    t_s: (x.start_ms + x.width_ms / 2) / 1000,
    achieved: (x.completed * 1000) / x.width_ms,
    errors: (x.errors * 1000) / x.width_ms,
    p99_ms: x.p99_latency_ms ?? null,
  }));
  const marks = events.filter((e) => typeof e.elapsed_ms === "number" && e.event !== "took_over")
    .map((e) => ({
      t_s: e.elapsed_ms! / 1000,
      what: e.event === "action" ? `${e.action}${e.node ? ` ${e.node}` : ""}` : `${e.action} done`,
    }));
  const x = { field: "t_s", type: "quantitative", title: "seconds since the load started" };
  const rules = {
    data: { values: marks },
    mark: { type: "rule", strokeDash: [4, 3], color: "#444" },
    encoding: { x: { field: "t_s", type: "quantitative" }, tooltip: [{ field: "what" }] },
  };
  const shade = r.windowStartMs !== null && r.windowMs !== null
    ? [{
      data: {
        values: [{ a: r.windowStartMs / 1000, b: (r.windowStartMs + r.windowMs) / 1000 }],
      },
      mark: { type: "rect", color: "#d62728", opacity: 0.12 },
      encoding: { x: { field: "a", type: "quantitative" }, x2: { field: "b" } },
    }]
    : [];
  const rate = {
    width: WIDTH,
    height: 180,
    layer: [
      ...shade,
      {
        data: { values },
        transform: [{ fold: ["achieved", "errors"], as: ["series", "per_s"] }],
        mark: { type: "line", interpolate: "step-after" },
        encoding: {
          x,
          y: { field: "per_s", type: "quantitative", title: "requests/s (per 100 ms)" },
          color: { field: "series", type: "nominal", title: null },
        },
      },
      ...(r.requestedOpsPerSec
        ? [{
          data: { values: [{ target: r.requestedOpsPerSec }] },
          mark: { type: "rule", color: "#777" },
          encoding: { y: { field: "target", type: "quantitative" } },
        }]
        : []),
      rules,
    ],
  };
  const p99 = {
    width: WIDTH,
    height: 120,
    layer: [
      ...shade,
      {
        data: { values: values.filter((v) => v.p99_ms !== null && v.p99_ms > 0) },
        mark: { type: "line", point: { size: 10 } },
        encoding: {
          x,
          y: {
            field: "p99_ms",
            type: "quantitative",
            title: "p99 from intended send (ms)",
            scale: { type: "log" },
          },
        },
      },
      rules,
    ],
  };
  const fmt = (ms: number | null) => (ms === null ? "–" : `${Math.round(ms)} ms`);
  const subtitle = r.verdict === "inconclusive"
    ? `inconclusive: ${r.reason}`
    : `${r.failedNode ?? "no action"}${r.tookOver ? ` → ${r.tookOver}` : ""}; ${
      r.withinNoise ? `no outage (a ${fmt(r.dipMs)} dip within noise)` : `window ${fmt(r.windowMs)}`
    }, back to the target rate ${fmt(r.backToTargetMs)} after the action; ${r.failed} errors`;
  return {
    $schema: VEGA_LITE_SCHEMA,
    title: { text: o.title ?? `failover: ${r.action ?? "no action"}`, subtitle },
    config: THEME,
    vconcat: [rate, p99],
    resolve: { scale: { x: "shared" } },
  };
}
