/**
 * A plan interrupted and resumed (issue 30): the interrupted run stays in the dataset as the
 * record of what happened, the cell is done again, and every view counts the cell's latest
 * complete attempt only. Before, `compare` pooled the interrupted run's finished tests with the
 * redo (`baseline_n = 3` in a 2-repetition plan) and `kvlab sweep` merged an interrupted step
 * with its redo (`repetitions = 3`). Real plans against real redis-servers, interrupted with
 * Ctrl-C (SIGINT) through the CLI.
 */

import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { commandCalls, withServers } from "../_support/servers.ts";
import { withTempDir } from "../_support/temp.ts";
import { interruptCli } from "../_support/interrupt.ts";
import { kvlabProcess } from "../_support/kvlab.ts";
import { loadTable } from "../../src/analyze/load.ts";
import { supersededRuns } from "../../src/analyze/attempts.ts";

const LEFT_OUT = /left out 1 run of a plan cell done again: each cell counts its latest complete/;

/** `kvlab ARGS…` as a user runs it; fails the test on a non-zero exit. */
async function kvlab(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const r = await kvlabProcess(args);
  assert.equal(r.code, 0, `kvlab ${args.join(" ")}: ${r.printed}`);
  return r;
}

/** The data values of a saved Vega-Lite spec, wherever they sit. */
function specValues(path: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (typeof x !== "object" || x === null) return;
    const values = (x as { data?: { values?: unknown } }).data?.values;
    if (Array.isArray(values)) found.push(...values);
    Object.values(x).forEach(walk);
  };
  walk(JSON.parse(Deno.readTextFileSync(path)));
  return found;
}

Deno.test("a redis-benchmark plan interrupted and resumed: compare, plot and summary count 2 runs per cell", async () => {
  await withServers([{}, {}], async ([a, b]) => {
    await withTempDir("kvlab-attempts-", async (dir) => {
      const data = `${dir}/data`;
      const plan = `${dir}/plan.yaml`;
      Deno.writeTextFileSync(
        plan,
        `name: t\nservers:\n  - { name: a, url: "${a.url}" }\n  - { name: b, url: "${b.url}" }\n` +
          `tests: [set, get]\nrequests: 100000\nmatrix:\n  clients: [10]\nrepetitions: 2\n` +
          `timeout_s: 120\n`,
      );
      // Ctrl-C in the third cell (a, repetition 2) during its GET, once the server has answered
      // 30,000 of its GETs (after the first cell's 100,000): SET's report is printed and flushed
      // by then (redis-benchmark flushes with its progress line every 250 ms). On its report's
      // first line ("SET: done") the rest of the report could still be on its way, and a CI run
      // cut there (a report cut short is an incomplete test)
      const first = await interruptCli(
        ["run", plan, "--data", data],
        "SIGINT",
        async () => await commandCalls(a.port, "get") >= 130_000,
      );
      assert.match(first.printed, /\[3\/4\][^[]*\n\s+SET: done/);
      assert.equal(first.code, 130, first.printed);
      // the count line says what the interruption left (the fourth cell never started)
      assert.match(
        first.printed,
        /\n4 cells: 2 complete, 0 skipped \(already complete\), 1 incomplete, 0 failed, interrupted: 1 cell not reached \(run the plan again for them\)\n/,
      );
      await kvlab(["run", plan, "--data", data]);
      const runs = loadTable(data, "runs", { everyAttempt: true });
      const cut = runs.filter(pl.col("status").eq(pl.lit("incomplete")));
      assert.equal(runs.height, 5, "the interrupted run stays, as the record of what happened");
      assert.equal(cut.height, 1);
      const cutId = String(cut.getColumn("run_id").get(0));
      const cutTests = loadTable(data, "results", { runIds: [cutId], everyAttempt: true })
        .filter(pl.col("complete")).getColumn("test").toArray();
      assert.deepEqual(cutTests, ["SET"], "the interrupted run has a finished SET");

      const compare = await kvlabProcess(["compare", "--data", data, "--format", "json"]);
      assert.equal(compare.code, 0, compare.printed);
      assert.match(compare.stderr, LEFT_OUT);
      const rows = JSON.parse(compare.stdout) as Record<string, unknown>[];
      assert.deepEqual(
        rows.map((r) => [r.test, r.baseline_n, r.candidate_n]),
        [["SET", 2, 2], ["GET", 2, 2]],
      );

      const plot = await kvlab(["plot", "throughput", "--data", data, "-o", `${dir}/t.vl.json`]);
      assert.match(plot.stderr, LEFT_OUT);
      const bars = specValues(`${dir}/t.vl.json`);
      assert.deepEqual(bars.map((v) => `${v.test} ${v.label} ${v.n}`).sort(), [
        "GET a 2",
        "GET b 2",
        "SET a 2",
        "SET b 2",
      ]);

      const summary = await kvlab(["summary", data, "-o", `${dir}/summary`]);
      assert.match(summary.stderr, LEFT_OUT);
      const page = Deno.readTextFileSync(`${dir}/summary/summary.md`);
      assert.match(page, /^4 runs of /m);

      // kvlab table shows every run, the interrupted one too
      const table = await kvlab(["table", "runs", "--data", data, "--format", "csv"]);
      assert.ok(table.stdout.includes(cutId));
    });
  });
});

Deno.test("a latency sweep interrupted and resumed: kvlab sweep counts each step's repetitions once", async () => {
  await withServers([{}], async ([server]) => {
    await withTempDir("kvlab-attempts-", async (dir) => {
      const data = `${dir}/data`;
      const plan = `${dir}/plan.yaml`;
      Deno.writeTextFileSync(
        plan,
        `name: sw\nkind: latency-sweep\nservers: [{ name: redis, url: "${server.url}" }]\n` +
          `repetitions: 2\ntimeout_s: 60\nsweep:\n  threads: 1\n  clients: 1\n` +
          `  rates: [200, 400]\n  step_s: 3\n  warmup_s: 0\n  keys: 1000\n` +
          // every step runs, NS or not: this test counts attempts, not skipped steps
          `  continue_after_ns: true\n`,
      );
      // Ctrl-C during the second step (400/s, repetition 1), once it has sent 200 GETs (the
      // first step sends 600): the server says how far the plan is, not a clock
      const first = await interruptCli(
        ["run", plan, "--data", data],
        "SIGINT",
        async () => await commandCalls(server.port, "get") >= 800,
      );
      assert.equal(first.code, 130, first.printed);
      assert.match(first.printed, /\[2\/4\][\s\S]*→ incomplete: 1 test/);
      await kvlab(["run", plan, "--data", data]);
      const runs = loadTable(data, "runs", { everyAttempt: true });
      assert.equal(runs.height, 5);
      assert.equal(runs.filter(pl.col("status").eq(pl.lit("incomplete"))).height, 1);

      const sweep = await kvlabProcess(["sweep", "--data", data, "--format", "json"]);
      assert.equal(sweep.code, 0, sweep.printed);
      const steps = JSON.parse(sweep.stdout) as Record<string, unknown>[];
      assert.deepEqual(steps.map((s) => [s.requested_ops_per_sec, s.repetitions]), [
        [200, 2],
        [400, 2],
      ]);
      assert.match(sweep.stderr, LEFT_OUT);

      const plot = await kvlab(["plot", "sweep", "--data", data, "-o", `${dir}/s.vl.json`]);
      assert.match(plot.stderr, LEFT_OUT);
    });
  });
});

Deno.test("supersededRuns(): a cell's latest complete attempt wins, by start time then run id", () => {
  const at = (m: number | null) => m === null ? null : new Date(Date.UTC(2026, 0, 1, 0, m));
  const runs = pl.DataFrame({
    run_id: ["r1", "r2", "r3", "r4", "r5", "r6"],
    plan_name: ["p", "p", "p", "q", "q", "q"],
    plan_cell: ["a", "a", "a", "a", "a", "a"],
    // p/a: two complete attempts (a second runner raced the first); q/a: the same start time
    status: ["complete", "incomplete", "complete", "complete", "complete", "failed"],
    started_at: [at(1), at(2), at(3), at(5), at(5), at(null)],
  });
  assert.deepEqual(supersededRuns(runs), ["r1", "r2", "r4", "r6"]);
  // the same plan cell id in another plan is another cell
  assert.deepEqual(supersededRuns(runs.filter(pl.col("plan_name").eq(pl.lit("q")))), ["r4", "r6"]);
});
