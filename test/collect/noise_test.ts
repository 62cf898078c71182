import assert from "node:assert/strict";
import {
  disturbance,
  noiseFacts,
  parseLoadAvg,
  parsePidCpuTicks,
  parseProcStat,
  ProcParseError,
  readNoiseSnapshot,
} from "../../src/collect/noise.ts";

Deno.test("noise parsers name the file and line they cannot read", () => {
  assert.throws(() => parseProcStat("intr 1 2\n"), ProcParseError);
  assert.throws(() => parseProcStat("cpu  a b c d\n"), /\/proc\/stat:1: cannot read/);
  assert.throws(() => parseLoadAvg("x"), /\/proc\/loadavg:1/);
  assert.throws(() => parsePidCpuTicks("1 (x) R", "/proc/1/stat"), /\/proc\/1\/stat:1/);
});

Deno.test("noiseFacts(): a process burning a core during the run is counted and flagged", async () => {
  // a busy loop of its own (bounded to 20 s), measured between two real snapshots
  const burner = new Deno.Command(Deno.execPath(), {
    args: ["eval", "const end = Date.now() + 20000; while (Date.now() < end) {}"],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    // wait until it has used some CPU (it starts slowly on a busy machine), then measure 1 s
    const ticks = () => parsePidCpuTicks(Deno.readTextFileSync(`/proc/${burner.pid}/stat`));
    for (let i = 0; i < 100 && ticks() === 0; i++) await new Promise((r) => setTimeout(r, 100));
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
    assert.ok(unmeasured.otherCpuPct >= measured.ownCpuPct!);
    assert.ok(
      unmeasured.otherCpuPct > 10,
      `a burning core is over 10 %: ${unmeasured.otherCpuPct}`,
    );
    assert.match(disturbance(unmeasured)!, /^other processes used \d+ % of the CPUs/);
    assert.ok(measured.cpus >= 1);
    assert.ok(["on", "off", "unknown"].includes(measured.cpuTurbo));
  } finally {
    burner.kill("SIGKILL");
    await burner.status;
  }
});
