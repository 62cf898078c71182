// `kvlab load`, `kvlab pubsub` and `kvlab run` print their step lines from the rows the step
// stored, without reading the dataset back: the store's read counter (`src/store/reads.ts`)
// stays where it was (for `kvlab run`, after its resume reads before the first cell). A real
// redis-server on a free loopback port, stopped by PID; short, low-rate steps.
import assert from "node:assert/strict";
import pl from "nodejs-polars";
import { loadResults, loadTable } from "../../src/analyze/load.ts";
import { datasetReads } from "../../src/store/reads.ts";
import type { ResultsRow } from "../../src/schema.ts";
import { withServerAndDir } from "../_support/servers.ts";
import { missingOutsideCi } from "../_support/tools.ts";
import { cli } from "./_cli.ts";

/** Reads of every table, and of `results` alone. */
const reads = () => ({ all: datasetReads(), results: datasetReads("results") });

Deno.test({
  name: "kvlab load, pubsub and run print their step lines without reading the dataset",
  ignore: missingOutsideCi("redis-server"),
  fn: () =>
    withServerAndDir("kvlab-step-reads-", async (server, data) => {
      let before = reads();
      const load = await cli([
        ...["load", "--url", server.url, "--rate", "200", "--connections", "2"],
        ...["--duration", "0.5", "--data", data],
      ]);
      assert.equal(load.code, 0, load.stderr);
      assert.match(
        load.stdout,
        /^GET: [\d,]+\/s of 200\/s requested \((sustained|NS|over)\); p50 [\d.]+ ms, p99 [\d.]+ ms from the intended send; from send p50 .*; errors \d+\n/m,
      );
      assert.deepEqual(reads(), before, "kvlab load read the dataset");

      const pubsub = await cli([
        ...["pubsub", "--url", server.url, "--rate", "200", "--publishers", "2"],
        ...["--subscribers", "2", "--duration", "0.5", "--grace", "1", "--data", data],
      ]);
      assert.equal(pubsub.code, 0, pubsub.stderr);
      assert.match(
        pubsub.stdout,
        /^PUBSUB_ONE_TO_ONE: [\d,]+\/s of 200\/s requested \((sustained|NS|over)\); p50 [\d.]+ ms, p99 [\d.]+ ms from the intended publish time\n {2}published [\d,]+, delivered [\d,]+ \(fan-out 1\), lost \d+, duplicated \d+, unsent \d+, errors \d+\n {2}client CPU [\d.]+ s, publisher lateness p99 [\d.]+ ms\n/m,
      );
      assert.deepEqual(reads(), before, "kvlab pubsub read the dataset");
      let printed = load.stdout + pubsub.stdout;

      // the counter moves when the dataset is read (so the checks above can fail)
      const stored = loadResults(data);
      assert.equal(stored.height, 2);
      assert.ok(reads().results > before.results, "loadResults was not counted");

      // a plan of each fixed-rate kind, two cells each, into the same dataset: it reads the
      // runs stored before the first cell (to resume), then nothing
      const plans = {
        sweep: `name: rs
kind: latency-sweep
servers:
  - { name: redis, url: "${server.url}" }
timeout_s: 30
sweep: { engine: kvlab, threads: 1, clients: 2, rates: [100, 200], step_s: 0.5, keys: 100,
  continue_after_ns: true }
`,
        pubsub: `name: rp
kind: pubsub
servers:
  - { name: redis, url: "${server.url}" }
timeout_s: 30
pubsub: { modes: [one-to-one, fan-out], publishers: 2, subscribers: 2, rates: [200],
  step_s: 0.5, grace_s: 0.5 }
`,
      };
      for (const [kind, yaml] of Object.entries(plans)) {
        const file = Deno.makeTempFileSync({ prefix: `kvlab-${kind}-`, suffix: ".yaml" });
        Deno.writeTextFileSync(file, yaml);
        before = reads();
        let atFirstCell: ReturnType<typeof reads> | undefined;
        const run = await cli(["run", file, "--data", data], false, (s) => {
          if (/^\[1\/2\] /m.test(s)) atFirstCell ??= reads();
        });
        Deno.removeSync(file);
        assert.equal(run.code, 0, run.stderr);
        printed += run.stdout;
        assert.ok(atFirstCell, run.stdout);
        // the resume reads: the runs stored before, never their results
        assert.ok(atFirstCell.all > before.all, `${kind}: no resume read counted`);
        assert.equal(atFirstCell.results, before.results, `${kind}: results read to resume`);
        assert.deepEqual(reads(), atFirstCell, `${kind}: the dataset read after the first cell`);
        const test = kind === "sweep" ? "GET" : "PUBSUB_(ONE_TO_ONE|FAN_OUT)";
        const lines = run.stdout.match(
          new RegExp(
            `^ {2}${test}: [\\d,]+/s of (100|200)/s requested \\((sustained|NS|over)\\); p50 [\\d.]+ ms, p99 [\\d.]+ ms from the intended (send|publish time)$`,
            "gm",
          ),
        );
        assert.equal(lines?.length, 2, run.stdout);
        // the cell table, from the rows the cells returned: each cell's one complete test, its ops/s
        // and p99
        assert.match(run.stdout, /2 cells: 2 complete/);
        assert.equal(
          run.stdout.match(/^\| r[sp]\/redis\/\S+ \| complete \| [A-Z_]+ \| [\d.]+ \| [\d.]* \|$/gm)
            ?.length,
          2,
          run.stdout,
        );
      }

      // what was printed is what was stored: each step row, as committed
      const rows = loadTable(data, "results").filter(pl.col("requested_ops_per_sec").isNotNull())
        .toRecords() as unknown as ResultsRow[];
      assert.equal(rows.length, 6);
      const rate = (v: number | null | undefined) => Math.round(v!).toLocaleString("en-US");
      for (const r of rows) {
        const line = `${r.test}: ${rate(r.ops_per_sec)}/s of ${rate(r.requested_ops_per_sec)}/s ` +
          `requested (`;
        const latency = `p50 ${r.p50_latency_ms!.toFixed(3)} ms, p99 ` +
          `${r.p99_latency_ms!.toFixed(3)} ms from the intended`;
        const said = printed.split("\n").some((l) =>
          l.trimStart().startsWith(line) && l.includes(latency)
        );
        assert.ok(said, `no line ${line}…; ${latency} in\n${printed}`);
      }
    }),
});
