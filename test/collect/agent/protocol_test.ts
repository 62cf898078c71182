// The control protocol of several client hosts (issue 35): messages checked field by field, work
// items read by the plan parser's own rules, no secret on the stream, the exact merge of hosts'
// histograms.
import assert from "node:assert/strict";
import {
  AgentProtocolError,
  encodeAgentMessage,
  parseAgentMessage,
  type WorkItem,
} from "../../../src/collect/agent/protocol.ts";
import { checkWorkPlan, WorkRefused } from "../../../src/collect/plan/agent_work.ts";
import { decodeStep, encodeStep, mergeSteps } from "../../../src/collect/agent/merge.ts";
import { latencyHistogram } from "../../../src/collect/loadgen/histogram.ts";
import type { OpenLoopResult } from "../../../src/collect/loadgen/open_loop.ts";
import { hdrValueAtPercentile } from "../../../src/hdr.ts";
import { openLoopPlan } from "../../../src/collect/loadgen/open_loop.ts";
import { shareOf } from "../../../src/collect/loadgen/schedule.ts";

const work: WorkItem = {
  type: "work",
  v: 1,
  item: "i1",
  cell: "p/a/r3000/rep1",
  agent: "a1",
  plan: {
    kind: "latency-sweep",
    server: { name: "a", url: "redis://10.9.0.1:6379" },
    sweep: { engine: "kvlab", clients: 6, rates: [3000], step_s: 2 },
  },
  share: { index: 1, of: 3 },
  startAtMs: 1.7e12,
  timeoutS: 60,
};

Deno.test("parseAgentMessage() checks every field of a work item", async (t) => {
  await t.step("a work item round-trips", () => {
    assert.deepEqual(parseAgentMessage(encodeAgentMessage(work), "w#1-0"), work);
  });
  await t.step("fields outside the protocol are refused, named", () => {
    for (
      const [bad, re] of [
        [{ ...work, argv: ["sh", "-c", "id"] }, /argv: unknown field/],
        [{ ...work, v: 2 }, /v: expected 1/],
        [{ ...work, share: { index: 3, of: 3 } }, /share\.index: expected 0 ≤ index < 3/],
        [{ ...work, agent: "a b" }, /agent: expected letters/],
        [{ ...work, plan: { ...work.plan, command: "x" } }, /plan\.command: unknown field/],
      ] as const
    ) {
      assert.throws(
        () => parseAgentMessage(JSON.stringify(bad), "kvlab:work:a1#5-0"),
        (e: Error) =>
          e instanceof AgentProtocolError && re.test(e.message) &&
          e.message.startsWith("kvlab:work:a1#5-0:1:1: "),
      );
    }
    assert.throws(() => parseAgentMessage("not json", "x#1-0"), /msg: expected a JSON object/);
  });
  await t.step("no password is ever encoded", () => {
    const secret = { ...work, plan: { ...work.plan, server: { name: "a", url: "redis://:pw@h" } } };
    assert.throws(() => encodeAgentMessage(secret), TypeError);
    assert.throws(() => parseAgentMessage(JSON.stringify(secret), "x#1-0"), /without credentials/);
  });
});

Deno.test("checkWorkPlan() reads a work item as the plan parser reads a plan", async (t) => {
  const engines = ["kvlab"];
  await t.step("a valid item gives the step of its share's plan", () => {
    const { step } = checkWorkPlan(work.plan, { engines, where: "item i1" });
    assert.equal(step.requestedOpsPerSec, 3000);
    assert.equal(step.clients, 6);
  });
  await t.step("tools and options no plan kind allows are refused", () => {
    for (
      const [sweep, re] of [
        [{ ...work.plan.sweep, tool: "/bin/sh" }, /an agent runs its own programs/],
        [{ ...work.plan.sweep, engine: "memtier" }, /this agent runs kvlab/],
        [{ ...work.plan.sweep, shell: "id" }, /item i1:\d+:\d+: sweep\.shell: unknown field/],
        [{ ...work.plan.sweep, pipeline: 10_000_000 }, /sweep\.pipeline/],
        [{ ...work.plan.sweep, rates: [1, 2] }, /expected one rate/],
      ] as const
    ) {
      assert.throws(
        () => checkWorkPlan({ ...work.plan, sweep }, { engines, where: "item i1" }),
        (e: Error) => e instanceof WorkRefused && re.test(e.message),
      );
    }
  });
});

/** A step whose latencies are `values` (ms), one request each. */
function step(values: number[]): OpenLoopResult {
  const h = latencyHistogram();
  for (const v of values) h.recordValue(Math.round(v * 1e6));
  const s = { count: 0, meanMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0 };
  const n = values.length;
  return {
    requestedOpsPerSec: n,
    achievedOpsPerSec: n,
    sentOpsPerSec: n,
    durationS: 1,
    warmupS: 0,
    connections: 2,
    workers: 1,
    engine: "ffi",
    engineNote: null,
    pipeline: 1,
    arrival: "uniform",
    sent: n,
    completed: n,
    errors: 0,
    disconnects: 0,
    unsent: 0,
    unanswered: 0,
    errorSamples: [],
    latencyFromIntended: h,
    latencyFromSend: h,
    sendLateness: h,
    sendQueue: h,
    sendDelay: h,
    fromIntended: s,
    fromSend: s,
    lateness: s,
    queue: s,
    delay: s,
    perSecond: [],
    commands: [],
    clientCpuS: 0.1,
    clientRunQueueS: null,
    stampedReplies: 0,
    setupCpuS: 0,
    timer: null,
    requestsPerCpuS: 0,
    clientCpuUsPerRequest: null,
    wallS: 1,
    interrupted: false,
    moved: 0,
    asked: 0,
  };
}

Deno.test("mergeSteps() gives the percentiles of the union of the hosts' samples", () => {
  // three hosts with different distributions: the merged p99 is not any average of theirs
  const hosts = [
    Array.from({ length: 900 }, (_, i) => 0.1 + i / 9000),
    Array.from({ length: 90 }, (_, i) => 1 + i / 90),
    Array.from({ length: 10 }, (_, i) => 20 + i),
  ];
  const parts = hosts.map((v) => decodeStep(JSON.parse(JSON.stringify(encodeStep(step(v))))));
  const m = mergeSteps(parts);
  const union = latencyHistogram();
  for (const v of hosts.flat()) union.recordValue(Math.round(v * 1e6));
  for (const p of [50, 99, 99.9]) {
    assert.equal(
      hdrValueAtPercentile(m.latencyFromIntended, p),
      hdrValueAtPercentile(union, p),
      `p${p}`,
    );
  }
  assert.equal(m.achievedOpsPerSec, 1000);
  const mean = parts.reduce((x, p) => x + p.fromIntended.p99Ms, 0) / 3;
  assert.ok(Math.abs(m.fromIntended.p99Ms - mean) > 1, "not an average of percentiles");
});

Deno.test("shareOf() splits connections so the hosts' phases interleave", () => {
  const p = openLoopPlan({ port: 1, requestedOpsPerSec: 3000, connections: 7, durationS: 1 });
  const shares = [0, 1, 2].map((index) => shareOf(p, { index, of: 3 }));
  assert.deepEqual(shares.map((s) => s.indices), [[0, 3, 6], [1, 4], [2, 5]]);
  assert.ok(shares.reduce((n, s) => n + s.maxRequests, 0) >= p.maxRequests);
  assert.ok(shares.every((s) => s.connections === 7)); // phases spread over all 7
});
