/**
 * Memory studies: bytes per key as the slope of memory against key count (least squares, with
 * the intercept as the empty-server baseline), per server and per memory view; seed 002-style
 * tables (size × container / malloc / RSS per server, and the difference in %); and runs whose
 * raw output is byte for byte the same as another's under a different label.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { resultsFrame } from "./units.ts";

/** The memory views of the `memory` table. */
export const MEMORY_VIEWS = [
  "container_memory_bytes",
  "used_memory_bytes",
  "used_memory_rss_bytes",
  "process_rss_bytes",
] as const;

/** Options of {@link memoryPerKey}. */
export interface MemoryPerKeyOptions {
  /** @default {"server"} */
  by?: string;
  /** Bytes of key name per key (redis-benchmark -r keys are `key:` + 12 digits). @default {16} */
  keyBytes?: number;
}

type Rec = Record<string, unknown>;

/**
 * Fits `memory = intercept + slope × keys` per arm and view (views with at least 2 distinct key
 * counts). `slope` is the memory per key; `intercept` the memory of an empty server;
 * `overhead_bytes_per_key` is the slope less the payload (key name + value).
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { memoryPerKey } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const m = pl.DataFrame({ server: ["redis", "redis", "redis"], keys: [100000, 200000, 300000],
 *   value_size_bytes: [3, 3, 3], used_memory_bytes: [1e6 + 8.5e6, 1e6 + 17e6, 1e6 + 25.5e6] });
 * const fit = memoryPerKey(m).toRecords()[0];
 * assert.equal(fit.view, "used_memory_bytes");
 * assert.equal(Math.round(fit.bytes_per_key as number), 85);
 * assert.equal(Math.round(fit.intercept_bytes as number), 1e6);
 * assert.equal(Math.round(fit.overhead_bytes_per_key as number), 85 - 16 - 3);
 * ```
 */
export function memoryPerKey(
  memory: pl.DataFrame,
  options: MemoryPerKeyOptions = {},
): pl.DataFrame {
  const by = options.by ?? "server";
  const keyBytes = options.keyBytes ?? 16;
  const recs = memory.toRecords() as Rec[];
  const arms = [...new Set(recs.map((r) => String(r[by])))].sort();
  const rows: Rec[] = [];
  for (const arm of arms) {
    for (const view of MEMORY_VIEWS) {
      if (!memory.columns.includes(view)) continue;
      const pts = recs.filter((r) =>
        String(r[by]) === arm && typeof r.keys === "number" && typeof r[view] === "number"
      )
        .map((r) => ({
          x: r.keys as number,
          y: r[view] as number,
          v: r.value_size_bytes as number | null,
        }));
      if (new Set(pts.map((p) => p.x)).size < 2) continue;
      const n = pts.length;
      const mx = pts.reduce((a, p) => a + p.x, 0) / n;
      const my = pts.reduce((a, p) => a + p.y, 0) / n;
      const sxx = pts.reduce((a, p) => a + (p.x - mx) ** 2, 0);
      const sxy = pts.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
      const syy = pts.reduce((a, p) => a + (p.y - my) ** 2, 0);
      const slope = sxy / sxx;
      const values = pts.map((p) => p.v).filter((v): v is number => typeof v === "number");
      const valueBytes = values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
      rows.push({
        [by]: arm,
        view,
        points: n,
        min_keys: Math.min(...pts.map((p) => p.x)),
        max_keys: Math.max(...pts.map((p) => p.x)),
        bytes_per_key: slope,
        intercept_bytes: my - slope * mx,
        r_squared: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy),
        payload_bytes_per_key: valueBytes === null ? null : keyBytes + valueBytes,
        overhead_bytes_per_key: valueBytes === null ? null : slope - keyBytes - valueBytes,
      });
    }
  }
  return resultsFrame(rows);
}

/**
 * A seed 002-style table: one row per size (DBSIZE to one significant digit, as posts label
 * them: 99,939 keys → 100,000; else `target_keys`), and for each arm its key count and its
 * container, malloc (used_memory) and RSS in MiB.
 */
export function memoryTable(memory: pl.DataFrame, options: { by?: string } = {}): pl.DataFrame {
  const by = options.by ?? "server";
  const recs = memory.toRecords() as Rec[];
  // sizes as posts label them: DBSIZE to one significant digit (99939 → 100000), else the target
  const size = (r: Rec) => {
    const k = r.keys as number | null;
    if (typeof k === "number" && k > 0) {
      const p = 10 ** Math.floor(Math.log10(k));
      return Math.round(k / p) * p;
    }
    return r.target_keys as number;
  };
  const sizes = [...new Set(recs.map(size))].sort((a, b) => a - b);
  const arms = [...new Set(recs.map((r) => String(r[by])))].sort();
  const mib = (x: unknown) => (typeof x === "number" ? x / 1024 / 1024 : null);
  return resultsFrame(sizes.map((s) => {
    const row: Rec = { size: s };
    for (const arm of arms) {
      const r = recs.find((x) => size(x) === s && String(x[by]) === arm);
      row[`${arm}_keys`] = r?.keys ?? null;
      row[`${arm}_container_mib`] = mib(r?.container_memory_bytes);
      row[`${arm}_malloc_mib`] = mib(r?.used_memory_bytes);
      row[`${arm}_rss_mib`] = mib(r?.used_memory_rss_bytes);
    }
    return row;
  }));
}

/**
 * The difference of `candidate` from `baseline` in % per size and view, from
 * {@link memoryTable} (negative: the candidate uses less).
 */
export function memoryDifference(
  table: pl.DataFrame,
  baseline: string,
  candidate: string,
): pl.DataFrame {
  const recs = table.toRecords() as Rec[];
  return resultsFrame(recs.map((r) => {
    const row: Rec = { size: r.size };
    for (const v of ["container", "malloc", "rss"]) {
      const a = r[`${baseline}_${v}_mib`];
      const b = r[`${candidate}_${v}_mib`];
      row[`${v}_difference_pct`] = typeof a === "number" && typeof b === "number"
        ? ((b - a) / a) * 100
        : null;
    }
    return row;
  }));
}

/**
 * Runs whose raw output is byte for byte the same as another run's under a different label
 * (`raw_sha256` equal, `by` differs): one of them is a copy, not a second measurement.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { duplicateRuns } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const runs = pl.DataFrame({ run_id: ["a", "b", "c"], server: ["redis", "dragonfly", "redis"],
 *   raw_sha256: ["x", "x", "y"], source_path: ["1-redis.log", "2-dragonfly.log", "z"], source_line_start: [1, 1, 1] });
 * assert.deepEqual(duplicateRuns(runs).getColumn("run_ids").toArray(), ["a, b"]);
 * ```
 */
export function duplicateRuns(runs: pl.DataFrame, options: { by?: string } = {}): pl.DataFrame {
  const by = options.by ?? "server";
  const recs = (runs.toRecords() as Rec[]).filter((r) => typeof r.raw_sha256 === "string");
  const groups = new Map<string, Rec[]>();
  for (const r of recs) {
    groups.set(r.raw_sha256 as string, [...(groups.get(r.raw_sha256 as string) ?? []), r]);
  }
  const rows: Rec[] = [];
  for (const [sha, g] of groups) {
    const labels = [...new Set(g.map((r) => String(r[by])))];
    if (labels.length < 2) continue;
    const sorted = g.sort((a, b) => String(a.run_id).localeCompare(String(b.run_id)));
    rows.push({
      raw_sha256: sha.slice(0, 12),
      [by]: labels.sort().join(", "),
      run_ids: sorted.map((r) => r.run_id).join(", "),
      sources: [
        ...new Set(
          sorted.map((r) =>
            `${String(r.source_path ?? "").split("/").pop()}:${r.source_line_start ?? ""}`
          ),
        ),
      ]
        .sort().join(", "),
      first_line: Math.min(...sorted.map((r) => Number(r.source_line_start ?? 0))),
    });
  }
  return resultsFrame(
    rows.sort((a, b) =>
      (a.first_line as number) - (b.first_line as number) ||
      String(a.sources).localeCompare(String(b.sources))
    ),
  );
}
