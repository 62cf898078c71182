// What a timed sleep costs here (src/system/timer.ts): the thread's timer slack is put back
// after, since threads and processes started later inherit it (a child started after the
// probe ran with 1 ns slack, memtier and redis-server included).
import assert from "node:assert/strict";
import { timedSleepCost } from "../../src/system/timer.ts";

/** The timer slack a child process inherits from this thread, ns. */
function childSlack(): string {
  const out = new Deno.Command("cat", { args: ["/proc/self/timerslack_ns"] }).outputSync();
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("timedSleepCost() leaves the thread's timer slack as it found it", () => {
  const before = childSlack();
  assert.match(before, /^\d+$/);
  const c = timedSleepCost(200, 0.019);
  assert.ok(c !== null, "FFI and epoll_pwait2 are there on the test machines");
  assert.equal(c.dueTimes, 95);
  assert.ok(c.sleeps > 0 && c.sleeps <= 95, "fewer sleeps than a p99 needs");
  // with fewer than 100 sleeps the p99 is the largest
  assert.ok(c.overshootP99Us >= c.overshootUs, "the largest is at least the mean");
  assert.equal(childSlack(), before);
});

Deno.test("timedSleepCost() serves each due time a late wake-up passed, as an open loop does", () => {
  // 10 µs between due times: a sleep and its wake-up take longer than that (30 µs or more on
  // the VMs, several µs on bare metal), so wake-ups pass more than one due time; each is served
  // and counted (the lateness of each is checked without a clock in servePassed's example)
  const c = timedSleepCost(10, 0.05);
  assert.ok(c !== null);
  assert.equal(c.dueTimes, 5000);
  assert.ok(c.sleeps < c.dueTimes, `${c.dueTimes} due times, ${c.sleeps} sleeps`);
});
