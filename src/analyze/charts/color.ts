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
