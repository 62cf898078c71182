/**
 * Interruption and concurrency of `kvlab run`, with the real CLI under the tasks' permissions,
 * real redis-servers on loopback and the real redis-benchmark: two runners of one plan, a
 * `kill -9` mid-cell, a SIGHUP, a tool left running by a kvlab that died, and a full disk.
 * Every step waits on a file or a line of output, never on a sleep; every wait is bounded.
 *
 * @module
 */

import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { loadTable } from "../../src/analyze/mod.ts";
import { processState } from "../../src/system/pids.ts";
import { withServers } from "../_support/servers.ts";
import { canMount, fill, mountTmpfs, umount } from "../_support/tmpfs.ts";
import { TASK_PERMISSIONS as PERMISSIONS } from "../_support/kvlab.ts";
import { ROOT } from "../_support/testdata.ts";

/** The longest any single wait of these tests may take. */
const BOUND_MS = 90_000;

/** A kvlab process being watched. */
interface Kvlab {
  pid: number;
  /** Resolves when stdout matches. */
  waitFor(re: RegExp): Promise<void>;
  kill(signal: Deno.Signal): void;
  /** What it printed on stdout so far. */
  output(): string;
  /** Exit code and both streams, once it ends. */
  done: Promise<{ code: number; stdout: string; stderr: string }>;
}

/** The kvlab processes still running, killed by {@link stopAll} after a failed test. */
const RUNNING = new Map<number, Deno.ChildProcess>();

function kvlab(args: string[], env: Record<string, string> = {}): Kvlab {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, ROOT + "src/cli.ts", ...args],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  RUNNING.set(child.pid, child);
  child.status.then(() => RUNNING.delete(child.pid));
  let out = "";
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  const reading = (async () => {
    for await (const c of child.stdout.pipeThrough(new TextDecoderStream())) {
      out += c;
      for (const w of waiters.filter((w) => w.re.test(out))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  })();
  const done = Promise.all([child.status, reading, new Response(child.stderr).text()]).then((
    [s, , stderr],
  ) => ({ code: s.code, stdout: out, stderr }));
  return {
    pid: child.pid,
    waitFor: (re) =>
      bounded(
        re.test(out) ? Promise.resolve() : new Promise<void>((resolve) => {
          waiters.push({ re, resolve });
          done.then(() => resolve());
        }),
        `output ${re}`,
      ).then(() => assert.match(out, re, `kvlab ended without printing ${re}:\n${out}`)),
    kill: (s) => child.kill(s),
    output: () => out,
    done,
  };
}

/** Rejects when `p` takes longer than {@link BOUND_MS}. */
function bounded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), BOUND_MS);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** Waits until `check` returns a value (polling a file or a process, bounded). */
async function until<T>(check: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function realBenchmark(): string {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (Deno.statSync(`${dir}/redis-benchmark`).isFile) return `${dir}/redis-benchmark`;
    } catch { /* next */ }
  }
  throw new Error("redis-benchmark is not installed");
}

/**
 * A `redis-benchmark` on PATH that writes `started.<pid>` under `gate`, waits for `gate/go`,
 * then becomes the real redis-benchmark (same pid): cells block at a known point.
 */
function gatedBenchmark(gate: string): Record<string, string> {
  Deno.mkdirSync(`${gate}/bin`, { recursive: true });
  const real = realBenchmark();
  Deno.writeTextFileSync(
    `${gate}/bin/redis-benchmark`,
    `#!/usr/bin/env bash
if [ "$1" = "--version" ]; then exec '${real}' "$@"; fi
echo $$ > '${gate}/tmp.'$$ && mv '${gate}/tmp.'$$ '${gate}/started.'$$
while [ ! -e '${gate}/go' ]; do sleep 0.05; done
exec '${real}' "$@"
`,
  );
  Deno.chmodSync(`${gate}/bin/redis-benchmark`, 0o755);
  return { PATH: `${gate}/bin:${Deno.env.get("PATH")}` };
}

/** The pids of the gated tools started so far. */
function started(gate: string): number[] {
  return [...Deno.readDirSync(gate)].filter((e) => e.name.startsWith("started."))
    .map((e) => Number(e.name.slice("started.".length)));
}

/**
 * Writes `<dir>/plan.yaml`: SET with 5 clients against each server, `repetitions` times
 * (default 2) of `requests` requests (default 2,000); returns its path.
 */
function writePlan(
  dir: string,
  urls: string[],
  o: { repetitions?: number; requests?: number } = {},
): string {
  const path = `${dir}/plan.yaml`;
  Deno.writeTextFileSync(
    path,
    `name: procs
servers:
${urls.map((u, i) => `  - { name: s${i + 1}, url: "${u}" }`).join("\n")}
tests: [set]
requests: ${o.requests ?? 2000}
matrix:
  clients: [5]
repetitions: ${o.repetitions ?? 2}
pause_s: 0
timeout_s: 60
`,
  );
  return path;
}

/** `kvlab compare`'s n per arm, and the runs of each cell. */
async function stored(data: string) {
  const cmp = kvlab(["compare", "--data", data, "--format", "json"]);
  const r = await cmp.done;
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as { baseline_n: number; candidate_n: number }[];
  const runs = loadTable(data, "runs");
  const perCell = runs.groupBy("plan_cell").agg(pl.len().alias("n")).sort("plan_cell");
  return {
    n: rows.flatMap((x) => [x.baseline_n, x.candidate_n]),
    runsPerCell: perCell.getColumn("n").toArray(),
    statuses: runs.getColumn("status").toArray(),
  };
}

function hasSetpriv(): boolean {
  return (Deno.env.get("PATH") ?? "").split(":").some((d) => {
    try {
      return Deno.statSync(`${d}/setpriv`).isFile;
    } catch {
      return false;
    }
  });
}

/** Kills the kvlab processes and the gated tools of a test still running (after a failure). */
async function stopAll(gate: string): Promise<void> {
  for (const child of RUNNING.values()) {
    child.kill("SIGKILL");
    await child.status;
  }
  for (const pid of started(gate)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* ended */ }
  }
}

function gone(pid: number): true | undefined {
  return processState(pid).state === "gone" ? true : undefined;
}

/**
 * Runs `fn` with two servers, a fresh folder whose gated redis-benchmark holds every cell (see
 * {@link gatedBenchmark}), and `run`, which starts `kvlab run` of a plan of both servers into
 * `<dir>/data`; whatever still runs afterwards is killed.
 */
async function withGatedPlan(
  prefix: string,
  fn: (dir: string, run: () => Kvlab) => Promise<void>,
): Promise<void> {
  await withServers([{}, {}], async ([a, b]) => {
    const dir = Deno.makeTempDirSync({ prefix });
    const env = gatedBenchmark(`${dir}/gate`);
    const plan = writePlan(dir, [a.url, b.url]);
    try {
      await fn(dir, () => kvlab(["run", plan, "--data", `${dir}/data`], env));
    } finally {
      await stopAll(`${dir}/gate`);
    }
  });
}

Deno.test("two kvlab run of one plan into one dataset run each cell once", async () => {
  await withGatedPlan("kvlab-twice-", async (dir, run) => {
    const first = run();
    // the first runner's first cell is running (held at the gate)
    await until(() => started(`${dir}/gate`).length === 1 || undefined, "the first tool");
    const second = run();
    // the second runner either waits for that cell (locked) or starts it again (the defect)
    const seen = await until(
      () =>
        /^\[1\/4\] procs\/s1\/\S+: run by another kvlab \(pid \d+ on .+\); waiting for it$/m
            .test(second.output())
          ? "waits"
          : started(`${dir}/gate`).length > 1
          ? "runs the cell again"
          : undefined,
      "the second runner to wait or start",
    );
    assert.equal(seen, "waits", second.output());
    Deno.writeTextFileSync(`${dir}/gate/go`, "");
    const [r1, r2] = await Promise.all([first.done, second.done]);
    assert.equal(r1.code, 0, r1.stdout + r1.stderr);
    assert.equal(r2.code, 0, r2.stdout + r2.stderr);
    const s = await stored(`${dir}/data`);
    assert.deepEqual(s.n, [2, 2], "compare n equals repetitions");
    assert.deepEqual(s.runsPerCell, [1, 1, 1, 1], "one run per cell");
    assert.ok(s.statuses.every((x) => x === "complete"));
    assert.deepEqual([...Deno.readDirSync(`${dir}/data/locks/cells`)], [], "locks released");
  });
});

Deno.test("kill -9 of kvlab mid-cell leaves no tool running; a resume runs the cell once", async () => {
  await withGatedPlan("kvlab-kill9-", async (dir, run) => {
    const first = run();
    const [tool] = await until(
      () => started(`${dir}/gate`).length ? started(`${dir}/gate`) : undefined,
      "the tool",
    );
    assert.equal(processState(tool).state, "running");
    first.kill("SIGKILL");
    assert.equal((await first.done).code, 137);
    // the tool dies with kvlab (it would otherwise wait at the gate for ever): at once where
    // setpriv gives it a parent-death signal, else when the resume finds its pid file
    if (hasSetpriv()) await until(() => gone(tool), `tool pid ${tool} to end`);
    Deno.writeTextFileSync(`${dir}/gate/go`, "");
    const resume = await run().done;
    assert.equal(resume.code, 0, resume.stdout + resume.stderr);
    assert.equal(processState(tool).state, "gone");
    assert.match(resume.stdout, /^4 cells: 4 complete, 0 skipped/m);
    const s = await stored(`${dir}/data`);
    assert.deepEqual(s.n, [2, 2]);
    assert.deepEqual(s.runsPerCell, [1, 1, 1, 1]);
  });
});

Deno.test("a tool left running by a kvlab that died is stopped before a resume, after a pid check", async () => {
  await withServers([{}], async ([a]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-orphan-" });
    const data = `${dir}/data`;
    const plan = writePlan(dir, [a.url], { repetitions: 1 });
    // a "tool" in its own process group, as kvlab starts them, and a kvlab that is gone
    const orphan = new Deno.Command("sleep", { args: ["600"], detached: true }).spawn();
    const other = new Deno.Command("sleep", { args: ["600"], detached: true }).spawn();
    const ended = new Deno.Command("true").spawn();
    await ended.status;
    const deadKvlab = ended.pid;
    try {
      const start = (pid: number) => {
        const s = processState(pid);
        assert.equal(s.state, "running");
        return s.state === "running" ? s.start : null;
      };
      const pidFile = (pid: number, childStart: string | null) =>
        JSON.stringify({
          pid,
          start: childStart,
          program: "sleep",
          kvlab_pid: deadKvlab,
          kvlab_start: "Thu Jan  1 00:00:00 1970",
          hostname: Deno.hostname(),
          started_at: new Date().toISOString(),
        });
      Deno.mkdirSync(`${data}/locks/children`, { recursive: true });
      Deno.writeTextFileSync(
        `${data}/locks/children/${orphan.pid}.json`,
        pidFile(orphan.pid, start(orphan.pid)),
      );
      // a pid file whose pid now belongs to another process (another start time): left alone
      Deno.writeTextFileSync(
        `${data}/locks/children/${other.pid}.json`,
        pidFile(other.pid, "Thu Jan  1 00:00:01 1970"),
      );
      const r = await kvlab(["run", plan, "--data", data]).done;
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        new RegExp(
          `^stopped sleep \\(pid ${orphan.pid}\\), left running by kvlab pid ${deadKvlab} which is gone$`,
          "m",
        ),
      );
      assert.ok(!r.stdout.includes(`pid ${other.pid}`), r.stdout);
      assert.equal((await orphan.status).signal, "SIGTERM");
      assert.equal(processState(other.pid).state, "running", "a reused pid is not killed");
      assert.deepEqual([...Deno.readDirSync(`${data}/locks/children`)], []);
    } finally {
      try {
        orphan.kill("SIGKILL");
      } catch { /* stopped */ }
      other.kill("SIGKILL");
      await other.status;
    }
  });
});

Deno.test("SIGHUP stops the tool, stores the partial run as incomplete and exits 129", async () => {
  await withServers([{}], async ([a]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-hup-" });
    const data = `${dir}/data`;
    const plan = writePlan(dir, [a.url], { repetitions: 1, requests: 50_000_000 });
    const run = kvlab(["run", plan, "--data", data]);
    await run.waitFor(/^\s+SET: [\d,]+ ops\/s so far/m);
    const [tool] = benchmarksOn(a.port);
    assert.equal(processState(tool).state, "running");
    run.kill("SIGHUP");
    const r = await run.done;
    assert.equal(r.code, 129, r.stdout + r.stderr);
    assert.equal(processState(tool).state, "gone", "the tool was stopped");
    const runs = loadTable(data, "runs");
    assert.deepEqual(runs.getColumn("status").toArray(), ["incomplete"]);
    assert.match(runs.getColumn("error").get(0), /interrupted/);
    assert.deepEqual([...Deno.readDirSync(`${data}/tmp`)], [], "no tmp leftovers");
    assert.deepEqual([...Deno.readDirSync(`${data}/locks/children`)], []);
  });
});

/** The pids of redis-benchmark processes aimed at a port. */
function benchmarksOn(port: number): number[] {
  const ps = new Deno.Command("ps", { args: ["-eo", "pid=,args="] }).outputSync();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .filter((l) => /redis-benchmark/.test(l) && l.includes(` -p ${port} `))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

Deno.test({
  name: "a full disk stops the plan with one error naming the path, and stops the tool",
  ignore: !canMount(),
  fn: async () => {
    await withServers([{}], async ([a]) => {
      const dir = Deno.makeTempDirSync({ prefix: "kvlab-full-" });
      const mnt = `${dir}/mnt`;
      mountTmpfs(mnt);
      try {
        // fill the disk, then give back 12 KiB: room for the lock and pid files, not the output
        fill(mnt, 12);
        const plan = writePlan(dir, [a.url], { requests: 50_000_000 });
        const r = await kvlab(["run", plan, "--data", `${mnt}/data`]).done;
        assert.equal(r.code, 1, r.stdout + r.stderr);
        const said = (r.stdout + r.stderr).match(/no space left/gi) ?? [];
        assert.equal(said.length, 1, r.stdout + r.stderr);
        assert.match(
          r.stderr,
          new RegExp(
            `^error: no space left on the disk of ${mnt}/data/\\S+: free some space there ` +
              `\\(or write elsewhere\\), then run the plan again \\(complete cells are skipped\\)$`,
            "m",
          ),
        );
        assert.ok(!/os error 28|thrift/.test(r.stdout + r.stderr), r.stderr);
        assert.deepEqual(benchmarksOn(a.port), [], "the tool was stopped");
      } finally {
        umount(mnt);
      }
    });
  },
});
