// The pub/sub engines against real servers (Debian's redis-server 7.0.15 and kvlab's valkey
// 8.0.1, on free loopback ports, stopped by PID). Each step is bounded: a 1-2 s window, a short
// grace, a hard deadline. Every case runs on both engines: the epoll loop by FFI (on a Worker)
// and Deno's TCP (on the calling thread).
import assert from "node:assert/strict";
import { Redis } from "ioredis";
import {
  type PubSubOptions,
  type PubSubResult,
  runPubSub,
} from "../../../src/collect/pubsub/mod.ts";
import { type LocalServer, startLocalServer } from "../../../src/collect/redis_server.ts";
import { findTool } from "../../../src/collect/tools/find.ts";
import { assertFallsBackWithoutFfi } from "../../_support/no_ffi.ts";
import { runOpenLoop } from "../../../src/collect/loadgen/mod.ts";

/** Runs `fn` with a redis-server and (when built) a valkey-server, stopped by PID afterwards. */
async function withBoth(fn: (servers: [string, LocalServer][]) => Promise<void>): Promise<void> {
  const started: [string, LocalServer][] = [];
  try {
    started.push(["redis", await startLocalServer()]);
    const valkey = findTool("valkey-server");
    if (valkey) started.push(["valkey", await startLocalServer({ program: valkey })]);
    else if (Deno.env.get("CI") === "true") throw new Error("valkey-server not built");
    await fn(started);
  } finally {
    for (const [, s] of started) await s.stop();
  }
}

const ENGINES = ["ffi", "deno"] as const;

const describe = (r: PubSubResult) =>
  `published ${r.published}, delivered ${r.delivered}, lost ${r.lost}, duplicated ` +
  `${r.duplicated}, errors ${r.errors} ${r.errorSamples.join("; ")}`;

/**
 * runPubSub() one-to-one on a port: 2 publishers, 2 subscribers, a 1 s window, a 2 s grace and a
 * 20 s deadline, unless `o` says otherwise.
 */
const oneToOne = (engine: PubSubOptions["engine"], port: number, o: Partial<PubSubOptions>) =>
  runPubSub({
    engine,
    port,
    mode: "one-to-one",
    publishers: 2,
    subscribers: 2,
    requestedOpsPerSec: 200,
    durationS: 1,
    graceS: 2,
    timeoutS: 20,
    ...o,
  });

/** Runs `fn` while `act` is done on a side connection to `port` after `ms` milliseconds. */
async function meanwhile<T>(
  port: number,
  ms: number,
  act: (admin: Redis) => unknown,
  fn: () => Promise<T>,
): Promise<T> {
  const admin = new Redis(port, "127.0.0.1");
  const timer = setTimeout(() => act(admin), ms);
  try {
    return await fn();
  } finally {
    clearTimeout(timer);
    admin.disconnect();
  }
}

/** The server's `total_reads_processed` (INFO stats): one per read of a client's socket. */
async function readsProcessed(port: number): Promise<number> {
  const admin = new Redis(port, "127.0.0.1");
  try {
    return Number(/total_reads_processed:(\d+)/.exec(await admin.info("stats"))![1]);
  } finally {
    admin.disconnect();
  }
}

for (const engine of ENGINES) {
  Deno.test({
    name:
      `runPubSub() delivers every message exactly once at a low rate, in every mode [${engine}]`,
    sanitizeResources: true,
    fn: async (t) => {
      await withBoth(async (servers) => {
        for (const [name, server] of servers) {
          for (const mode of ["one-to-one", "fan-out", "sharded"] as const) {
            await t.step(`${name} ${mode}`, async () => {
              const r = await runPubSub({
                engine,
                port: server.port,
                mode,
                publishers: 4,
                subscribers: 12,
                fanOut: mode === "fan-out" ? 3 : undefined,
                channels: mode === "fan-out" ? 4 : undefined,
                requestedOpsPerSec: 1200,
                durationS: 1,
                graceS: 2,
                timeoutS: 20,
              });
              assert.equal(r.fanOut, mode === "fan-out" ? 3 : 1);
              assert.equal(r.published + r.unsent, 1200 / r.fanOut, describe(r));
              // messages still due when the window closed on a loaded machine are counted as
              // unsent, never as lost: what was published was all delivered
              assert.ok(r.published > 0, describe(r));
              assert.equal(r.delivered, r.published * r.fanOut, describe(r));
              assert.equal(r.lost, 0, describe(r));
              assert.equal(r.duplicated, 0);
              assert.equal(r.errors, 0, describe(r));
              assert.equal(r.latency.totalCount, r.delivered);
              // every delivery lands in the per-second series too
              assert.equal(r.perSecond.reduce((n, b) => n + b.completed, 0), r.delivered);
              assert.equal(r.perSecond.reduce((n, b) => n + b.sent, 0), r.published);
              assert.ok(r.summary.p50Ms > 0 && r.summary.p50Ms < 50, `p50 ${r.summary.p50Ms} ms`);
              assert.ok(r.clientCpuS > 0);
              assert.equal(r.engine, engine);
              assert.equal(r.engineNote, engine === "deno" ? "asked for" : null);
              assert.ok(r.stampedDeliveries <= r.delivered);
              if (engine === "deno") assert.equal(r.stampedDeliveries, 0);
            });
          }
        }
      });
    },
  });

  Deno.test({
    name:
      `runPubSub() units: a subscriber that reads 40 ms late shows 40 ms, not 40 µs or 40 s [${engine}]`,
    sanitizeResources: true,
    fn: async () => {
      await withBoth(async ([[, server]]) => {
        const base = { engine, port: server.port, mode: "one-to-one" as const, publishers: 2 };
        const common = { ...base, subscribers: 2, requestedOpsPerSec: 20, durationS: 1.5 };
        const plain = await runPubSub(common);
        const late = await runPubSub({ ...common, readDelayMs: 40 });
        assert.equal(late.lost, 0, describe(late));
        assert.ok(plain.summary.p50Ms < 20, `without delay: p50 ${plain.summary.p50Ms} ms`);
        // setTimeout fires at or after 40 ms; a loaded box adds a few ms, never 40 more
        const shift = late.summary.p50Ms - plain.summary.p50Ms;
        assert.ok(shift >= 39 && shift < 60, `the injected 40 ms showed as ${shift} ms`);
        // the slowest of 30 deliveries: 40 ms and a busy machine's stall, never 40 s
        assert.ok(late.summary.maxMs < 1000, `max ${late.summary.maxMs} ms`);
      });
    },
  });

  Deno.test({
    name:
      `runPubSub() counts the deliveries of a subscriber that stops reading as lost, and ends [${engine}]`,
    sanitizeResources: true,
    fn: async (t) => {
      await withBoth(async (servers) => {
        for (const [name, server] of servers) {
          await t.step(name, async () => {
            const admin = new Redis(server.port, "127.0.0.1");
            try {
              // a small pub/sub output buffer: the server disconnects the stalled subscriber
              await admin.config("SET", "client-output-buffer-limit", "pubsub 256kb 128kb 1");
              const wall0 = performance.now();
              const r = await runPubSub({
                engine,
                port: server.port,
                mode: "one-to-one",
                publishers: 2,
                subscribers: 4,
                payloadBytes: 16384, // 500/s × 16 KB to the stalled one outgrow the socket buffers (~10 MB)
                requestedOpsPerSec: 2000,
                durationS: 2,
                graceS: 1,
                timeoutS: 15,
                stallSubscribers: 1,
                stallAfterMs: 200,
              });
              const wallS = (performance.now() - wall0) / 1000;
              assert.ok(wallS < 10, `ended after ${wallS} s`);
              // subscriber 0 got its share for 200 ms, then nothing: about 3/4 of its 1,000
              assert.ok(r.lost > 500 && r.lost <= 1000, describe(r));
              assert.equal(r.delivered + r.lost, r.published, describe(r));
              assert.equal(r.duplicated, 0);
              // the server dropped it for its buffer (Valkey counts it; Redis 7.0 has no stat)
              const stats = await admin.info("stats");
              const m = /client_output_buffer_limit_disconnections:(\d+)/.exec(stats);
              if (m) assert.equal(Number(m[1]), 1, "Valkey dropped the stalled subscriber");
            } finally {
              admin.disconnect();
            }
          });
        }
      });
    },
  });

  Deno.test({
    name:
      `runPubSub() batches: each publisher writes what is due in one write per turn [${engine}]`,
    sanitizeResources: true,
    fn: async () => {
      await withBoth(async ([[, server]]) => {
        const before = await readsProcessed(server.port);
        const r = await oneToOne(engine, server.port, { requestedOpsPerSec: 2000, quantumMs: 20 });
        const reads = await readsProcessed(server.port) - before;
        assert.equal(r.delivered, r.published, describe(r));
        assert.equal(r.errors, 0, describe(r));
        // 20 ms turns: each publisher writes ~20 messages at once (more when a turn runs late),
        // and the server reads each write once; a message per write would mean ~2,000 reads
        assert.ok(r.published >= 1000, describe(r));
        assert.ok(reads < r.published / 5, `${reads} server reads for ${r.published} messages`);
      });
    },
  });

  Deno.test({
    name:
      `runPubSub() sends what fell due in the window's last quantum, late, rather than unsent [${engine}]`,
    sanitizeResources: true,
    fn: async () => {
      await withBoth(async ([[, server]]) => {
        // turns at about 0, 400 and 800 ms: the messages due from 800 to 1,000 ms wait for a turn
        // that the window's end takes
        const r = await oneToOne(engine, server.port, { requestedOpsPerSec: 1000, quantumMs: 400 });
        assert.equal(r.unsent, 0, describe(r));
        assert.equal(r.published, 1000, describe(r));
        assert.equal(r.delivered, 1000, describe(r));
      });
    },
  });

  Deno.test({
    name: `runPubSub() ends at once on the signal, keeping what was counted [${engine}]`,
    sanitizeResources: true,
    fn: async () => {
      await withBoth(async ([[, server]]) => {
        const stop = new AbortController();
        const wall0 = performance.now();
        const timer = setTimeout(() => stop.abort(), 1500);
        try {
          const r = await oneToOne(engine, server.port, {
            requestedOpsPerSec: 1000,
            durationS: 10,
            timeoutS: 30,
            signal: stop.signal,
          });
          const wallS = (performance.now() - wall0) / 1000;
          assert.ok(r.interrupted, describe(r));
          assert.ok(wallS < 6, `ended ${wallS} s after the start`);
          assert.ok(r.published > 0 && r.published < 9000, describe(r));
          assert.equal(r.errors, 0, describe(r));
        } finally {
          clearTimeout(timer);
        }
      });
    },
  });

  Deno.test({
    name: `runPubSub() counts a message kvlab did not publish as a protocol error [${engine}]`,
    sanitizeResources: true,
    fn: async () => {
      await withBoth(async ([[, server]]) => {
        // a foreign message on a channel of the run, published mid-window
        const publish = (admin: Redis) => admin.publish("kvlab:ps:0", "not kvlab's");
        const r = await meanwhile(
          server.port,
          600,
          publish,
          () => oneToOne(engine, server.port, { durationS: 1.5 }),
        );
        assert.equal(r.errors, 1, describe(r));
        assert.match(r.errorSamples[0], /subscriber 0: protocol error: a message kvlab did not/);
        assert.equal(r.delivered, r.published, describe(r));
        assert.equal(r.lost, 0, describe(r));
      });
    },
  });

  Deno.test({
    name: `runPubSub() counts the connections a server drops, and ends [${engine}]`,
    sanitizeResources: true,
    fn: async () => {
      await withBoth(async ([[, server]]) => {
        const kill = (admin: Redis) => admin.client("KILL", "TYPE", "pubsub");
        const r = await meanwhile(server.port, 600, kill, () =>
          oneToOne(engine, server.port, {
            subscribers: 3,
            requestedOpsPerSec: 600,
            durationS: 1.5,
            graceS: 1,
          }));
        assert.equal(r.disconnects, 3, describe(r));
        assert.ok(r.errors >= 3, describe(r));
        assert.match(r.errorSamples.join("\n"), /subscriber \d: ConnectionReset/);
        // what was published after the subscribers went is lost
        assert.ok(r.lost > 0 && r.delivered + r.lost === r.published, describe(r));
      });
    },
  });
}

Deno.test({
  name: "runPubSub() [ffi] times a delivery when read where the kernel gives no receive stamp",
  sanitizeResources: true,
  fn: async (t) => {
    await withBoth(async ([[, server]]) => {
      // one message every 50 ms: a push read at the loop's next wake-up instead of when it
      // arrives would show the loop's sleep (up to 20 ms), a p50 near 10 ms
      const common = {
        engine: "ffi" as const,
        port: server.port,
        mode: "fan-out" as const,
        publishers: 1,
        subscribers: 4,
        requestedOpsPerSec: 80,
        durationS: 1.5,
        graceS: 2,
        timeoutS: 20,
      };
      const subMillisecond = async (kernelTimestamps: boolean) => {
        const tries: string[] = [];
        for (let k = 0; k < 3; k++) {
          const r = await runPubSub({ ...common, kernelTimestamps });
          assert.equal(r.delivered, r.published * 4, describe(r));
          assert.ok(r.published >= 25, describe(r));
          if (!kernelTimestamps) assert.equal(r.stampedDeliveries, 0);
          tries.push(`p50 ${r.summary.p50Ms.toFixed(3)} ms, ${r.stampedDeliveries} stamped`);
          if (r.summary.p50Ms < 2) return;
        }
        assert.fail(`p50 never below 2 ms: ${tries.join("; ")}`);
      };
      await t.step(
        "kernel stamps off: every push wakes the loop, timed when read",
        () => subMillisecond(false),
      );
      await t.step(
        "kernel stamps on: pushes wait for the next turn, timed on arrival",
        () => subMillisecond(true),
      );
      await t.step("kernel stamps on: used wherever the kernel gives them", async () => {
        // the open loop's engine says whether this kernel stamps loopback TCP; then pub/sub must
        // have used the stamps too (else it quietly fell back to timing at read)
        const probe = await runOpenLoop({
          engine: "ffi",
          port: server.port,
          requestedOpsPerSec: 200,
          connections: 2,
          durationS: 0.5,
        });
        const r = await runPubSub({ ...common, kernelTimestamps: true });
        if (probe.stampedReplies > 0) {
          assert.ok(r.stampedDeliveries > 0.9 * r.delivered, describe(r));
        } else assert.equal(r.stampedDeliveries, 0, "no kernel stamps here");
      });
    });
  },
});

Deno.test("runPubSub() falls back to the deno engine without --allow-ffi", async () => {
  await withBoth(async ([[, server]]) => {
    await assertFallsBackWithoutFfi(
      new URL("../../../src/collect/pubsub/engine.ts", import.meta.url),
      "runPubSub",
      `{ port: ${server.port}, mode: "one-to-one", publishers: 1, subscribers: 1, ` +
        `requestedOpsPerSec: 100, durationS: 0.3, graceS: 1 }`,
      "delivered",
    );
  });
});
