import assert from "node:assert/strict";
import { withServers } from "../_support/servers.ts";
import { runOpenLoopStep } from "../../src/collect/loadgen/step.ts";
import { parseServerUrl } from "../../src/collect/target.ts";
import { loadTable } from "../../src/analyze/load.ts";
import { readSystemFiles } from "../../src/system/proc.ts";
import {
  disturbance,
  noiseFacts,
  parseLoadAvg,
  parsePidCpuTicks,
  parseProcStat,
  ProcParseError,
  readNoiseSnapshot,
} from "../../src/collect/noise.ts";

/**
 * Runs `fn` while another process burns a core (a busy loop bounded to `seconds`), once it has
 * used some CPU (it starts slowly on a busy machine); the process is killed afterwards.
 */
async function whileBurning(
  seconds: number,
  fn: (burner: Deno.ChildProcess) => Promise<void>,
): Promise<void> {
  const burner = new Deno.Command(Deno.execPath(), {
    args: ["eval", `const end = Date.now() + ${seconds * 1000}; while (Date.now() < end) {}`],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const stat = `/proc/${burner.pid}/stat`;
    const ticks = () => parsePidCpuTicks(readSystemFiles([stat])[stat] ?? "");
    for (let i = 0; i < 100 && ticks() === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await fn(burner);
  } finally {
    burner.kill("SIGKILL");
    await burner.status;
  }
}

Deno.test("noise parsers name the file and line they cannot read", () => {
  assert.throws(() => parseProcStat("intr 1 2\n"), ProcParseError);
  assert.throws(() => parseProcStat("cpu  a b c d\n"), /\/proc\/stat:1: cannot read/);
  assert.throws(() => parseLoadAvg("x"), /\/proc\/loadavg:1/);
  assert.throws(() => parsePidCpuTicks("1 (x) R", "/proc/1/stat"), /\/proc\/1\/stat:1/);
});

Deno.test("noiseFacts(): a process burning a core during the run is counted and flagged", async () => {
  // a busy loop of its own (bounded to 20 s), measured between two real snapshots
  await whileBurning(20, async (burner) => {
    // once it burns, measure 1 s
    const before = readNoiseSnapshot([burner.pid]);
    await new Promise((r) => setTimeout(r, 1000));
    const after = readNoiseSnapshot([burner.pid]);
    // measured as another process: in otherCpuPct, and the run is disturbed
    const unmeasured = noiseFacts({ ...before, pids: {} }, { ...after, pids: {} });
    const measured = noiseFacts(before, after);
    assert.ok(measured.ownCpuPct! > 0, "the burner used CPU");
    assert.ok(
      Math.abs(unmeasured.otherCpuPct - measured.otherCpuPct - measured.ownCpuPct!) < 1e-9 ||
        measured.otherCpuPct === 0,
      `${unmeasured.otherCpuPct} = ${measured.otherCpuPct} + ${measured.ownCpuPct}`,
    );
    // the burner is inside the machine's busy time, give or take the two files' accounting:
    // a process's ticks and /proc/stat's are sampled apart (and a VM's steal may be in either)
    assert.ok(
      unmeasured.otherCpuPct >= measured.ownCpuPct! - 5 - measured.stealPct,
      `busy ${unmeasured.otherCpuPct} % holds the burner's ${measured.ownCpuPct} %`,
    );
    assert.ok(
      unmeasured.otherCpuPct > 10,
      `a burning core is over 10 %: ${unmeasured.otherCpuPct}`,
    );
    assert.match(disturbance(unmeasured)!, /^other processes used \d+ % of the CPUs/);
    assert.ok(measured.cpus >= 1);
    assert.ok(["on", "off", "unknown"].includes(measured.cpuTurbo));
  });
});

Deno.test("collectRun() stores the noise guard: a run while another process burns a core is flagged", async () => {
  await withServers([{}], async ([server]) => {
    const data = Deno.makeTempDirSync({ prefix: "kvlab-noise-" });
    await whileBurning(30, async () => {
      const run = await runOpenLoopStep(
        {
          target: parseServerUrl(server.url),
          requestedOpsPerSec: 200,
          connections: 2,
          durationS: 2,
        },
        { data, label: "noisy" },
      );
      assert.equal(run.status, "complete", run.reason ?? "");
    });
    const runs = loadTable(data, "runs").toRecords()[0];
    assert.ok(
      (runs.noise_other_cpu_pct as number) > 10,
      `a burning core is another process's CPU: ${runs.noise_other_cpu_pct}`,
    );
    assert.match(String(runs.noise_disturbance), /other processes used \d+ % of the CPUs/);
    assert.ok((runs.noise_own_cpu_pct as number) > 0, "kvlab's own CPU is measured");
    assert.equal(typeof runs.load1_after, "number");
    assert.ok(["on", "off", "unknown"].includes(String(runs.cpu_turbo)));
    // a local server and this process, neither pinned: they may share CPUs
    assert.equal(runs.client_server_share_cpus, true);
    Deno.removeSync(data, { recursive: true });
  });
});
