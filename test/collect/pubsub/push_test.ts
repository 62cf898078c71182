// The subscriber's push reader (pure): the in-place path for whole pushes and the state
// machine for split ones must read the same stream the same way, wherever it is cut.
import assert from "node:assert/strict";
import fc from "fast-check";
import { PushReader } from "../../../src/collect/pubsub/push.ts";
import { writePayloadHeader } from "../../../src/collect/pubsub/payload.ts";
import { RespProtocolError } from "../../../src/collect/loadgen/resp.ts";

const enc = new TextEncoder();
const bulk = (b: Uint8Array) => [...enc.encode(`$${b.length}\r\n`), ...b, 13, 10];

/** A stream of kvlab-shaped pushes, confirmations, a foreign message and an error. */
function stream(n: number): { bytes: Uint8Array; want: string[] } {
  const out: number[] = [];
  const want: string[] = [];
  out.push(...enc.encode("*3\r\n"), ...bulk(enc.encode("subscribe")), ...bulk(enc.encode("c")));
  out.push(...enc.encode(":1\r\n"));
  want.push("sub");
  for (let i = 0; i < n; i++) {
    const payload = new Uint8Array(16 + (i % 3) * 50).fill(120);
    writePayloadHeader(payload, { stampNs: 1e9 + i * 1234, publisher: i % 7, sequence: i });
    const kind = i % 4 === 3 ? "smessage" : "message";
    out.push(...enc.encode("*3\r\n"), ...bulk(enc.encode(kind)));
    out.push(...bulk(enc.encode(`kvlab:ps:${i % 11}`)), ...bulk(payload));
    want.push(`m ${1e9 + i * 1234} ${i % 7} ${i}`);
  }
  out.push(...enc.encode("*3\r\n"), ...bulk(enc.encode("message")), ...bulk(enc.encode("c")));
  out.push(...bulk(enc.encode("hello")), ...enc.encode("-ERR no\r\n"));
  want.push("m NaN -1 -1", "other ERR no");
  return { bytes: new Uint8Array(out), want };
}

function reader(got: string[]): PushReader {
  return new PushReader({
    message: (stampNs, publisher, sequence) => got.push(`m ${stampNs} ${publisher} ${sequence}`),
    subscribed: () => got.push("sub"),
    other: (e) => got.push(`other ${e}`),
  });
}

Deno.test("PushReader reads a stream the same however it is cut", async (t) => {
  const { bytes, want } = stream(40);
  await t.step("whole, in a larger reused buffer", () => {
    const got: string[] = [];
    const buf = new Uint8Array(bytes.length + 100).fill(42);
    buf.set(bytes);
    reader(got).feed(buf, bytes.length);
    assert.deepEqual(got, want);
  });
  await t.step("cut at random places (fast-check)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 })), (cuts) => {
        const got: string[] = [];
        const r = reader(got);
        const at = [0, ...cuts.sort((a, b) => a - b), bytes.length];
        for (let i = 1; i < at.length; i++) r.feed(bytes.subarray(at[i - 1], at[i]));
        assert.deepEqual(got, want);
      }),
      { numRuns: 300 },
    );
  });
  await t.step("a byte at a time", () => {
    const got: string[] = [];
    const r = reader(got);
    for (const b of bytes) r.feed(new Uint8Array([b]));
    assert.deepEqual(got, want);
  });
});

Deno.test("PushReader reports a push that only looks like a message at its bad byte", () => {
  // a whole push with a bad length line: the in-place path declines, the state machine throws
  const bad = enc.encode("*3\r\n$7\r\nmessage\r\n$1x\r\nc\r\n$3\r\nabc\r\n");
  assert.throws(() => reader([]).feed(bad), (e) => e instanceof RespProtocolError);
});
