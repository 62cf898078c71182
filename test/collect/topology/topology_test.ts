/**
 * Topologies kvlab starts from installed binaries (issue 33, `start:` without a container),
 * with real redis-servers: a 3-shard cluster with a replica each, preloaded (each master its
 * keys) and under kvlab's open loop (its total equal to the primaries' commandstats), a TLS
 * primary with a replica (preloaded over TLS, the replica's lag sampled), a TLS server under
 * redis-benchmark (the temp
 * folder not in the stored command), Ctrl-C of `kvlab run` mid-plan, a server that exits at
 * start, and a stop during the cluster's creation. After each: every process kvlab started is
 * gone (by PID), its port is free, and the temp folders are gone. Every test sets TMPDIR to a
 * folder of its own, so "the folders are gone" is "that folder holds only the test's data".
 */

import assert from "node:assert/strict";
import {
  DenoProcessRunner,
  type NodeCrossCheck,
  parsePlan,
  prepareTopology,
  type ProcessRunner,
  removeLeftTopologyDirs,
  type ReplicaLag,
  type ReplicationSample,
  runPlan,
  startTopology,
} from "../../../src/collect/mod.ts";
import { Dataset } from "../../../src/store/dataset.ts";
import pl from "nodejs-polars";
import { processState } from "../../../src/system/pids.ts";
import { interruptCliAfter } from "../../_support/interrupt.ts";
import { withTempDir } from "../../_support/temp.ts";
import { missingOutsideCi } from "../../_support/tools.ts";

/** The pids and ports of the processes a plan's start lines name. */
function startedNodes(lines: string[]): { pid: number; port: number }[] {
  return lines.flatMap((l) => {
    const m = /\(\w+\) pid (\d+) on 127\.0\.0\.1:(\d+)$/.exec(l);
    return m ? [{ pid: Number(m[1]), port: Number(m[2]) }] : [];
  });
}

/** Whether nothing listens on a loopback port (kvlab's stop waited for each process). */
function portFree(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch {
    return false;
  }
}

/** Every process gone by its PID, every port free, and nothing left in the test's TMPDIR. */
function nothingLeft(nodes: { pid: number; port: number }[], tmp: string): void {
  for (const n of nodes) {
    assert.equal(processState(n.pid).state, "gone", `pid ${n.pid} still runs`);
    assert.ok(portFree(n.port), `port ${n.port} still bound`);
  }
  // (the test's own data folder is there too)
  const left = [...Deno.readDirSync(tmp)].map((e) => e.name);
  assert.deepEqual(left.filter((n) => !n.startsWith("kvlab-topology-")), []);
}

/** Runs `fn` with TMPDIR set to a fresh folder (where kvlab makes its topology folders). */
function withTmpdir<T>(fn: (tmp: string) => Promise<T>): Promise<T> {
  return withTempDir("kvlab-topology-tmp-", async (tmp) => {
    const before = Deno.env.get("TMPDIR");
    Deno.env.set("TMPDIR", tmp);
    try {
      return await fn(tmp);
    } finally {
      if (before === undefined) Deno.env.delete("TMPDIR");
      else Deno.env.set("TMPDIR", before);
    }
  });
}

const ignore = missingOutsideCi("redis-server", "redis-cli", "redis-benchmark", "openssl");

/**
 * A one-step latency sweep with kvlab's engine (2 clients, 1 s, 1,000 keys preloaded) against a
 * server the plan starts (`start`, a YAML flow mapping), run to completion.
 */
async function sweepOnStarted(
  data: string,
  o: { name: string; start: string; rate: number; ratio: string; dataSizeBytes: number },
): Promise<{ lines: string[]; ds: Dataset; runId: string }> {
  const plan = parsePlan(
    `name: ${o.name}
kind: latency-sweep
servers:
  - { name: s, start: ${o.start} }
timeout_s: 60
sweep: { engine: kvlab, threads: 1, clients: 2, rates: [${o.rate}], step_s: 1, warmup_s: 0,
  ratio: "${o.ratio}", keys: 1000, preload: true, data_size_bytes: ${o.dataSizeBytes} }
`,
    `${o.name}.yaml`,
  );
  const lines: string[] = [];
  const r = await runPlan(plan, { data, onServers: (l) => lines.push(l) });
  assert.equal(r.complete, 1, lines.join("\n"));
  const ds = Dataset.of(data);
  return { lines, ds, runId: String(ds.read("runs").getColumn("run_id").get(0)) };
}

/**
 * A test of started topologies: in its own TMPDIR (`tmp`, where kvlab makes its folders) and a
 * temp folder for the dataset (`data`); skipped (only ever outside CI) when `skip` is true.
 */
function topologyTest(
  name: string,
  fn: (tmp: string, data: string) => Promise<void>,
  skip: boolean = ignore,
): void {
  Deno.test({
    name,
    ignore: skip,
    fn: () => withTmpdir((tmp) => withTempDir("kvlab-topology-data-", (data) => fn(tmp, data))),
  });
}

topologyTest(
  "a started 3-shard cluster (1 replica each) preloaded and under kvlab's open loop, then nothing left",
  async (tmp, data) => {
    const { lines, ds, runId } = await sweepOnStarted(data, {
      name: "cl",
      start: "{ engine: redis, cluster: { shards: 3, replicas: 1 } }",
      rate: 400,
      ratio: "1:1",
      dataSizeBytes: 16,
    });
    const nodes = startedNodes(lines);
    assert.equal(nodes.length, 6, lines.join("\n"));
    assert.match(lines.join("\n"), /primary\) pid[^]*replica\) pid/);
    const n = ds.runManifest(runId)?.cluster_nodes as NodeCrossCheck;
    // the three primaries answered every request; their sum is the tool's within 1 %
    assert.equal(n.nodes.length, 3, JSON.stringify(n));
    assert.ok(n.tool > 0 && Math.abs(n.sum! - n.tool) <= 0.01 * n.tool, JSON.stringify(n));
    assert.equal(n.warning, null);
    assert.match(lines.at(-1)!, /stopped 6 processes by PID/);
    nothingLeft(nodes, tmp);
  },
);

topologyTest(
  "a started TLS server under redis-benchmark: its temp folder not in the stored command",
  async (tmp, data) => {
    const plan = parsePlan(
      "name: tl\nkind: redis-benchmark\nservers:\n  - { name: r, start: { engine: redis, " +
        "tls: true } }\ntests: [set, get]\nrequests: 2000\nmatrix: { clients: [4] }\n",
      "tl.yaml",
    );
    const lines: string[] = [];
    const r = await runPlan(plan, { data, onServers: (l) => lines.push(l) });
    assert.equal(r.complete, 1, lines.join("\n"));
    const runs = Dataset.of(data).read("runs");
    assert.equal(runs.getColumn("transport").get(0), "tls");
    assert.equal(runs.getColumn("status").get(0), "complete");
    const command = String(runs.getColumn("command").get(0));
    assert.match(
      command,
      /--cacert '<kvlab temp>\/ca\.crt' --cert '<kvlab temp>\/client\.crt'/,
    );
    assert.ok(!command.includes(tmp), command);
    nothingLeft(startedNodes(lines), tmp);
  },
);

topologyTest(
  "a started TLS primary with a replica, preloaded: the replica's offsets sampled over the run, in bytes",
  async (tmp, data) => {
    const { lines, ds, runId } = await sweepOnStarted(data, {
      name: "rp",
      start: "{ engine: redis, replicas: 1, tls: true }",
      rate: 500,
      ratio: "1:0",
      dataSizeBytes: 64,
    });
    const sets = Number(
      ds.read("results").filter(pl.col("test").eq(pl.lit("SET"))).getColumn("requests").get(0),
    );
    const rep = ds.runManifest(runId)?.replication as {
      replicas: ReplicaLag[];
      samples: ReplicationSample[];
    };
    const replica = startedNodes(lines).find((_, i) => i === 1)!;
    assert.equal(rep.replicas.length, 1);
    assert.equal(rep.replicas[0].replica, `127.0.0.1:${replica.port}`);
    // a sample as the run starts and one as it ends, at least
    assert.ok(rep.samples.length >= 2 && rep.replicas[0].samples === rep.samples.length);
    const first = rep.samples[0], last = rep.samples.at(-1)!;
    // every SET of 64-byte values goes down the replication stream: 64+ bytes each
    assert.ok(sets > 0 && last.primary_offset! - first.primary_offset! >= 64 * sets);
    // the replica followed: its offset at the end is past the primary's at the start
    assert.ok(last.replica_offsets[0]! > first.primary_offset!, JSON.stringify(rep.samples));
    const lag = rep.replicas[0];
    assert.ok(lag.max_lag_bytes! >= 0 && lag.max_lag_bytes_upper! >= lag.max_lag_bytes!);
    nothingLeft(startedNodes(lines), tmp);
  },
);

/**
 * `kvlab run` of a plan starting a primary with one replica under a 60 s step, sent `signal` once
 * the cell is under way (its command printed): what it printed and the nodes it had started.
 */
async function interruptedPrimaryPlan(data: string, signal: "SIGINT" | "SIGKILL") {
  const file = `${data}/p.yaml`;
  Deno.writeTextFileSync(
    file,
    `name: ${signal === "SIGINT" ? "ci" : "kk"}
kind: latency-sweep
servers:
  - { name: r, start: { engine: redis, replicas: 1 } }
sweep: { engine: kvlab, threads: 1, clients: 1, rates: [200], step_s: 60, warmup_s: 0,
  keys: 100, preload: false, data_size_bytes: 8 }
`,
  );
  const out = await interruptCliAfter(
    ["run", file, "--data", `${data}/d`],
    signal,
    /\$ kvlab load/,
  );
  const nodes = startedNodes(out.printed.split("\n"));
  assert.equal(nodes.length, 2, out.printed);
  return { out, nodes };
}

topologyTest(
  "Ctrl-C of kvlab run mid-plan stops a primary and its replica by PID",
  async (tmp, data) => {
    const { out, nodes } = await interruptedPrimaryPlan(data, "SIGINT");
    assert.ok(out.signalled, out.printed);
    assert.equal(out.signal, null, out.printed); // it ended itself, not killed after 120 s
    assert.match(out.printed, /stopped 2 processes by PID/);
    nothingLeft(nodes, tmp);
  },
);

topologyTest(
  "kill -9 of kvlab run: its servers die with it, and the next start removes its folder",
  async (tmp, data) => {
    const { out, nodes } = await interruptedPrimaryPlan(data, "SIGKILL");
    assert.equal(out.signal, "SIGKILL", out.printed);
    // (setpriv --pdeathsig KILL: the kernel ends them as kvlab dies)
    for (const n of nodes) {
      assert.equal(processState(n.pid).state, "gone", `pid ${n.pid} still runs`);
      assert.ok(portFree(n.port), `port ${n.port} still bound`);
    }
    const [left] = [...Deno.readDirSync(tmp)].filter((e) => e.name.startsWith("kvlab-start-"));
    assert.ok(left, "the killed kvlab's folder");
    assert.deepEqual(removeLeftTopologyDirs(), [
      `removed ${tmp}/${left.name}, left by kvlab pid ${
        /^kvlab-start-(\d+)-/.exec(left.name)![1]
      } which is gone`,
    ]);
    nothingLeft(nodes, tmp);
  },
  ignore || missingOutsideCi("setpriv"),
);

Deno.test({
  name: "a server that exits at start: the reason named, nothing left",
  ignore,
  fn: () =>
    withTmpdir(async (tmp) => {
      const plan = parsePlan(
        "name: bad\nkind: redis-benchmark\nservers:\n  - { name: r, start: { engine: redis, " +
          "cluster: { shards: 3 }, config: { maxmemory-policy: bogus } } }\ntests: [get]\n",
        "bad.yaml",
      );
      await withTempDir("kvlab-topology-data-", async (data) => {
        await assert.rejects(
          () => runPlan(plan, { data }),
          (e: Error) => {
            assert.equal(e.name, "TopologyError");
            assert.match(
              e.message,
              /^server r: a cluster of 3 shards .*node 1 \(redis-server\) exited at start \(exit code 1\): \*\*\* FATAL CONFIG FILE ERROR .*maxmemory-policy "bogus"/,
            );
            return true;
          },
        );
      });
      nothingLeft([], tmp);
    }),
});

Deno.test({
  name: "a stop while the cluster is created stops every node started by PID",
  ignore,
  fn: () =>
    withTmpdir(async (tmp) => {
      const own = new DenoProcessRunner();
      const ctrl = new AbortController();
      const servers: Promise<{ pid: number; port: number }>[] = [];
      // the stop comes as redis-cli --cluster create starts, six servers running
      const runner: ProcessRunner = {
        run: (o) => {
          if (o.argv.includes("create")) ctrl.abort();
          const ran = own.run(o);
          if (o.argv[0].endsWith("redis-server") && o.argv.includes("--port")) {
            const port = Number(o.argv[o.argv.indexOf("--port") + 1]);
            servers.push(ran.then((r) => ({ pid: r.pid, port })));
          }
          return ran;
        },
      };
      const spec = { engine: "redis" as const, cluster: { shards: 3, replicas: 1 } };
      await assert.rejects(
        async () =>
          startTopology(await prepareTopology(spec, own), { runner, signal: ctrl.signal }),
        /--cluster create failed \(interrupted\)|stopped while/,
      );
      const nodes = await Promise.all(servers);
      assert.equal(nodes.length, 6);
      nothingLeft(nodes, tmp);
    }),
});

Deno.test({
  name: "start: { engine: valkey, tls: true }: a TLS build is prepared; a build without TLS is " +
    "refused before anything starts (by ldd, or by the BUILD-INFO of a cache built without it)",
  ignore: missingOutsideCi("valkey-server", "valkey-cli", "ldd"),
  fn: () =>
    withTmpdir(async (tmp) => {
      const spec = { engine: "valkey" as const, tls: true };
      const runner = new DenoProcessRunner();
      const plain = await prepareTopology({ engine: "valkey" }, runner);
      const ldd = await new Deno.Command("ldd", { args: [plain.program], stdout: "piped" })
        .output();
      const linked = /libssl\.so/.test(new TextDecoder().decode(ldd.stdout));
      if (Deno.env.get("CI") === "true") {
        // .ci/install builds Valkey with TLS (BUILD_TLS=yes): under CI=true a build without it
        // is the install's failure, not a case to accept
        assert.ok(
          linked,
          `CI=true: ${plain.program} links no libssl (.ci/install builds it with BUILD_TLS=yes)`,
        );
      }
      if (linked) {
        // as .ci/install builds it (BUILD_TLS=yes): prepared as any other
        assert.equal((await prepareTopology(spec, runner)).spec.tls, true);
      } else {
        // a binary without TLS (a cache built before TLS was asked for, one on PATH)
        await assert.rejects(
          () => prepareTopology(spec, runner),
          /start\.tls: valkey-server [\d.]+ \(.*\) was built without TLS/,
        );
      }
      // A tools cache that .ci/install filled before it built Valkey with TLS: the same real
      // binaries, beside the BUILD-INFO it wrote then (no BUILD_TLS=yes line). kvlab refuses
      // it from that record, naming the file; with the line it is not refused by it.
      const cache = `${tmp}/kvlab-topology-tools`;
      const dir = `${cache}/valkey-${plain.version}`;
      Deno.mkdirSync(dir, { recursive: true });
      for (const bin of [plain.program, plain.cli]) {
        Deno.symlinkSync(Deno.realPathSync(bin), `${dir}/${bin.replace(/^.*\//, "")}`);
      }
      const info = (tls: boolean) =>
        Deno.writeTextFileSync(
          `${dir}/BUILD-INFO`,
          `source: valkey-${plain.version}.tar.gz sha256 0\n` +
            `Valkey server v=${plain.version} sha=00000000:1 malloc=jemalloc-5.3.0 bits=64\n` +
            (tls ? "make: BUILD_TLS=yes (OpenSSL 3.0.22)\n" : ""),
        );
      const env = { PATH: Deno.env.get("PATH"), KVLAB_TOOLS_DIR: Deno.env.get("KVLAB_TOOLS_DIR") };
      // (no valkey-server on PATH, so the cache's is the one found)
      Deno.env.set(
        "PATH",
        (env.PATH ?? "").split(":").filter((d) => !existsFile(`${d}/valkey-server`)).join(":"),
      );
      Deno.env.set("KVLAB_TOOLS_DIR", cache);
      try {
        info(false);
        await assert.rejects(
          () => prepareTopology(spec, runner),
          new RegExp(
            `start\\.tls: valkey-server [\\d.]+ \\(${dir}/valkey-server\\) was built without ` +
              `TLS \\(its ${dir}/BUILD-INFO records no BUILD_TLS=yes`,
          ),
        );
        // without TLS asked for, the same build is prepared
        assert.equal(
          (await prepareTopology({ engine: "valkey" }, runner)).program,
          `${dir}/valkey-server`,
        );
        info(true);
        const again = prepareTopology(spec, runner);
        if (linked) {
          assert.equal((await again).program, `${dir}/valkey-server`);
        } else {
          await assert.rejects(() => again, /it links no libssl/);
        }
      } finally {
        for (const [k, v] of Object.entries(env)) {
          if (v === undefined) Deno.env.delete(k);
          else Deno.env.set(k, v);
        }
        Deno.removeSync(cache, { recursive: true });
      }
      nothingLeft([], tmp);
    }),
});

/** Whether a regular file (or a link to one) is there. */
function existsFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
