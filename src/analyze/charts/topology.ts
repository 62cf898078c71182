/**
 * Charts of topologies (issue 33): the key and load balance across a cluster's shards, and
 * throughput against shard count beside one io-threads server.
 *
 * @module
 */

import type pl from "nodejs-polars";
import { base, type Rec } from "./_common.ts";
import { scalingChart } from "./scaling.ts";
import type { ChartOptions, VegaLiteSpec } from "./theme.ts";

const SHARES = [
  ["keys_share_pct", "keys"],
  ["commands_share_pct", "commands"],
  ["cpu_share_pct", "CPU"],
] as const;

/**
 * The balance across shards (from `nodeBalance(...).nodes`): per master, its share of the
 * masters' keys, commands and CPU in %, grouped bars, with a rule at the even share (100 /
 * masters); one panel per run when there are several.
 *
 * @param nodes `nodeBalance`'s `nodes`.
 * @param options Title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { nodeBalance, nodeBalanceChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const ns = pl.DataFrame({ run_id: ["r", "r"], node: ["a:1", "b:2"], role: ["master", "master"],
 *   primary: ["a:1", "b:2"], elapsed_s: [1, 1], cpu_sys_s: [0.1, 0.1], cpu_user_s: [0.1, 0.3],
 *   commands: [10, 30], keys: [5, 5] });
 * const spec = nodeBalanceChart(nodeBalance(ns).nodes);
 * const values = (spec.data as { values: Record<string, unknown>[] }).values;
 * assert.deepEqual(values.map((v) => [v.node, v.measure, v.share_pct]), [["a:1", "keys", 50],
 *   ["a:1", "commands", 25], ["a:1", "CPU", 33.33], ["b:2", "keys", 50], ["b:2", "commands", 75],
 *   ["b:2", "CPU", 66.67]]);
 * ```
 */
export function nodeBalanceChart(nodes: pl.DataFrame, options: ChartOptions = {}): VegaLiteSpec {
  const rows = (nodes.toRecords() as Rec[]).filter((r) => r.role === "master");
  const runName = (r: Rec) => `${r.label ?? "run"} · ${String(r.run_id).slice(-8)}`;
  const masters = new Map<string, number>();
  for (const r of rows) masters.set(runName(r), (masters.get(runName(r)) ?? 0) + 1);
  const values = rows.flatMap((r) =>
    SHARES.flatMap(([col, measure]) =>
      typeof r[col] === "number"
        ? [{
          run: runName(r),
          node: r.node,
          measure,
          share_pct: Math.round((r[col] as number) * 100) / 100,
          even_pct: 100 / masters.get(runName(r))!,
        }]
        : []
    )
  );
  const runs = [...masters.keys()];
  const layer = [
    {
      mark: { type: "bar" },
      encoding: {
        x: { field: "node", type: "nominal", title: "master", sort: null },
        xOffset: { field: "measure", sort: SHARES.map((s) => s[1]) },
        y: { field: "share_pct", type: "quantitative", title: "share of the masters' total (%)" },
        color: { field: "measure", type: "nominal", sort: SHARES.map((s) => s[1]), title: null },
        tooltip: [
          { field: "node" },
          { field: "measure" },
          { field: "share_pct", title: "share %" },
        ],
      },
    },
    {
      mark: { type: "rule", strokeDash: [4, 4], color: "#555" },
      encoding: { y: { aggregate: "mean", field: "even_pct", type: "quantitative" } },
    },
  ];
  const head = base(
    options.title ?? "key and load balance across shards",
    options.subtitle ?? "each master's share of keys, commands and CPU; dashed: an even share",
  );
  if (runs.length <= 1) {
    return {
      ...head,
      width: 120 * Math.max(1, masters.get(runs[0]) ?? 1),
      height: 260,
      data: { values },
      layer,
    };
  }
  return {
    ...head,
    data: { values },
    facet: { row: { field: "run", type: "nominal", title: null, sort: runs } },
    spec: { width: 360, height: 200, layer },
    resolve: { scale: { x: "independent" } },
  };
}

/**
 * Throughput against shard count beside one io-threads server (from `shardScaling(...).curve`):
 * the scaling chart with `server_threads` on x and the layouts as arms.
 *
 * @param curve `shardScaling`'s `curve`.
 * @param options Title.
 * @returns A Vega-Lite spec.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { shardScaling, shardScalingChart } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: ["SET", "SET", "SET"], shards: [1, 3, 1],
 *   server_io_threads: [1, 1, 3], ops_per_sec: [100, 250, 150] });
 * const spec = shardScalingChart(shardScaling(df).curve);
 * assert.match(JSON.stringify(spec.title), /shards or io-threads/);
 * ```
 */
export function shardScalingChart(curve: pl.DataFrame, options: ChartOptions = {}): VegaLiteSpec {
  return scalingChart(curve, {
    x: "server_threads",
    by: "layout",
    title: options.title ?? "throughput against shards or io-threads on the same cores",
    ...(options.subtitle ? { subtitle: options.subtitle } : {}),
  });
}
