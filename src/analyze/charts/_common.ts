/**
 * Pieces the chart builders share: the spec head (schema, title, theme), test order, the
 * groups a chart draws apart (the keys `compare` groups by besides `test`), how many runs a
 * mark summarises, and value labels.
 *
 * @module
 */

import { THEME, VEGA_LITE_SCHEMA, type VegaLiteSpec } from "./theme.ts";
import { textWidth } from "../_text_width.ts";

export type Rec = Record<string, unknown>;

/** The head of a spec: schema, title (with a subtitle) and theme. */
export function base(title: string | undefined, subtitle?: string | string[]): VegaLiteSpec {
  return {
    $schema: VEGA_LITE_SCHEMA,
    ...(title ? { title: subtitle ? { text: title, subtitle } : title } : {}),
    config: THEME,
  };
}

/** Tests in order of first appearance (as the tool printed them). */
export function testOrder(records: Rec[]): string[] {
  return [...new Set(records.map((r) => String(r.test)))];
}

/** The field that names a mark's group (its keys besides `test` and the arm), e.g. `clients 50`. */
export const GROUP = "group";

/**
 * A group's name from its keys besides `test`: `clients 50`, `clients 50 · pipeline 16`,
 * `keyspace none` for a parameter the run did not set; "" without such keys.
 */
export function groupName(r: Rec, extra: readonly string[]): string {
  return extra.map((k) => `${k.replace(/_/g, " ")} ${r[k] ?? "none"}`).join(" · ");
}

/** Compares key values: numbers as numbers, anything else as text. */
function compareValues(a: unknown, b: unknown): number {
  return typeof a === "number" && typeof b === "number"
    ? a - b
    : String(a ?? "").localeCompare(String(b ?? ""), undefined, { numeric: true });
}

/**
 * Adds the {@link GROUP} field to records and returns the group names in key order (numbers
 * as numbers: `clients 2` before `clients 10`).
 */
export function withGroups(
  recs: Rec[],
  extra: readonly string[],
): { values: Rec[]; groups: string[] } {
  const values: Rec[] = recs.map((r) => ({ ...r, [GROUP]: groupName(r, extra) }));
  const sorted = [...values].sort((a, b) => {
    for (const k of extra) {
      const c = compareValues(a[k], b[k]);
      if (c) return c;
    }
    return 0;
  });
  return { values, groups: [...new Set(sorted.map((r) => String(r[GROUP])))] };
}

/** The key columns of a comparison frame: the columns before `marker`, less the arm column. */
export function keysBefore(columns: readonly string[], marker: string, by?: string): string[] {
  const at = columns.indexOf(marker);
  const keys = (at < 0 ? ["test"] : columns.slice(0, at)).filter((c) => c !== by);
  return keys.includes("test") ? keys : ["test", ...keys];
}

/**
 * How many runs the marks summarise, as a subtitle phrase: `one run per side` or
 * `medians of 5 runs per side` (`2–5 runs` when the counts differ).
 */
export function runsPhrase(counts: readonly unknown[], side = "side"): string {
  const ns = counts.filter((n): n is number => typeof n === "number");
  if (ns.length === 0 || ns.every((n) => n <= 1)) return `one run per ${side}`;
  const lo = Math.min(...ns);
  const hi = Math.max(...ns);
  return `medians of ${lo === hi ? lo : `${lo}–${hi}`} runs per ${side}`;
}

/** A signed percentage for a value label: `+3.7 %`, `-53.0 %`. */
export function pctLabel(pct: number): string {
  return `${pct >= 0 ? "+" : "-"}${Math.abs(pct).toFixed(1)} %`;
}

/** A factor for a value label: `2.13×`. */
export function factorLabel(x: number): string {
  return `${x.toFixed(2)}×`;
}

/**
 * A ratio axis domain around 1: at least 0.9–1.1 (so +0.6 % looks small), widened to hold
 * every value, with room for the value labels, never below 0.
 */
export function ratioDomain(values: readonly unknown[]): [number, number] {
  const [lo, hi] = extent(values, 0.9, 1.1);
  const pad = (hi - lo) * 0.12;
  return [Math.max(0, Math.floor((lo - pad) * 100) / 100), Math.ceil((hi + pad) * 100) / 100];
}

/**
 * A domain for changes around 0 (in %) with room beyond the bars for upright value labels.
 */
export function changeDomain(values: readonly unknown[]): [number, number] {
  const [lo, hi] = extent(values, 0, 0);
  const pad = (hi - lo) * 0.3;
  return [lo < 0 ? lo - pad : 0, hi > 0 ? hi + pad : 0];
}

/**
 * An axis domain for bars with whiskers: `domainOf` the bars, widened to hold the whiskers' ends
 * by at most the bars' own span on each side; a whisker reaching beyond is cut at the axis
 * (see {@link clipWhiskers}), so one wide interval (a p99 ratio's 21.9×) does not flatten every
 * bar.
 *
 * @param bars The bars' values.
 * @param ends The whiskers' ends.
 * @param domainOf The axis' own domain rule (`ratioDomain`, `changeDomain`).
 * @returns The domain.
 */
export function whiskerDomain(
  bars: readonly unknown[],
  ends: readonly unknown[],
  domainOf: (values: readonly unknown[]) => [number, number],
): [number, number] {
  const [a, b] = domainOf(bars);
  const span = b - a;
  // each end within a span of the bars' domain, then the axis' own rule (its room for labels)
  const held = ends.filter((e): e is number => typeof e === "number" && Number.isFinite(e))
    .map((e) => Math.min(Math.max(e, a - span), b + span));
  return domainOf([...bars, ...held]);
}

/**
 * The whiskers as drawn on an axis of `domain`: each row gets `ci_low_drawn` and
 * `ci_high_drawn` (its ends cut at the axis) and, for an end cut, `ci_low_cut` or `ci_high_cut`
 * (the end's value as `label` writes it), which {@link whiskerCuts} marks.
 */
export function clipWhiskers(
  rows: Rec[],
  domain: readonly [number, number],
  label: (x: number) => string,
): Rec[] {
  const [lo, hi] = domain;
  return rows.map((r) => {
    const low = typeof r.ci_low === "number" ? r.ci_low : null;
    const high = typeof r.ci_high === "number" ? r.ci_high : null;
    return {
      ...r,
      ci_low_drawn: low === null ? null : Math.max(low, lo),
      ci_high_drawn: high === null ? null : Math.min(high, hi),
      ci_low_cut: low !== null && low < lo ? label(low) : null,
      ci_high_cut: high !== null && high > hi ? label(high) : null,
    };
  });
}

/** The interval of each bar as a whisker, as drawn (cut at the axis, see {@link clipWhiskers}). */
export function whiskerLayer(position: VegaLiteSpec, y: VegaLiteSpec): VegaLiteSpec {
  return {
    transform: [{ filter: "datum.ci_low != null" }],
    mark: { type: "rule", color: "#222", strokeWidth: 1.5 },
    encoding: { ...position, y: { ...y, field: "ci_low_drawn" }, y2: { field: "ci_high_drawn" } },
  };
}

/** The subtitle's line for a chart with a whisker cut at the axis ({@link whiskerCuts}). */
export const CUT_NOTE = "▲ ▼ : a whisker beyond the axis, cut there; its end written beside";

/**
 * Where a whisker is cut at the axis (rows of {@link clipWhiskers}): a triangle at the axis'
 * end pointing on, and the whisker's true end written beside it.
 *
 * @param position The whiskers' `x` (and `xOffset`) encodings.
 * @param y The y encoding of the chart's scale (its type and scale; the field is set here).
 * @returns Four layers: the marks and the values, at the top and the bottom.
 */
export function whiskerCuts(position: VegaLiteSpec, y: VegaLiteSpec): VegaLiteSpec[] {
  return (["high", "low"] as const).flatMap((end) => {
    const cut = `ci_${end}_cut`;
    const at = { ...y, field: `ci_${end}_drawn` };
    const up = end === "high";
    return [
      {
        transform: [{ filter: `datum.${cut} != null` }],
        mark: {
          type: "point",
          shape: up ? "triangle-up" : "triangle-down",
          filled: true,
          size: 60,
          color: "#222",
          // the triangle inside the plot, its tip at the axis' end
          yOffset: up ? 4 : -4,
        },
        encoding: { ...position, y: at },
      },
      {
        transform: [{ filter: `datum.${cut} != null` }],
        mark: {
          type: "text",
          fontSize: 10,
          color: "#222",
          align: "left",
          baseline: up ? "top" : "bottom",
          dx: 6,
          dy: up ? 1 : -1,
        },
        encoding: { ...position, y: at, text: { field: cut } },
      },
    ];
  });
}

/** The extent of the finite numbers among `values`, widened to hold `lo` and `hi`. */
function extent(values: readonly unknown[], lo: number, hi: number): [number, number] {
  const xs = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  return [Math.min(lo, ...xs), Math.max(hi, ...xs)];
}

/**
 * Two text layers labelling bars with the `value_label` field at `value_label_at`: beyond the bar end,
 * above for values at or above `reference`, below otherwise; turned upright (reading upwards)
 * when the bars are too narrow for the text; `beside` a whisker that crosses the bar's end.
 * `encoding` is added to the labels' encoding (their x and offsets).
 */
export function valueLabels(
  field: string,
  options: {
    reference: number;
    encoding?: VegaLiteSpec;
    fontSize?: number;
    upright?: boolean;
    beside?: boolean;
  },
): VegaLiteSpec[] {
  const { reference, encoding = {} } = options;
  // `beside`: at the bar's end, just right of its centre, where a whisker would cross the text
  const placement = (up: boolean) =>
    options.beside
      ? options.upright
        ? { angle: 270, align: up ? "left" : "right", baseline: "bottom", dy: -2 }
        : { align: "left", baseline: up ? "bottom" : "top", dx: 3, dy: up ? -1 : 1 }
      : options.upright
      ? { angle: 270, align: up ? "left" : "right", baseline: "middle", dx: up ? 3 : -3 }
      : { baseline: up ? "bottom" : "top", dy: up ? -3 : 3 };
  const side = (up: boolean): VegaLiteSpec => ({
    transform: [{ filter: `datum.${field} ${up ? ">=" : "<"} ${reference}` }],
    mark: {
      type: "text",
      fontSize: options.fontSize ?? 12,
      color: "#222",
      ...placement(up),
    },
    encoding: {
      ...encoding,
      y: { field: "value_label_at", type: "quantitative" },
      text: { field: "value_label" },
    },
  });
  return [side(true), side(false)];
}

/** A quantitative encoding of `field` on a log scale, with its title. */
export function logScale(field: string, title: string): VegaLiteSpec {
  return { field, type: "quantitative", title, scale: { type: "log" } };
}

/**
 * A solid reference line at `value` (1 for ratios, 0 for changes), drawn once per panel (one
 * aggregated row, not one line per data row stacked on each other).
 */
export function referenceRule(value: number): VegaLiteSpec {
  return {
    transform: [{ aggregate: [{ op: "count", as: "rows" }] }],
    mark: { type: "rule", color: "#000" },
    encoding: { y: { datum: value } },
  };
}

/**
 * A spec of one unit chart, faceted into a row per group when there are groups besides the
 * tests (`groups` holds more than the empty name). Each row's name stands above it, level
 * (a name turned beside the row ran over the y axis' title); `independentY` gives each row its
 * own y scale (throughput at pipeline 1 beside pipeline 16), else the rows share one (ratios).
 */
export function rowsPerGroup(
  head: VegaLiteSpec,
  { values, unit, groups, independentY = false }: {
    values: Rec[];
    unit: VegaLiteSpec;
    groups: readonly string[];
    independentY?: boolean;
  },
): VegaLiteSpec {
  if (groups.length <= 1 && !groups[0]) return { ...head, data: { values }, ...unit };
  return {
    ...head,
    data: { values },
    facet: {
      row: {
        field: GROUP,
        type: "nominal",
        sort: groups,
        title: null,
        header: ROW_HEADER,
      },
    },
    spec: unit,
    ...(independentY ? { resolve: { scale: { y: "independent" } } } : {}),
  };
}

/** A facet row's name: above its panel, level, from the panel's left edge. */
export const ROW_HEADER: VegaLiteSpec = {
  labelAngle: 0,
  labelOrient: "top",
  labelAnchor: "start",
  labelAlign: "left",
  labelFontWeight: "bold",
};

/**
 * The x axis of test names under bands `width` px wide in all: level when the longest name fits
 * its band, else turned 40° (21 names of seed 001 do not fit; SET, GET, INCR do).
 */
export function testAxis(tests: readonly string[], width: number): VegaLiteSpec {
  const band = width / Math.max(1, tests.length);
  const widest = Math.max(0, ...tests.map((t) => textWidth({ fontSize: LABEL_PX }, t)));
  return { labelAngle: widest + 8 <= band ? 0 : -40 };
}

/** The theme's axis label size, px. */
const LABEL_PX = (THEME.axis as { labelFontSize: number }).labelFontSize;

/** The verdicts of `compare` and `delta`, in legend order. */
export const VERDICTS = ["better", "worse", "no difference", "inconclusive"] as const;

/** How much of a bar is filled, by verdict: solid, faint, hollow. */
const VERDICT_FILL: Readonly<Record<(typeof VERDICTS)[number], number>> = {
  better: 1,
  worse: 1,
  "no difference": 0.35,
  inconclusive: 0,
};

/** The legend's symbol of each verdict: as its bars are filled, in grey. */
const VERDICT_SYMBOL: Readonly<Record<(typeof VERDICTS)[number], string>> = {
  better: "#666",
  worse: "#666",
  "no difference": "#d1d1d1", // #666 at 0.35 on white
  inconclusive: "#fff",
};

/**
 * The verdict of each bar as drawn (its `verdict` field, as `compare` or `delta` gave it): solid
 * when better or worse, faint when no different, hollow with a dashed outline when
 * inconclusive. Spread the result into the bar's encoding (the bar's mark needs a
 * `strokeWidth`); {@link verdictLegend} adds the legend that says so.
 *
 * @param color The bar's colour encoding (a field, or a `value`): its fill and its outline.
 * @returns The `color`, `stroke`, `fillOpacity` and `strokeDash` encodings.
 */
export function verdictEncoding(color: VegaLiteSpec): VegaLiteSpec {
  const when = (v: string) => `datum.verdict == '${v}'`;
  return {
    color,
    // the same scale as the fill: one legend for both (`legend: null` here dropped both)
    stroke: color,
    fillOpacity: {
      condition: (["inconclusive", "no difference"] as const).map((v) => ({
        test: when(v),
        value: VERDICT_FILL[v],
      })),
      value: 1,
    },
    strokeDash: { condition: { test: when("inconclusive"), value: [4, 3] }, value: [1, 0] },
  };
}

/**
 * The legend of {@link verdictEncoding}: a layer of invisible points at the bars whose fill
 * legend shows each verdict's symbol (solid, faint, hollow). Vega-Lite draws no legend for
 * `fillOpacity`, and bars' legend symbols ignore the outline.
 *
 * @param position The bars' `x` (and `xOffset`) and `y` encodings.
 * @param verdicts The verdicts the chart holds (listed in {@link VERDICTS}' order).
 * @returns A layer.
 */
export function verdictLegend(position: VegaLiteSpec, verdicts: readonly unknown[]): VegaLiteSpec {
  const domain = VERDICTS.filter((v) => verdicts.includes(v));
  return {
    mark: { type: "point", filled: true, opacity: 0 },
    encoding: {
      ...position,
      fill: {
        field: "verdict",
        type: "nominal",
        title: "verdict",
        scale: { domain, range: domain.map((v) => VERDICT_SYMBOL[v]) },
        legend: {
          symbolType: "square",
          symbolOpacity: 1,
          symbolStrokeColor: "#666",
          symbolStrokeWidth: 1.5,
          labelExpr: "datum.label == 'inconclusive' ? 'inconclusive (hollow)' : datum.label",
        },
      },
    },
  };
}
