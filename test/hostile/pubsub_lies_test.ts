/**
 * Pub/sub servers that lie (issue 30): one that delivers every message to every subscriber
 * (deliveries a one-to-one topology cannot produce), one that rewrites the stamp of each message
 * (10³⁰: a stamp kvlab did not send), one that refuses SUBSCRIBE with an error, one that
 * confirms it with a RESP3 push. Deliveries the topology cannot produce and stamps kvlab did not
 * send are protocol errors, never deliveries (the step was `over`, complete; 202 of 200 counted);
 * a refused or RESP3 SUBSCRIBE is a failed run stored at once, naming the server (it was
 * "subscribing timed out" after 5 s, and a bare "RESP offset 0 …" with no run stored).
 */

import assert from "node:assert/strict";
import { loadTable } from "../../src/analyze/mod.ts";
import { kvlabStep } from "./_cli.ts";
import { bulk, type HostileClient, hostileServer, rawBulk } from "./_resp_server.ts";

/** The stamp 10³⁰ as the first 8 bytes of a payload (float64, little-endian), as Latin-1. */
const FORGED_STAMP = (() => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, 1e30, true);
  return String.fromCharCode(...b);
})();

/**
 * A pub/sub server: SUBSCRIBE is confirmed; PUBLISH sends the message to `to(subscribers of the
 * channel, every subscriber)`, its payload made by `payload`.
 */
function pubSubServer(o: {
  to: (mine: HostileClient[], all: HostileClient[]) => HostileClient[];
  payload?: (p: string) => string;
}) {
  const channels = (c: HostileClient) => (c.state.channels ??= new Set()) as Set<string>;
  return hostileServer({
    reply: (w, client) => {
      const cmd = w[0].toUpperCase();
      if (cmd === "SUBSCRIBE") {
        w.slice(1).forEach((ch) => channels(client).add(ch));
        return w.slice(1).map((ch, i) => `*3\r\n${bulk("subscribe")}${bulk(ch)}:${i + 1}\r\n`)
          .join("");
      }
      if (cmd !== "PUBLISH") return undefined;
      const subs = client.all().filter((c) => channels(c).size > 0);
      const to = o.to(subs.filter((c) => channels(c).has(w[1])), subs);
      const head = new TextEncoder().encode(`*3\r\n${bulk("message")}${bulk(w[1])}`);
      const body = rawBulk(o.payload ? o.payload(w[2]) : w[2]);
      for (const c of to) c.send(new Uint8Array([...head, ...body]));
      return `:${to.length}\r\n`;
    },
  });
}

const STEP = { rate: 200, publishers: 2, subscribers: 4, duration: 1, grace: 0.5 };

Deno.test("hostile: deliveries a topology cannot produce, and forged stamps, are protocol errors", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-pslies-" });
  const cases = [
    // one-to-one: each message to its channel's one subscriber, and to the 3 others
    {
      name: "every message to every subscriber",
      server: () => pubSubServer({ to: (_mine, all) => all }),
      status: "incomplete",
      reason:
        /protocol errors \(redis:\/\/127\.0\.0\.1:\d+: subscriber \d: protocol error: a message on a channel it did not subscribe to/,
    },
    {
      name: "a stamp of 10³⁰ on every message",
      server: () => pubSubServer({ to: (mine) => mine, payload: (p) => FORGED_STAMP + p.slice(8) }),
      status: "failed",
      reason:
        /protocol errors \(redis:\/\/127\.0\.0\.1:\d+: subscriber \d: protocol error: a message kvlab did not publish/,
    },
  ];
  let n = 0;
  for (const engine of ["ffi", "deno"]) {
    for (const c of cases) {
      await t.step(`${c.name}, engine ${engine}`, async () => {
        const server = c.server();
        const data = `${dir}/d${n++}`;
        try {
          const url = `redis://127.0.0.1:${server.port}`;
          const r = await kvlabStep("pubsub", url, data, { ...STEP, engine });
          assert.equal(r.code, 1, r.printed);
          assert.doesNotMatch(r.printed, /\(over\)/);
          const runs = loadTable(data, "runs");
          assert.deepEqual(runs.getColumn("status").toArray(), [c.status], r.printed);
          assert.match(runs.getColumn("error").get(0), c.reason);
          const row = loadTable(data, "results").toRecords()[0];
          // never more deliveries than messages reach a subscriber (fan-out 1)
          assert.ok(Number(row.messages_delivered) <= Number(row.messages_published), r.printed);
        } finally {
          server.close();
        }
      });
    }
  }
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("hostile: a SUBSCRIBE refused or confirmed in RESP3 is a failed run naming the server", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-subscribe-" });
  const answers: [string, string, RegExp][] = [
    [
      "-ERR",
      "-ERR subscriptions are off\r\n",
      /^redis:\/\/127\.0\.0\.1:\d+: PermissionDenied: SUBSCRIBE refused: ERR subscriptions are off$/,
    ],
    [
      "a RESP3 push",
      `>3\r\n${bulk("subscribe")}${bulk("kvlab:ps:0")}:1\r\n`,
      /^redis:\/\/127\.0\.0\.1:\d+: .*RESP offset 0: expected a RESP2 type byte .*found byte 62 ">": a RESP3 push/,
    ],
  ];
  let n = 0;
  for (const engine of ["ffi", "deno"]) {
    for (const [name, answer, reason] of answers) {
      await t.step(`SUBSCRIBE answered with ${name}, engine ${engine}`, async () => {
        const server = hostileServer({
          reply: (w) => w[0].toUpperCase() === "SUBSCRIBE" ? answer : undefined,
        });
        const data = `${dir}/d${n++}`;
        try {
          const url = `redis://127.0.0.1:${server.port}`;
          const r = await kvlabStep("pubsub", url, data, { ...STEP, subscribers: 1, engine });
          assert.equal(r.code, 1, r.printed);
          assert.doesNotMatch(r.printed, /timed out/);
          const runs = loadTable(data, "runs");
          assert.deepEqual(runs.getColumn("status").toArray(), ["failed"]);
          assert.match(runs.getColumn("error").get(0), reason);
          assert.match(
            r.stderr,
            reason.source.startsWith("^")
              ? new RegExp(reason.source.slice(1).replace(/\$$/, ""))
              : reason,
          );
        } finally {
          server.close();
        }
      });
    }
  }
  Deno.removeSync(dir, { recursive: true });
});
