// Servers in containers against a real Docker engine (issue 34): images made from the installed
// redis-server, a memory plan with `start: { container: true }` whose container memory grows as
// used_memory does, an OOM kill that fails its run, a container someone else runs watched over a
// run, and nothing left behind (containers, build folders, the engine) after a plan or Ctrl-C.
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import {
  Dataset,
  dockerCacheDir,
  type DockerEngine,
  parsePlan,
  removeLeftContainers,
  runPlan,
  serverBinaryVersion,
  serverImage,
  startServerContainer,
} from "../../../src/collect/mod.ts";
import { loadTable, memoryPerKey } from "../../../src/analyze/mod.ts";
import { processState } from "../../../src/system/pids.ts";
import { privateEngineMissing, withDockerEngine } from "../../_support/docker.ts";
import { toolOrSkip } from "../../_support/tools.ts";
import { withTempDir } from "../../_support/temp.ts";
import { ROOT } from "../../_support/testdata.ts";

const MiB = 2 ** 20;

/** The containers this process started that the engine still has. */
async function ours(engine: DockerEngine): Promise<string[]> {
  const out = await engine.run(["ps", "-a", "--filter", `label=kvlab.pid=${Deno.pid}`, "-q"]);
  return out.split("\n").filter((x) => x.trim() !== "");
}

/** A memory plan of one server kvlab starts. */
function memoryPlan(name: string, start: string, keyCounts: number[]) {
  return parsePlan(
    `name: ${name}\nkind: memory\nservers:\n  - { name: redis, start: ${start} }\n` +
      `memory: { key_counts: [${keyCounts.join(", ")}], flush: true }\n`,
    `${name}.yaml`,
  );
}

async function sha256(path: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", await Deno.readFile(path)));
  return [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("servers in containers against a real engine", async (t) => {
  if (toolOrSkip("redis-server", "servers in containers") === null) return;
  await withDockerEngine("servers in containers", async (engine) => {
    await t.step(
      "serverImage() makes kvlab/redis from the installed redis-server, and reuses it",
      async () => {
        const image = await serverImage(engine, "redis");
        const version = new TextDecoder().decode(
          (await new Deno.Command("redis-server", { args: ["--version"] }).output()).stdout,
        );
        assert.equal(image.version, serverBinaryVersion(version));
        assert.equal(image.tag, `kvlab/redis:${image.version}`);
        const binary = Deno.realPathSync(toolOrSkip("redis-server", "image")!);
        const labels = JSON.parse(
          await engine.run(["image", "inspect", "--format", "{{json .Config.Labels}}", image.tag]),
        );
        assert.deepEqual(labels, {
          "kvlab.engine": "redis",
          "kvlab.version": image.version,
          "kvlab.sha256": await sha256(binary),
        });
        const again = await serverImage(engine, "redis");
        assert.equal(again.built, false, "an image whose labels match the binary is reused");
        // the build folder is gone
        const cache = dockerCacheDir(Deno.env.toObject());
        const left = cache
          ? [...Deno.readDirSync(cache)].filter((e) => e.name.startsWith(`build-${Deno.pid}-`))
          : [];
        assert.deepEqual(left, []);
      },
    );

    await t.step(
      "a memory plan with start: { container: true }: container memory grows with the keys",
      async () => {
        await withTempDir("kvlab-container-mem-", async (data) => {
          const plan = memoryPlan("mem", "{ engine: redis, container: true }", [
            20_000,
            50_000,
            100_000,
          ]);
          const r = await runPlan(plan, { data, docker: engine });
          assert.equal(r.complete, 1);
          assert.deepEqual(await ours(engine), [], "the container is removed after the plan");
          const runs = loadTable(data, "runs").toRecords();
          assert.equal(runs.length, 1);
          assert.match(String(runs[0].container_name), new RegExp(`^kvlab-mem-redis-${Deno.pid}$`));
          assert.match(String(runs[0].container_image), /^kvlab\/redis:/);
          assert.deepEqual(
            [runs[0].container_memory_limit_bytes, runs[0].container_oom_killed],
            [null, false],
          );
          const m = loadTable(data, "memory").sort("step");
          // the RSS of the container's process, by its pid on this host (docker inspect), is the
          // one its INFO gives (used_memory_rss, read by the server from its own /proc)
          for (const r of m.toRecords()) {
            const ratio = Number(r.process_rss_bytes) / Number(r.used_memory_rss_bytes);
            assert.ok(
              Math.abs(ratio - 1) < 0.1,
              `RSS ${r.process_rss_bytes}, INFO's ${r.used_memory_rss_bytes}`,
            );
          }
          const container = m.getColumn("container_memory_bytes").toArray() as number[];
          assert.ok(container.every((b, i) => i === 0 || b > container[i - 1]), `${container}`);
          const fit = memoryPerKey(m).toRecords();
          const perKey = (view: string) =>
            fit.find((f) => f.view === view)!.bytes_per_key as number;
          const ratio = perKey("container_memory_bytes") / perKey("used_memory_bytes");
          assert.ok(
            Math.abs(ratio - 1) <= 0.2,
            `container ${perKey("container_memory_bytes")} B/key, used_memory ${
              perKey("used_memory_bytes")
            } B/key`,
          );
          // docker stats once a second over the run, from its raw JSON lines
          const stats = loadTable(data, "container_stats").sort("sample");
          assert.ok(stats.height >= 2, `${stats.height} samples`);
          const t = stats.getColumn("elapsed_s").toArray() as number[];
          assert.ok(t.every((x, i) => i === 0 || x - t[i - 1] >= 0.7), `${t}`);
          assert.ok((stats.getColumn("memory_bytes").toArray() as number[]).every((b) => b > MiB));
          const raw = Dataset.open(data).runRaw(String(runs[0].run_id))
            .find((f) => f.name === "docker-stats.jsonl")!;
          const lines = new TextDecoder().decode(raw.bytes).trimEnd().split("\n");
          assert.equal(lines.length, stats.height);
          const last = JSON.parse(lines[stats.height - 1]);
          assert.equal(last.Name, runs[0].container_name);
        });
      },
    );

    await t.step("an OOM-killed container makes its run failed, with the reason", async () => {
      await withTempDir("kvlab-container-oom-", async (data) => {
        const plan = memoryPlan(
          "oom",
          "{ engine: redis, container: true, memory_limit: 16m }",
          [20_000, 2_000_000],
        );
        const r = await runPlan(plan, { data, docker: engine });
        assert.equal(r.failed, 1);
        assert.deepEqual(await ours(engine), []);
        const run = loadTable(data, "runs").toRecords()[0];
        assert.equal(run.status, "failed");
        assert.match(
          String(run.error),
          /^container kvlab-oom-redis-\d+ was killed for lack of memory \(OOM; memory limit 16 MiB, exit code 137\)/,
        );
        assert.deepEqual([run.container_oom_killed, run.container_memory_limit_bytes], [
          true,
          16 * MiB,
        ]);
        // the step before the kill is kept
        assert.equal(loadTable(data, "memory").height, 1);
      });
    });

    await t.step(
      "a url + container: NAME entry watches a container someone else runs",
      async () => {
        const image = await serverImage(engine, "redis");
        const name = `kvlab-test-theirs-${Deno.pid}`;
        const theirs = await startServerContainer(engine, {
          image,
          name,
          memoryLimitBytes: 256 * MiB,
          cpus: 1,
        });
        try {
          await withTempDir("kvlab-container-theirs-", async (data) => {
            const plan = parsePlan(
              `name: theirs\nservers:\n  - { name: redis, url: "${theirs.url}", container: ${name} }\n` +
                "tests: [set]\nrequests: 150000\n",
              "theirs.yaml",
            );
            const r = await runPlan(plan, { data, docker: engine });
            assert.equal(r.complete, 1);
            const run = loadTable(data, "runs").toRecords()[0];
            assert.deepEqual(
              [run.container_name, run.container_cpus, run.container_memory_limit_bytes],
              [name, 1, 256 * MiB],
            );
            const stats = loadTable(data, "container_stats");
            assert.ok(stats.height >= 1, "sampled while redis-benchmark ran");
            assert.ok(
              (stats.filter(pl.col("cpu_pct").gt(1)).height) >= 1,
              "the server worked during the run",
            );
          });
          const still = JSON.parse(await engine.run(["inspect", name]))[0].State.Running;
          assert.equal(still, true, "kvlab leaves a container it did not start running");
        } finally {
          await theirs.remove();
        }
      },
    );

    await t.step("removeLeftContainers() removes what a kvlab killed by SIGKILL left", async () => {
      const image = await serverImage(engine, "redis");
      const gone = 2 ** 22 + 1; // above Linux's pid_max: no process has it
      const name = `kvlab-test-left-${Deno.pid}`;
      await engine.run(["create", "--label", `kvlab.pid=${gone}`, "--name", name, image.tag]);
      const mine = `kvlab-test-mine-${Deno.pid}`;
      await engine.run(["create", "--label", `kvlab.pid=${Deno.pid}`, "--name", mine, image.tag]);
      try {
        assert.deepEqual(await removeLeftContainers(engine), [
          `removed container ${name}, left by kvlab pid ${gone} which is gone`,
        ]);
        assert.deepEqual(await ours(engine), [
          (await engine.run(["inspect", "--format", "{{.Id}}", mine])).trim().slice(0, 12),
        ]);
      } finally {
        await engine.run(["rm", "--force", name, mine]).catch(() => "");
      }
    });
  });
});

/**
 * Every process whose command line names `text`, from `ps` (under the suite's permissions Deno may
 * not list `/proc` itself: "Requires all access to /proc").
 */
function processesNaming(text: string): string[] {
  const out = new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" }).outputSync();
  assert.ok(out.success, "ps -eo pid=,args= failed");
  return new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim())
    .filter((l) => l.includes(text) && Number(l.split(/\s+/, 1)[0]) !== Deno.pid)
    // ps itself, started by this function, is no leftover
    .filter((l) => !/^\d+\s+ps -eo /.test(l))
    .map((l) => l.slice(0, 120));
}

/** Whether something answers on a loopback port. */
async function answers(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return true;
  } catch {
    return false;
  }
}

/** Starts `kvlab run PLAN` with its own docker folder, no engine at DOCKER_HOST. */
function kvlabRun(plan: string, data: string, dockerDir: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}src/cli.ts`, "run", plan, "--data", data],
    env: { DOCKER_HOST: `unix://${dockerDir}/none.sock`, KVLAB_DOCKER_DIR: dockerDir },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** What a kvlab run that started a private engine says it started (the server's port, if any). */
function started(text: string): { pid: number; dir: string; port: number | null } {
  const engine = /engine: a private dockerd \S+ \(pid (\d+), (\S+),/.exec(text);
  const server = /server redis: container \S+ on redis:\/\/127\.0\.0\.1:(\d+)/.exec(text);
  assert.ok(engine, text);
  return { pid: Number(engine[1]), dir: engine[2], port: server ? Number(server[1]) : null };
}

/** Nothing kvlab started is left: no engine, folder, build folder, container process or port. */
async function assertNothingLeft(dockerDir: string, text: string): Promise<void> {
  const s = started(text);
  assert.equal(processState(s.pid).state, "gone", "dockerd stopped by its pid");
  assert.deepEqual([...Deno.readDirSync(dockerDir)].map((e) => e.name), [], "no folder left");
  // the engine's own folder (under /tmp when the cache's path is too long for its socket)
  assert.throws(() => Deno.statSync(s.dir), Deno.errors.NotFound, `${s.dir} left`);
  assert.deepEqual(processesNaming(s.dir), [], "no containerd, shim or container left");
  if (s.port !== null) assert.equal(await answers(s.port), false, "the container's server is gone");
}

/** Starts `kvlab run`, sends SIGINT once its output matches `when`; its output and exit code. */
async function interruptWhen(
  child: Deno.ChildProcess,
  when: RegExp,
): Promise<{ text: string; code: number }> {
  let text = "";
  const dec = new TextDecoder();
  const reading = (async () => {
    for await (const c of child.stdout) text += dec.decode(c, { stream: true });
  })();
  const errors = new Response(child.stderr).text();
  // a bound, not a timing: the output comes within 60 s on any machine
  for (let i = 0; i < 600 && !when.test(text); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGINT");
  const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  const status = await child.status;
  clearTimeout(killer);
  await reading;
  return { text: text + await errors, code: status.code };
}

Deno.test("kvlab run leaves no container, build folder nor engine, after a plan and after Ctrl-C", async (t) => {
  if (toolOrSkip("redis-server", "kvlab's private engine") === null) return;
  const missing = privateEngineMissing();
  if (missing) {
    // deno-lint-ignore no-console -- one line saying what was skipped and why
    console.log(`skipped: kvlab's private engine: ${missing}`);
    return;
  }
  await withTempDir("kvlab-docker-left-", async (dir) => {
    const dockerDir = `${dir}/docker`;
    Deno.mkdirSync(dockerDir);
    await t.step("after a plan", async () => {
      Deno.writeTextFileSync(
        `${dir}/small.yaml`,
        "name: small\nkind: memory\nservers: [{ name: redis, start: { engine: redis, container: true } }]\n" +
          "memory: { key_counts: [1000] }\n",
      );
      const out = await kvlabRun(`${dir}/small.yaml`, `${dir}/data1`, dockerDir).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, text);
      assert.match(text, /→ complete: 1 step/);
      await assertNothingLeft(dockerDir, text);
    });
    await t.step("after Ctrl-C during a fill", async () => {
      Deno.writeTextFileSync(
        `${dir}/long.yaml`,
        "name: long\nkind: memory\nservers: [{ name: redis, start: { engine: redis, container: true } }]\n" +
          "memory: { key_counts: [5000000] }\n",
      );
      const child = kvlabRun(`${dir}/long.yaml`, `${dir}/data2`, dockerDir);
      const { text, code } = await interruptWhen(child, /fill: [\d,]+ \/ 5,000,000 keys/);
      assert.equal(code, 130, text);
      assert.match(text, /→ \w+: 0 steps, run \S+ \(interrupted/);
      await assertNothingLeft(dockerDir, text);
    });
    await t.step("after Ctrl-C while it makes the image and starts the container", async () => {
      // the engine is new (its image is made again, about a second): the signal comes during
      // the image or the container's start, before the plan's first cell
      const child = kvlabRun(`${dir}/long.yaml`, `${dir}/data3`, dockerDir);
      const { text, code } = await interruptWhen(child, /engine: a private dockerd/);
      assert.equal(code, 130, text);
      assert.match(text, /\d+ cells?: 0 complete, .*, interrupted/);
      await assertNothingLeft(dockerDir, text);
    });
  });
});
