// deno-lint-ignore-file no-console
/**
 * Pacing probe (issue 20 item 1: "measure options"): what the open-loop generator would cost
 * if its I/O and its sleeps went through libc by Deno FFI instead of Deno's TCP ops and a timer
 * Worker. One thread runs a blocking loop: send what is due (`send`), sleep in `epoll_pwait2`
 * until the next due send or a reply (nanosecond timeout, timer slack 1 ns), read replies
 * (`recv`). Same schedule as `runOpenLoop` (uniform phases, pipeline 1, GET on a preloaded key
 * space), latency from the intended send time. Against the same local redis-server, the probe
 * also runs `runOpenLoop` and memtier_benchmark at the same rate, so the three compare in one
 * run. Server on CPU 0, this process on CPU 1 (`--pin`, as the other benches).
 *
 * It is a probe, not an engine: no AUTH, no SET, no Workers, no drain beyond 1 s.
 *
 * `--quanta 0,0.05,1` runs the FFI loop once per wake-up quantum (ms): 0 sleeps until the
 * exact due time; Q > 0 wakes on a Q-ms grid and sends everything due then (fewer wake-ups,
 * lateness up to Q: the trade between client CPU and precision; memtier's libevent timers have
 * a millisecond grid).
 *
 * Usage: deno run -A bench/pacing_probe.ts [--rates 5000,40000] [--connections 50]
 *   [--seconds 8] [--keys 100000] [--quanta 0] [--engines ffi,kvlab-ffi,kvlab-deno,memtier]
 *   [--threads 1] [--pin 0,1|none] [--repeat 1]
 *
 * `kvlab-ffi` and `kvlab-deno` are `runOpenLoop` with each engine (`--threads` Workers).
 * `sleeps` is no generator: bare timed sleeps keeping the same schedule (one due time every
 * 1/rate s, `timedSleepCost`), their lateness counted as the engines count theirs (a late wake-up
 * makes every due time it passed late): the floor under the engines' lateness here. `--repeat N`
 * runs the whole list N times, one engine after the other, so that the machine's timer, which
 * drifts over minutes, is compared with itself; the last lines give the median of each engine's
 * lateness p99 and, per engine, the median of its ratio to `sleeps` in the same round.
 *
 * @module
 */

import process from "node:process";
import { startLocalServer } from "../src/collect/redis_server.ts";
import {
  encodeGet,
  latencyHistogram,
  latencySummary,
  preloadKeys,
  recordMs,
  RespReplyReader,
  runOpenLoop,
} from "../src/collect/loadgen/mod.ts";
import { pin, pinChoice } from "./_pin.ts";
import { timedSleepCost } from "../src/system/timer.ts";

const args = Deno.args;
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const rates = opt("rates", "5000,40000").split(",").map(Number);
const connections = Number(opt("connections", "50"));
const seconds = Number(opt("seconds", "8"));
const keys = Number(opt("keys", "100000"));
const quanta = opt("quanta", "0").split(",").map(Number);
const engines = new Set(opt("engines", "ffi,kvlab-ffi,kvlab-deno,memtier").split(","));
const threads = Number(opt("threads", "1"));
const repeat = Number(opt("repeat", "1"));
if (!(Number.isInteger(repeat) && repeat >= 1)) {
  throw new RangeError(`invalid --repeat: ${opt("repeat", "1")} (expected a whole number ≥ 1)`);
}

const libc = Deno.dlopen("libc.so.6", {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  connect: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  epoll_create1: { parameters: ["i32"], result: "i32" },
  epoll_ctl: { parameters: ["i32", "i32", "i32", "buffer"], result: "i32" },
  epoll_pwait2: { parameters: ["i32", "buffer", "i32", "buffer", "pointer"], result: "i32" },
  send: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize" },
  recv: { parameters: ["i32", "buffer", "usize", "i32"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
});
const C = libc.symbols;

function connectFd(port: number): number {
  const fd = C.socket(2, /* AF_INET */ 1, /* SOCK_STREAM */ 0);
  const addr = new Uint8Array(16);
  const v = new DataView(addr.buffer);
  v.setUint16(0, 2, true); // AF_INET
  v.setUint16(2, port, false);
  addr.set([127, 0, 0, 1], 4);
  if (C.connect(fd, addr, 16) !== 0) throw new Error(`connect failed on port ${port}`);
  C.setsockopt(fd, 6, /* IPPROTO_TCP */ 1, /* TCP_NODELAY */ new Int32Array([1]), 4);
  C.fcntl(fd, 4, /* F_SETFL */ 0o4000 /* O_NONBLOCK */);
  return fd;
}

interface ProbeResult {
  achievedOpsPerSec: number;
  cpuS: number;
  p50Ms: number;
  p99Ms: number;
  lateP99Ms: number;
}

/** The FFI loop on this thread. */
function ffiOpenLoop(port: number, rate: number, quantumMs: number): ProbeResult {
  C.prctl(29, /* PR_SET_TIMERSLACK */ 1n, 0n, 0n, 0n);
  const ep = C.epoll_create1(0);
  const fds = Array.from({ length: connections }, () => connectFd(port));
  const byFd = new Map<number, number>();
  const ev = new Uint8Array(12); // struct epoll_event is packed on x86_64: u32 events, u64 data
  const evv = new DataView(ev.buffer);
  fds.forEach((fd, i) => {
    byFd.set(fd, i);
    evv.setUint32(0, 1, /* EPOLLIN */ true);
    evv.setBigUint64(4, BigInt(fd), true);
    C.epoll_ctl(ep, 1, /* EPOLL_CTL_ADD */ fd, ev);
  });
  const interval = (connections / rate) * 1000;
  const next = Float64Array.from(fds, (_, i) => (i * interval) / connections);
  const intended = new Float64Array(connections);
  const readyAt = new Float64Array(connections);
  const busy = new Uint8Array(connections);
  const fromIntended = latencyHistogram();
  const lateness = latencyHistogram();
  let completed = 0;
  let now = 0;
  let current = 0;
  const readers = fds.map((_, i) =>
    new RespReplyReader(() => {
      busy[i] = 0;
      readyAt[i] = now;
      completed++;
      recordMs(fromIntended, now - intended[i]);
      current = i;
    })
  );
  const requests = Array.from(
    { length: 1024 },
    () => encodeGet(`key:${Math.floor(Math.random() * keys)}`),
  );
  const lengths = requests.map((r) => BigInt(r.length));
  const bufLength = 64n * 1024n;
  const events = new Uint8Array(12 * 64);
  const evs = new DataView(events.buffer);
  const ts = new BigInt64Array(2);
  const tsBytes = new Uint8Array(ts.buffer);
  let loops = 0;
  let timeouts = 0;
  const buf = new Uint8Array(64 * 1024);
  const endMs = seconds * 1000;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let n = 0;
  for (;;) {
    now = performance.now() - t0;
    let wake = Infinity;
    for (let i = 0; i < connections; i++) {
      if (busy[i] || next[i] >= endMs) continue;
      if (next[i] <= now) {
        const req = n++ & 1023;
        C.send(fds[i], requests[req], lengths[req], 0x4000 /* MSG_NOSIGNAL */);
        recordMs(lateness, now - Math.max(next[i], readyAt[i]));
        intended[i] = next[i];
        next[i] += interval;
        busy[i] = 1;
      } else if (next[i] < wake) wake = next[i];
    }
    const inflight = busy.some((b) => b === 1);
    if (wake === Infinity && (!inflight || now > endMs + 1000)) break;
    const at = quantumMs > 0 ? Math.ceil(wake / quantumMs) * quantumMs : wake;
    const waitMs = Math.max(0, Math.min(at, endMs + 1000) - (performance.now() - t0));
    ts[0] = BigInt(Math.floor(waitMs / 1000));
    ts[1] = BigInt(Math.round((waitMs % 1000) * 1e6));
    const k = C.epoll_pwait2(ep, events, 64, tsBytes, null);
    loops++;
    if (k <= 0) {
      timeouts++;
      continue;
    }
    now = performance.now() - t0;
    for (let e = 0; e < k; e++) {
      const fd = Number(evs.getBigUint64(e * 12 + 4, true));
      const i = byFd.get(fd)!;
      const got = Number(C.recv(fd, buf, bufLength, 0));
      if (got > 0) readers[i].feed(buf, got);
    }
  }
  const cpu = process.cpuUsage(cpu0);
  for (const fd of fds) C.close(fd);
  C.close(ep);
  void current;
  if (Deno.env.get("PROBE_DEBUG")) console.log({ loops, timeouts, n });
  const s = latencySummary(fromIntended);
  return {
    achievedOpsPerSec: completed / seconds,
    cpuS: (cpu.user + cpu.system) / 1e6,
    p50Ms: s.p50Ms,
    p99Ms: s.p99Ms,
    lateP99Ms: latencySummary(lateness).p99Ms,
  };
}

/** Children's CPU (user + system) of this process so far, seconds. */
function childCpuS(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[13]) + Number(f[14])) / 100;
}

async function memtier(port: number, rate: number): Promise<ProbeResult | undefined> {
  const home = Deno.env.get("HOME") ?? "";
  const bin = `${home}/.cache/kvlab/tools/memtier_benchmark-2.3.0/memtier_benchmark`;
  try {
    Deno.statSync(bin);
  } catch {
    return undefined;
  }
  const json = await Deno.makeTempFile({ suffix: ".json" });
  const cpu0 = childCpuS();
  await new Deno.Command(bin, {
    args: [
      ...["-s", "127.0.0.1", "-p", String(port), "--protocol=redis", "-t", "1"],
      ...["-c", String(connections), `--test-time=${seconds}`, "--ratio=0:1", "--key-pattern=R:R"],
      ...["--key-prefix=key:", "--key-minimum=1", `--key-maximum=${keys - 1}`, "--pipeline=1"],
      ...["--hide-histogram", `--json-out-file=${json}`],
      `--rate-limiting=${Math.max(1, Math.round(rate / connections))}`,
    ],
    stdout: "null",
    stderr: "null",
  }).output();
  const cpuS = childCpuS() - cpu0;
  const all = JSON.parse(await Deno.readTextFile(json))["ALL STATS"];
  await Deno.remove(json);
  const pct = all.Gets["Percentile Latencies"];
  return {
    achievedOpsPerSec: all.Totals["Ops/sec"],
    cpuS,
    p50Ms: pct["p50.00"],
    p99Ms: pct["p99.00"],
    lateP99Ms: NaN,
  };
}

const pinned = pinChoice(args);
const server = await startLocalServer();
if (pinned) {
  await pin(server.pid, pinned.server);
  await pin(Deno.pid, pinned.client);
}
try {
  await preloadKeys({ port: server.port, keys, valueSize: 256 });
  const load = Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
  console.log(
    `pacing probe: ${connections} connections, GET, ${seconds} s per step; ` +
      (pinned ? `server on CPU ${pinned.server}, client on CPU ${pinned.client}` : "not pinned") +
      `; load ${load}\n`,
  );
  console.log(
    "| rate/s | engine | achieved/s | client CPU s | µs CPU per request | p50 ms | p99 ms | " +
      "lateness p99 ms |",
  );
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|");
  const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "-");
  /** Lateness p99 by "rate engine", one per round. */
  const late = new Map<string, number[]>();
  for (let round = 0; round < repeat; round++) {
    for (const rate of rates) {
      const rows: [string, ProbeResult | undefined][] = [];
      if (engines.has("sleeps")) {
        // one due time per send of one Worker (each of --threads keeps its own schedule)
        const c = timedSleepCost((threads * 1e6) / rate, seconds);
        if (!c) throw new Error("cannot time a sleep here (needs FFI, libc.so.6, Linux ≥ 5.11)");
        rows.push(["bare timed sleeps, same schedule", {
          achievedOpsPerSec: c.dueTimes / seconds,
          cpuS: (c.cpuUsPerSleep * c.sleeps) / 1e6,
          p50Ms: NaN,
          p99Ms: NaN,
          lateP99Ms: c.scheduleLatenessP99Us / 1000,
        }]);
      }
      if (engines.has("ffi")) {
        for (const q of quanta) {
          rows.push([`ffi epoll loop, quantum ${q} ms`, ffiOpenLoop(server.port, rate, q)]);
        }
      }
      for (const engine of ["ffi", "deno"] as const) {
        if (!engines.has(`kvlab-${engine}`)) continue;
        const kv = await runOpenLoop({
          port: server.port,
          requestedOpsPerSec: rate,
          connections,
          durationS: seconds,
          keys,
          engine,
          workers: threads,
        });
        rows.push([`runOpenLoop, engine ${engine}`, {
          achievedOpsPerSec: kv.achievedOpsPerSec,
          cpuS: kv.clientCpuS,
          p50Ms: kv.fromIntended.p50Ms,
          p99Ms: kv.fromIntended.p99Ms,
          lateP99Ms: kv.lateness.p99Ms,
        }]);
      }
      if (engines.has("memtier")) rows.push(["memtier", await memtier(server.port, rate)]);
      for (const [name, r] of rows) {
        if (!r) continue;
        const key = `${rate}/s ${name}`;
        if (!late.has(key)) late.set(key, new Array(repeat).fill(NaN));
        late.get(key)![round] = r.lateP99Ms; // by round: a row missing in one round stays NaN
        const us = (r.cpuS / (r.achievedOpsPerSec * seconds)) * 1e6;
        console.log(
          `| ${rate} | ${name} | ${Math.round(r.achievedOpsPerSec)} | ${r.cpuS.toFixed(2)} | ` +
            `${us.toFixed(1)} | ${f3(r.p50Ms)} | ${f3(r.p99Ms)} | ${f3(r.lateP99Ms)} |`,
        );
      }
    }
  }
  if (repeat > 1) {
    const median = (xs: number[]) => {
      const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
      return v.length === 0 ? NaN : (v[(v.length - 1) >> 1] + v[v.length >> 1]) / 2;
    };
    console.log(`\nlateness p99 over ${repeat} rounds (median; each round's in brackets):`);
    for (const [key, xs] of late) {
      if (xs.every((x) => !Number.isFinite(x))) continue; // memtier measures no lateness
      const [rate] = key.split(" ");
      const floor = late.get(`${rate} bare timed sleeps, same schedule`);
      const ratio = floor && !key.includes("bare timed sleeps")
        ? `; ÷ the bare sleeps' of the same round: ${
          median(xs.map((x, i) => x / floor[i])).toFixed(2)
        }×`
        : "";
      console.log(`- ${key}: ${f3(median(xs))} ms [${xs.map(f3).join(", ")}]${ratio}`);
    }
  }
} finally {
  await server.stop();
  libc.close();
}
