import assert from "node:assert/strict";
import pl from "nodejs-polars";
import {
  DenoProcessRunner,
  dockerStats,
  DockerUnavailableError,
  parseCliLatency,
  parseDbsize,
  parseDockerStats,
  parseInfo,
  parseServerUrl,
  type ProcessRunner,
  runMemorySampler,
  runMemorySweep,
  serverIdentity,
} from "../../../src/collect/mod.ts";
import { buildStudies } from "../../../src/collect/ingest/studies.ts";
import {
  duplicateRuns,
  loadTable,
  memoryChart,
  memoryPerKey,
  memoryTable,
  toSvg,
} from "../../../src/analyze/mod.ts";
import { walk, withServers } from "../../_support/servers.ts";
import { startLocalServer } from "../../../src/collect/redis_server.ts";
import { kvlabProcess } from "../../_support/kvlab.ts";
import { ROOT, TESTDATA as DATA } from "../../_support/testdata.ts";

const SHARED = `${DATA}corpus/`;
const MiB = 1024 * 1024;

Deno.test("parseInfo() reads INFO, human sizes and Valkey's identity", () => {
  const info = parseInfo(
    Deno.readTextFileSync(`${DATA}corpus/redis-cli_7.0.15_redis-7.0.15_info-memory.txt`),
  );
  const get = (k: string) => info.find((f) => f.key === k)!;
  assert.equal(get("used_memory").valueNum, 40586592);
  assert.equal(get("used_memory").section, "Memory");
  // 38.71M is used_memory in MiB to 2 decimals: the bytes agree to the printed precision
  assert.ok(Math.abs(get("used_memory_human").valueNum! - 40586592) < 0.005 * MiB);
  assert.equal(parseInfo("maxmemory_human:0B\n")[0].valueNum, 0);
  assert.equal(parseInfo("used_memory_human:6.74MiB\n")[0].valueNum, Math.round(6.74 * MiB));
  assert.equal(parseInfo("used_memory_human:7.55G\n")[0].valueNum, Math.round(7.55 * 1024 * MiB));
  assert.deepEqual(
    serverIdentity(
      parseInfo(
        "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n",
      ),
    ),
    {
      server: "valkey",
      version: "8.0.1",
    },
  );
  assert.deepEqual(
    serverIdentity(parseInfo("dragonfly_version:df-v0.4.0\nredis_version:6.2.11\n")),
    { server: "dragonfly", version: "0.4.0" },
  );
});

Deno.test("parseDbsize(), parseCliLatency() on the corpus captures", () => {
  assert.equal(
    parseDbsize(Deno.readTextFileSync(`${SHARED}redis-cli_7.0.15_redis-7.0.15_dbsize.txt`)),
    100000,
  );
  const raw = parseCliLatency(
    Deno.readTextFileSync(`${SHARED}redis-cli_7.0.15_redis-7.0.15_latency-raw-nontty.txt`),
  );
  assert.deepEqual(raw.map((s) => [s.minMs, s.maxMs, s.avgMs, s.samples]), [[0, 3, 0.2, 97]]);
  const hist = parseCliLatency(
    Deno.readTextFileSync(
      `${SHARED}redis-cli_7.0.15_redis-7.0.15_latency-history-i1-nontty-linebuffered.txt`,
    ),
  );
  assert.equal(hist.filter((s) => s.intervalEnd).length, 2);
  assert.deepEqual(hist[9], {
    minMs: 0,
    maxMs: 1,
    avgMs: 0.1,
    samples: 10,
    interval: 0,
    intervalEnd: false,
    line: 10,
  });
  const tty = parseCliLatency(
    Deno.readTextFileSync(`${SHARED}redis-cli_7.0.15_redis-7.0.15_latency-tty-via-script.txt`),
  );
  assert.ok(tty.length > 10);
  assert.deepEqual(tty.slice(0, 1).map((s) => [s.minMs, s.maxMs, s.samples]), [[0, 0, 1]]);
  assert.deepEqual(
    parseCliLatency(
      Deno.readTextFileSync(`${SHARED}redis-cli_7.0.15_redis-7.0.15_latency-history-i1-nontty.txt`),
    ),
    [],
  );
});

Deno.test("parseDockerStats() reads seed 002's tables and JSON lines", () => {
  const aligned = parseDockerStats(
    "CONTAINER ID   NAME         CPU %     MEM USAGE / LIMIT    MEM %     NET I/O     BLOCK I/O   PIDS\n" +
      "f46762c52191   mem-dragon   6.53%     4.062MiB / 11.7GiB   0.03%     656B / 0B   0B / 0B     7\n" +
      "768780b69d7c   mem-redis    0.05%     2.379MiB / 11.7GiB   0.02%     876B / 0B   0B / 0B     5\n",
  );
  assert.deepEqual(
    aligned.map((r) => [r.name, r.cpuPercent, r.memUsageBytes, r.netInputBytes, r.pids]),
    [
      ["mem-dragon", 6.53, Math.round(4.062 * MiB), 656, 7],
      ["mem-redis", 0.05, Math.round(2.379 * MiB), 876, 5],
    ],
  );
  // spaces collapsed, as in the gist's raw logs
  const collapsed = parseDockerStats(
    "af7aeb11c1ea mem-redis 0.05% 10.59MiB / 11.7GiB 0.09% 11.6MB / 7.12MB 0B / 0B 5\n",
  );
  assert.deepEqual([collapsed[0].memUsageBytes, collapsed[0].netOutputBytes], [
    Math.round(10.59 * MiB),
    7.12e6,
  ]);
  const json = parseDockerStats(
    '{"BlockIO":"0B / 0B","CPUPerc":"0.07%","Container":"743bd9125e83","ID":"743bd9125e83","MemPerc":"65.42%","MemUsage":"7.652GiB / 11.7GiB","Name":"mem-redis","NetIO":"11.6GB / 7.1GB","PIDs":"5"}\n',
  );
  assert.deepEqual([json[0].name, json[0].memUsageBytes, json[0].netInputBytes], [
    "mem-redis",
    Math.round(7.652 * 1024 * MiB),
    11.6e9,
  ]);
});

Deno.test("seed 002 transcripts give the post's memory tables, and the copied log is flagged", async () => {
  const out = Deno.makeTempDirSync({ prefix: "kvlab-seed2-" });
  await buildStudies(`${ROOT}data/raw`, out);
  const data = `${out}/dragonfly-vs-redis-memory`;
  const runs = loadTable(data, "runs");
  const memory = loadTable(data, "memory").join(runs.select("run_id", "source_path"), {
    on: "run_id",
  });
  const from = (f: string) => memory.filter(pl.col("source_path").str.endsWith(f));
  const mib = (x: unknown) => Number(((x as number) / MiB).toFixed(2));
  // Redis, 100k–500k: Size / Container / Malloc / RSS as the post prints them
  const t = memoryTable(from("/1-redis.log")).toRecords();
  assert.deepEqual(
    t.map((
      r,
    ) => [
      r.size,
      mib(r.redis_container_mib! as number * MiB),
      mib(r.redis_malloc_mib! as number * MiB),
      mib(r.redis_rss_mib! as number * MiB),
    ]),
    [
      [100000, 10.59, 8.77, 14.72],
      [200000, 18.61, 16.62, 22.66],
      [300000, 28.64, 25.47, 31.68],
      [400000, 35.57, 32.32, 39.68],
      [500000, 41.41, 39.15, 45.55],
    ],
  );
  // 1M / 10M / 100M, Dragonfly
  const d = memoryTable(from("/large-keys-dragonfly.txt")).toRecords();
  assert.deepEqual(
    d.map((
      r,
    ) => [
      r.size,
      Number((r.dragonfly_container_mib as number).toFixed(2)),
      Number((r.dragonfly_malloc_mib as number).toFixed(2)),
    ]),
    [
      [1000000, 61.54, 57.74],
      [10000000, 798.7, 792.64],
      [100000000, 6639.62, 6615.04], // 6.484GiB and 6.46GiB
    ],
  );
  // the log's 10M Redis RSS is 828.15M (the post's 855.21 is the peak)
  const r10m =
    from("/large-keys-redis.txt").filter(pl.col("keys").eq(pl.lit(9977069))).toRecords()[0];
  assert.equal(mib(r10m.used_memory_rss_bytes), 828.15);
  assert.equal(mib(r10m.used_memory_peak_bytes), 855.21);
  // 2-dragonfly.log is the Redis log: every one of its runs is flagged
  const dups = duplicateRuns(runs);
  assert.equal(dups.height, 20);
  assert.ok(
    dups.getColumn("sources").toArray().every((s) =>
      /^1-redis\.log:\d+, 2-dragonfly\.log:\d+$/.test(s as string)
    ),
  );
  // memory per key over the 1M–100M fills
  const fit = memoryPerKey(from("/large-keys-redis.txt")).filter(
    pl.col("view").eq(pl.lit("used_memory_bytes")),
  ).toRecords()[0];
  assert.equal(Math.round(fit.bytes_per_key as number), 83);
});

Deno.test("a live key-count sweep against redis-server measures a plausible memory per key", async () => {
  await withServers([{}], async ([s]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-sweep-" });
    const r = await runMemorySweep({
      data,
      target: parseServerUrl(s.url),
      keyCounts: [20000, 40000, 80000, 160000],
      valueSizeBytes: 3,
      flush: true,
      label: "redis",
    });
    assert.deepEqual([r.status, r.steps, r.reason], ["complete", 4, null]);
    const m = loadTable(data, "memory").sort("step");
    assert.deepEqual(m.getColumn("keys").toArray(), [20000, 40000, 80000, 160000]);
    assert.ok(
      m.getColumn("process_rss_bytes").toArray().every((x) => (x as number) > 1e6),
      "process RSS read from /proc",
    );
    const fit =
      memoryPerKey(m).filter(pl.col("view").eq(pl.lit("used_memory_bytes"))).toRecords()[0];
    // Redis 7.0 with jemalloc stores each key as three 32-byte allocations (dictEntry, the
    // 16-byte key's sds, the 3-byte value as an embstr object) = 96 B, plus an 8-byte bucket
    // pointer per slot of a table sized to the next power of two (1–2 slots per key): 104–112 B.
    // The bound allows for allocator slack but would catch a unit error or a wrong key count.
    const bpk = fit.bytes_per_key as number;
    assert.ok(bpk >= 96 && bpk <= 128, `bytes per key ${bpk}`);
    assert.ok((fit.r_squared as number) > 0.99);
    // the chart of used_memory / RSS against keys renders from the live table
    const svg = await toSvg(memoryChart(m));
    assert.match(svg, /malloc \(INFO used_memory\)/);
    assert.match(svg, /RSS \(INFO used_memory_rss\)/);
    const runs = loadTable(data, "runs");
    assert.equal(
      runs.getColumn("server_version").get(0),
      serverIdentity(parseInfo(
        new TextDecoder().decode(
          (await new Deno.Command("redis-server", { args: ["--version"] }).output()).stdout,
        ).replace(/^.*v=(\S+).*$/s, "redis_version:$1"),
      )).version,
    );
  });
});

/** A fake `docker` in `<dir>/bin` whose `stats` prints one JSON line for mem-redis. */
function fakeDocker(dir: string): string {
  const json = `${dir}/stats.json`;
  Deno.writeTextFileSync(
    json,
    '{"BlockIO":"0B / 0B","CPUPerc":"0.05%","ID":"517aa55b283c","MemPerc":"0.09%","MemUsage":"10.68MiB / 11.7GiB","Name":"mem-redis","NetIO":"116MB / 71MB","PIDs":"5"}\n',
  );
  Deno.mkdirSync(`${dir}/bin`);
  Deno.writeTextFileSync(
    `${dir}/bin/docker`,
    `#!/usr/bin/env bash\n[ "$1" = stats ] || exit 2\ncat '${json}'\n`,
  );
  Deno.chmodSync(`${dir}/bin/docker`, 0o755);
  return `${dir}/bin`;
}

/** A runner that starts `docker` from `bin` (and `ps` and the rest from PATH). */
function viaPath(bin: string): ProcessRunner {
  const real = new DenoProcessRunner();
  return {
    run: (o) =>
      real.run(o.argv[0] === "docker" ? { ...o, argv: [`${bin}/docker`, ...o.argv.slice(1)] } : o),
  };
}

Deno.test("docker sampler: a fake docker on PATH, and no engine", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-docker-" });
  fakeDocker(dir);
  // the exact stderr and exit code of docker 28.2.2 with no engine (corpus)
  const stderr = `${SHARED}docker-client_28.2.2_no-engine_stats-no-stream.stderr.txt`;
  Deno.mkdirSync(`${dir}/noengine`);
  Deno.writeTextFileSync(
    `${dir}/noengine/docker`,
    `#!/usr/bin/env bash\ncat '${stderr}' >&2\nexit 1\n`,
  );
  Deno.chmodSync(`${dir}/noengine/docker`, 0o755);
  const rows = await dockerStats(viaPath(`${dir}/bin`), "mem-redis");
  assert.equal(rows[0].memUsageBytes, Math.round(10.68 * MiB));
  await assert.rejects(dockerStats(viaPath(`${dir}/noengine`)), (e: unknown) => {
    assert.ok(e instanceof DockerUnavailableError);
    assert.match(
      e.message,
      /Cannot connect to the Docker daemon at unix:\/\/\/var\/run\/docker\.sock.*no Docker engine is running here/,
    );
    return true;
  });
  await assert.rejects(dockerStats(viaPath(`${dir}/nothing`)), /docker: not found on PATH/);

  // a memory plan through the CLI, with the fake docker first on PATH: container memory recorded
  await withServers([{}], async ([s]) => {
    const plan = `${dir}/memory.yaml`;
    Deno.writeTextFileSync(
      plan,
      `name: mem\nkind: memory\nservers:\n  - { name: redis, url: "${s.url}", container: mem-redis }\nmemory:\n  key_counts: [5000, 10000]\n  flush: true\n`,
    );
    const out = await kvlabProcess(["run", plan, "--data", `${dir}/data`], {
      env: { PATH: `${dir}/bin:${Deno.env.get("PATH")}` },
    });
    const text = out.stdout;
    assert.equal(out.code, 0, out.printed);
    assert.match(text, /^ {2}fill: 10,000 \/ 10,000 keys$/m);
    assert.match(text, /→ complete: 2 steps/);
    const m = loadTable(`${dir}/data`, "memory");
    assert.deepEqual(m.getColumn("container_name").toArray(), ["mem-redis", "mem-redis"]);
    assert.ok(walk(`${dir}/data`).some((f) => f.endsWith("memory.parquet")));
  });
});

Deno.test("the sweep and the sampler record the same views through one skeleton", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-skeleton-" });
  const runner = viaPath(fakeDocker(dir));
  await withServers([{}], async ([s]) => {
    const data = `${dir}/data`;
    const common = {
      data,
      target: parseServerUrl(s.url),
      label: "redis",
      container: "mem-redis",
      runner,
      tags: { study: "skeleton" },
    };
    const sweep = await runMemorySweep({ ...common, keyCounts: [1000, 2000], flush: true });
    const sampled = await runMemorySampler({ ...common, intervalMs: 50, durationS: 0.2 });
    for (const r of [sweep, sampled]) {
      assert.deepEqual([r.status, r.reason, r.dockerError], ["complete", null, null]);
    }
    assert.equal(sweep.steps, 2);
    assert.ok(sampled.steps >= 2, `${sampled.steps} samples`);
    const runs = loadTable(data, "runs");
    const run = (id: string) => runs.filter(pl.col("run_id").eq(pl.lit(id))).toRecords()[0];
    assert.deepEqual(
      [sweep.runId, sampled.runId].map((id) => [run(id).tool, run(id).label, run(id).server]),
      [["kvlab-memory-sweep", "redis", "redis"], ["kvlab-memory-sampler", "redis", "redis"]],
    );
    assert.match(run(sampled.runId).tags as string, /"study":"skeleton"/);
    const memory = loadTable(data, "memory");
    const rows = (id: string) => memory.filter(pl.col("run_id").eq(pl.lit(id)));
    for (const id of [sweep.runId, sampled.runId]) {
      const m = rows(id);
      assert.ok(m.getColumn("container_name").toArray().every((n) => n === "mem-redis"), id);
      assert.ok(
        m.getColumn("container_memory_bytes").toArray().every((b) => b === Math.round(10.68 * MiB)),
      );
      assert.ok(m.getColumn("process_rss_bytes").toArray().every((x) => (x as number) > 1e6));
      assert.ok(m.getColumn("used_memory_bytes").toArray().every((x) => (x as number) > 1e5));
    }
    assert.deepEqual(rows(sweep.runId).getColumn("target_keys").toArray(), [1000, 2000]);
    assert.ok(rows(sampled.runId).getColumn("keys").toArray().every((k) => k === 2000));
    // INFO and CONFIG snapshots are stored for sweeps only, as before
    const info = loadTable(data, "server_info");
    assert.deepEqual(info.getColumn("run_id").unique().toArray(), [sweep.runId]);
  });
});

Deno.test("standalone INFO, DBSIZE, docker stats and latency captures ingest as snapshot runs", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-snap-" });
  const data = `${dir}/data`;
  Deno.writeTextFileSync(
    `${dir}/valkey-info.txt`,
    "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\n# Keyspace\r\ndb0:keys=10,expires=0,avg_ttl=0\r\ndb1:keys=5,expires=0,avg_ttl=0\r\n",
  );
  Deno.writeTextFileSync(
    `${dir}/docker.txt`,
    "CONTAINER ID   NAME         CPU %     MEM USAGE / LIMIT    MEM %     NET I/O     BLOCK I/O   PIDS\nf46762c52191   mem-dragon   6.53%     4.062MiB / 11.7GiB   0.03%     656B / 0B   0B / 0B     7\n",
  );
  const { ingestPaths } = await import("../../../src/collect/mod.ts");
  const out = await ingestPaths([
    `${SHARED}redis-cli_7.0.15_redis-7.0.15_info-all.txt`,
    `${SHARED}redis-cli_7.0.15_redis-7.0.15_dbsize.txt`,
    `${SHARED}redis-cli_7.0.15_redis-7.0.15_latency-raw-nontty.txt`,
    `${dir}/valkey-info.txt`,
    `${dir}/docker.txt`,
  ], { data });
  assert.deepEqual(out.map((o) => o.status), [
    "ingested",
    "ingested",
    "ingested",
    "ingested",
    "ingested",
  ]);
  const runs = loadTable(data, "runs").sort("source_path");
  const by = (f: string) => runs.filter(pl.col("source_path").str.endsWith(f)).toRecords()[0];
  assert.deepEqual([
    by("info-all.txt").tool,
    by("info-all.txt").server,
    by("info-all.txt").server_version,
    by("info-all.txt").output_format,
  ], ["redis-cli", "redis", "7.0.15", "info"]);
  assert.deepEqual([by("valkey-info.txt").server, by("valkey-info.txt").server_version], [
    "valkey",
    "8.0.1",
  ]);
  assert.equal(by("docker.txt").tool, "docker");
  assert.equal(by("latency-raw-nontty.txt").output_format, "cli-latency");
  const mem = loadTable(data, "memory").join(runs.select("run_id", "source_path"), {
    on: "run_id",
  });
  const m = (f: string) => mem.filter(pl.col("source_path").str.endsWith(f)).toRecords()[0];
  assert.equal(m("info-all.txt").keys, 100000);
  assert.ok((m("info-all.txt").used_memory_bytes as number) > 1e6);
  assert.equal(m("valkey-info.txt").keys, 15);
  assert.equal(m("dbsize.txt").keys, 100000);
  assert.deepEqual([m("docker.txt").container_name, m("docker.txt").container_memory_bytes], [
    "mem-dragon",
    Math.round(4.062 * MiB),
  ]);
  const info = loadTable(data, "server_info");
  assert.ok(info.filter(pl.col("key").eq(pl.lit("cmdstat_set.calls"))).height === 1);
});

Deno.test("kvlab sample: bounded INFO/RSS sampling of a live server", async () => {
  await withServers([{}], async ([s]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-sample-" });
    const sample = ["sample", "--url", s.url, "--data", `${dir}/data`];
    const out = await kvlabProcess([...sample, "--interval", "0.2", "--duration", "0.7"]);
    const text = out.stdout;
    assert.equal(out.code, 0, out.printed);
    // every 0.2 s within 0.7 s: at most 4 samples (at 0, 0.2, 0.4, 0.6 s); fewer when a sample
    // is slow on a loaded machine, never none
    const count = Number(/^complete: (\d+) samples?, run \S+$/m.exec(text)?.[1]);
    assert.ok(count >= 1 && count <= 4, text);
    const m = loadTable(`${dir}/data`, "memory").sort("step");
    assert.equal(m.height, count);
    const t = m.getColumn("elapsed_s").toArray() as number[];
    assert.ok(t.every((x, i) => i === 0 || x > t[i - 1]), "elapsed time increases");
    // elapsed_s is taken when a sample ends; the last sample may only start before 0.7 s, that
    // is after the one before it ended: so that one ended before 0.7 s
    assert.ok(t.length < 2 || t.at(-2)! <= 0.7, `bounded by --duration: ${t}`);
    assert.ok(m.getColumn("process_rss_bytes").toArray().every((x) => (x as number) > 1e6));
    const bad = await kvlabProcess([...sample, "--duration", "100000"]);
    assert.notEqual(bad.code, 0);
    assert.match(
      bad.stderr,
      /invalid --duration: 100000 \(expected seconds above 0 and at most 86400\)/,
    );
  });
});

Deno.test("runMemorySweep() stops at the first failed SET when its server dies mid-fill", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-sweep-killed-" });
  const server = await startLocalServer();
  let reached = 0;
  try {
    const r = await runMemorySweep({
      data: `${dir}/data`,
      target: parseServerUrl(server.url),
      keyCounts: [5_000, 2_000_000],
      flush: true,
      onProgress: (p) => {
        reached = p.keys;
        // the server goes away (as an OOM kill takes it) once the second fill is under way
        if (p.keys >= 20_000 && p.keys < 21_000) Deno.kill(server.pid, "SIGKILL");
      },
    });
    assert.equal(r.status, "incomplete");
    assert.equal(r.steps, 1);
    assert.match(r.reason ?? "", /connection|writeable|closed/i);
    // before: every remaining pipeline failed silently and the fill "reached" 2,000,000 keys
    assert.ok(reached < 100_000, `the fill went on to ${reached} keys`);
  } finally {
    await server.stop();
  }
});
