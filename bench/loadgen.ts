// deno-lint-ignore-file no-console
/**
 * Load generator benchmark (`deno run -A bench/loadgen.ts`, issue 13 item 6): kvlab's
 * open-loop generator against memtier_benchmark, in one run against one local redis-server,
 * same connections, GET only on a preloaded key space:
 *
 * 1. the server's capacity with these connections (median of three memtier runs without a rate
 *    limit, closed loop;
 *    without memtier, kvlab's highest sustained rate stands in);
 * 2. at 5 %, 10 %, 50 % and 90 % of it: achieved rate, client CPU, requests per client
 *    CPU-second, p50/p99 (kvlab: from the intended send time and from the send; memtier: its
 *    own, from the send), kvlab's send lateness and whole send delay and whether the step is
 *    generator-bound (`fixed_rate.ts`'s rule); kvlab runs once per engine: `ffi` (the epoll
 *    loop by FFI) and `deno` (Deno's TCP and a timer thread: the engine before it);
 * 3. issue 20's "Done when": at 5,000/s and 40,000/s (`--done-seconds`, 8 s) the process CPU
 *    and p99 from the intended send of each engine against memtier's, and of `ffi` on a 1 ms
 *    wake-up grid (`quantumMs: 1`, "ffi q1ms": libevent's timer resolution) and on memtier's
 *    own 20 ms grid ("ffi q20ms": `--rate-limiting` sends each connection's share of 20 ms at
 *    once, so memtier is as imprecise as that); beside them the floor under any precise
 *    generator on this machine: timed sleeps until each send, their CPU measured here on the
 *    client CPU (`src/system/timer.ts`), or one whole CPU where a sleep outlasts the gap between
 *    sends (a precise generator spins there), and that floor ÷ memtier's CPU among the targets;
 *    and the lateness of sends paced by those bare sleeps, counted as the engines count theirs
 *    (a late wake-up makes every send due meanwhile late), the floor under their lateness;
 * 4. the highest sustained rate of each (achieved ≥ 97 % of requested), from 30 % to 100 %
 *    of capacity in steps of 10 % (first run only; `--sustained no` skips it);
 * 5. the targets, kvlab / memtier, per engine; with `--runs N` (N > 1) every step runs N
 *    times and the targets are the medians of the N runs.
 *
 * memtier's CPU time is the change in this process's cutime + cstime (/proc/self/stat) across
 * the run, i.e. what the reaped child used; kvlab's is `process.cpuUsage()` of this process.
 *
 * Usage: deno run -A bench/loadgen.ts [--connections 50] [--threads 1] [--seconds 4]
 *   [--done-seconds 8] [--runs 1] [--sustained yes|no] [--keys 100000] [--memtier PATH]
 *   [--pin 0,1|none]
 *
 * With `--pin S,C` (the default on two CPUs or more) the server runs on CPU S and this process
 * (and memtier, its child) on CPU C (`taskset`).
 *
 * @module
 */

import { startLocalServer } from "../src/collect/redis_server.ts";
import { type OpenLoopResult, preloadKeys, runOpenLoop } from "../src/collect/loadgen/mod.ts";
import { pin, pinChoice } from "./_pin.ts";
import { timedSleepCost } from "../src/system/timer.ts";
import {
  DEFAULT_SUSTAINED_RULE,
  type FixedRateStep,
  generatorBound,
  sustainedVerdict,
} from "../src/fixed_rate.ts";

const args = Deno.args;
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const connections = Number(opt("connections", "50"));
const threads = Number(opt("threads", "1"));
const seconds = Number(opt("seconds", "4"));
const keys = Number(opt("keys", "100000"));
const doneSeconds = Number(opt("done-seconds", "8"));
const runs = Number(opt("runs", "1"));
const sustained = opt("sustained", "yes") !== "no";
const ENGINES = ["ffi", "deno"] as const;
type Engine = typeof ENGINES[number];

function findMemtier(): string | undefined {
  const given = opt("memtier", "");
  const home = Deno.env.get("HOME") ?? "";
  const candidates = [
    given,
    ...(Deno.env.get("PATH") ?? "").split(":").map((d) => `${d}/memtier_benchmark`),
    `${home}/.cache/kvlab/tools/memtier_benchmark-2.3.0/memtier_benchmark`,
  ];
  return candidates.find((p) => {
    try {
      return p !== "" && Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  });
}

/** One measured step, either tool. */
interface Step extends FixedRateStep {
  /** the step's length, s */
  seconds: number;
  requestedOpsPerSec: number;
  achievedOpsPerSec: number;
  cpuS: number;
  p50Ms: number;
  p99Ms: number;
  /** kvlab only */
  p50SendMs?: number;
  p99SendMs?: number;
  lateP99Ms?: number;
  /** kvlab only: the whole intended → actual send delay, p99 */
  delayP99Ms?: number;
  /** kvlab only: fixed_rate.ts's generator-bound rule */
  bound?: boolean | null;
}

const perCpu = (s: Step) => s.cpuS > 0 ? (s.achievedOpsPerSec * s.seconds) / s.cpuS : NaN;

/** Children's CPU (user + system) of this process so far, seconds. */
function childCpuS(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields 16 and 17 of stat (1-based) are cutime, cstime; f starts at field 3
  return (Number(f[13]) + Number(f[14])) / 100; // USER_HZ is 100 on Linux
}

async function memtier(bin: string, port: number, rate?: number, secs = seconds): Promise<Step> {
  const json = await Deno.makeTempFile({ prefix: "kvlab-bench-memtier-", suffix: ".json" });
  const perConn = rate === undefined ? undefined : Math.max(1, Math.round(rate / connections));
  const argv = [
    "-s",
    "127.0.0.1",
    "-p",
    String(port),
    "--protocol=redis",
    "-t",
    String(threads),
    "-c",
    String(Math.round(connections / threads)),
    `--test-time=${secs}`,
    "--ratio=0:1",
    "--key-pattern=R:R",
    "--key-prefix=key:",
    "--key-minimum=1",
    `--key-maximum=${keys - 1}`,
    "--pipeline=1",
    "--hide-histogram",
    `--json-out-file=${json}`,
    ...(perConn === undefined ? [] : [`--rate-limiting=${perConn}`]),
  ]; // prettier-ignore
  const cpu0 = childCpuS();
  const out = await new Deno.Command(bin, { args: argv, stdout: "null", stderr: "piped" }).output();
  const cpuS = childCpuS() - cpu0;
  if (!out.success) {
    throw new Error(
      `memtier_benchmark exited with ${out.code}: ${
        new TextDecoder().decode(out.stderr).slice(-300)
      }`,
    );
  }
  const all = JSON.parse(await Deno.readTextFile(json))["ALL STATS"];
  await Deno.remove(json);
  const pct = all.Gets["Percentile Latencies"];
  return {
    seconds: secs,
    requestedOpsPerSec: perConn === undefined ? NaN : perConn * connections,
    achievedOpsPerSec: all.Totals["Ops/sec"],
    cpuS,
    p50Ms: pct["p50.00"],
    p99Ms: pct["p99.00"],
  };
}

async function kvlab(
  port: number,
  rate: number,
  engine: Engine,
  secs = seconds,
  quantumMs = 0,
): Promise<Step> {
  const r: OpenLoopResult = await runOpenLoop({
    port,
    requestedOpsPerSec: rate,
    connections,
    durationS: secs,
    keys,
    workers: threads,
    engine,
    quantumMs,
  });
  return {
    seconds: secs,
    requestedOpsPerSec: rate,
    achievedOpsPerSec: r.achievedOpsPerSec,
    cpuS: r.clientCpuS,
    p50Ms: r.fromIntended.p50Ms,
    p99Ms: r.fromIntended.p99Ms,
    p50SendMs: r.fromSend.p50Ms,
    p99SendMs: r.fromSend.p99Ms,
    lateP99Ms: r.lateness.p99Ms,
    delayP99Ms: r.delay.p99Ms,
    bound: generatorBound({
      p99LatencyMs: r.fromIntended.p99Ms,
      sendDelayP99Ms: r.delay.p99Ms,
    }),
  };
}

/**
 * Runs every step from `from` up by `step` and returns the highest requested rate that was
 * sustained (not `NS` by `fixed_rate.ts`'s rule: achieved ≥ 97 %; `over` counts, as memtier's
 * token bucket over-delivers). All steps run, even after a miss: memtier's rate limiter can
 * miss a low step and hold a higher one.
 */
async function highestSustained(
  run: (rate: number) => Promise<Step>,
  from: number,
  step: number,
  steps: number,
): Promise<{ rate: number; achieved: number; tried: string[] }> {
  let best = { rate: 0, achieved: 0 };
  const tried: string[] = [];
  for (let k = 0; k < steps; k++) {
    const s = await run(from + k * step);
    const ok = sustainedVerdict(s) !== "NS";
    tried.push(`${k0(s.requestedOpsPerSec)}→${k0(s.achievedOpsPerSec)}${ok ? "" : " NS"}`);
    if (ok) best = { rate: s.requestedOpsPerSec, achieved: s.achievedOpsPerSec };
  }
  return { ...best, tried };
}

const k0 = (x: number) => `${(x / 1000).toFixed(1)}k`;
const f3 = (x: number | undefined) => x === undefined || !Number.isFinite(x) ? "-" : x.toFixed(3);
const ratio = (a: number, b: number) => Number.isFinite(a / b) ? (a / b).toFixed(2) : "-";
const median = (xs: number[]) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length === 0
    ? NaN
    : v.length % 2
    ? v[(v.length - 1) / 2]
    : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const loadavg = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");

/** The issue's targets of one run, per engine (name → value). */
type Targets = Record<string, number>;

function row(label: string, name: string, s: Step | undefined): void {
  if (!s) return;
  console.log(
    `| ${label} | ${name} | ${Math.round(s.requestedOpsPerSec)} | ${
      Math.round(s.achievedOpsPerSec)
    } | ` +
      `${s.cpuS.toFixed(2)} | ${Math.round(perCpu(s))} | ${f3(s.p50Ms)} | ${f3(s.p99Ms)} | ` +
      `${f3(s.p50SendMs)} | ${f3(s.p99SendMs)} | ${f3(s.lateP99Ms)} | ${f3(s.delayP99Ms)} | ` +
      `${s.bound === undefined ? "-" : s.bound ? "yes" : "no"} |`,
  );
}

function header(): void {
  console.log(
    "| load | tool | requested/s | achieved/s | client CPU s | req per CPU-s | p50 ms | p99 ms " +
      "| p50 from send ms | p99 from send ms | send lateness p99 ms | send delay p99 ms " +
      "| generator-bound |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
}

/** One run of the capacity-relative steps and of the "Done when" steps; returns its targets. */
async function oneRun(port: number, capacity: number, bin: string | undefined): Promise<Targets> {
  const t: Targets = {};
  console.log(`load average before: ${loadavg()}\n`);
  header();
  for (const share of [0.05, 0.1, 0.5, 0.9]) {
    const rate = Math.round(capacity * share);
    const mt = bin ? await memtier(bin, port, rate) : undefined;
    row(`${share * 100} %`, "memtier", mt);
    for (const e of ENGINES) {
      const kv = await kvlab(port, rate, e);
      row(`${share * 100} %`, `kvlab ${e}`, kv);
      if (mt && share !== 0.05) {
        t[`${e}: req per CPU-s ÷ memtier at ${share * 100} %`] = perCpu(kv) / perCpu(mt);
      }
      if (share !== 0.9) {
        t[`${e}: send lateness p99 ms at ${share * 100} % (< 0.1)`] = kv.lateP99Ms!;
        t[`${e}: send delay p99 ms at ${share * 100} % (< 0.2)`] = kv.delayP99Ms!;
      }
      if (mt && share === 0.05) {
        t[`${e}: p99 at 5 % − (1.5 × memtier's + 0.1 ms), ms (≤ 0)`] = kv.p99Ms -
          (1.5 * mt.p99Ms + 0.1);
      }
    }
  }
  console.log(`\n"Done when": ${doneSeconds} s steps at fixed rates\n`);
  header();
  for (const rate of [5000, 40000]) {
    const mt = bin ? await memtier(bin, port, rate, doneSeconds) : undefined;
    row(`${rate}/s`, "memtier", mt);
    // the floor of a precise generator here: timed sleeps until each send (about one per send),
    // or, where a sleep takes longer than the gap between sends, none: it spins (one whole CPU)
    const gapUs = 1e6 / rate;
    const sleep = timedSleepCost(gapUs, 1);
    if (!sleep) throw new Error("cannot time a sleep here (needs FFI, libc.so.6, Linux ≥ 5.11)");
    const spins = sleep.cpuUsPerSleep + sleep.overshootUs >= gapUs;
    // (per due time: after a late wake-up the due times it passed are served without a sleep)
    const cpuUsPerSend = (sleep.cpuUsPerSleep * sleep.sleeps) / sleep.dueTimes;
    const floorS = (spins ? 1 : rate * cpuUsPerSend / 1e6) * doneSeconds;
    console.log(
      `| ${rate}/s | the floor of a precise generator: ${
        spins ? "spinning (a sleep outlasts the gap)" : "timed sleeps until each send"
      } (${sleep.cpuUsPerSleep.toFixed(1)} µs of CPU and ${
        sleep.overshootUs.toFixed(0)
      } µs late per sleep, p99 ${sleep.overshootP99Us.toFixed(0)} µs; the sends they pace: ${
        cpuUsPerSend.toFixed(1)
      } µs of CPU each, p99 ${sleep.scheduleLatenessP99Us.toFixed(0)} µs late) | ${rate} | - | ` +
        `${floorS.toFixed(2)} | ${
          Math.round((rate * doneSeconds) / floorS)
        } | - | - | - | - | - | - | - |`,
    );
    if (mt) t[`a precise generator's floor here: CPU ÷ memtier's at ${rate}/s`] = floorS / mt.cpuS;
    // the lateness floor as the engines count theirs: every send a late wake-up passed is late
    t[`sends paced by bare timed sleeps: lateness p99 here, ms, at ${rate}/s`] =
      sleep.scheduleLatenessP99Us / 1000;
    // the ffi engine also on a 1 ms wake-up grid (libevent's timer resolution: less CPU,
    // lateness ≤ 1 ms) and on a 20 ms grid, memtier's own schedule (its --rate-limiting sends
    // each connection's share of 20 ms at once): the engine's cost where it is as imprecise
    const grids = { "ffi q1ms": 1, "ffi q20ms": 20 } as const;
    for (const e of [...ENGINES, "ffi q1ms", "ffi q20ms"] as const) {
      const kv = e === "ffi q1ms" || e === "ffi q20ms"
        ? await kvlab(port, rate, "ffi", doneSeconds, grids[e])
        : await kvlab(port, rate, e, doneSeconds);
      row(`${rate}/s`, `kvlab ${e}`, kv);
      if (!mt) continue;
      t[`${e}: process CPU ÷ memtier's at ${rate}/s (≤ 1)`] = kv.cpuS / mt.cpuS;
      if (rate === 5000) {
        t[`${e}: p99 at 5,000/s − (1.5 × memtier's + 0.1 ms), ms (≤ 0)`] = kv.p99Ms -
          (1.5 * mt.p99Ms + 0.1);
      }
    }
  }
  console.log(`\nload average after: ${loadavg()}\n`);
  return t;
}

const bin = findMemtier();
const pinned = pinChoice(args);
const server = await startLocalServer();
if (pinned) {
  await pin(server.pid, pinned.server);
  await pin(Deno.pid, pinned.client);
}
const t0 = performance.now();
try {
  const version = new TextDecoder().decode(
    (await new Deno.Command("redis-server", { args: ["--version"] }).output()).stdout,
  ).trim();
  console.log(`kvlab open-loop generator vs memtier — ${new Date().toISOString()}`);
  console.log(`${version}; ${Deno.build.target}, ${navigator.hardwareConcurrency} CPUs`);
  console.log(`memtier: ${bin ?? "not found (kvlab only)"}`);
  console.log(
    pinned
      ? `server on CPU ${pinned.server}, client on CPU ${pinned.client} (taskset)`
      : "not pinned",
  );
  console.log(
    `${connections} connections, ${threads} thread(s) each, GET only, ${keys} keys × 256 B, ` +
      `pipeline 1, ${seconds} s per step; ${runs} run(s)\n`,
  );
  await preloadKeys({ port: server.port, keys, valueSize: 256 });

  // the median of three closed-loop runs: one run on a shared machine can be far off
  const capacities: number[] = [];
  for (let i = 0; i < 3 && bin; i++) {
    capacities.push((await memtier(bin, server.port)).achievedOpsPerSec);
  }
  const capacity = bin
    ? capacities.sort((a, b) => a - b)[1]
    : (await highestSustained((r) => kvlab(server.port, r, "ffi"), 10_000, 10_000, 12)).rate;
  console.log(
    `server capacity with these connections (closed loop, median of ` +
      `${capacities.map((c) => Math.round(c)).join(", ")}): ${Math.round(capacity)}/s\n`,
  );

  const all: Targets[] = [];
  for (let k = 0; k < runs; k++) {
    console.log(`## run ${k + 1} of ${runs}\n`);
    all.push(await oneRun(server.port, capacity, bin));
  }

  if (sustained) {
    const step = Math.round(capacity / 10);
    const from = Math.round(capacity * 0.3);
    console.log(
      `highest sustained rate (achieved ≥ ${DEFAULT_SUSTAINED_RULE.min * 100} % of requested), ` +
        "30 % to 100 % of capacity:",
    );
    const mtMax = bin
      ? await highestSustained((r) => memtier(bin, server.port, r), from, step, 8)
      : undefined;
    if (mtMax) console.log(`- memtier: ${mtMax.rate}/s  (${mtMax.tried.join(", ")})`);
    for (const e of ENGINES) {
      const kvMax = await highestSustained((r) => kvlab(server.port, r, e), from, step, 8);
      console.log(
        `- kvlab ${e}: ${kvMax.rate}/s  (${kvMax.tried.join(", ")})` +
          (mtMax ? `; ÷ memtier ${ratio(kvMax.rate, mtMax.rate)} (target ≥ 1.0)` : ""),
      );
    }
  }

  if (bin) {
    console.log(
      `\ntargets${runs > 1 ? `, median of ${runs} runs (each run's value in brackets)` : ""}:`,
    );
    for (const name of Object.keys(all[0])) {
      const xs = all.map((t) => t[name]);
      console.log(`- ${name}: ${f3(median(xs))}${runs > 1 ? ` [${xs.map(f3).join(", ")}]` : ""}`);
    }
  }
  console.log(
    `\ntotal ${((performance.now() - t0) / 1000).toFixed(0)} s; load average ${loadavg()}`,
  );
} finally {
  await server.stop();
}
