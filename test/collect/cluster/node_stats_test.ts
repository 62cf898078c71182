/**
 * Per-node facts (issue 33 item 4) with real redis-servers: a run against a replicated primary
 * kvlab starts (`start: { replicas: 1 }`), and one against a 3-shard cluster with a replica each
 * that someone else runs (`url:` with `cluster: true`: kvlab finds its nodes from the slot map
 * and each master's INFO replication), each get one `node_stats` row per node (role, master,
 * CPU, commands, keys) that reads back from Parquet, and `kvlab nodes` shows their balance.
 */

import assert from "node:assert/strict";
import {
  DenoProcessRunner,
  parsePlan,
  prepareTopology,
  runPlan,
  startTopology,
} from "../../../src/collect/mod.ts";
import { Dataset } from "../../../src/store/dataset.ts";
import { nodesCommand } from "../../../src/cli/nodes.ts";
import { loadCommand } from "../../../src/cli/load.ts";
import { withTempDir } from "../../_support/temp.ts";
import { hostileServer } from "../../hostile/_resp_server.ts";
import {
  nodeSnapshot,
  nodeStatsRows,
  nodeStatsWatch,
} from "../../../src/collect/cluster/node_stats.ts";
import { missingOutsideCi } from "../../_support/tools.ts";

const ignore = missingOutsideCi("redis-server", "redis-cli", "redis-benchmark");

type Rec = Record<string, unknown>;

/** The `node_stats` rows of the dataset's only run, and the run's id. */
function nodeRows(data: string): { rows: Rec[]; runId: string } {
  const ds = Dataset.of(data);
  const runId = String(ds.read("runs").getColumn("run_id").get(0));
  return { rows: ds.read("node_stats").toRecords() as Rec[], runId };
}

Deno.test({
  name: "a started primary with a replica: a node row each, roles, CPU and commands over the run",
  ignore,
  fn: () =>
    withTempDir("kvlab-nodes-", async (data) => {
      const plan = parsePlan(
        "name: rp\nkind: redis-benchmark\nservers:\n  - { name: r1, start: { engine: redis, " +
          "replicas: 1 } }\ntests: [set]\nrequests: 4000\nmatrix: { clients: [4] }\n",
        "rp.yaml",
      );
      const r = await runPlan(plan, { data });
      assert.equal(r.complete, 1);
      const { rows: read, runId } = nodeRows(data);
      // (the table's order is not the test's: master first)
      const rows = [...read].sort((a, b) => String(a.role).localeCompare(String(b.role)));
      assert.deepEqual(rows.map((x) => [x.run_id, x.role]), [
        [runId, "master"],
        [runId, "replica"],
      ]);
      const [m, rep] = rows;
      assert.equal(rep.primary, m.node);
      assert.equal(m.primary, m.node);
      // the tool's 4,000 SETs, and the few commands it sends besides (CONFIG GET)
      assert.ok(
        (m.commands as number) >= 4000 && (m.commands as number) < 4100,
        String(m.commands),
      );
      // the replica executes what the primary sends it, asynchronously: as the run ends it may
      // not have caught up, never more, but for the primary's PINGs (one each
      // repl-ping-replica-period, 10 s: a PING counts, as a benchmark's own would)
      assert.ok((rep.commands as number) <= (m.commands as number) + 2, JSON.stringify(rows));
      assert.ok((m.cpu_sys_s as number) + (m.cpu_user_s as number) > 0, JSON.stringify(m));
      for (const x of rows) {
        assert.ok((x.cpu_sys_s as number) >= 0 && (x.cpu_user_s as number) >= 0, JSON.stringify(x));
        assert.ok(typeof x.keys === "number" && (x.elapsed_s as number) > 0, JSON.stringify(x));
      }
      assert.ok((m.keys as number) >= 1, JSON.stringify(m));
      // the replica's lag is still watched beside the nodes
      assert.ok(Dataset.of(data).runManifest(runId)?.replication);
    }),
});

Deno.test({
  name:
    "a 3-shard cluster someone else runs (cluster: true): its 6 nodes found, kvlab nodes shows the balance",
  ignore,
  fn: () =>
    withTempDir("kvlab-nodes-", async (data) => {
      const runner = new DenoProcessRunner();
      const spec = { engine: "redis" as const, cluster: { shards: 3, replicas: 1 } };
      const t = await startTopology(await prepareTopology(spec, runner), { runner });
      try {
        const plan = parsePlan(
          `name: cl\nkind: redis-benchmark\nservers:\n  - { name: c, url: "${t.target.display}", ` +
            "cluster: true }\ntests: [set]\nrequests: 3000\nmatrix: { clients: [6], keyspace: " +
            "[1000] }\n",
          "cl.yaml",
        );
        const r = await runPlan(plan, { data });
        assert.equal(r.complete, 1);
        const { rows } = nodeRows(data);
        const masters = rows.filter((x) => x.role === "master");
        const replicas = rows.filter((x) => x.role === "replica");
        assert.equal(masters.length, 3, JSON.stringify(rows));
        assert.equal(replicas.length, 3, JSON.stringify(rows));
        // each master has one replica, which names it
        assert.deepEqual(
          replicas.map((x) => x.primary).sort(),
          masters.map((x) => x.node).sort(),
        );
        const started = t.nodes.map((n) => `127.0.0.1:${n.port}`).sort();
        assert.deepEqual(rows.map((x) => x.node).sort(), started);
        const sum = masters.reduce((s, x) => s + (x.commands as number), 0);
        assert.ok(sum >= 3000 && sum < 3200, String(sum));
        // every master got a share of the random keys
        assert.ok(masters.every((x) => (x.keys as number) > 0), JSON.stringify(masters));
        const printed: string[] = [];
        const chart = `${data}/balance.vl.json`;
        await nodesCommand({ data: Dataset.of(data), runs: [], format: "csv", output: chart }, {
          print: (s) => printed.push(s),
          printErr: (s) => printed.push(s),
        });
        const lines = printed.join("").trim().split("\n");
        assert.equal(lines.pop(), `wrote ${chart}`);
        assert.equal(lines.length, 7, printed.join(""));
        assert.match(lines[0], /^run_id,label,node,role,.*commands_max_over_mean/);
        assert.ok(lines.slice(1).every((l) => l.includes(",c,")), lines.join("\n"));
        // the chart: a bar per master and measure
        const spec = JSON.parse(Deno.readTextFileSync(chart));
        assert.equal(spec.data.values.length, 9);
        // kvlab load --cluster: its step's nodes too
        const load = `${data}/load`;
        await loadCommand({
          data: Dataset.of(load),
          call: {
            target: { ...t.target, cluster: true },
            requestedOpsPerSec: 300,
            connections: 2,
            durationS: 1,
            ratio: "1:0",
            keys: 1000,
            engine: "deno",
          },
        }, { print: () => {}, printErr: () => {} });
        const step = nodeRows(load).rows;
        assert.deepEqual(step.map((x) => x.role).sort(), [
          "master",
          "master",
          "master",
          "replica",
          "replica",
          "replica",
        ]);
        // the watch's window holds the generator's own per-node count's (cluster_nodes)
        const sets = step.filter((x) => x.role === "master")
          .reduce((s, x) => s + (x.commands as number), 0);
        const runId = String(Dataset.of(load).read("runs").getColumn("run_id").get(0));
        const own = Dataset.of(load).runManifest(runId)?.cluster_nodes as { sum: number };
        assert.ok(own.sum > 0 && sets >= own.sum, `${sets} vs ${own.sum}`);
      } finally {
        await t.stop();
      }
    }),
});

/** A listener on `hostname` that records every byte it receives (and answers each read with an error). */
function recorder(hostname: string): { port: number; seen: () => string; close(): void } {
  const listener = Deno.listen({ hostname, port: 0 });
  const conns = new Set<Deno.Conn>();
  let seen = "";
  (async () => {
    try {
      for await (const conn of listener) {
        conns.add(conn);
        (async () => {
          const buf = new Uint8Array(4096);
          try {
            while (true) {
              const n = await conn.read(buf);
              if (n === null) break;
              seen += new TextDecoder().decode(buf.subarray(0, n));
              await conn.write(new TextEncoder().encode("-ERR recorder\r\n"));
            }
          } catch { /* closed */ }
          conns.delete(conn);
        })();
      }
    } catch { /* closed */ }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    seen: () => seen,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
    },
  };
}

Deno.test("a hostile primary's replica lines: no credentials reach an address it names, bad ones are skipped, warnings name them", async () => {
  // the crafted replica listens on 127.0.0.2: loopback, but not the target's host
  const trap = recorder("127.0.0.2");
  const info = "# Replication\r\nrole:master\r\nconnected_slaves:4\r\n" +
    `slave0:ip=127.0.0.2,port=${trap.port},state=online,offset=1,lag=0\r\n` +
    "slave1:ip=127.0.0.1,port=notaport,state=online,offset=1,lag=0\r\n" +
    "slave2:ip=127.0.0.1,port=70000,state=online,offset=1,lag=0\r\n" +
    "slave3:ip=evil.example,port=6379,state=online,offset=1,lag=0\r\n" +
    "# CPU\r\nused_cpu_sys:1\r\nused_cpu_user:1\r\n";
  const server = hostileServer({ info });
  try {
    const target = {
      host: "127.0.0.1",
      port: server.port,
      display: `redis://127.0.0.1:${server.port}`,
      tls: false,
      db: 0,
      password: "s3cret-pw",
    };
    const w = await (await nodeStatsWatch({ target }).start()).stop("r1", false);
    assert.doesNotMatch(trap.seen(), /auth|s3cret-pw/i);
    const rows = (w.tables.node_stats ?? []) as Rec[];
    assert.deepEqual(rows.map((r) => r.node), [`127.0.0.1:${server.port}`]);
    const warning = w.warning ?? "";
    assert.match(warning, new RegExp(`127\\.0\\.0\\.2:${trap.port}`));
    assert.match(warning, /127\.0\.0\.1:notaport/);
    assert.match(warning, /127\.0\.0\.1:70000/);
    assert.match(warning, /evil\.example:6379/);
  } finally {
    server.close();
    trap.close();
  }
});

Deno.test("a counter that went down over the run (CONFIG RESETSTAT, a restart): null, not a negative delta, and a warning", () => {
  const snap = (cpu: number, calls: number) =>
    nodeSnapshot(
      "h:1",
      `role:master\r\nused_cpu_sys:${cpu}\r\nused_cpu_user:${cpu}\r\n# Commandstats\r\n` +
        `cmdstat_set:calls=${calls},usec=1\r\n`,
    );
  const out = nodeStatsRows("r1", { before: [snap(5, 1000)], after: [snap(0.5, 20)], elapsedS: 2 });
  const [row] = out.rows;
  assert.deepEqual([row.cpu_sys_s, row.cpu_user_s, row.commands], [null, null, null]);
  assert.match(out.warnings.join("\n"), /h:1.*went down/);
});

Deno.test("commands leaves out what replication, cluster clients and tools send themselves; a benchmark's PING counts", () => {
  const text = "role:master\r\n# Commandstats\r\n" +
    "cmdstat_set:calls=100,usec=1\r\ncmdstat_ping:calls=7,usec=1\r\n" +
    "cmdstat_replconf:calls=60,usec=1\r\ncmdstat_psync:calls=1,usec=1\r\n" +
    "cmdstat_cluster:calls=12,usec=1\r\ncmdstat_asking:calls=5,usec=1\r\n" +
    "cmdstat_config:calls=4,usec=1\r\ncmdstat_info:calls=3,usec=1\r\n" +
    "cmdstat_select:calls=50,usec=1\r\ncmdstat_readonly:calls=2,usec=1\r\n";
  assert.equal(nodeSnapshot("h:1", text).commands, 107);
});
