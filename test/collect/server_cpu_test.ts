import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/load.ts";
import {
  DenoProcessRunner,
  parseServerUrl,
  runMemorySampler,
  runMemorySweep,
  runRedisBenchmark,
} from "../../src/collect/mod.ts";
import { withServers } from "../_support/servers.ts";

Deno.test("server CPU over the run is stored for redis-benchmark runs, memory sweeps and samplers", async () => {
  await withServers([{}], async ([s]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-cpu-" });
    const target = parseServerUrl(s.url);
    await runRedisBenchmark({
      data,
      runner: new DenoProcessRunner(),
      params: { target, tests: ["set"], requests: 20000, clients: 10 },
      label: "bench",
    });
    await runMemorySweep({ data, target, keyCounts: [20000], label: "sweep" });
    await runMemorySampler({ data, target, durationS: 0.2, intervalMs: 100, label: "sampler" });
    const runs = loadTable(data, "runs").sort("started_at");
    assert.deepEqual(runs.getColumn("label").toArray(), ["bench", "sweep", "sampler"]);
    for (const col of ["server_cpu_user_s", "server_cpu_sys_s"]) {
      const cpu = runs.getColumn(col).toArray() as (number | null)[];
      assert.ok(cpu.every((x) => x !== null && x >= 0), `${col}: ${cpu}`);
    }
    // 20,000 SETs cost the server measurable CPU
    const busy = runs.getColumn("server_cpu_user_s").toArray().slice(0, 2) as number[];
    const sys = runs.getColumn("server_cpu_sys_s").toArray().slice(0, 2) as number[];
    assert.ok(busy.every((u, i) => u + sys[i] > 0), `${busy} ${sys}`);
  });
});
