/**
 * Absurd parameters (issue 21): checked once, before any load, for the CLI and for plans; the
 * CLI exits 2 naming the option as typed (never an internal name such as `durationS`), with no
 * stack trace and no Node warning. And Ctrl-C ends a step running at the highest rate allowed.
 */

import assert from "node:assert/strict";
import { commandsProcessed, withServers } from "../_support/servers.ts";
import { kvlab, PERMISSIONS } from "./_cli.ts";
import { interruptCli } from "../_support/interrupt.ts";

const URL_DOWN = "redis://127.0.0.1:1";

/** Each case: the arguments after the command's URL, the option the message must name. */
const CASES: [string, string[], string][] = [
  ["pubsub", ["--rate", "1e12"], "--rate"],
  ["pubsub", ["--rate", "100", "--payload", "1e12"], "--payload"],
  ["pubsub", ["--rate", "100", "--payload", "15"], "--payload"],
  ["pubsub", ["--rate", "100", "--duration", "0"], "--duration"],
  ["pubsub", ["--rate", "100", "--duration", "-1"], "--duration"],
  ["pubsub", ["--rate", "100", "--duration", "1e9"], "--duration"],
  ["pubsub", ["--rate", "100", "--grace", "-1"], "--grace"],
  ["pubsub", ["--rate", "100", "--publishers", "100000"], "--publishers"],
  ["pubsub", ["--rate", "100", "--subscribers", "100000"], "--subscribers"],
  ["load", ["--rate", "1e10", "--connections", "2", "--duration", "1"], "--rate"],
  ["load", ["--rate", "1e12", "--connections", "2", "--duration", "1"], "--rate"],
  ["load", ["--rate", "100", "--connections", "100000", "--duration", "1"], "--connections"],
  ["load", ["--rate", "100", "--connections", "2", "--duration", "1e9"], "--duration"],
  ["load", ["--rate", "100", "--connections", "2", "--duration", "0"], "--duration"],
  [
    "load",
    ["--rate", "100", "--connections", "2", "--duration", "1", "--warmup", "-1"],
    "--warmup",
  ],
  [
    "load",
    ["--rate", "100", "--connections", "2", "--duration", "1", "--data-size", "1e12"],
    "--data-size",
  ],
  [
    "load",
    ["--rate", "100", "--connections", "2", "--duration", "1", "--data-size", "600000000"],
    "--data-size",
  ],
  // a topology no server can take: 10^9 channels subscribed for 33 s until the step's deadline;
  // a fan-out above the subscribers exited 1 without naming --fan-out
  ["pubsub", ["--rate", "100", "--subscribers", "2", "--channels", "1e9"], "--channels"],
  [
    "pubsub",
    ["--rate", "100", "--mode", "fan-out", "--subscribers", "2", "--fan-out", "1e9"],
    "--fan-out",
  ],
  // kvlab sample: "invalid duration: 0 s (0 < d ≤ 86400)" exited 1; an --interval of 1e12
  // overflowed its timer ("Timeout duration was set to 1.") and sampled ~360 times a second
  ["sample", ["--duration", "0"], "--duration"],
  ["sample", ["--duration", "-1"], "--duration"],
  ["sample", ["--duration", "1e9"], "--duration"],
  ["sample", ["--duration", "1", "--interval", "0"], "--interval"],
  ["sample", ["--duration", "1", "--interval", "1e12"], "--interval"],
];

Deno.test("hostile: absurd CLI parameters exit 2 before any load, naming the option", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-limits-" });
  for (const [command, args, option] of CASES) {
    await t.step(`kvlab ${command} ${args.join(" ")}`, async () => {
      const r = await kvlab([command, "--url", URL_DOWN, "--data", `${dir}/d`, ...args]);
      assert.equal(r.code, 2, r.printed);
      assert.match(r.stderr, new RegExp(`invalid ${option}: `));
      assert.doesNotMatch(
        r.printed,
        /durationS|graceS|payloadBytes|TimeoutOverflow|Timeout duration|\d ms \(|\n\s+at /,
      );
      // nothing was stored: no connection was tried
      assert.throws(() => Deno.statSync(`${dir}/d/batches`));
    });
  }
  Deno.removeSync(dir, { recursive: true });
});

/** Plans whose rates a tool or engine cannot take. */
const PLANS: [string, string, RegExp][] = [
  [
    "memtier rates: [1e12]",
    "sweep: {engine: memtier, threads: 1, clients: 4, rates: [1000000000000], step_s: 5}",
    /sweep\.rates\.0: .*at most 1000000000/,
  ],
  [
    "kvlab engine rates: [1e12]",
    "sweep: {engine: kvlab, threads: 1, clients: 4, rates: [1000000000000], step_s: 5}",
    /sweep\.rates\.0: /,
  ],
  [
    "pubsub rates: [1e12]",
    "pubsub: {modes: [one-to-one], publishers: 2, subscribers: 2, rates: [1000000000000]}",
    /pubsub\.rates(\.0)?: /,
  ],
  [
    "sweep data_size_bytes: 1e12",
    "sweep: {engine: kvlab, threads: 1, clients: 4, rates: [100], step_s: 5, data_size_bytes: 1000000000000}",
    /sweep\.data_size_bytes: expected a whole number of bytes from 1 to 16777216/,
  ],
  [
    "memtier threads × clients: 100,000",
    "memtier: {test_time_s: 5, matrix: {threads: [10], clients: [10000]}}",
    /memtier\.matrix\.clients: threads × clients = 100000: at most 10000/,
  ],
  [
    "memtier rate_limit × connections above 10^9",
    "memtier: {test_time_s: 5, rate_limit: 1000000000, matrix: {threads: [2], clients: [10]}}",
    /memtier\.rate_limit: .*at most 1000000000/,
  ],
  [
    "pubsub publishers: 100000",
    "pubsub: {modes: [one-to-one], publishers: 100000, subscribers: 2, rates: [100]}",
    /pubsub\.publishers: /,
  ],
  [
    "memtier data_size_bytes: 1e12",
    "memtier: {test_time_s: 5, matrix: {data_size_bytes: [32, 1000000000000]}}",
    /memtier\.matrix\.data_size_bytes\.1: expected a whole number of bytes from 1 to 16777216/,
  ],
  [
    "memtier pipeline: 1e9",
    "memtier: {test_time_s: 5, matrix: {pipeline: 1000000000}}",
    /memtier\.matrix\.pipeline: expected a whole number of requests from 1 to 10000/,
  ],
  // redis-benchmark: 100,000 clients ran out of files mid-plan ("Too many open files")
  [
    "redis-benchmark clients: 100000",
    "tests: [set]\nmatrix: {clients: [1, 100000]}",
    /matrix\.clients\.1: expected a whole number of connections from 1 to 10000/,
  ],
  [
    "redis-benchmark data_size_bytes: 1e12",
    "tests: [set]\nmatrix: {data_size_bytes: [1000000000000]}",
    /matrix\.data_size_bytes\.0: expected a whole number of bytes from 1 to 16777216/,
  ],
  // memory: a 10^12-byte value stopped the whole plan at its first cell ("Invalid string length")
  [
    "memory value_size_bytes: 1e12",
    "memory: {key_counts: [10, 20], value_size_bytes: 1000000000000}",
    /memory\.value_size_bytes: expected a whole number of bytes from 1 to 16777216/,
  ],
  [
    "memory key_counts: 30,000,000",
    "memory: {key_counts: [10, 30000000]}",
    /memory\.key_counts\.1: expected a whole number of keys from 1 to 20000000/,
  ],
];

/** The plan kind of a case: the first key of its section names it. */
const KINDS: Record<string, string> = {
  sweep: "latency-sweep",
  tests: "redis-benchmark",
  memtier: "memtier",
  pubsub: "pubsub",
  memory: "memory",
};

Deno.test("hostile: absurd plan parameters are refused when the plan is read", async (t) => {
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-plan-limits-" });
  for (const [i, [name, section, error]] of PLANS.entries()) {
    await t.step(name, async () => {
      const plan = `${dir}/p${i}.yaml`;
      const kind = KINDS[section.slice(0, section.indexOf(":"))];
      Deno.writeTextFileSync(
        plan,
        `name: p\nkind: ${kind}\nservers:\n  - name: a\n    url: redis://127.0.0.1:1\n${section}\n`,
      );
      const r = await kvlab(["run", plan, "--data", `${dir}/d${i}`, "--dry-run"]);
      assert.notEqual(r.code, 0, r.printed);
      assert.match(r.stderr, error);
    });
  }
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("hostile: more connections than `ulimit -n` allows exit 2 before any load", async () => {
  const ROOT = new URL("../../", import.meta.url).pathname;
  const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-nofile-" });
  // the CLI's own permissions (no --allow-all: /proc is then read through sh)
  const cli = `"${Deno.execPath()}" run ${PERMISSIONS} "${ROOT}src/cli.ts"`;
  const out = await new Deno.Command("sh", {
    args: [
      "-c",
      `ulimit -n 1024 && exec ${cli} load --url ${URL_DOWN} --data "${dir}/d" --rate 100 ` +
      "--connections 5000 --duration 1",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 2, stderr);
  assert.match(stderr, /invalid --connections: 5000 \(this machine lets a process open 1024 files/);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("hostile: Ctrl-C and SIGTERM end kvlab pubsub at its highest rate, keeping what was counted (exit 130)", async (t) => {
  await withServers([{}], async ([server]) => {
    const dir = Deno.makeTempDirSync({ prefix: "kvlab-hostile-sigint-" });
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      await t.step(signal, async () => {
        const before = await commandsProcessed(server.port);
        // (started once its first bytes reach the server; an ignored signal would run the
        // whole 600 s window: a pump that never yields)
        const out = await interruptCli(
          [
            ...["pubsub", "--url", `redis://127.0.0.1:${server.port}`, "--data", `${dir}/d`],
            ...["--rate", "1e7", "--publishers", "4", "--subscribers", "4", "--duration", "600"],
          ],
          signal,
          async () => await commandsProcessed(server.port) > before + 1000,
        );
        const printed = out.printed;
        assert.notEqual(out.signal, "SIGKILL", `${signal} was ignored`);
        assert.match(printed, /interrupted/);
        // the CLI's exit code for an interrupted command, as kvlab load's (it exited 0)
        assert.equal(out.code, 130, printed);
      });
    }
    Deno.removeSync(dir, { recursive: true });
  });
});
