/**
 * One stable colour per server (and per variant of one) across every chart.
 *
 * @module
 */

import type { VegaLiteSpec } from "./theme.ts";

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
  redis: ["#FF9896", "#67000D", "#FDAE6B"],
  valkey: ["#9ECAE1", "#08306B", "#00A3A3"],
  dragonfly: ["#C5B0D5", "#2D0060", "#E7298A"],
  keydb: ["#FDD0A2", "#7F2704", "#FFD92F"],
};

/**
 * The smallest colour difference (CIE76 ΔE in CIELAB) between two arms of one chart: below it,
 * two shades read as one (`#FF9896` and `#F4A582`, ΔE 18, were two redis variants' colours).
 */
export const MIN_DELTA_E = 25;

/** CIELAB (D65) of a `#RRGGBB` colour. */
function lab(hex: string): [number, number, number] {
  const lin = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c > 0.04045 ? ((c + 0.055) / 1.055) ** 2.4 : c / 12.92;
  };
  const [r, g, b] = [lin(1), lin(3), lin(5)];
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const x = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047);
  const y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
  const z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

/**
 * How far apart two colours look: CIE76 ΔE, the distance in CIELAB (about 2.3 is just
 * noticeable; {@link MIN_DELTA_E} is the least kept between two arms of one chart).
 *
 * @param a A `#RRGGBB` colour.
 * @param b Another.
 * @returns ΔE, 0 for equal colours.
 *
 * @example
 * ```ts
 * import { deltaE } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(deltaE("#D62728", "#D62728"), 0);
 * assert.ok(deltaE("#D62728", "#1F5FBF") > 50);
 * ```
 */
export function deltaE(a: string, b: string): number {
  const [p, q] = [lab(a), lab(b)];
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

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
 * A colour encoding whose scale maps each arm to {@link colorFor}; when an arm's colour would be
 * the same as, or hard to tell from (ΔE below {@link MIN_DELTA_E}), one already given in this
 * chart, the later arm (in sorted order) takes the first other shade of its own server, else
 * the first palette colour, that is far enough from all of them.
 * Numbers (`clients` 1, 50) stay numbers in the domain, sorted as numbers, on an ordinal scale:
 * a domain of strings would match none of them and leave the marks without a colour.
 *
 * @param field The arm column.
 * @param values The arm values as the chart's data holds them (strings or numbers).
 * @param title The legend title.
 * @returns A Vega-Lite colour encoding.
 *
 * @example
 * ```ts
 * import { colorEncoding } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const c = colorEncoding("clients", [50, 1, 50]);
 * assert.equal(c.type, "ordinal");
 * assert.deepEqual((c.scale as { domain: number[] }).domain, [1, 50]);
 * ```
 */
export function colorEncoding(
  field: string,
  values: readonly unknown[],
  title?: string,
): VegaLiteSpec {
  const domain = domainOf(values);
  const names = domain.map(String);
  const used = new Set<string>();
  const byArm = new Map<string, string>();
  const apart = (c: string) => [...used].every((u) => deltaE(u, c) >= MIN_DELTA_E);
  for (const arm of [...names].sort()) {
    let c = colorFor(arm);
    if (!apart(c)) {
      const own = Object.entries(SHADES).find(([k]) => arm.toLowerCase().startsWith(k))?.[1] ?? [];
      const candidates = [...own, ...PALETTE, ...Object.values(SHADES).flat()];
      c = candidates.find(apart) ?? candidates.find((p) => !used.has(p)) ?? c;
    }
    used.add(c);
    byArm.set(arm, c);
  }
  const numeric = domain.every((v) => typeof v === "number");
  return {
    field,
    type: numeric ? "ordinal" : "nominal",
    title: title ?? armTitle(field),
    scale: { domain, range: names.map((a) => byArm.get(a)!) },
    sort: domain,
  };
}

/**
 * The title of an arms' legend: `arm` for `label` (the runs' labels: a plan's server names, or
 * `--label`), else the column's name in words (`server version`).
 *
 * @param by The arm column.
 * @returns The legend's title.
 *
 * @example
 * ```ts
 * import { armTitle } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * assert.equal(armTitle("label"), "arm");
 * assert.equal(armTitle("server_version"), "server version");
 * ```
 */
export function armTitle(by: string): string {
  return by === "label" ? "arm" : by.replace(/_/g, " ");
}

/** Distinct values, numbers sorted as numbers, anything else as text (numerals by value). */
function domainOf(values: readonly unknown[]): (string | number)[] {
  const distinct = [...new Set(values.map((v) => (typeof v === "number" ? v : String(v))))];
  return distinct.sort((a, b) =>
    typeof a === "number" && typeof b === "number"
      ? a - b
      : String(a).localeCompare(String(b), undefined, { numeric: true })
  );
}

/** Arms in a stable order (by name, numerals by value), whatever order the runs were read in. */
export function armOrder(values: readonly unknown[]): string[] {
  return domainOf(values).map(String);
}
