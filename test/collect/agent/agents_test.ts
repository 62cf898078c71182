// Several client hosts (issue 35), end to end: three `kvlab agent` processes, each in its own
// network namespace joined to the server's by a veth (on loopback where namespaces cannot be
// made, said so), a control redis-server and a target redis-server in the server's namespace,
// and `kvlab run` coordinating. One merged run per cell, one agent_steps row per agent, the
// agents' raw files; a killed agent makes its cell incomplete and a resumed plan re-runs only
// that cell; a work item no plan kind allows, written to the stream, is refused. (This process
// may connect to loopback only: everything that talks to the namespaces is a child process.)
import assert from "node:assert/strict";
import { Dataset } from "../../../src/store/dataset.ts";
import pl from "nodejs-polars";
import * as hdr from "hdr-histogram-js";
import { decodeHistogram, mergeHistograms } from "../../../src/collect/loadgen/histogram.ts";
import { hdrValueAtPercentile } from "../../../src/hdr.ts";
import { freePort, type Hosts, makeHosts, redisCli, waitForServer } from "../../_support/netns.ts";
import { withTempDir } from "../../_support/temp.ts";

const CLI = new URL("../../../src/cli.ts", import.meta.url).pathname;
const AGENTS = 3;
/**
 * The step's rate, issue 35's 30,000/s. Whether three agents, the coordinator and the server
 * sustain it on 2 shared cores depends on the machine's load (29,996/s here with nothing else
 * running, 20,000–27,600/s with other work): the checks are of the merge, not of the rate reached.
 */
const RATE = Number(Deno.env.get("KVLAB_AGENTS_TEST_RATE") ?? 30_000);

interface World {
  hosts: Hosts;
  control: string;
  serverPort: number;
  controlPort: number;
  agents: Deno.ChildProcess[];
  dir: string;
  /** Stops the control server (by PID). */
  stopControl?: () => Promise<void>;
  /** Starts the control server (again, on the same port). */
  startControl: () => Promise<Deno.ChildProcess>;
}

const kvlab = (...args: string[]) => [Deno.execPath(), "run", "-A", CLI, ...args];

/** The password of the step on a server with one; the agents read it from this variable. */
const PW_ENV = "KVLAB_AGENTS_TEST_PW";
const PW = "agents-test-s3cret-9f2c";
Deno.env.set(PW_ENV, PW); // (the agents and the coordinator inherit it)

function agentArgv(w: World, k: number): string[] {
  return [
    ...w.hosts.inAgent(k),
    ...kvlab("agent", "--control", w.control, "--name", `a${k + 1}`, "--password-env", PW_ENV),
  ];
}

/** The protocol messages of a stream (read by redis-cli: `--raw` prints one per line). */
async function messages(w: World, args: string[]): Promise<Record<string, unknown>[]> {
  const text = await redisCli(w.hosts, w.controlPort, args) ?? "";
  return text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

/** Waits until the agents registered in the last 15 s (polled: at most 60 s, 200 ms apart). */
async function waitForAgents(w: World, names: string[]): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const now = Number((await redisCli(w.hosts, w.controlPort, ["TIME"]))?.split("\n")[0]) * 1000;
    const regs = await messages(w, ["XREVRANGE", "kvlab:agents", "+", "-", "COUNT", "200"]);
    const seen = new Set(regs.filter((m) => now - Number(m.atMs) < 15_000).map((m) => m.agent));
    if (names.every((n) => seen.has(n))) return;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`agents ${names.join(", ")} did not register`);
}

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  const hosts = await makeHosts(AGENTS);
  // deno-lint-ignore no-console
  console.log(`hosts: ${hosts.mode}${hosts.note ? ` (${hosts.note})` : ""}`);
  try {
    await withTempDir("kvlab-agents-", async (dir) => {
      const serverPort = freePort(), controlPort = freePort();
      const start = async (port: number) => {
        const p = hosts.spawn([
          ...hosts.inServer,
          "redis-server",
          ...["--port", String(port), "--bind", hosts.serverHost, "--save", ""],
          ...["--appendonly", "no", "--protected-mode", "no"],
        ]);
        await waitForServer(hosts, port);
        return p;
      };
      await start(serverPort);
      let controlServer = await start(controlPort);
      const startControl = async () => (controlServer = await start(controlPort));
      const control = `redis://${hosts.serverHost}:${controlPort}`;
      const w: World = { hosts, control, serverPort, controlPort, agents: [], dir, startControl };
      w.stopControl = () => hosts.kill(controlServer);
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

/** Writes a plan and returns the `kvlab run` argv that runs it. */
function plan(
  w: World,
  o: {
    name: string;
    rates: number[];
    stepS: number;
    timeoutS: number;
    engine?: string;
    passwordEnv?: string;
    /** Run every rate, NS or not (`continue_after_ns`). */
    everyRate?: boolean;
  },
): string[] {
  const file = `${w.dir}/${o.name}.yaml`;
  Deno.writeTextFileSync(
    file,
    `name: ${o.name}\nkind: latency-sweep\n` +
      `servers: [{name: redis, url: 'redis://${w.hosts.serverHost}:${w.serverPort}'` +
      `${o.passwordEnv ? `, password_env: ${o.passwordEnv}` : ""}}]\n` +
      `timeout_s: ${o.timeoutS}\n` +
      `sweep: {engine: ${o.engine ?? "kvlab"}, clients: 12, rates: [${o.rates.join(", ")}], ` +
      `step_s: ${o.stepS}, keys: 1000, data_size_bytes: 32` +
      `${o.engine === "memtier" ? ", preload: false" : ""}` +
      `${o.everyRate ? ", continue_after_ns: true" : ""}}\n` +
      `agents: {control: '${w.control}', count: ${AGENTS}}\n`,
  );
  return kvlab("run", file, "--data", `${w.dir}/data`);
}

/** Runs `kvlab run` (a process: it reaches the namespaces) and waits for it. */
async function run(w: World, argv: string[]): Promise<string> {
  const p = w.hosts.spawn(argv, { log: `${w.dir}/run.log` });
  await p.status;
  return Deno.readTextFileSync(`${w.dir}/run.log`);
}

/** The calls of GET the target server answered so far. */
async function gets(w: World): Promise<number> {
  const info = await redisCli(w.hosts, w.serverPort, ["INFO", "commandstats"]) ?? "";
  return Number(/cmdstat_get:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

Deno.test("kvlab run with agents: one merged run per cell from three hosts", async (t) => {
  await withWorld(async (w) => {
    const ds = Dataset.of(`${w.dir}/data`);
    await t.step(
      "a fixed-rate step: rates summed, percentiles of the union of HDR files",
      async () => {
        await run(w, plan(w, { name: "three", rates: [RATE], stepS: 2, timeoutS: 30 }));
        const [step] = ds.runFacts(["run_id", "status", "error", "warning_count"]);
        const runIds = [String(step.run_id)];
        const agents = ds.read("agent_steps", { runIds }).sort("agent").toRecords();
        assert.deepEqual(agents.map((s) => [s.agent, s.status, s.share_index, s.share_of]), [
          ["a1", "ok", 0, 3],
          ["a2", "ok", 1, 3],
          ["a3", "ok", 2, 3],
        ]);
        const [row] = ds.read("results", { runIds }).toRecords();
        const sum = agents.reduce((n, s) => n + Number(s.ops_per_sec), 0);
        assert.ok(
          Math.abs(Number(row.ops_per_sec) - sum) <= 0.01 * sum,
          `${row.ops_per_sec} ≠ ${sum}`,
        );
        assert.equal(row.requested_ops_per_sec, RATE);
        // the union of the agents' own histograms, read from their raw files
        const files = ds.runRaw(runIds[0]).filter((f) => /agent-a\d\.json$/.test(f.name));
        assert.equal(files.length, 3);
        const union = mergeHistograms(
          files.map((f) =>
            decodeHistogram(JSON.parse(new TextDecoder().decode(f.bytes)).step.latencyFromIntended)
          ),
        );
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
        for (const s of agents) {
          assert.equal(typeof s.clock_offset_ms, "number");
          assert.equal(typeof s.start_skew_ms, "number");
        }
        // deno-lint-ignore no-console
        console.log(
          `step ${RATE}/s on 3 agents (${w.hosts.mode}): ${step.status}, achieved ` +
            `${Number(row.ops_per_sec).toFixed(0)}/s (sum ${sum.toFixed(0)}), p50 ` +
            `${row.p50_latency_ms} p99 ${row.p99_latency_ms} p99.9 ${row.p999_latency_ms} ms; ` +
            agents.map((s) =>
              `${s.agent}: ${Number(s.ops_per_sec).toFixed(0)}/s cpu ${s.client_cpu_s} s ` +
              `lateness p99 ${s.send_lateness_p99_ms} ms offset ${s.clock_offset_ms}±` +
              `${s.clock_uncertainty_ms} ms skew ${s.start_skew_ms} ms`
            ).join("; "),
        );
      },
    );
    await t.step("a memtier step: three memtier processes, one merged run", async () => {
      await run(
        w,
        plan(w, { name: "memtier", rates: [3000], stepS: 2, timeoutS: 30, engine: "memtier" }),
      );
      const [step] = ds.runFacts(["run_id", "plan_name", "status", "error", "tool"])
        .filter((x) => x.plan_name === "memtier");
      assert.equal(step.status, "complete", String(step.error));
      assert.equal(step.tool, "memtier_benchmark");
      const runIds = [String(step.run_id)];
      const agents = ds.read("agent_steps", { runIds }).sort("agent").toRecords();
      // 12 connections at 250/s each: 4 per agent, 1,000/s each
      assert.deepEqual(
        agents.map((s) => [s.agent, s.status, s.connections, s.requested_ops_per_sec]),
        [
          ["a1", "ok", 4, 1000],
          ["a2", "ok", 4, 1000],
          ["a3", "ok", 4, 1000],
        ],
      );
      const [row] = ds.read("results", { runIds }).filter(pl.col("test").eq(pl.lit("TOTALS")))
        .toRecords();
      const sum = agents.reduce((n, s) => n + Number(s.ops_per_sec), 0);
      assert.ok(
        Math.abs(Number(row.ops_per_sec) - sum) <= 1e-6 * sum,
        `${row.ops_per_sec} ≠ ${sum}`,
      );
      assert.equal(row.requested_ops_per_sec, 3000);
      // each agent's memtier printed its own Totals; kvlab's per-agent rate is that one
      const results = ds.runRaw(runIds[0]).filter((f) => /agent-a\d\.json$/.test(f.name))
        .map((f) => JSON.parse(new TextDecoder().decode(f.bytes)));
      assert.equal(results.length, 3);
      for (const r of results) {
        const printed = Number(/^Totals\s+([\d.]+)/m.exec(r.step.files["stdout.txt"])?.[1]);
        const mine = agents.find((s) => s.agent === r.agent)!;
        assert.ok(
          Math.abs(printed - Number(mine.ops_per_sec)) <= 0.01 * printed,
          `${r.agent}: ${printed}`,
        );
      }
      // the percentiles of the union of the agents' FULL_RUN interval logs (µs), read here:
      // memtier's histograms (lowest value 10 µs, 2 digits) added into the first one
      let union: hdr.Histogram | null = null;
      let intervals = 0;
      for (const r of results) {
        const [log] = Object.keys(r.step.files).filter((n) => /FULL_RUN_1\.hgrm$/.test(n));
        for (const line of String(r.step.files[log]).split("\n")) {
          const base64 = /,(HISTF\S+)$/.exec(line)?.[1];
          if (!base64) continue;
          const h = hdr.decodeFromCompressedBase64(base64, 64, false);
          if (union === null) union = h;
          else union.add(h);
          intervals++;
        }
      }
      assert.ok(union !== null && intervals >= 3 && union.totalCount > 0);
      for (
        const [p, col] of [[50, "p50_latency_ms"], [99, "p99_latency_ms"], [
          99.9,
          "p999_latency_ms",
        ]] as const
      ) {
        const want = union.getValueAtPercentile(p) / 1000;
        assert.ok(
          Math.abs(Number(row[col]) - want) <= want * 1e-3,
          `${col}: ${row[col]} vs ${want}`,
        );
      }
      // deno-lint-ignore no-console
      console.log(
        `memtier 3000/s on 3 agents: achieved ${Number(row.ops_per_sec).toFixed(0)}/s, p50 ` +
          `${row.p50_latency_ms} p99 ${row.p99_latency_ms} ms; ` +
          agents.map((s) =>
            `${s.agent}: ${Number(s.ops_per_sec).toFixed(0)}/s skew ${s.start_skew_ms} ms`
          ).join("; "),
      );
    });
    await t.step(
      "a server with a password: its variable's name on the stream, never it",
      async () => {
        await redisCli(w.hosts, w.serverPort, ["CONFIG", "SET", "requirepass", PW]);
        try {
          const argv = plan(w, {
            name: "pw",
            rates: [1500],
            stepS: 1,
            timeoutS: 30,
            passwordEnv: PW_ENV,
          });
          await run(w, argv);
        } finally {
          await redisCli(w.hosts, w.serverPort, [
            "-a",
            PW,
            "--no-auth-warning",
            "CONFIG",
            "SET",
            "requirepass",
            "",
          ]);
        }
        const [step] = ds.runFacts(["run_id", "plan_name", "status", "error"])
          .filter((x) => x.plan_name === "pw");
        assert.equal(step.status, "complete", String(step.error));
        const runIds = [String(step.run_id)];
        const agents = ds.read("agent_steps", { runIds }).toRecords();
        assert.deepEqual(agents.map((x) => x.status), ["ok", "ok", "ok"]);
        // the streams carry the variable's name only; nothing stored holds the password
        let streams = "";
        for (const k of ["a1", "a2", "a3"]) {
          streams += await redisCli(w.hosts, w.controlPort, [
            "XRANGE",
            `kvlab:work:${k}`,
            "-",
            "+",
          ]);
        }
        streams += await redisCli(w.hosts, w.controlPort, ["XRANGE", "kvlab:results", "-", "+"]);
        assert.match(streams, new RegExp(`"password_env":"${PW_ENV}"`));
        assert.ok(!streams.includes(PW), "the password is not on the control server");
        for (const f of walk(`${w.dir}/data`)) {
          assert.ok(!Deno.readTextFileSync(f).includes(PW), `${f} holds the password`);
        }
      },
    );
    await t.step("a work item no plan kind allows is refused, and nothing runs", async () => {
      const before = await gets(w);
      const time = (await redisCli(w.hosts, w.controlPort, ["TIME"]))!.split("\n");
      const startAtMs = Number(time[0]) * 1000 + 500;
      const item = (id: string, sweep: Record<string, unknown>, server = {}, at = startAtMs) =>
        JSON.stringify({
          type: "work",
          v: 1,
          item: id,
          cell: "forged",
          agent: "a1",
          plan: {
            kind: "latency-sweep",
            server: { name: "x", url: `redis://${w.hosts.serverHost}:${w.serverPort}`, ...server },
            sweep: { clients: 3, rates: [100], step_s: 1, ...sweep },
          },
          share: { index: 0, of: 1 },
          startAtMs: at,
          timeoutS: 5,
        });
      // written straight to the stream, as anyone who may write to it could
      for (
        const [id, sweep] of [
          ["forged-tool", { tool: "/bin/touch" }],
          ["forged-opt", { shell: "id" }],
          // memtier's options checked as a plan's: memtier has no Poisson arrivals
          ["forged-memtier", { engine: "memtier", arrivals: "poisson" }],
        ] as const
      ) {
        await redisCli(w.hosts, w.controlPort, [
          "XADD",
          "kvlab:work:a1",
          "*",
          "msg",
          item(id, sweep),
        ]);
      }
      // a variable this agent was not given (it would send HOME's value to any server)
      await redisCli(w.hosts, w.controlPort, [
        "XADD",
        "kvlab:work:a1",
        "*",
        "msg",
        item("forged-env", {}, { password_env: "HOME" }),
      ]);
      // a start an hour ahead would park the agent until someone cancels it
      await redisCli(w.hosts, w.controlPort, [
        "XADD",
        "kvlab:work:a1",
        "*",
        "msg",
        item("forged-late", {}, {}, startAtMs + 3_600_000),
      ]);
      const seen = new Map<string, string>();
      for (let i = 0; i < 50 && seen.size < 5; i++) {
        for (const m of await messages(w, ["XRANGE", "kvlab:results", "-", "+"])) {
          if (String(m.item).startsWith("forged")) {
            seen.set(String(m.item), `${m.status}: ${m.error}`);
          }
        }
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.match(seen.get("forged-tool") ?? "", /^refused: sweep\.tool: an agent runs its own/);
      assert.match(seen.get("forged-opt") ?? "", /^refused: .*sweep\.shell: unknown field/);
      assert.match(
        seen.get("forged-memtier") ?? "",
        /^refused: .*sweep\.arrivals: only for engine/,
      );
      assert.match(
        seen.get("forged-env") ?? "",
        /^refused: server\.password_env HOME: not a variable/,
      );
      assert.match(seen.get("forged-late") ?? "", /^refused: its start is 3\d{3} s ahead/);
      await new Promise((res) => setTimeout(res, 1500)); // past the forged start time
      assert.equal(await gets(w), before, "nothing was sent");
    });
    await t.step("a killed agent: its cell incomplete naming it, resumed alone", async () => {
      // (a limit far above the step: the heartbeats, not the limit, find the dead agent; the
      // second cell runs even when a busy machine's first falls short of 2,000/s)
      const argv = plan(w, {
        name: "kill",
        rates: [2000, 3000],
        stepS: 2,
        timeoutS: 120,
        everyRate: true,
      });
      const at = await gets(w);
      const coordinator = w.hosts.spawn(argv, { log: `${w.dir}/kill.log` });
      // mid-step of the second cell (the first sends 4,000 GETs): agent a3 dies (SIGKILL)
      for (let i = 0; i < 600 && await gets(w) < at + 5500; i++) {
        await new Promise((res) => setTimeout(res, 50));
      }
      await w.hosts.kill(w.agents[2], "SIGKILL");
      await coordinator.status;
      const runs = ds.runFacts(["run_id", "plan_name", "plan_cell", "status", "error"])
        .filter((x) => x.plan_name === "kill");
      assert.deepEqual(runs.map((x) => x.status).sort(), ["complete", "incomplete"]);
      const cut = runs.find((x) => x.status === "incomplete")!;
      assert.match(String(cut.plan_cell), /\/r3000\//);
      assert.match(String(cut.error), /agent a3: lost mid-step \(no heartbeat for 1\d s\)/);
      const runIds = [String(cut.run_id)];
      const kept = ds.read("agent_steps", { runIds }).sort("agent").toRecords();
      assert.deepEqual(kept.map((x) => [x.agent, x.status]), [
        ["a1", "ok"],
        ["a2", "ok"],
        ["a3", "no-answer"],
      ]);
      const [res] = ds.read("results", { runIds }).toRecords();
      assert.ok(Number(res.requests) > 0, "the others' data is kept");
      // a3 back; the resumed plan runs only the incomplete cell
      w.agents[2] = w.hosts.spawn(agentArgv(w, 2), { log: `${w.dir}/agent3b.log` });
      await waitForAgents(w, ["a3"]);
      await run(w, argv);
      const after = ds.runFacts(["run_id", "plan_name", "plan_cell", "status"])
        .filter((x) => x.plan_name === "kill");
      assert.equal(after.filter((x) => String(x.plan_cell).includes("/r2000/")).length, 1);
      assert.deepEqual(
        after.filter((x) => String(x.plan_cell).includes("/r3000/")).map((x) => x.status).sort(),
        ["complete", "incomplete"],
      );
    });
    await t.step("Ctrl-C of the coordinator: the agents stop their step", async () => {
      const argv = plan(w, {
        name: "cancel",
        rates: [1200],
        stepS: 60,
        timeoutS: 120,
        engine: "memtier",
      });
      const at = await gets(w);
      const coordinator = w.hosts.spawn(argv, { log: `${w.dir}/cancel.log` });
      for (let i = 0; i < 600 && await gets(w) < at + 1000; i++) {
        await new Promise((res) => setTimeout(res, 50));
      }
      await w.hosts.kill(coordinator, "SIGINT");
      await coordinator.status;
      // nothing left sending: two reads a second apart agree (the step had ~55 s to go)
      let last = -1, now = await gets(w);
      for (let i = 0; i < 20 && now !== last; i++) {
        await new Promise((res) => setTimeout(res, 1000));
        [last, now] = [now, await gets(w)];
      }
      assert.equal(now, last, "the agents' memtier stopped");
      const [cut] = ds.runFacts(["run_id", "plan_name", "status", "error"])
        .filter((x) => x.plan_name === "cancel");
      // (nothing measured to the end: failed, the agents named)
      assert.equal(cut.status, "failed");
      assert.match(String(cut.error), /^interrupted while waiting; agent a1: error: interrupted/);
      const runIds = [String(cut.run_id)];
      const rows = ds.read("agent_steps", { runIds }).sort("agent").toRecords();
      assert.deepEqual(rows.map((x) => x.status), ["error", "error", "error"]);
      for (const x of rows) assert.match(String(x.error), /cancelled by the coordinator/);
    });
    await t.step("agents survive a restarted control server", async () => {
      await w.stopControl!();
      await new Promise((res) => setTimeout(res, 1500)); // the agents see it gone
      await w.startControl();
      // a new, empty control server: registrations on it are the agents' reconnection
      await waitForAgents(w, ["a1", "a2", "a3"]);
      assert.ok(w.agents.every((p) => p.pid > 0));
    });
    await t.step("agents stop cleanly on SIGTERM", async () => {
      for (const p of w.agents) await w.hosts.kill(p, "SIGTERM");
      assert.deepEqual((await Promise.all(w.agents.map((p) => p.status))).map((s) => s.code), [
        0,
        0,
        0,
      ]);
    });
  });
});

/** Every file under a folder. */
function* walk(dir: string): Generator<string> {
  for (const e of Deno.readDirSync(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* walk(path);
    else if (e.isFile) yield path;
  }
}
