// deno-lint-ignore-file no-console
/**
 * Collection overhead (`deno task bench:overhead`): the same redis-benchmark command run bare
 * and through kvlab (`runRedisBenchmark`: snapshots, raw output streamed to the run
 * folder, live progress parsing, Parquet), against one throwaway local redis-server,
 * interleaved bare/kvlab/kvlab/bare/… for N pairs. Prints the median ratio of the throughput
 * the tool reports (kvlab / bare), per test and overall. Target ≥ 0.98.
 *
 * Usage: deno task bench:overhead [--pairs 10] [--requests 200000] [--clients 50]
 *
 * @module
 */

import {
  argvToCommand,
  type BenchmarkCall,
  DenoProcessRunner,
  parseRedisBenchmark,
  parseServerUrl,
  redisBenchmarkArgv,
  runRedisBenchmark,
  startLocalServer,
} from "../src/collect/mod.ts";
import { loadResults } from "../src/analyze/load.ts";

const args = Deno.args;
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const pairs = Number(opt("pairs", "10"));
const requests = Number(opt("requests", "200000"));
const clients = Number(opt("clients", "50"));

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const server = await startLocalServer();
const work = Deno.makeTempDirSync({ prefix: "kvlab-overhead-" });
try {
  const params: BenchmarkCall = {
    target: parseServerUrl(server.url),
    tests: ["set", "get"],
    clients,
    requests,
  };
  const argv = redisBenchmarkArgv(params);
  console.log(
    `kvlab collection overhead — ${
      new Date().toISOString()
    }, redis-server on 127.0.0.1:${server.port}`,
  );
  console.log(`command: ${argvToCommand(argv)}; ${pairs} pairs, order alternating\n`);
  const ratios = new Map<string, number[]>();
  const runner = new DenoProcessRunner();
  const bare = async () => {
    const out = await new Deno.Command(argv[0], {
      args: argv.slice(1),
      stdout: "piped",
      stderr: "null",
    }).output();
    const run = parseRedisBenchmark(new TextDecoder().decode(out.stdout));
    return new Map(run.tests.map((t) => [t.test, t.opsPerSec!]));
  };
  const viaKvlab = async (i: number) => {
    const data = `${work}/d${i}`;
    await runRedisBenchmark({ data, runner, params, toolVersion: "bench" });
    const df = loadResults(data);
    const tests = df.getColumn("test").toArray() as string[];
    const ops = df.getColumn("ops_per_sec").toArray() as number[];
    return new Map(tests.map((t, k) => [t, ops[k]]));
  };
  await bare(); // warm-up, not counted
  console.log("| pair | test | bare ops/s | kvlab ops/s | kvlab / bare |");
  console.log("|---:|---|---:|---:|---:|");
  for (let i = 0; i < pairs; i++) {
    // alternate which goes first, so neither side always runs on a warmer server
    let bb: Map<string, number>;
    let kk: Map<string, number>;
    if (i % 2 === 0) {
      bb = await bare();
      kk = await viaKvlab(i);
    } else {
      kk = await viaKvlab(i);
      bb = await bare();
    }
    for (const [test, v] of bb) {
      const r = kk.get(test)! / v;
      ratios.set(test, [...(ratios.get(test) ?? []), r]);
      console.log(
        `| ${i + 1} | ${test} | ${v.toFixed(2)} | ${kk.get(test)!.toFixed(2)} | ${r.toFixed(3)} |`,
      );
    }
  }
  console.log("\n| test | median kvlab / bare | min | max |");
  console.log("|---|---:|---:|---:|");
  const all: number[] = [];
  for (const [test, rs] of ratios) {
    all.push(...rs);
    console.log(
      `| ${test} | ${median(rs).toFixed(3)} | ${Math.min(...rs).toFixed(3)} | ${
        Math.max(...rs).toFixed(3)
      } |`,
    );
  }
  console.log(
    `| all | ${median(all).toFixed(3)} | ${Math.min(...all).toFixed(3)} | ${
      Math.max(...all).toFixed(3)
    } |`,
  );
  console.log(`\ntarget: median ≥ 0.98`);
} finally {
  await server.stop();
  Deno.removeSync(work, { recursive: true });
}
