// Several client hosts (issue 35), end to end: three `kvlab agent` processes, each in its own
// network namespace joined to the server's by a veth (on loopback where namespaces cannot be
// made, said so), a control redis-server and a target redis-server in the server's namespace,
// and `runPlan` coordinating from this process. One merged run per cell, one agent_steps row per
// agent, the agents' raw files; a killed agent makes its cell incomplete and a resumed plan
// re-runs only that cell; a work item no plan kind allows, written to the stream, is refused.
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import { parsePlan } from "../../../src/collect/plan/plan.ts";
import { runPlan } from "../../../src/collect/plan/study.ts";
import { Dataset } from "../../../src/store/dataset.ts";
import { decodeHistogram, mergeHistograms } from "../../../src/collect/loadgen/histogram.ts";
import { hdrValueAtPercentile } from "../../../src/hdr.ts";
import { freePort, type Hosts, makeHosts, waitForServer } from "../../_support/netns.ts";
import { withTempDir } from "../../_support/temp.ts";
import { ControlConnection } from "../../../src/collect/agent/control.ts";
import { parseServerUrl } from "../../../src/collect/target.ts";

const CLI = new URL("../../../src/cli.ts", import.meta.url).pathname;
const AGENTS = 3;
/** The step's rate: issue 35 asks 30,000/s; see the report for what 2 shared cores sustain. */
const RATE = 30_000;

interface World {
  hosts: Hosts;
  control: string;
  serverPort: number;
  controlPort: number;
  agents: Deno.ChildProcess[];
  dir: string;
}

function agentArgv(w: World, k: number): string[] {
  return [
    ...w.hosts.inAgent(k),
    Deno.execPath(),
    "run",
    "-A",
    CLI,
    "agent",
    "--control",
    w.control,
    "--name",
    `a${k + 1}`,
  ];
}

/** The agents registered in the last 20 s (polled: at most 60 s, 200 ms apart). */
async function waitForAgents(w: World, names: string[]): Promise<void> {
  const r = new Redis({ host: w.hosts.serverHost, port: w.controlPort, lazyConnect: true });
  await r.connect();
  try {
    for (let i = 0; i < 300; i++) {
      const t = Number((await r.time())[0]) * 1000;
      const seen = new Set<string>();
      for (const [, f] of await r.xrevrange("kvlab:agents", "+", "-", "COUNT", 200)) {
        const m = JSON.parse(f[1]);
        if (t - m.atMs < 15_000) seen.add(m.agent);
      }
      if (names.every((n) => seen.has(n))) return;
      await new Promise((res) => setTimeout(res, 200));
    }
    throw new Error(`agents ${names.join(", ")} did not register`);
  } finally {
    r.disconnect();
  }
}

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  const hosts = await makeHosts(AGENTS);
  // deno-lint-ignore no-console
  console.log(`hosts: ${hosts.mode}${hosts.note ? ` (${hosts.note})` : ""}`);
  try {
    await withTempDir("kvlab-agents-", async (dir) => {
      const serverPort = freePort(), controlPort = freePort();
      for (const port of [serverPort, controlPort]) {
        hosts.spawn([
          ...hosts.inServer,
          "redis-server",
          "--port",
          String(port),
          "--bind",
          hosts.serverHost,
          "--save",
          "",
          "--appendonly",
          "no",
          "--protected-mode",
          "no",
        ]);
        await waitForServer(hosts.serverHost, port);
      }
      const control = `redis://${hosts.serverHost}:${controlPort}`;
      const w: World = { hosts, control, serverPort, controlPort, agents: [], dir };
      for (let k = 0; k < AGENTS; k++) {
        w.agents.push(hosts.spawn(agentArgv(w, k), { log: `${dir}/agent${k + 1}.log` }));
      }
      await waitForAgents(w, ["a1", "a2", "a3"]);
      await fn(w);
    });
  } finally {
    await hosts.close();
  }
}

function plan(w: World, o: { name: string; rates: number[]; stepS: number; timeoutS: number }) {
  return parsePlan(
    `name: ${o.name}\nkind: latency-sweep\n` +
      `servers: [{name: redis, url: 'redis://${w.hosts.serverHost}:${w.serverPort}'}]\n` +
      `timeout_s: ${o.timeoutS}\n` +
      `sweep: {engine: kvlab, clients: 12, rates: [${o.rates.join(", ")}], step_s: ${o.stepS}, ` +
      `keys: 1000, data_size_bytes: 32}\n` +
      `agents: {control: '${w.control}', count: ${AGENTS}}\n`,
    `${o.name}.yaml`,
  );
}

/** The calls of GET a server answered so far. */
async function gets(host: string, port: number): Promise<number> {
  const r = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 0 });
  await r.connect();
  try {
    return Number(/cmdstat_get:calls=(\d+)/.exec(await r.info("commandstats"))?.[1] ?? 0);
  } finally {
    r.disconnect();
  }
}

Deno.test("kvlab run with agents: one merged run per cell from three hosts", async (t) => {
  await withWorld(async (w) => {
    const data = `${w.dir}/data`;
    await t.step(
      "a fixed-rate step: rates summed, percentiles of the union of HDR files",
      async () => {
        const r = await runPlan(plan(w, { name: "three", rates: [RATE], stepS: 2, timeoutS: 30 }), {
          data,
        });
        const ds = Dataset.of(data);
        const [run] = ds.runFacts(["run_id", "status", "error", "warning_count"]);
        assert.equal(r.cells, 1);
        const steps = ds.read("agent_steps", { runIds: [String(run.run_id)] }).sort("agent")
          .toRecords();
        assert.deepEqual(steps.map((s) => [s.agent, s.status, s.share_of]), [
          ["a1", "ok", 3],
          ["a2", "ok", 3],
          ["a3", "ok", 3],
        ]);
        const [row] = ds.read("results", { runIds: [String(run.run_id)] }).toRecords();
        const sum = steps.reduce((n, s) => n + Number(s.ops_per_sec), 0);
        assert.ok(
          Math.abs(Number(row.ops_per_sec) - sum) <= 0.01 * sum,
          `${row.ops_per_sec} ≠ ${sum}`,
        );
        assert.equal(row.requested_ops_per_sec, RATE);
        // the union of the agents' own histograms, read from their raw files
        const files = ds.runRaw(String(run.run_id)).filter((f) => /agent-a\d\.json$/.test(f.name));
        assert.equal(files.length, 3);
        const hs = files.map((f) =>
          decodeHistogram(JSON.parse(new TextDecoder().decode(f.bytes)).step.latencyFromIntended)
        );
        const union = mergeHistograms(hs);
        for (
          const [p, col] of [[50, "p50_latency_ms"], [99, "p99_latency_ms"], [
            99.9,
            "p999_latency_ms",
          ]] as const
        ) {
          const want = hdrValueAtPercentile(union, p)! / 1e6;
          assert.ok(
            Math.abs(Number(row[col]) - want) <= want * 1e-3,
            `${col}: ${row[col]} vs ${want}`,
          );
        }
        for (const s of steps) {
          assert.equal(typeof s.clock_offset_ms, "number");
          assert.equal(typeof s.start_skew_ms, "number");
        }
        // deno-lint-ignore no-console
        console.log(
          `step ${RATE}/s on 3 agents (${w.hosts.mode}): ${run.status}, achieved ` +
            `${Number(row.ops_per_sec).toFixed(0)}/s (sum ${
              sum.toFixed(0)
            }), p50 ${row.p50_latency_ms} ` +
            `p99 ${row.p99_latency_ms} p99.9 ${row.p999_latency_ms} ms; ` +
            steps.map((s) =>
              `${s.agent}: ${Number(s.ops_per_sec).toFixed(0)}/s offset ${
                Number(s.clock_offset_ms).toFixed(3)
              }±${Number(s.clock_uncertainty_ms).toFixed(3)} ms skew ${
                Number(s.start_skew_ms).toFixed(3)
              } ms`
            ).join("; "),
        );
      },
    );
    await t.step("a work item no plan kind allows is refused, and nothing runs", async () => {
      const conn = await ControlConnection.open(parseServerUrl(w.control));
      const r = new Redis({ host: w.hosts.serverHost, port: w.controlPort, lazyConnect: true });
      await r.connect();
      try {
        let since = await conn.lastId("kvlab:results");
        const before = await gets(w.hosts.serverHost, w.serverPort);
        const startAtMs = (await conn.timeMs()) + 500;
        const item = (id: string, sweep: Record<string, unknown>) =>
          JSON.stringify({
            type: "work",
            v: 1,
            item: id,
            cell: "forged",
            agent: "a1",
            plan: {
              kind: "latency-sweep",
              server: { name: "x", url: `redis://${w.hosts.serverHost}:${w.serverPort}` },
              sweep: { clients: 3, rates: [100], step_s: 1, ...sweep },
            },
            share: { index: 0, of: 1 },
            startAtMs,
            timeoutS: 5,
          });
        // written straight to the stream, as anyone who can write to it could
        await r.xadd("kvlab:work:a1", "*", "msg", item("forged-tool", { tool: "/bin/touch" }));
        await r.xadd("kvlab:work:a1", "*", "msg", item("forged-opt", { shell: "id" }));
        const seen = new Map<string, string>();
        for (let i = 0; i < 30 && seen.size < 2; i++) {
          for (const e of await conn.readAfter("kvlab:results", since)) {
            since = e.id;
            const m = e.message;
            if (m?.type === "result" && m.item.startsWith("forged")) {
              seen.set(m.item, `${m.status}: ${m.error}`);
            }
          }
        }
        assert.match(seen.get("forged-tool") ?? "", /^refused: sweep\.tool: an agent runs its own/);
        assert.match(seen.get("forged-opt") ?? "", /^refused: .*sweep\.shell: unknown field/);
        await new Promise((res) => setTimeout(res, 1500)); // past the forged start time
        assert.equal(await gets(w.hosts.serverHost, w.serverPort), before, "nothing was sent");
      } finally {
        conn.close();
        r.disconnect();
      }
    });
    await t.step("a killed agent: its cell incomplete naming it, resumed alone", async () => {
      const p = plan(w, { name: "kill", rates: [2000, 3000], stepS: 2, timeoutS: 12 });
      let killed = false;
      let second: Promise<void> | null = null;
      const first = await runPlan(p, {
        data,
        onEvent: (e) => {
          if (e.kind !== "start" || !e.cell.id.includes("/r3000/")) return;
          // mid-step of the second cell: once GETs flow again, agent a3 dies (SIGKILL)
          second = (async () => {
            const at = await gets(w.hosts.serverHost, w.serverPort);
            for (let i = 0; i < 400; i++) {
              if (await gets(w.hosts.serverHost, w.serverPort) > at + 1000) break;
              await new Promise((res) => setTimeout(res, 25));
            }
            await w.hosts.kill(w.agents[2], "SIGKILL");
            killed = true;
          })();
        },
      });
      await second;
      assert.ok(killed);
      assert.deepEqual([first.complete, first.incomplete], [1, 1]);
      const ds = Dataset.of(data);
      const runs = ds.runFacts(["run_id", "plan_name", "plan_cell", "status", "error"])
        .filter((x) => x.plan_name === "kill");
      const cut = runs.find((x) => String(x.plan_cell).includes("/r3000/"))!;
      assert.equal(cut.status, "incomplete");
      assert.match(String(cut.error), /agent a3: no answer within the cell's 12 s/);
      const kept = ds.read("agent_steps", { runIds: [String(cut.run_id)] }).sort("agent")
        .toRecords();
      assert.deepEqual(kept.map((x) => [x.agent, x.status]), [
        ["a1", "ok"],
        ["a2", "ok"],
        ["a3", "no-answer"],
      ]);
      const [res] = ds.read("results", { runIds: [String(cut.run_id)] }).toRecords();
      assert.ok(Number(res.requests) > 0, "the others' data is kept");
      // a3 back; the resumed plan runs only the incomplete cell
      w.agents[2] = w.hosts.spawn(agentArgv(w, 2), { log: `${w.dir}/agent3b.log` });
      await waitForAgents(w, ["a3"]);
      const again = await runPlan(p, { data });
      assert.deepEqual([again.skipped, again.complete, again.incomplete], [1, 1, 0]);
      const after = ds.runFacts(["run_id", "plan_name", "plan_cell", "status"])
        .filter((x) => x.plan_name === "kill");
      assert.equal(after.filter((x) => String(x.plan_cell).includes("/r2000/")).length, 1);
      assert.deepEqual(
        after.filter((x) => String(x.plan_cell).includes("/r3000/")).map((x) => x.status).sort(),
        ["complete", "incomplete"],
      );
    });
  });
});
