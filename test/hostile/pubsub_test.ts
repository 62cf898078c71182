/**
 * Pub/sub against a hostile server (issue 21): messages kvlab did not publish are protocol
 * errors, never deliveries (the server pushes them right after the subscriptions, before any
 * message is published; one is too short to carry kvlab's header).
 */

import assert from "node:assert/strict";
import { runPubSub } from "../../src/collect/pubsub/mod.ts";
import { bulk, hostileServer } from "./_resp_server.ts";

/** A payload that looks like kvlab's: stamp, publisher 0, sequence `seq`, filler. */
function forged(seq: number): string {
  const b = new Uint8Array(32);
  const v = new DataView(b.buffer);
  v.setFloat64(0, 1, true);
  v.setUint32(8, 0, true);
  v.setUint32(12, seq, true);
  return String.fromCharCode(...b);
}

Deno.test("hostile: unsolicited pub/sub messages are protocol errors, not deliveries", async () => {
  const server = hostileServer({
    reply: (words) => {
      const cmd = words[0].toUpperCase();
      if (cmd === "PUBLISH" || cmd === "SPUBLISH") return ":0\r\n";
      if (cmd !== "SUBSCRIBE" && cmd !== "SSUBSCRIBE") return undefined;
      const kind = cmd.toLowerCase();
      const confirms = words.slice(1)
        .map((ch, i) => `*3\r\n${bulk(kind)}${bulk(ch)}:${i + 1}\r\n`).join("");
      const push = kind === "subscribe" ? "message" : "smessage";
      const ch = words[1];
      const messages = [0, 1, 2, 3].map((seq) =>
        `*3\r\n${bulk(push)}${bulk(ch)}${bulk(forged(seq))}`
      )
        .join("") + `*3\r\n${bulk(push)}${bulk(ch)}${bulk("hello")}`;
      return confirms + messages;
    },
  });
  try {
    const r = await runPubSub({
      port: server.port,
      mode: "one-to-one",
      publishers: 1,
      subscribers: 1,
      requestedOpsPerSec: 10,
      durationS: 1,
      graceS: 0.5,
      timeoutS: 20,
    });
    assert.equal(r.delivered, 0, JSON.stringify(r.errorSamples));
    assert.equal(r.latency.totalCount, 0);
    assert.equal(r.errors, 5, JSON.stringify(r.errorSamples));
    assert.match(r.errorSamples.join("\n"), /protocol error: a message kvlab did not publish/);
  } finally {
    server.close();
  }
});
