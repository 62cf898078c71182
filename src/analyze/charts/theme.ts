/**
 * The blog theme of every chart: readable at 800 px wide, a font stack with a CJK fallback,
 * and the options all chart builders share.
 *
 * @module
 */

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
  // at most 4 entries a row: a legend of many arms wraps instead of widening the canvas; two
  // legends (arms, verdicts) one above the other, not side by side past the plot's width
  legend: {
    labelFontSize: 13,
    titleFontSize: 13,
    titleFontWeight: "normal",
    orient: "bottom",
    columns: 4,
    layout: { bottom: { anchor: "start", direction: "vertical", margin: 8 } },
  },
  header: { labelFontSize: 14, titleFontSize: 14 },
  view: { stroke: null },
  bar: { cornerRadiusEnd: 1 },
};

/** Plot width that, with axes and padding, makes a figure about 800 px wide. */
export const WIDTH = 640;

/** Options shared by the chart builders. */
export interface ChartOptions {
  title?: string;
  subtitle?: string;
}
