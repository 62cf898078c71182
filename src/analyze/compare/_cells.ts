/**
 * What `compare` and `delta` share: the cells of a table (groups of summary rows per arm), the
 * run parameters that differ between arms, one metric's verdict between two arms (with the
 * tools' latency resolution), and the order of the rows. Private to `compare/`.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { cellVerdict, latencyResolutionMs, VERDICT_DEFAULTS } from "./verdict.ts";
import type { Direction } from "../units.ts";
import { summarize } from "../summary.ts";
import { comparisonKeys } from "../grouping.ts";

/** A plain record (a row). */
export type Rec = Record<string, unknown>;

export function groupKeys(
  df: pl.DataFrame,
  by: string,
  keys: string[] | undefined,
): { keys: string[]; confounded: string[] } {
  return keys ? { keys, confounded: [] } : comparisonKeys(df, by);
}

export function need(df: pl.DataFrame, cols: string[]): void {
  for (const c of cols) {
    if (!df.columns.includes(c)) throw new TypeError(`invalid column: ${c} (not in the frame)`);
  }
}

/** The values of a column as strings, each once, in order of first appearance. */
export function distinctStrings(df: pl.DataFrame, column: string): string[] {
  return [...new Set((df.getColumn(column).toArray() as unknown[]).map(String))];
}

/** A group of summary rows with the same keys: the keys, and each arm's summary row. */
export interface ArmGroup {
  keys: Rec;
  arms: Map<string, Rec>;
}

/**
 * Summarises each arm of `by` per group of `keys` (see {@link summarize}) and collects the arms
 * of each group, groups in order of first appearance.
 */
export function armGroups(
  df: pl.DataFrame,
  options: { keys: string[]; by: string; metrics: string[]; values?: boolean; distinct: string[] },
): ArmGroup[] {
  const { keys, by, ...summary } = options;
  const stats = summarize(df, { keys: [...keys, by], ...summary }).toRecords() as Rec[];
  const groups = new Map<string, ArmGroup>();
  for (const r of stats) {
    const k = JSON.stringify(keys.map((c) => r[c] ?? null));
    let g = groups.get(k);
    if (!g) {
      g = { keys: Object.fromEntries(keys.map((c) => [c, r[c]])), arms: new Map() };
      groups.set(k, g);
    }
    g.arms.set(String(r[by]), r);
  }
  return [...groups.values()];
}

/** The cells of a comparison along one column (see {@link comparisonCells}). */
export interface ComparisonCells {
  /** The grouping columns. */
  keys: string[];
  /** Run parameters that vary with the compared column (reported in `also_differs`). */
  confounded: string[];
  /** Per group, each arm's summary row (with the runs' values). */
  groups: ArmGroup[];
}

/**
 * The cells of a comparison along `by` (compare's arms, delta's dimension): checks the columns,
 * groups by `keys` (by default `test` plus the parameters that vary), keeps `by`, the metrics
 * and the `extra` columns summarised as lists (`tool` for its latency resolution), lets `check`
 * refuse the values of `by` before anything is summarised, and summarises each arm per group.
 *
 * @param df The results frame.
 * @param o The column compared, the keys, the metric that must be there, the metrics, the extra
 * columns, a row filter (`rows`), and the check of the compared values.
 * @returns The keys, the confounded parameters, and each group's arms.
 */
export function comparisonCells(
  df: pl.DataFrame,
  o: {
    by: string;
    keys: string[] | undefined;
    /** Columns added to the keys (delta's `per`). */
    per?: string[];
    metric: string;
    metrics: string[];
    extra: string[];
    rows?: (df: pl.DataFrame) => pl.DataFrame;
    check: (values: string[]) => void;
  },
): ComparisonCells {
  need(df, [o.by, o.metric, "test"]);
  const grouped = groupKeys(df, o.by, o.keys);
  const per = perColumns(df, o.by, o.per ?? []);
  const keys = [...grouped.keys, ...per.filter((c) => !grouped.keys.includes(c))];
  const confounded = grouped.confounded.filter((c) => !per.includes(c));
  need(df, keys);
  const selected = df.select(...new Set([...keys, ...confounded, ...o.extra, o.by, ...o.metrics]));
  const rows = o.rows ? o.rows(selected) : selected;
  o.check(distinctStrings(rows, o.by));
  const groups = armGroups(rows, {
    keys,
    by: o.by,
    metrics: o.metrics,
    values: true,
    distinct: [...confounded, ...o.extra],
  });
  return { keys, confounded, groups };
}

/** The columns of `per`, checked: each in the frame and none the compared column itself. */
function perColumns(df: pl.DataFrame, by: string, per: string[]): string[] {
  for (const c of per) {
    if (!df.columns.includes(c)) {
      throw new TypeError(`invalid column: ${c} (--per: not in the data)`);
    }
    if (c === by) throw new TypeError(`invalid column: ${c} (--per: it is the dimension itself)`);
  }
  return [...new Set(per)];
}

/** Run parameters that differ between two arms' summary rows (`distinct_<c>` lists), or null. */

export function differs(a: Rec, b: Rec, cols: string[]): string | null {
  const out: string[] = [];
  for (const c of cols) {
    const va = [...new Set((a[`distinct_${c}`] as unknown[]).map(String))];
    const vb = [...new Set((b[`distinct_${c}`] as unknown[]).map(String))];
    if (va.join() !== vb.join()) out.push(`${c} ${va.join("/")} vs ${vb.join("/")}`);
  }
  return out.length ? out.join("; ") : null;
}

/** The latency resolution of the tools of two arms' summary rows (the coarser), or none. */
export function resolutionOf(metric: string, a: Rec, b: Rec): ((v: number) => number) | undefined {
  if (!metric.endsWith("_latency_ms")) return undefined;
  const tools = [a, b].flatMap((r) => (r.distinct_tool as unknown[] | undefined) ?? [])
    .map(String);
  if (tools.length === 0) return undefined;
  return (v) => Math.max(...tools.map((t) => latencyResolutionMs(t, v)));
}

/** The verdict of one metric between two arms' summary rows, with the compare options. */
export function verdictOf(
  base: Rec,
  cand: Rec,
  o: {
    metric: string;
    direction: Direction;
    confidence?: number;
    band?: number;
    minRuns?: number;
  },
) {
  const metric = o.metric;
  return cellVerdict(
    (base[`values_${metric}`] as number[] | undefined) ?? [],
    (cand[`values_${metric}`] as number[] | undefined) ?? [],
    {
      direction: o.direction,
      alpha: 1 - (o.confidence ?? 1 - VERDICT_DEFAULTS.alpha),

      band: o.band,
      minRuns: o.minRuns,
      resolution: resolutionOf(metric, base, cand),
    },
  );
}

/** Sorts rows by first appearance of their test, then by the other keys (numbers as numbers). */
export function sortRows(rows: Rec[], keys: string[]): Rec[] {
  const order = new Map<unknown, number>();
  for (const r of rows) if (!order.has(r.test)) order.set(r.test, order.size);
  const cmp = (a: unknown, b: unknown) =>
    typeof a === "number" && typeof b === "number"
      ? a - b
      : String(a ?? "").localeCompare(String(b ?? ""));
  return rows.map((r, i) => ({ r, i })).sort((p, q) => {
    const t = order.get(p.r.test)! - order.get(q.r.test)!;
    if (t) return t;
    for (const k of keys) {
      if (k === "test") continue;
      const c = cmp(p.r[k], q.r[k]);
      if (c) return c;
    }
    return p.i - q.i;
  }).map((x) => x.r);
}
