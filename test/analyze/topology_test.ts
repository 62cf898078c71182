/**
 * The topology analyses (issue 33) keep apart what must not be pooled: Redis's and Valkey's
 * replica cost, a plan's client counts in shard scaling, a cluster whose nodes run io-threads,
 * and a run whose shape is not known (a master whose INFO failed).
 */

import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { replicaCost, shardScaling, withTopology } from "../../src/analyze/topology/topology.ts";

const rep = <T>(v: T, n: number): T[] => Array(n).fill(v);

Deno.test("replicaCost: one delta per server, Redis's and Valkey's primaries not pooled", () => {
  const df = pl.DataFrame({
    test: rep("SET", 16),
    server: [...rep("redis", 8), ...rep("valkey", 8)],
    shards: rep(1, 16),
    replicas: [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1],
    ops_per_sec: [100, 101, 99, 100, 80, 81, 79, 80, 200, 201, 199, 200, 100, 101, 99, 100],
  });
  const c = replicaCost(df);
  assert.deepEqual(c.getColumn("server").toArray(), ["redis", "valkey"]);
  assert.deepEqual(c.getColumn("throughput_factor").toArray(), [0.8, 0.5]);
});

Deno.test("shardScaling: speedup and versus per client count, not pooled across a plan's matrix", () => {
  // clients 10: cluster 3 doubles the standalone server, io-threads 3 adds half; clients 50: both flat
  const rows: Record<string, unknown>[] = [];
  for (const clients of [10, 50]) {
    const base = clients === 10 ? 100 : 400;
    const add = (shards: number, io: number, ops: number) => {
      for (const d of [-1, 0, 0, 1]) {
        rows.push({
          test: "SET",
          clients,
          shards,
          replicas: 0,
          server_io_threads: io,
          ops_per_sec: ops + d,
        });
      }
    };
    add(1, 1, base);
    add(3, 1, clients === 10 ? 2 * base : base);
    add(1, 3, clients === 10 ? 1.5 * base : base);
  }
  const { speedup, versus } = shardScaling(pl.DataFrame(rows));
  const by = (f: pl.DataFrame) =>
    (f.toRecords() as Record<string, unknown>[]).map((r) =>
      `${r.layout ?? "versus"} ${r.clients} ${(r.throughput_factor as number).toFixed(2)}`
    );
  assert.deepEqual(by(speedup), [
    "cluster 10 2.00",
    "cluster 50 1.00",
    "io-threads 10 1.50",
    "io-threads 50 1.00",
  ]);
  assert.deepEqual(by(versus), ["versus 10 1.33", "versus 50 1.00"]);
});

Deno.test("shardScaling: a cluster whose nodes run io-threads is on neither line", () => {
  const df = pl.DataFrame({
    test: rep("SET", 6),
    shards: [1, 1, 3, 3, 3, 3],
    replicas: rep(0, 6),
    server_io_threads: [1, 1, 1, 1, 4, 4],
    ops_per_sec: [100, 100, 200, 200, 900, 900],
  });
  const { curve } = shardScaling(df);
  const cluster = curve.filter(pl.col("layout").eq(pl.lit("cluster")));
  assert.deepEqual(cluster.getColumn("server_threads").toArray(), [1, 3]);
  assert.deepEqual(cluster.getColumn("median_ops_per_sec").toArray(), [100, 200]);
  assert.deepEqual(curve.getColumn("server_threads").toArray().filter((x) => x === 4), []);
});

Deno.test("withTopology: a run with a node of unknown role has no known shape (not one shard fewer)", () => {
  const results = pl.DataFrame({ run_id: ["a", "b"], ops_per_sec: [1, 2] });
  const ns = pl.DataFrame({
    run_id: ["a", "a", "a", "b", "b", "b"],
    role: ["master", "master", "master", "master", "master", "unknown"],
  });
  const t = withTopology(results, ns);
  assert.deepEqual(t.getColumn("shards").toArray(), [3, null]);
  assert.deepEqual(t.getColumn("replicas").toArray(), [0, null]);
});
