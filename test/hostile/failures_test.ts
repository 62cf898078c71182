/**
 * Failures not hidden (issue 21): `kvlab load` against a server whose connections all die on a
 * protocol error is not complete, the CLI says so and exits non-zero, and prints no latency
 * without a reply; `kvlab pubsub` with nothing delivered prints no latency either.
 */

import assert from "node:assert/strict";
import { Dataset } from "../../src/store/dataset.ts";
import { kvlabStep } from "./_cli.ts";
import { bulk, hostileServer } from "./_resp_server.ts";

Deno.test("hostile: kvlab load whose connections all die is failed, and says so", async () => {
  // GET and SET are answered with bytes that are not RESP: every connection dies
  const server = hostileServer({
    reply: (w) => ["GET", "SET"].includes(w[0].toUpperCase()) ? "!garbage\r\n" : undefined,
  });
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-fail-" });
  try {
    const url = `redis://127.0.0.1:${server.port}`;
    const r = await kvlabStep("load", url, `${dir}/d`, { rate: 1000, connections: 4, duration: 1 });
    assert.notEqual(r.code, 0, r.printed);
    assert.match(r.stderr, /4 of 4 connections lost/);
    assert.doesNotMatch(r.printed, /p50 0\.000|p50 -/);
    const runs = Dataset.open(`${dir}/d`).runFacts(["run_id", "status", "error"]);
    assert.equal(runs.length, 1);
    assert.notEqual(runs[0].status, "complete");
    assert.match(String(runs[0].error), /connections lost/);
  } finally {
    server.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("hostile: kvlab pubsub with nothing delivered prints no latency", async () => {
  // subscriptions confirmed, PUBLISH reaches nobody: nothing is ever delivered
  const server = hostileServer({
    reply: (w) => {
      const cmd = w[0].toUpperCase();
      if (cmd === "PUBLISH") return ":0\r\n";
      if (cmd !== "SUBSCRIBE") return undefined;
      return w.slice(1).map((ch, i) => `*3\r\n${bulk("subscribe")}${bulk(ch)}:${i + 1}\r\n`)
        .join("");
    },
  });
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-none-" });
  try {
    const url = `redis://127.0.0.1:${server.port}`;
    const o = { rate: 20, publishers: 1, subscribers: 1, duration: 1, grace: 0.5 };
    const r = await kvlabStep("pubsub", url, `${dir}/d`, o);
    assert.match(r.stdout, /delivered 0/, r.printed);
    assert.doesNotMatch(r.stdout, /p50 0\.000 ms/);
    assert.match(r.stdout, /nothing delivered, no latency/);
  } finally {
    server.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

/** A server that confirms subscriptions and answers PUBLISH with `publish` (RESP). */
function pubSubServer(publish: string, pushes = "") {
  return hostileServer({
    reply: (w) => {
      const cmd = w[0].toUpperCase();
      if (cmd === "PUBLISH") return publish;
      if (cmd !== "SUBSCRIBE") return undefined;
      return w.slice(1).map((ch, i) => `*3\r\n${bulk("subscribe")}${bulk(ch)}:${i + 1}\r\n`)
        .join("") + pushes.replaceAll("CHANNEL", bulk(w[1]));
    },
  });
}

Deno.test("hostile: kvlab pubsub whose connections die, or that is pushed messages it did not publish, is not complete and says so", async (t) => {
  const cases = [
    // every publisher dies on a reply that is not RESP (it was stored complete, exit 0)
    ["publishers die", () => pubSubServer("!garbage\r\n"), /2 of 4 connections lost/],
    // four unsolicited messages per subscriber: protocol errors, never deliveries (also stored
    // complete)
    [
      "unsolicited messages",
      () =>
        pubSubServer(":0\r\n", `*3\r\n${bulk("message")}CHANNEL${bulk("x".repeat(32))}`.repeat(4)),
      /8 protocol errors \(redis:\/\/127\.0\.0\.1:\d+: subscriber 0: protocol error/,
    ],
  ] as const;
  for (const engine of ["ffi", "deno"]) {
    for (const [name, start, reason] of cases) {
      await t.step(`${name}, engine ${engine}`, async () => {
        const server = start();
        const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-psfail-" });
        try {
          const url = `redis://127.0.0.1:${server.port}`;
          const o = { engine, rate: 100, publishers: 2, subscribers: 2, duration: 1, grace: 0.5 };
          const r = await kvlabStep("pubsub", url, `${dir}/d`, o);
          assert.equal(r.code, 1, r.printed);
          assert.match(r.stderr, reason);
          const runs = Dataset.open(`${dir}/d`).runFacts(["run_id", "status", "error"]);
          assert.equal(runs.length, 1);
          assert.equal(runs[0].status, "failed", String(runs[0].error));
          assert.match(String(runs[0].error), reason);
        } finally {
          server.close();
          Deno.removeSync(dir, { recursive: true });
        }
      });
    }
  }
});
