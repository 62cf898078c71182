// deno-lint-ignore-file no-console
/**
 * Pub/sub engine benchmark (`deno run -A bench/pubsub.ts`, issue 14 item 5): the highest
 * sustained delivery rate per mode on this machine, against a fresh Redis (Debian's
 * redis-server) and Valkey (kvlab's tools cache) on loopback, and the client CPU it took.
 *
 * 1. Baseline, measured in the same run on each server: a bare SUBSCRIBE/PUBLISH loop (one
 *    publisher pipelining 64 PUBLISH at a time, closed loop, one subscriber counting pushes, no
 *    pacing, no stamps, no histograms): client CPU per delivery.
 * 2. For each mode (seed 000's 64 publishers and 100 subscribers, 128-byte payloads; fan-out 10
 *    in fan-out mode), target delivery rates doubling from 10,000/s, each step `--seconds`
 *    long, until the first NS (achieved < 97 % of target, the sweep's rule): the highest
 *    sustained rate, its p50/p99 (from the intended publish time), client CPU per delivery and
 *    its ratio to the baseline.
 *
 * Client CPU is `process.cpuUsage()` of this process (every thread) over the publishing window
 * and the grace. The machine is shared: load average is printed with the results.
 *
 * Usage: deno run -A bench/pubsub.ts [--seconds 3] [--start 10000] [--max 1280000]
 *   [--pin 0,1|none]
 *
 * With `--pin S,C` (the default on two CPUs or more) each server runs on CPU S and this process
 * on CPU C (`taskset`).
 *
 * @module
 */

import process from "node:process";
import { type LocalServer, startLocalServer } from "../src/collect/redis_server.ts";
import { findTool } from "../src/collect/tools.ts";
import { PUBSUB_MODES, type PubSubResult, runPubSub } from "../src/collect/pubsub/mod.ts";
import { encodeCommand, RespReplyReader } from "../src/collect/loadgen/resp.ts";
import { sustainedVerdict } from "../src/fixed_rate.ts";
import { pin, pinChoice } from "./_pin.ts";

const args = Deno.args;
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return Number(i >= 0 ? args[i + 1] : dflt);
};
const seconds = opt("seconds", "3");
const start = opt("start", "10000");
const max = opt("max", "1280000");

/** Client CPU seconds per delivery of a bare closed-loop SUBSCRIBE/PUBLISH loop. */
async function baseline(port: number, durationS: number) {
  const sub = await Deno.connect({ port, hostname: "127.0.0.1" });
  const pub = await Deno.connect({ port, hostname: "127.0.0.1" });
  let delivered = 0;
  const pushes = new RespReplyReader(() => delivered++);
  await sub.write(encodeCommand(["SUBSCRIBE", "bench"]));
  const reading = (async () => {
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      const n = await sub.read(buf).catch(() => null);
      if (n === null) return;
      pushes.feed(buf, n);
    }
  })();
  await new Promise((r) => setTimeout(r, 100));
  delivered = 0;
  const batch = new Uint8Array(64 * 200);
  const one = encodeCommand(["PUBLISH", "bench", "x".repeat(128)]);
  const many = new Uint8Array(one.length * 64);
  for (let i = 0; i < 64; i++) many.set(one, i * one.length);
  let replies = 0;
  const acks = new RespReplyReader(() => replies++);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let published = 0;
  while (performance.now() - t0 < durationS * 1000) {
    await pub.write(many);
    published += 64;
    while (replies < published) {
      const n = await pub.read(batch);
      if (n === null) break;
      acks.feed(batch, n);
    }
  }
  while (delivered < published && performance.now() - t0 < durationS * 1000 + 2000) {
    await new Promise((r) => setTimeout(r, 5));
  }
  const cpu = process.cpuUsage(cpu0);
  const wallS = (performance.now() - t0) / 1000;
  sub.close();
  pub.close();
  await reading;
  const cpuS = (cpu.user + cpu.system) / 1e6;
  return { delivered, ratePerSec: delivered / wallS, cpuPerDeliveryUs: (cpuS / delivered) * 1e6 };
}

function line(r: PubSubResult): string {
  const us = (r.clientCpuS / Math.max(1, r.delivered)) * 1e6;
  return `target ${r.requestedOpsPerSec.toLocaleString("en")}/s → ` +
    `${Math.round(r.achievedOpsPerSec).toLocaleString("en")}/s, p50 ` +
    `${r.summary.p50Ms.toFixed(3)} ms, p99 ${r.summary.p99Ms.toFixed(3)} ms, lost ${r.lost}, ` +
    `client CPU ${r.clientCpuS.toFixed(2)} s (${us.toFixed(2)} µs/delivery), lateness p99 ` +
    `${r.lateness.p99Ms.toFixed(2)} ms`;
}

const pinned = pinChoice(args);
if (pinned) await pin(Deno.pid, pinned.client);
const servers: [string, string][] = [["redis 7.0.15", "redis-server"]];
const valkey = findTool("valkey-server");
if (valkey) servers.push(["valkey 8.0.1", valkey]);
const summary: string[] = [];
for (const [name, program] of servers) {
  let server: LocalServer | undefined;
  try {
    server = await startLocalServer({ program });
    if (pinned) await pin(server.pid, pinned.server);
    const base = await baseline(server.port, seconds);
    console.log(
      `\n${name}: baseline bare SUBSCRIBE/PUBLISH loop: ${Math.round(base.ratePerSec)} ` +
        `deliveries/s, ${base.cpuPerDeliveryUs.toFixed(2)} µs client CPU per delivery`,
    );
    for (const mode of PUBSUB_MODES) {
      let best: PubSubResult | undefined;
      let worstRatio = 0; // client CPU per delivery ÷ the bare loop's, over the sustained steps
      for (let rate = start; rate <= max; rate *= 2) {
        const r = await runPubSub({
          port: server.port,
          mode,
          publishers: 64,
          subscribers: 100,
          fanOut: mode === "fan-out" ? 10 : undefined,
          payloadBytes: 128,
          requestedOpsPerSec: rate,
          durationS: seconds,
          graceS: 2,
        });
        const verdict = sustainedVerdict(r);
        console.log(`  ${mode} ${verdict}: ${line(r)}`);
        if (verdict !== "sustained") break;
        best = r;
        const perDelivery = (r.clientCpuS / Math.max(1, r.delivered)) * 1e6;
        worstRatio = Math.max(worstRatio, perDelivery / base.cpuPerDeliveryUs);
      }
      const us = best ? (best.clientCpuS / best.delivered) * 1e6 : NaN;
      summary.push(
        `${name} ${mode}: highest sustained ${
          best ? best.requestedOpsPerSec.toLocaleString("en") : "none"
        } deliveries/s` +
          (best
            ? `, p50 ${best.summary.p50Ms.toFixed(3)} ms, p99 ${
              best.summary.p99Ms.toFixed(3)
            } ms, ` +
              `client CPU ${(best.clientCpuS / best.durationS).toFixed(2)} cores ` +
              `(${us.toFixed(2)} µs/delivery = ${(us / base.cpuPerDeliveryUs).toFixed(1)}× ` +
              "the bare loop)"
            : ""),
      );
      // issue 20's targets: ≤ 3× the bare loop's CPU per delivery at every sustained step;
      // one-to-one: highest sustained ≥ 50 % of the bare loop's rate with p99 ≤ 10 ms
      summary.push(
        `${name} ${mode}: worst client CPU per delivery over the sustained steps ` +
          `${best ? worstRatio.toFixed(1) : "-"}× the bare loop (target ≤ 3)` +
          (mode === "one-to-one"
            ? `; highest sustained ${
              best ? ((best.requestedOpsPerSec / base.ratePerSec) * 100).toFixed(0) : "0"
            } % of the bare loop's ${Math.round(base.ratePerSec)}/s (target ≥ 50 %), p99 ` +
              `${best ? best.summary.p99Ms.toFixed(2) : "-"} ms (target ≤ 10)`
            : ""),
      );
    }
  } finally {
    await server?.stop();
  }
}
const load = Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
console.log(
  `\nsummary (${Deno.build.os}, ${navigator.hardwareConcurrency} CPUs, load ${load}; ` +
    (pinned ? `server on CPU ${pinned.server}, client on CPU ${pinned.client})` : "not pinned)") +
    ":",
);
for (const s of summary) console.log(`- ${s}`);
