import assert from "node:assert/strict";
import { findTool } from "../src/collect/tools/find.ts";
import { runReport } from "../src/report/report.ts";
import { type LocalServer, startLocalServer } from "../src/collect/redis_server.ts";
import { checkHtmlReport } from "./_support/html_report.ts";
import { executeResults, notesOf, shown, tables } from "./_support/notebooks.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/**
 * A user's own two-arm dataset, made by `kvlab run` on two local servers: redis-server and
 * valkey-server when valkey is found, else two redis-servers under two labels.
 */
async function ownDataset(dir: string): Promise<{ arms: [string, string]; valkey: boolean }> {
  const valkeyServer = findTool("valkey-server");
  if (!valkeyServer) {
    if (Deno.env.get("CI") === "true") throw new Error("valkey-server is required under CI=true");
    // deno-lint-ignore no-console -- one line saying what was skipped and why
    console.log("valkey-server not found (.ci/install test builds it): two redis-servers instead");
  }
  const arms: [string, string] = valkeyServer ? ["redis", "valkey"] : ["redis-a", "redis-b"];
  const servers: LocalServer[] = [];
  try {
    servers.push(await startLocalServer());
    servers.push(await startLocalServer(valkeyServer ? { program: valkeyServer } : {}));
    const [a, b] = servers;
    {
      const plan = `${dir}/plan.yaml`;
      Deno.writeTextFileSync(
        plan,
        `name: own
tool: redis-benchmark
servers:
  - { name: ${arms[0]}, url: "${a.url}" }
  - { name: ${arms[1]}, url: "${b.url}" }
tests: [set, get]
requests: 2000
matrix:
  clients: [1, 10]
repetitions: 2
pause_s: 0
`,
      );
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `${ROOT}src/cli.ts`, "run", plan, "--data", `${dir}/data`],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.ok(out.success, text);
      assert.match(text, /8 cells: 8 complete/);
    }
  } finally {
    for (const s of servers) await s.stop();
  }
  return { arms, valkey: valkeyServer !== null };
}

Deno.test("valkey-vs-redis and your-first-study run on a user's own dataset (KVLAB_DATA)", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-own-" });
  const { arms: [base, cand], valkey } = await ownDataset(dir);
  const env: Record<string, string> = { KVLAB_DATA: `${dir}/data` };
  // valkey and redis are the notebook's own arms; other labels are named as a user would
  if (!valkey) Object.assign(env, { KVLAB_BASELINE: base, KVLAB_CANDIDATE: cand });
  const runs = await runReport({
    out: `${dir}/out`,
    only: ["valkey-vs-redis", "your-first-study"],
    env,
  });
  assert.ok(runs.every((r) => r.errors.length === 0 && r.html !== null));
  for (const r of runs) assert.deepEqual(executeResults(r.executed), [], r.notebook);
  const nb = `${dir}/out/notebooks`;

  // the environment cell: one row per arm, with the server and its version, tool and host
  // the arms are found in the data: by server (redis, valkey), else by label
  const env1 = tables(`${nb}/valkey-vs-redis.ipynb`).get(
    `environment, by ${valkey ? "server" : "label"}`,
  )!;
  assert.deepEqual(env1[0].slice(0, 4), ["arm", "runs", "server", "tool"]);
  assert.ok(env1[0].includes("cpus") && env1[0].includes("memory"), env1[0].join());
  const byArm = new Map(env1.slice(2).map((r) => [r[0], r]));
  assert.deepEqual([...byArm.keys()].sort(), [base, cand]);
  assert.equal(byArm.get(base)![1], "4"); // 2 client counts × 2 repetitions
  assert.match(byArm.get(base)![2], /^redis \d+\.\d+\.\d+$/);
  assert.match(byArm.get(cand)![2], valkey ? /^valkey 8\.0\.1$/ : /^redis \d+\.\d+\.\d+$/);
  assert.match(byArm.get(base)![3], /^redis-benchmark \d/);

  // the published table adapts: the dataset's tests, split by client count, the arms as columns
  const title = [...tables(`${nb}/valkey-vs-redis.ipynb`).keys()].find((k) => k.includes(" / "))!;
  assert.equal(title, `${cand} / ${base}, redis-benchmark (2–2 runs per arm and cell)`);
  const t = tables(`${nb}/valkey-vs-redis.ipynb`).get(title)!;
  assert.deepEqual(t[0].slice(0, 5), [
    "test",
    "clients",
    `${cand} (ops/s)`,
    `${base} (ops/s)`,
    "throughput ratio",
  ]);
  assert.deepEqual(t.slice(2).map((r) => `${r[0]} ${r[1]}`).sort(), [
    "GET 1",
    "GET 10",
    "SET 1",
    "SET 10",
  ]);
  for (const r of t.slice(2)) {
    assert.ok(Number(r[2]) > 0 && Number(r[3]) > 0, r.join());
    assert.equal(Number(r[4]).toFixed(2), (Number(r[2]) / Number(r[3])).toFixed(2), r.join());
  }
  assert.equal(shown(`${nb}/valkey-vs-redis.ipynb`).filter((x) => x === "<chart>").length, 2);
  // n per cell, and the plain warning for 2 runs per arm
  assert.match(
    notesOf(`${nb}/valkey-vs-redis.ipynb`).join("\n"),
    /n = 2 run\(s\) per arm in each of the 4 cells[\s\S]*warning: 4 of 4 cells have fewer than 4 runs/,
  );

  // your-first-study analyzes the dataset instead of running one
  const first = `${nb}/your-first-study.ipynb`;
  assert.ok(!Deno.statSync(`${dir}/out`).isFile);
  assert.throws(() => Deno.statSync(`${dir}/out/first-study`), Deno.errors.NotFound);
  assert.deepEqual(shown(first), [
    "environment, by label",
    ...(valkey ? ["server config that differs between the arms", "<note>"] : ["<note>"]),
    "median throughput by clients",
    "<note>",
    "<note>",
    `${cand} vs ${base}`,
    "<chart>",
    "<chart>",
  ]);
  const cmp = tables(first).get(`${cand} vs ${base}`)!;
  assert.equal(cmp.length - 2, 4);
  await checkHtmlReport(`${dir}/out`, ["valkey-vs-redis", "your-first-study"]);
  Deno.removeSync(dir, { recursive: true });
});
