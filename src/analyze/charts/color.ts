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
  for (const arm of [...names].sort()) {
    let c = colorFor(arm);
    if (used.has(c)) {
      c = [...PALETTE, ...Object.values(SHADES).flat()].find((p) => !used.has(p)) ?? c;
    }
    used.add(c);
    byArm.set(arm, c);
  }
  const numeric = domain.every((v) => typeof v === "number");
  return {
    field,
    type: numeric ? "ordinal" : "nominal",
    title: title ?? field.replace(/_/g, " "),
    scale: { domain, range: names.map((a) => byArm.get(a)!) },
    sort: domain,
  };
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
