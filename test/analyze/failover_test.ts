/**
 * The failover report on synthetic rows (issue 33 item 6): a window and the time back to the
 * target rate as defined, an A/A run (no action, steady load) with no window, a dip that is no
 * window when it does not last past the sustained count's restart, and the runs whose data
 * cannot tell (a slow start, no recovery by the end, too few requests per interval): inconclusive
 * or null, with a reason. The chart draws what the report says.
 */

import assert from "node:assert/strict";
import {
  failoverChart,
  type FailoverEvent,
  type FailoverInterval,
  failoverReport,
} from "../../src/analyze/mod.ts";

/** 40 intervals of 100 ms at 1,000/s; `completed(i)` per interval, errors the rest. */
function run(completed: (i: number) => number, rate = 1000): FailoverInterval[] {
  const per = rate / 10;
  return Array.from({ length: 40 }, (_, i) => ({
    interval: i,
    start_ms: i * 100,
    width_ms: 100,
    requested_ops_per_sec: rate,
    sent: per,
    completed: completed(i),
    errors: per - completed(i),
    refused: per - completed(i),
    p99_latency_ms: 0.5,
  }));
}

const kill = (ms: number): FailoverEvent[] => [
  { event: "action", elapsed_ms: ms, action: "kill", node: "node 1", address: "127.0.0.1:7001" },
  {
    event: "took_over",
    elapsed_ms: null,
    action: "kill",
    node: "node 4",
    address: "127.0.0.1:7004",
  },
];

Deno.test("a window from the first short interval to the first sustained run back at the rate", () => {
  // a third of the requests fail from 1.2 s, none complete from 2.0 s to 2.5 s, back at 2.5 s
  const rows = run((i) => (i < 12 ? 100 : i < 20 ? 67 : i < 25 ? 0 : 100));
  const r = failoverReport(rows, kill(1250));
  assert.equal(r.verdict, "measured");
  assert.equal(r.windowStartMs, 1200);
  assert.equal(r.windowMs, 1300);
  assert.equal(r.backToTargetMs, 2500 - 1250);
  assert.equal(r.timeToFirstErrorMs, 0);
  assert.equal(r.failed, 8 * 33 + 5 * 100);
  assert.equal(r.failedByKind.refused, r.failed);
  assert.equal(r.shortOfTarget, 8 * 33 + 5 * 100);
  assert.equal(r.failedNode, "node 1 (127.0.0.1:7001)");
  assert.equal(r.tookOver, "node 4 (127.0.0.1:7004)");
  // a single short interval after the recovery starts no new window (3 good ones ended it)
  const dip = failoverReport(run((i) => (i >= 12 && i < 25) || i === 33 ? 0 : 100), kill(1250));
  assert.equal(dip.windowMs, 1300);
  // a stricter threshold counts the 67 % intervals too; a looser one only the outage
  assert.equal(failoverReport(rows, kill(1250), { threshold: 0.5 }).windowMs, 500);
});

Deno.test("an A/A run (no action, steady load) has no window", () => {
  const r = failoverReport(run(() => 100), []);
  assert.equal(r.verdict, "measured");
  assert.equal(r.unavailable, false);
  assert.equal(r.windowMs, null);
  assert.equal(r.failed, 0);
  assert.equal(r.action, null);
  // jitter within the threshold (93–100 of 100) is no window either
  const jitter = failoverReport(run((i) => 93 + (i * 7) % 8), []);
  assert.equal(jitter.unavailable, false);
  // an action that changed nothing: measured, no window, no first error
  const nothing = failoverReport(run(() => 100), kill(1500));
  assert.deepEqual([nothing.verdict, nothing.unavailable, nothing.timeToFirstErrorMs], [
    "measured",
    false,
    null,
  ]);
});

Deno.test("data that cannot tell: inconclusive or null, with a reason", () => {
  // the load never reached the rate before the action: a slow start is no window
  const slow = failoverReport(run((i) => (i < 10 ? 50 : 100)), kill(800));
  assert.equal(slow.verdict, "inconclusive");
  assert.match(slow.reason!, /not at the target rate .* before the action/);
  assert.equal(slow.windowMs, null);
  // not back by the end: the window is unknown, not the run's length
  const never = failoverReport(run((i) => (i < 12 ? 100 : 0)), kill(1250));
  assert.equal(never.verdict, "inconclusive");
  assert.equal(never.unavailable, true);
  assert.equal(never.windowMs, null);
  assert.match(never.reason!, /not back to the target rate by the end/);
  // 50/s in 100 ms intervals: 5 a interval, one request crosses a 90 % threshold
  const thin = failoverReport(run(() => 5, 50), kill(1250));
  assert.equal(thin.verdict, "inconclusive");
  assert.match(thin.reason!, /too few/);
  // no rows at all
  assert.match(failoverReport([], kill(1)).reason!, /no intervals/);
  // an action after the load's last interval
  assert.match(failoverReport(run(() => 100), kill(9000)).reason!, /after the load's last/);
});

Deno.test("the chart shades the report's window and marks the action", () => {
  const rows = run((i) => (i >= 12 && i < 25 ? 0 : 100));
  const spec = failoverChart(rows, kill(1250));
  const json = JSON.stringify(spec);
  assert.match(json, /window 1300 ms/);
  assert.match(json, /node 1 \(127\.0\.0\.1:7001\) → node 4/);
  assert.match(json, /"what":"kill node 1"/);
  assert.match(json, /"a":1\.2,"b":2\.5/);
  assert.match(JSON.stringify(failoverChart(rows.slice(0, 2), [])), /inconclusive/);
});

Deno.test("a partial last interval (a duration not a multiple of the width) is no shortfall", () => {
  // --duration 3.95: the last interval is 50 ms wide and completes 50, its share of the rate
  const rows = run((i) => (i >= 12 && i < 15 ? 0 : 100)).slice(0, 40);
  rows[39] = { ...rows[39], width_ms: 50, sent: 50, completed: 50, errors: 0, refused: 0 };
  const r = failoverReport(rows, kill(1250));
  assert.equal(r.verdict, "measured", r.reason ?? "");
  assert.equal(r.windowMs, 300);
  // an A/A run of the same length: no window
  const aa = failoverReport(rows.map((x) => ({ ...x, completed: x.sent, errors: 0 })), []);
  assert.deepEqual([aa.verdict, aa.unavailable], ["measured", false]);
  // a 5 ms sliver completing nothing: too thin to tell anything, left out
  const sliver = [...rows.slice(0, 39), { ...rows[39], width_ms: 5, sent: 5, completed: 0 }];
  assert.equal(failoverReport(sliver, kill(1250)).verdict, "measured");
  // as the generator stores it: every interval 100 ms wide, the last one holding the schedule's
  // end (--duration 4: one request at 4000 ms; --duration 3.95 over 40 intervals: 50 of 100)
  const aaRows = aa.verdict === "measured" ? run(() => 100).map((x) => ({ ...x, errors: 0 })) : [];
  for (const sent of [1, 50]) {
    const tail = [...aaRows, {
      ...aaRows[39],
      interval: 40,
      start_ms: 4000,
      sent,
      completed: sent,
    }];
    const r = failoverReport(tail, none(2000));
    assert.deepEqual([r.verdict, r.unavailable, r.reason], ["measured", false, null], `${sent}`);
    // the same tail failing: a window not back by the end when it held enough requests to tell
    const failing = failoverReport(
      [...tail.slice(0, 40), { ...tail[40], completed: 0 }],
      none(2000),
    );
    assert.equal(failing.verdict, sent === 1 ? "measured" : "inconclusive", `${sent}`);
  }
});

/** A seeded generator (mulberry32): the same runs every time. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * An A/A run: `n` intervals at 1,000/s, the same noise before and after the action at `at`:
 * each interval completes 95–100, and with probability `p` a stall starts (1 interval, or 2 with
 * probability 0.3) completing 20–80, its requests completed late in the next interval; no error.
 */
function aaRun(rand: () => number, n: number, p: number): FailoverInterval[] {
  const completed: number[] = Array.from({ length: n }, () => 95 + Math.floor(rand() * 6));
  for (let i = 3; i < n - 3; i++) {
    if (rand() >= p) continue;
    const len = rand() < 0.3 ? 2 : 1;
    for (let k = 0; k < len; k++) {
      const got = 20 + Math.floor(rand() * 60);
      completed[i + len] += completed[i + k] - got;
      completed[i + k] = got;
    }
    i += len;
  }
  return completed.map((c, i) => ({
    interval: i,
    start_ms: i * 100,
    width_ms: 100,
    requested_ops_per_sec: 1000,
    sent: 100,
    completed: c,
    errors: 0,
  }));
}

const none = (ms: number): FailoverEvent[] => [{ event: "action", elapsed_ms: ms, action: "none" }];

Deno.test("a 100 ms error-free stall is no window: inconclusive without pre-action noise", () => {
  // the review's case: completions 40 then 160 (a stall, nothing lost), no dip before it
  const stall = (c: (i: number) => number) => run(c).map((x) => ({ ...x, errors: 0, refused: 0 }));
  const r = failoverReport(stall((i) => (i === 20 ? 40 : i === 21 ? 160 : 100)), none(2000));
  assert.equal(r.unavailable, false);
  assert.equal(r.windowMs, null);
  assert.equal(r.verdict, "inconclusive");
  assert.match(r.reason!, /error-free dip of 100 ms, longer than any in the 20 settled intervals/);
  assert.equal(r.dipMs, 100);
  // the same stall with a 200 ms one before the action: within the noise
  const noisy = failoverReport(
    stall((i) => (i === 5 || i === 6 ? 40 : i === 20 ? 40 : 100)),
    none(2000),
  );
  assert.deepEqual([noisy.verdict, noisy.unavailable, noisy.withinNoise], [
    "measured",
    false,
    true,
  ]);
  assert.deepEqual(noisy.noise, { intervals: 20, short: 2, longestDipMs: 200 });
  assert.equal(noisy.shortAfterAction, 1);
  // with errors it is a window whatever the noise
  const refused = failoverReport(run((i) => (i === 20 ? 40 : 100)), kill(2000));
  assert.deepEqual([refused.unavailable, refused.windowMs], [true, 100]);
});

Deno.test("A/A runs with random stalls: at most 5 % called unavailable (200 seeded runs each)", () => {
  const rand = random(33);
  // a typical run (2 s before the action, 6 s after) and a calibrated one (40 s before, 2 s after)
  for (const [n, at, p] of [[80, 20, 0.04], [420, 400, 0.02]] as const) {
    const count = { unavailable: 0, withinNoise: 0, inconclusive: 0, clean: 0 };
    for (let k = 0; k < 200; k++) {
      const r = failoverReport(aaRun(rand, n, p), none(at * 100 + 20));
      if (r.unavailable) count.unavailable++;
      else if (r.withinNoise) count.withinNoise++;
      else if (r.verdict === "inconclusive") count.inconclusive++;
      else count.clean++;
    }
    assert.ok(count.unavailable <= 10, `${n} intervals: ${JSON.stringify(count)}`);
    // the report still tells noise for what it is when it has seen enough of it
    if (n === 420) assert.ok(count.withinNoise + count.clean >= 150, JSON.stringify(count));
  }
});
