import assert from "node:assert/strict";
import { CellLocks, LOCK_LEASE_MS } from "../../src/store/locks.ts";
import { processStart } from "../../src/system/pids.ts";

function owner(over: Record<string, unknown>): string {
  return JSON.stringify({
    cell: "p/a/c1/rep1",
    pid: 1,
    pid_start: null,
    hostname: Deno.hostname(),
    started_at: "2026-11-30T00:00:00.000Z",
    ...over,
  });
}

Deno.test("CellLocks", async (t) => {
  const data = Deno.makeTempDirSync({ prefix: "kvlab-locks-" });
  const locks = new CellLocks(data);
  const cell = "p/a/c1/rep1";
  const path = locks.lockPath(cell);

  await t.step("tryAcquire() takes a free cell once; release() frees it", () => {
    const a = locks.tryAcquire(cell);
    assert.ok(!("held" in a));
    assert.equal(a.tookOver, false);
    const b = locks.tryAcquire(cell);
    assert.ok("held" in b && b.held.pid === Deno.pid);
    locks.release(a);
    const c = locks.tryAcquire(cell);
    assert.ok(!("held" in c));
    locks.release(c);
    assert.throws(() => Deno.statSync(path), Deno.errors.NotFound);
  });

  await t.step("a lock of a live process on this host is held", async () => {
    const sleeper = new Deno.Command("sleep", { args: ["60"] }).spawn();
    try {
      Deno.writeTextFileSync(
        path,
        owner({ pid: sleeper.pid, pid_start: processStart(sleeper.pid) }),
      );
      const got = locks.tryAcquire(cell);
      assert.ok("held" in got && got.held.pid === sleeper.pid);
      // the same pid with another start time is another process: the owner is gone
      Deno.writeTextFileSync(
        path,
        owner({ pid: sleeper.pid, pid_start: "Thu Jan  1 00:00:00 1970" }),
      );
      const taken = locks.tryAcquire(cell);
      assert.ok(!("held" in taken) && taken.tookOver);
      locks.release(taken);
    } finally {
      sleeper.kill("SIGKILL");
      await sleeper.status;
    }
  });

  await t.step("a lock of a dead process on this host is taken over", async () => {
    const ended = new Deno.Command("true").spawn();
    await ended.status;
    Deno.writeTextFileSync(path, owner({ pid: ended.pid, pid_start: "x" }));
    const got = locks.tryAcquire(cell);
    assert.ok(!("held" in got) && got.tookOver);
    locks.release(got);
  });

  await t.step("a lock of another host is held until its lease runs out", () => {
    Deno.writeTextFileSync(path, owner({ pid: 1, hostname: "elsewhere.example" }));
    const held = locks.tryAcquire(cell);
    assert.ok("held" in held && held.held.hostname === "elsewhere.example");
    const later = new CellLocks(data, { now: () => new Date(Date.now() + LOCK_LEASE_MS + 1000) });
    const got = later.tryAcquire(cell);
    assert.ok(!("held" in got) && got.tookOver);
    later.release(got);
  });

  await t.step("a take-over in progress elsewhere is not raced", () => {
    const ended = { pid: 2 ** 22 + 3 }; // no such pid
    Deno.writeTextFileSync(path, owner({ pid: ended.pid }));
    Deno.writeTextFileSync(`${path}.takeover`, "1\n");
    const got = locks.tryAcquire(cell);
    assert.ok("held" in got, "waits while another runner takes the lock over");
    Deno.removeSync(`${path}.takeover`);
    Deno.removeSync(path);
  });
});
