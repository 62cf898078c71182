import assert from "node:assert/strict";
import fc from "fast-check";
import {
  connectionSchedule,
  countReply,
  countSent,
  decodeHistogram,
  emptySecondCounts,
  encodeCommand,
  encodeHistogram,
  latencyHistogram,
  mergeHistograms,
  openLoopPlan,
  parseRatio,
  RespProtocolError,
  RespReplyReader,
  secondSeries,
  splitPlan,
} from "../../../src/collect/loadgen/mod.ts";
import { TimeHeap } from "../../../src/collect/loadgen/heap.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("RespReplyReader", async (t) => {
  const stream = "+OK\r\n$256\r\n" + "x".repeat(256) + "\r\n$-1\r\n:-12\r\n-WRONGTYPE bad\r\n" +
    "*3\r\n$1\r\na\r\n*2\r\n:1\r\n-ERR nested\r\n$0\r\n\r\n*-1\r\n*0\r\n";
  const expected = ["simple", "bulk", "nil", "integer", "error", "array", "nil", "array"];

  await t.step("reports each top-level reply wherever the chunks split", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(stream.length), { maxLength: 12 }), (cuts) => {
        const all = bytes(stream);
        const points = [...new Set([0, ...cuts, all.length])].sort((a, b) => a - b);
        const kinds: string[] = [];
        const r = new RespReplyReader((k) => kinds.push(k));
        let done = 0;
        for (let i = 1; i < points.length; i++) {
          done += r.feed(all.subarray(points[i - 1], points[i]));
        }
        assert.deepEqual(kinds, expected);
        assert.equal(done, expected.length);
        // a nested error is walked, not reported as the last error
        assert.equal(r.lastError, "WRONGTYPE bad");
      }),
    );
  });

  await t.step("feed(chunk, length) reads only the valid prefix of a buffer", () => {
    const kinds: string[] = [];
    const r = new RespReplyReader((k) => kinds.push(k));
    const buf = new Uint8Array(64);
    buf.set(bytes("+OK\r\n+garbage"));
    assert.equal(r.feed(buf, 5), 1);
    assert.deepEqual(kinds, ["simple"]);
  });

  await t.step("throws RespProtocolError with the stream offset on a non-RESP byte", () => {
    const r = new RespReplyReader(() => {});
    r.feed(bytes("+OK\r\n"));
    assert.throws(() => r.feed(bytes("HTTP/1.1")), (e: unknown) => {
      assert.ok(e instanceof RespProtocolError && e instanceof SyntaxError);
      assert.equal(e.offset, 5);
      assert.equal(e.byte, 72);
      return true;
    });
    assert.throws(() => new RespReplyReader(() => {}).feed(bytes("$1x\r\n")), RespProtocolError);
  });

  await t.step("encodeCommand() output reads back as one reply per command", () => {
    // a server would answer; here we only check that the request is well-formed RESP
    const kinds: string[] = [];
    const r = new RespReplyReader((k) => kinds.push(k));
    r.feed(encodeCommand(["SET", "k", new Uint8Array(300)]));
    assert.deepEqual(kinds, ["array"]);
  });
});

/** The schedules of every connection of a step, connection `i` seeded `seed(i)`. */
function schedules(
  o: Omit<Parameters<typeof connectionSchedule>[1], "seed">,
  seed: (i: number) => number,
): number[][] {
  return Array.from(
    { length: o.connections },
    (_, i) => connectionSchedule(i, { ...o, seed: seed(i) }),
  );
}

Deno.test("open-loop schedule", async (t) => {
  await t.step("uniform phases spread connections evenly over one interval", () => {
    const all = schedules(
      { connections: 8, requestedOpsPerSec: 800, durationMs: 1000, arrival: "uniform" },
      () => 1,
    ).flat().sort((a, b) => a - b);
    assert.equal(all.length, 800);
    const gaps = all.slice(1).map((x, i) => x - all[i]);
    assert.ok(gaps.every((g) => Math.abs(g - 1.25) < 1e-9), "one request every 1.25 ms");
  });

  await t.step("poisson arrivals keep the mean rate and are not synchronized", () => {
    const each = schedules(
      { connections: 10, requestedOpsPerSec: 2000, durationMs: 5000, arrival: "poisson" },
      (i) => 1000 + i,
    );
    const all = each.flat();
    assert.ok(Math.abs(all.length - 10_000) < 400, `${all.length} ≈ 10,000 (4 σ = 400)`);
    const firsts = each.map((s) => s[0]);
    assert.equal(new Set(firsts).size, 10);
  });

  await t.step("the same seed gives the same schedule", () => {
    const o = {
      connections: 4,
      requestedOpsPerSec: 100,
      durationMs: 500,
      arrival: "poisson",
      seed: 9,
    } as const;
    const first = connectionSchedule(2, o);
    assert.ok(first.length > 0);
    // a new call with a copy of the options: nothing kept between calls
    assert.deepEqual(connectionSchedule(2, { ...o }), first);
  });

  await t.step("parseRatio() rejects what memtier would not take", () => {
    assert.deepEqual(parseRatio(" 0:1 "), { set: 0, get: 1 });
    for (const bad of ["1", "1:-1", "a:b", "1:1:1", ""]) assert.throws(() => parseRatio(bad));
  });

  await t.step("openLoopPlan() and splitPlan() keep every connection exactly once", () => {
    const p = openLoopPlan({ port: 1, requestedOpsPerSec: 1000, connections: 7, durationS: 1 });
    const s = splitPlan(p, 3);
    assert.deepEqual(s.flatMap((x) => x.indices).sort(), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(s.reduce((n, x) => n + x.maxRequests, 0), p.maxRequests);
    assert.equal(splitPlan(p, 99).length, 7);
    assert.throws(
      () => openLoopPlan({ ...p, port: 1, connections: 1.5, durationS: 1 }),
      RangeError,
    );
  });
});

Deno.test("TimeHeap pops in order of next send time", () => {
  fc.assert(
    fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true })), (xs) => {
      const h = new TimeHeap<{ next: number; inHeap: boolean }>();
      const items = xs.map((next) => ({ next, inHeap: false }));
      for (const it of items) h.push(it);
      h.push(items[0] ?? { next: 0, inHeap: true }); // a second push of the same item is a no-op
      const out: number[] = [];
      for (let it = h.pop(); it; it = h.pop()) out.push(it.next);
      assert.deepEqual(out, [...xs].sort((a, b) => a - b));
      assert.ok(items.every((it) => !it.inHeap));
    }),
  );
});

Deno.test("histograms merge exactly", async (t) => {
  await t.step("merging parts equals recording everything in one", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 1, max: 10_000_000_000 }), { maxLength: 50 }), {
          minLength: 1,
          maxLength: 4,
        }),
        (parts) => {
          const hs = parts.map((vs) => {
            const h = latencyHistogram();
            vs.forEach((v) => h.recordValue(v));
            return h;
          });
          const one = latencyHistogram();
          parts.flat().forEach((v) => one.recordValue(v));
          // through the Worker encoding as well
          const merged = mergeHistograms(hs.map((h) => decodeHistogram(encodeHistogram(h))));
          assert.equal(merged.totalCount, one.totalCount);
          for (const p of [1, 50, 90, 99, 99.9, 100]) {
            assert.equal(merged.getValueAtPercentile(p), one.getValueAtPercentile(p));
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  await t.step("secondSeries() adds per-second counts of several parts", () => {
    const a = emptySecondCounts(), b = emptySecondCounts();
    countSent(a, 10);
    countSent(b, 1999);
    countReply(a, 20, 0.01);
    countReply(b, 3001, 200);
    countReply(b, 3002, undefined);
    const s = secondSeries([a, b]);
    assert.deepEqual(s.map((x) => x.second), [0, 1, 2, 3]);
    assert.deepEqual(s.map((x) => x.sent), [1, 1, 0, 0]);
    assert.deepEqual(s.map((x) => x.completed), [1, 0, 0, 1]);
    assert.deepEqual(s.map((x) => x.errors), [0, 0, 0, 1]);
    assert.ok(Math.abs(s[3].p99FromIntendedMs - 200) < 2);
  });
});
