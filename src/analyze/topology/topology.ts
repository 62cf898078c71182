/**
 * Topologies measured per node (issue 33): the key and load balance across a cluster's shards
 * ({@link nodeBalance}, from the `node_stats` table), each run's shape as result columns
 * ({@link withTopology}: shards and replicas), the cost of replicas on a primary's throughput
 * ({@link replicaCost}, a `delta` with its interval) and throughput against shard count beside
 * one multi-threaded server ({@link shardScaling}). One function computes what every view (the
 * CLI's `kvlab nodes`, the charts, the notebook) shows.
 *
 * @module
 */

import pl from "nodejs-polars";
import { delta } from "../compare/delta.ts";
import { PARAMETER_COLUMNS } from "../grouping.ts";
import { scaling } from "../scaling.ts";
import { resultsFrame } from "../units.ts";

type Rec = Record<string, unknown>;

/** What {@link nodeBalance} gives. */
export interface NodeBalance {
  /**
   * One row per node and run: `run_id`, `label`, `node`, `role`, `primary`, `cpu_s`, `cpu_pct`
   * (100 = one CPU over the run), `commands`, `keys`, and a master's share of the run's masters'
   * total in % (`keys_share_pct`, `commands_share_pct`, `cpu_share_pct`; null for a replica).
   */
  nodes: pl.DataFrame;
  /**
   * One row per run: `run_id`, `label`, `masters`, `replicas`, the imbalance over the masters
   * as max / mean (`keys_max_over_mean`, `commands_max_over_mean`, `cpu_max_over_mean`: 1 is
   * even; null when a master's value is unknown or the mean is 0), and the CPU of the masters
   * and of the replicas (`master_cpu_s`, `replica_cpu_s`).
   */
  balance: pl.DataFrame;
}

/**
 * The grouping every topology delta uses: `test` plus each run parameter (clients, pipeline,
 * value size, …, and `also`) that varies in the frame, so a plan's matrix is never pooled, and
 * per server (`server`, `server_version`: Redis's and Valkey's changes apart). The run's
 * `label` is no key: in topology plans it names the arm itself (`replicas-1`, `cluster-3`).
 */
function topologyGrouping(
  df: pl.DataFrame,
  also: readonly string[] = [],
): { keys: string[]; per: string[] } {
  const varies = (c: string) => df.columns.includes(c) && df.getColumn(c).nUnique() > 1;
  return {
    keys: ["test", ...[...PARAMETER_COLUMNS, ...also].filter(varies)],
    per: ["server", "server_version"].filter((c) => df.columns.includes(c)),
  };
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** max / mean of some values, to 3 decimals (null when one is unknown, none, or the mean 0). */
function maxOverMean(values: readonly (number | null)[]): number | null {
  if (values.length === 0 || values.some((v) => v === null)) return null;
  const v = values as number[];
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  // three decimals: what every view shows (1.000 is even)
  return mean > 0 ? Math.round((1000 * Math.max(...v)) / mean) / 1000 : null;
}

/**
 * The key and load balance of each run's nodes (see {@link NodeBalance}).
 *
 * @param nodeStats The `node_stats` table (or some of its runs).
 * @param runs The `runs` table's `run_id` and `label`, to name each run (optional).
 * @returns Per node and per run.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { nodeBalance } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const ns = pl.DataFrame({ run_id: ["r", "r", "r", "r"], node: ["a:1", "b:2", "c:3", "d:4"],
 *   role: ["master", "master", "master", "replica"], primary: ["a:1", "b:2", "c:3", "a:1"],
 *   elapsed_s: [2, 2, 2, 2], cpu_sys_s: [0.2, 0.2, 0.4, 0.1], cpu_user_s: [0.2, 0.2, 0.4, 0.1],
 *   commands: [1000, 1000, 2000, 1000], keys: [300, 300, 400, 300] });
 * const { nodes, balance } = nodeBalance(ns);
 * assert.deepEqual(nodes.getColumn("commands_share_pct").toArray(), [25, 25, 50, null]);
 * assert.deepEqual(nodes.getColumn("cpu_pct").toArray(), [20, 20, 40, 10]);
 * const b = balance.toRecords()[0];
 * assert.deepEqual([b.masters, b.replicas, b.commands_max_over_mean, b.cpu_max_over_mean],
 *   [3, 1, 1.5, 1.5]);
 * assert.equal((b.keys_max_over_mean as number).toFixed(2), "1.20");
 * // no node rows (a dataset of servers kvlab did not start): empty frames with the columns
 * assert.ok(nodeBalance(ns.head(0)).balance.columns.includes("masters"));
 * ```
 */
export function nodeBalance(nodeStats: pl.DataFrame, runs?: pl.DataFrame): NodeBalance {
  const labels = new Map<string, string | null>();
  if (runs && runs.columns.includes("label")) {
    for (const r of runs.select("run_id", "label").toRecords() as Rec[]) {
      labels.set(String(r.run_id), r.label === null ? null : String(r.label));
    }
  }
  const rows = nodeStats.toRecords() as Rec[];
  const order: string[] = [];
  for (const r of rows) if (!order.includes(String(r.run_id))) order.push(String(r.run_id));
  const nodes: Rec[] = [];
  const balance: Rec[] = [];
  for (const run of order) {
    const mine = rows.filter((r) => String(r.run_id) === run);
    const cpu = (r: Rec) => {
      const s = num(r.cpu_sys_s), u = num(r.cpu_user_s);
      return s === null || u === null ? null : s + u;
    };
    const masters = mine.filter((r) => r.role === "master");
    const total = (f: (r: Rec) => number | null) => {
      const v = masters.map(f);
      return v.some((x) => x === null) ? null : (v as number[]).reduce((a, b) => a + b, 0);
    };
    const sums = {
      keys: total((r) => num(r.keys)),
      commands: total((r) => num(r.commands)),
      cpu: total(cpu),
    };
    const share = (r: Rec, v: number | null, sum: number | null) =>
      r.role !== "master" || v === null || !sum ? null : (100 * v) / sum;
    const label = labels.get(run) ?? null;
    for (const r of [...masters, ...mine.filter((r) => r.role !== "master")]) {
      const c = cpu(r);
      const elapsed = num(r.elapsed_s);
      nodes.push({
        run_id: run,
        label,
        node: r.node,
        role: r.role,
        primary: r.primary ?? null,
        cpu_s: c,
        cpu_pct: c === null || !elapsed ? null : Math.round((10000 * c) / elapsed) / 100,
        commands: num(r.commands),
        keys: num(r.keys),
        keys_share_pct: share(r, num(r.keys), sums.keys),
        commands_share_pct: share(r, num(r.commands), sums.commands),
        cpu_share_pct: share(r, c, sums.cpu),
      });
    }
    const replicas = mine.filter((r) => r.role === "replica");
    const cpuSum = (list: Rec[]) => {
      const v = list.map(cpu);
      return v.length === 0 || v.some((x) => x === null)
        ? null
        : (v as number[]).reduce((a, b) => a + b, 0);
    };
    balance.push({
      run_id: run,
      label,
      masters: masters.length,
      replicas: replicas.length,
      keys_max_over_mean: maxOverMean(masters.map((r) => num(r.keys))),
      commands_max_over_mean: maxOverMean(masters.map((r) => num(r.commands))),
      cpu_max_over_mean: maxOverMean(masters.map(cpu)),
      master_cpu_s: cpuSum(masters),
      replica_cpu_s: cpuSum(replicas),
    });
  }
  return {
    nodes: nodes.length ? resultsFrame(nodes) : emptyFrame(NODE_COLUMNS),
    balance: balance.length ? resultsFrame(balance) : emptyFrame(BALANCE_COLUMNS),
  };
}

const NODE_COLUMNS = [
  "run_id",
  "label",
  "node",
  "role",
  "primary",
  "cpu_s",
  "cpu_pct",
  "commands",
  "keys",
  "keys_share_pct",
  "commands_share_pct",
  "cpu_share_pct",
];
const BALANCE_COLUMNS = [
  "run_id",
  "label",
  "masters",
  "replicas",
  "keys_max_over_mean",
  "commands_max_over_mean",
  "cpu_max_over_mean",
  "master_cpu_s",
  "replica_cpu_s",
];
const TEXT_COLUMNS = new Set(["run_id", "label", "node", "role", "primary"]);

/** A frame of no rows with these columns (text or numbers by name). */
function emptyFrame(columns: readonly string[]): pl.DataFrame {
  return pl.DataFrame(
    columns.map((c) => pl.Series(c, [], TEXT_COLUMNS.has(c) ? pl.Utf8 : pl.Float64)),
  );
}

/**
 * Results with each run's shape from its `node_stats` rows: `shards` (its masters) and
 * `replicas` (its replicas per master); null for a run without such rows (a server kvlab did
 * not start and that is not a cluster), and null for a run with a node whose role is not known
 * (its INFO failed: a 3-shard run would otherwise count as 2 shards), so every analysis of the
 * shape leaves it out.
 *
 * @param results A results frame (results joined with runs).
 * @param nodeStats The `node_stats` table.
 * @returns The results with `shards` and `replicas`.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { withTopology } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const results = pl.DataFrame({ run_id: ["a", "b", "c"], ops_per_sec: [1, 2, 3] });
 * const ns = pl.DataFrame({ run_id: ["a", "b", "b", "c", "c"],
 *   role: ["master", "master", "replica", "master", "unknown"] });
 * const t = withTopology(results, ns);
 * assert.deepEqual(t.getColumn("shards").toArray(), [1, 1, null]);
 * assert.deepEqual(t.getColumn("replicas").toArray(), [0, 1, null]);
 * ```
 */
export function withTopology(results: pl.DataFrame, nodeStats: pl.DataFrame): pl.DataFrame {
  const shape = new Map<string, { shards: number; replicas: number }>();
  const unknown = new Set<string>();
  for (const r of nodeStats.select("run_id", "role").toRecords() as Rec[]) {
    const s = shape.get(String(r.run_id)) ?? { shards: 0, replicas: 0 };
    if (r.role === "master") s.shards++;
    else if (r.role === "replica") s.replicas++;
    else unknown.add(String(r.run_id));
    shape.set(String(r.run_id), s);
  }
  for (const id of unknown) shape.delete(id);
  const ids = results.getColumn("run_id").toArray() as unknown[];
  const of = (id: unknown) => shape.get(String(id));
  const shards = ids.map((id) => of(id)?.shards || null);
  const replicas = ids.map((id) => {
    const s = of(id);
    return s && s.shards ? s.replicas / s.shards : null;
  });
  return results.withColumns(
    pl.Series("shards", shards, pl.Int64),
    pl.Series("replicas", replicas, pl.Float64),
  );
}

/**
 * The cost of replicas on a primary's throughput: for each replica count R > 0 in the data, the
 * change from 0 replicas to R per test (`delta` along `replicas`: the throughput factor with its
 * interval and verdict, the latency changes), standalone primaries only (`shards` 1; a run of
 * unknown shape, see {@link withTopology}, is left out), per server and per run parameter that
 * varies (clients, pipeline, value size, io-threads: never pooled).
 *
 * @param results A frame from {@link withTopology}.
 * @param options `delta`'s confidence, band and fewest runs.
 * @returns `delta`'s rows, one block per R.
 * @throws {TypeError} When no run has 0 replicas or none has more.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { replicaCost } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: Array(10).fill("SET"), shards: Array(10).fill(1),
 *   replicas: [0, 0, 0, 0, 1, 1, 1, 1, 0, 0], server_io_threads: [1, 1, 1, 1, 1, 1, 1, 1, 4, 4],
 *   ops_per_sec: [100, 101, 99, 100, 80, 81, 79, 80, 500, 500] });
 * const c = replicaCost(df); // the io-threads primary is no baseline of the others
 * assert.deepEqual([c.height, c.getColumn("from_n").get(0)], [1, 4]);
 * assert.equal(c.getColumn("to").get(0), "1");
 * assert.equal(c.getColumn("throughput_factor").get(0), 0.8);
 * assert.equal(c.getColumn("throughput_verdict").get(0), "worse");
 * ```
 */
export function replicaCost(
  results: pl.DataFrame,
  options: { confidence?: number; band?: number; minRuns?: number } = {},
): pl.DataFrame {
  for (const c of ["shards", "replicas"]) {
    if (!results.columns.includes(c)) {
      throw new TypeError(`invalid frame: no ${c} column (give the results withTopology)`);
    }
  }
  const df = results.filter(pl.col("shards").eq(1).and(pl.col("replicas").isNotNull()));
  const counts = [...new Set(df.getColumn("replicas").toArray() as number[])].sort((a, b) => a - b);
  if (!counts.includes(0) || counts.length < 2) {
    throw new TypeError(
      `no replica cost to show: a standalone primary with 0 replicas and one with more are ` +
        `needed (replica counts in the data: ${counts.join(", ") || "none"})`,
    );
  }
  // (a primary with io-threads is not a standalone one's baseline)
  const { keys, per } = topologyGrouping(df, ["server_io_threads"]);
  const parts = counts.filter((r) => r > 0).map((r) =>
    delta(df, { dimension: "replicas", from: 0, to: r, keys, per, ...options })
  );
  return pl.concat(parts, { how: "diagonalRelaxed" } as never);
}

/** What {@link shardScaling} gives. */
export interface ShardScaling {
  /**
   * The curve (from `scaling`): per test, `layout` (`cluster`: one single-threaded process per
   * shard; `io-threads`: one server), `server_threads` (shards, or io-threads), n, and the
   * median, min and max ops/sec over the repetitions. One standalone server (1 shard, at most
   * 1 io-thread) is the first point of both lines.
   */
  curve: pl.DataFrame;
  /**
   * Per test and thread count both layouts ran (above 1): the cluster against the io-threads
   * server, as `delta` gives it (throughput factor with its interval and verdict).
   */
  versus: pl.DataFrame;
  /**
   * Per layout, test and thread count above 1: the change from one thread (the standalone
   * server) to that count, as `delta` gives it (`layout`, then `delta`'s columns: `from` is 1,
   * `to` the count; the throughput factor is the speedup, with its interval and verdict).
   */
  speedup: pl.DataFrame;
}

/**
 * Throughput against shard count beside one multi-threaded server (io-threads) on the same
 * cores: each run's layout from {@link withTopology}'s `shards` and the runs'
 * `server_io_threads`. Left out: runs of topologies with replicas (a primary with a replica is
 * not a standalone server's point), runs whose shard count is not known (see
 * {@link withTopology}), and clusters whose nodes run io-threads (more than 1: neither line's
 * point). The deltas are per server and per run parameter that varies (clients, pipeline,
 * value size: never pooled).
 *
 * @param results A frame from {@link withTopology}, with `server_io_threads`.
 * @param options `delta`'s confidence, band and fewest runs.
 * @returns The curve, the cluster-vs-io-threads deltas, and each layout's speedup over one
 * thread.
 *
 * @example
 * ```ts
 * import pl from "nodejs-polars";
 * import { shardScaling } from "@kvlab/kvlab/analyze";
 * import assert from "node:assert/strict";
 * const df = pl.DataFrame({ test: Array(7).fill("SET"), shards: [1, 1, 3, 3, 1, 1, 1],
 *   replicas: [0, 0, 0, 0, 0, 0, 1], server_io_threads: [1, 1, 1, 1, 3, 3, 1],
 *   ops_per_sec: [100, 110, 250, 270, 150, 160, 1] });
 * const { curve, versus } = shardScaling(df);
 * const line = (l: string) => curve.filter(pl.col("layout").eq(pl.lit(l)));
 * assert.deepEqual(line("cluster").getColumn("server_threads").toArray(), [1, 3]);
 * assert.deepEqual(line("io-threads").getColumn("median_ops_per_sec").toArray(), [105, 155]);
 * assert.equal(versus.getColumn("server_threads").get(0), 3);
 * assert.equal(versus.getColumn("throughput_factor").get(0).toFixed(2), "1.68");
 * const { speedup } = shardScaling(df);
 * assert.deepEqual(speedup.getColumn("layout").toArray(), ["cluster", "io-threads"]);
 * const factors = speedup.getColumn("throughput_factor").toArray() as number[];
 * assert.deepEqual(factors.map((f) => f.toFixed(2)),
 *   ["2.48", "1.48"]);
 * ```
 */
export function shardScaling(
  results: pl.DataFrame,
  options: { confidence?: number; band?: number; minRuns?: number } = {},
): ShardScaling {
  if (!results.columns.includes("shards")) {
    throw new TypeError("invalid frame: no shards column (give the results withTopology)");
  }
  const threads = results.columns.includes("server_io_threads")
    ? results.getColumn("server_io_threads").toArray() as (number | null)[]
    : Array(results.height).fill(null);
  const shards = results.getColumn("shards").toArray() as (number | null)[];
  const replicas = results.columns.includes("replicas")
    ? results.getColumn("replicas").toArray() as (number | null)[]
    : Array(results.height).fill(0);
  const rows = results.toRecords() as Rec[];
  const out: Rec[] = [];
  rows.forEach((r, i) => {
    const s = shards[i], t = threads[i] ?? 1;
    if (s === null || (replicas[i] ?? 0) > 0) return;
    const row = (layout: string, x: number) => ({ ...r, layout, server_threads: x });
    if (s > 1 && t > 1) return; // a cluster of io-threads nodes: on neither line
    if (s > 1) out.push(row("cluster", s));
    else if (t > 1) out.push(row("io-threads", t));
    else out.push(row("cluster", 1), row("io-threads", 1));
  });
  const df = resultsFrame(out);
  if (df.height === 0) {
    throw new TypeError("no shard scaling to show: no run has a known shard count");
  }
  const curve = scaling(df, { x: "server_threads", by: "layout" });
  const both = new Set<number>();
  const seen = (l: string) =>
    new Set(out.filter((r) => r.layout === l).map((r) => r.server_threads as number));
  const io = seen("io-threads");
  for (const x of seen("cluster")) if (x > 1 && io.has(x)) both.add(x);
  const wide = df.filter(pl.col("server_threads").isIn([...both]));
  // (not the client's threads: redis-benchmark --cluster runs one per master, so they follow the
  // layout, and as a key they would keep every cluster run from its standalone baseline)
  const all = topologyGrouping(df);
  const grouping = { ...all, keys: all.keys.filter((k) => k !== "threads") };
  const versus = both.size === 0 ? resultsFrame([]) : delta(wide, {
    dimension: "layout",
    from: "io-threads",
    to: "cluster",
    keys: [grouping.keys[0], "server_threads", ...grouping.keys.slice(1)],
    per: grouping.per,
    ...options,
  });
  const speedup = ["cluster", "io-threads"].flatMap((layout) => {
    const mine = df.filter(pl.col("layout").eq(pl.lit(layout)));
    const xs = [...seen(layout)].filter((x) => x > 1).sort((a, b) => a - b);
    if (!seen(layout).has(1)) return [];
    return xs.map((x) =>
      delta(mine.filter(pl.col("server_threads").isIn([1, x])), {
        dimension: "server_threads",
        from: 1,
        to: x,
        ...grouping,
        ...options,
      }).withColumns(pl.lit(layout).alias("layout"))
    );
  });
  return {
    curve,
    versus,
    speedup: withLayoutFirst(speedup.filter((f) => f.height > 0)),
  };
}

/** The layouts' deltas as one frame, `layout` first (a layout with no delta adds no column). */
function withLayoutFirst(frames: pl.DataFrame[]): pl.DataFrame {
  if (frames.length === 0) return resultsFrame([]);
  const all = pl.concat(frames, { how: "diagonalRelaxed" } as never);
  return all.select("layout", ...all.columns.filter((c) => c !== "layout"));
}
