/**
 * Issue 36's "done when" for `kvlab run --until-decided --budget 2m`, live against one real
 * redis-server (started on a free loopback port, stopped by PID): two arms where one has its own
 * `params: { pipeline: 16 }` (a large, true difference) stop as soon as the sequential rule can
 * decide (3 runs per arm, the fewest with which it can say anything at 5 %: the plan's 2, then one
 * round more), long before the budget; two arms at the same server end without a better/worse
 * verdict (at --max-runs); the same command again resumes the sequence (reads the runs stored,
 * runs nothing more for a decided cell). Small request counts: a few seconds of load in all.
 */
import assert from "node:assert/strict";
import { withServerAndDir } from "../_support/servers.ts";
import { cli, compareLabelsJson } from "./_cli.ts";
import { loadResults, loadTable } from "../../src/analyze/load.ts";

/** A plan of two arms at one server: `b` with its own params, if given. */
function plan(dir: string, port: number, name: string, params = ""): string {
  const path = `${dir}/${name}.yaml`;
  Deno.writeTextFileSync(
    path,
    `name: ${name}
servers:
  - { name: a, url: "redis://127.0.0.1:${port}" }
  - { name: b, url: "redis://127.0.0.1:${port}"${params ? `, params: ${params}` : ""} }
tests: [set]
requests: 5000
matrix: { clients: [10] }
repetitions: 2
`,
  );
  return path;
}

Deno.test("kvlab run --until-decided: pipeline 16 against 1 stops at the fewest runs; A/A never better or worse", async () => {
  await withServerAndDir("kvlab-until-", async (server, dir) => {
    const data = `${dir}/data`;
    const piped = plan(dir, server.port, "piped", "{ pipeline: 16 }");
    const r = await cli(["run", piped, "--data", data, "--until-decided", "--budget", "2m"]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    // 2 runs per arm in the first round, one more in each later one; the rule can say nothing at
    // 5 % with fewer than 3 per arm, so 2 rounds is the fewest; a loaded machine's spread may take
    // a round or two more, never the budget's worth (a round here takes about a second)
    const decided = /until decided: every cell decided after (\d+) rounds \(1 better, 0 worse/
      .exec(r.stdout);
    assert.ok(decided, r.stdout);
    const rounds = Number(decided[1]);
    assert.ok(rounds >= 2 && rounds <= 6, `${rounds} rounds`);
    const perArm = rounds + 1;
    assert.match(
      r.stdout,
      new RegExp(`\\| c10-d3-P1-t0-r0 \\| SET +\\| b +\\| better +\\| ${perArm}/${perArm} `),
    );
    // b's runs ran pipelined and say so
    const runs = loadResults(data).toRecords() as {
      label: string;
      pipeline: number;
      plan_cell: string;
    }[];
    assert.equal(runs.length, 2 * perArm);
    assert.deepEqual([...new Set(runs.map((x) => `${x.label} ${x.pipeline}`))].sort(), [
      "a 1",
      "b 16",
    ]);
    // again: the sequence resumes decided, nothing more runs
    const again = await cli(["run", piped, "--data", data, "--until-decided", "--budget", "2m"]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /every cell decided after 0 rounds \(1 better/);
    assert.equal(loadTable(data, "runs").height, 2 * perArm);

    const same = plan(dir, server.port, "same");
    const aa = await cli([
      "run",
      same,
      "--data",
      data,
      "--until-decided",
      "--budget",
      "2m",
      "--max-runs",
      "5",
    ]);
    assert.equal(aa.code, 0, aa.stderr + aa.stdout);
    assert.match(
      aa.stdout,
      /until decided: (every cell decided|5 runs per arm reached) after \d+ rounds? \(0 better, 0 worse/,
    );
  });
});

Deno.test("kvlab run: --budget without --until-decided is a usage error; a bad params: is located", async () => {
  await withServerAndDir("kvlab-until-", async (server, dir) => {
    const p = plan(dir, server.port, "p");
    assert.equal((await cli(["run", p, "--data", `${dir}/d`, "--budget", "2m"])).code, 2);
    assert.equal(
      (await cli(["run", p, "--data", `${dir}/d`, "--until-decided", "--budget", "soon"])).code,
      2,
    );
    const bad = plan(dir, server.port, "bad", "{ pipline: 16 }");
    const r = await cli(["run", bad, "--data", `${dir}/d`]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /bad\.yaml:4:\d+: servers\.1\.params\.pipline: unknown parameter \(known: clients, data_size_bytes, pipeline, threads, keyspace\)/,
    );
  });
});

/** Runs `fn` while two busy shell loops load the CPUs (stopped by PID afterwards). */
async function withCpuHogs<T>(fn: () => Promise<T>): Promise<T> {
  const hogs = [0, 1].map(() =>
    new Deno.Command("sh", { args: ["-c", "while :; do :; done"], stdout: "null", stderr: "null" })
      .spawn()
  );
  try {
    return await fn();
  } finally {
    for (const h of hogs) {
      Deno.kill(h.pid, "SIGKILL");
      await h.status;
    }
  }
}

Deno.test("kvlab run --redo-disturbed: a disturbed run is kept, redone, and compare counts it left out", async () => {
  await withServerAndDir("kvlab-redo-", async (server, dir) => {
    const data = `${dir}/data`;
    const p = plan(dir, server.port, "redo");
    // busy loops on every CPU: the noise guard finds other processes' CPU above 10 %
    const r = await withCpuHogs(() => cli(["run", p, "--data", data, "--redo-disturbed", "1"]));
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(
      r.stdout,
      /disturbed \(.*other processes.*\): run again \(1\/1\); this run is kept/,
    );
    const runs = loadTable(data, "runs", { everyAttempt: true }).toRecords() as {
      plan_cell: string;
      noise_disturbance: string | null;
    }[];
    // each of the 4 cells (2 arms × 2 repetitions) ran twice; every attempt is stored
    assert.equal(runs.length, 8);
    assert.equal(new Set(runs.map((x) => x.plan_cell)).size, 4);
    const rows = await compareLabelsJson<{
      baseline_n: number;
      candidate_n: number;
      left_out_disturbed: number;
    }>(data, "a");
    assert.deepEqual(rows.map((x) => [x.baseline_n, x.candidate_n, x.left_out_disturbed]), [[
      2,
      2,
      4,
    ]]);
  });
});
