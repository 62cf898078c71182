// A redis-benchmark plan with a warm-up against a server that is down: the warm-up is skipped
// (it would wait out the whole timeout_s) and the cell fails with the connection error. Real
// redis-benchmark, real closed port; the runner is the real one, recorded.
import assert from "node:assert/strict";
import { parsePlan, runPlan, type StudyEvent } from "../../../src/collect/mod.ts";
import { findTool } from "../../../src/collect/tools/find.ts";
import { recordingRunner } from "../../_support/runners.ts";
import { closedPort } from "../../_support/servers.ts";
import { missingOutsideCi } from "../../_support/tools.ts";

/**
 * A one-cell redis-benchmark plan against a closed port, with `extra` lines; `timeout_s` is
 * short so that, should a step wait for the server, the test ends (and fails) soon.
 */
const downPlan = (name: string, extra: string) =>
  parsePlan(
    `name: ${name}
servers:
  - { name: down, url: "redis://127.0.0.1:${closedPort()}" }
tests: [set]
requests: 1000
matrix:
  clients: [1]
repetitions: 1
pause_s: 0
timeout_s: 5
${extra}`,
    "plan.yaml",
  );

Deno.test({
  name: "runPlan() skips the warm-up of a cell whose server does not answer",
  ignore: missingOutsideCi("redis-benchmark"),
  fn: async () => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-warmup-down-" });
    const plan = downPlan("down", "warmup_requests: 100000\n");
    const { runner, argvs } = recordingRunner();
    const events: StudyEvent[] = [];
    const result = await runPlan(plan, {
      data: `${dir}/data`,
      runner,
      onEvent: (e) => events.push(e),
    });
    assert.deepEqual(events.filter((e) => e.kind === "warmup"), [], "no warm-up event");
    assert.ok(
      !argvs.some((a) => a.includes("100000")),
      `no warm-up run: ${JSON.stringify(argvs)}`,
    );
    assert.equal(result.failed, 1);
    const end = events.find((e) => e.kind === "end") as Extract<StudyEvent, { kind: "end" }>;
    assert.match(String(end.run.reason), /ECONNREFUSED|cannot connect|refused/i);
    Deno.removeSync(dir, { recursive: true });
  },
});

Deno.test({
  name: "runPlan() finds `tool: valkey-benchmark` in the tools cache when PATH lacks it",
  ignore: findTool("redis-benchmark") === null ||
    findTool("valkey-benchmark", { env: { PATH: Deno.env.get("PATH") } }) !== null,
  fn: async () => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-tools-cache-" });
    // a tools cache as .ci/install lays it out, holding (a link to) a benchmark binary
    Deno.mkdirSync(`${dir}/tools/valkey-8.0.1`, { recursive: true });
    Deno.symlinkSync(findTool("redis-benchmark")!, `${dir}/tools/valkey-8.0.1/valkey-benchmark`);
    const plan = downPlan("cache", "tool: valkey-benchmark\n");
    const before = Deno.env.get("KVLAB_TOOLS_DIR");
    Deno.env.set("KVLAB_TOOLS_DIR", `${dir}/tools`);
    try {
      // before the fix: ToolNotFoundError "valkey-benchmark: not found on PATH"
      const result = await runPlan(plan, { data: `${dir}/data` });
      assert.equal(result.failed, 1); // the server is down; the tool was found and ran
    } finally {
      if (before === undefined) Deno.env.delete("KVLAB_TOOLS_DIR");
      else Deno.env.set("KVLAB_TOOLS_DIR", before);
    }
    Deno.removeSync(dir, { recursive: true });
  },
});
