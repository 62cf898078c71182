// deno-lint-ignore-file no-console
/**
 * What narrow reads buy (`deno run -A bench/reads.ts`): a dataset of many runs (short outputs in
 * 20 transcripts, as `deno task bench`'s case (c); the first 10 labelled `a`, the others `b`),
 * then three reads, each done narrowly (the filter and columns on the Parquet scan) and eagerly
 * (the whole tables loaded, then filtered in memory, as every command and notebook did before),
 * each in its own process so that its peak memory (VmHWM) is its own, interleaved and repeated;
 * printed: the medians of time and peak RSS, and narrow ÷ eager measured in the same run.
 *
 * - one run's results out of the dataset (`loadResults(data, { runIds: [id] })`);
 * - SET's label and throughput over every run (`loadResults(data, { tests, columns })`);
 * - `kvlab table results --columns run_id,test,ops_per_sec --format csv`.
 *
 * With `--before DIR` (a checkout of an older kvlab: `git worktree add DIR <commit>`), commands
 * are timed too, the older checkout's and this one's, interleaved, each in its own process
 * (`_cli_worker.ts`): `kvlab plot throughput`, `kvlab plot latency` (no latency data: it says
 * so), `kvlab table results` and `kvlab table results --columns …`, with after ÷ before; both
 * must print the same bytes and exit alike. (`kvlab summary` and `compare` are left out: on
 * thousands of runs per arm their statistics, not their reads, take the time.)
 *
 * Usage: deno run -A bench/reads.ts [--runs 100000] [--repeat 3] [--before DIR] [--dir PARENT]
 *   [--keep DIR]
 *   --keep DIR: the inputs and the dataset stay in DIR, and a dataset already there is reused.
 *
 * @module
 */

import { writeManyRuns } from "./_corpus.ts";
import { listRuns } from "../src/analyze/load.ts";

const args = Deno.args;
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const nRuns = Number(opt("runs", "100000"));
const repeat = Number(opt("repeat", "3"));
const keep = opt("keep", "");
const work = keep ||
  Deno.makeTempDirSync({ prefix: "kvlab-reads-", dir: opt("dir", undefined as unknown as string) });
const WORKER = new URL("./_ingest_worker.ts", import.meta.url).pathname;
const CLI_WORKER = new URL("./_cli_worker.ts", import.meta.url).pathname;
const HERE = new URL("../", import.meta.url).pathname;
const before = opt("before", "");
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

interface Measure {
  seconds: number;
  peakRssBytes: number;
  [k: string]: unknown;
}

async function measure(...a: string[]): Promise<Measure> {
  return await run(WORKER, a);
}

async function run(worker: string, a: string[]): Promise<Measure> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, worker, ...a],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`worker failed: ${a.join(" ")}`);
  return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mb = (b: number) => b / 1e6;

console.log(`kvlab narrow reads — ${new Date().toISOString()}, Deno ${Deno.version.deno}\n`);
const data = `${work}/data`;
let exists = false;
try {
  exists = Deno.statSync(`${data}/batches`).isDirectory;
} catch { /* not built yet */ }
if (!exists) {
  writeManyRuns(`${work}/many`, nRuns, 20);
  for (const label of ["a", "b"]) Deno.mkdirSync(`${work}/many/${label}`);
  for (const e of [...Deno.readDirSync(`${work}/many`)].filter((e) => e.isFile)) {
    const label = Number(/\d+/.exec(e.name)![0]) < 10 ? "a" : "b";
    Deno.renameSync(`${work}/many/${e.name}`, `${work}/many/${label}/${e.name}`);
  }
  for (const label of ["a", "b"]) {
    const ing = await measure("ingest", `${work}/many/${label}`, data, label);
    if ((ing.errors as string[]).length) throw new Error(String(ing.errors));
    console.log(`ingested ${ing.runs} runs labelled ${label} in ${ing.seconds.toFixed(1)} s`);
  }
}
const ids = listRuns(data);
const one = ids[Math.floor(ids.length / 2)];
console.log(`dataset ${data}: ${ids.length} runs; the run read alone: ${one}\n`);

const CASES = [
  { what: "one run's results", narrow: ["one", data, one], eager: ["one-eager", data, one] },
  { what: "SET: label, throughput", narrow: ["test", data], eager: ["test-eager", data] },
  { what: "table --columns (3), csv", narrow: ["columns", data], eager: ["columns-eager", data] },
];
console.log(
  "| read | rows / bytes | eager s | narrow s | narrow ÷ eager (time) | eager peak RSS MB | " +
    "narrow peak RSS MB | narrow ÷ eager (RSS) |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
for (const c of CASES) {
  const eager: Measure[] = [];
  const narrow: Measure[] = [];
  // interleaved, so a noisy minute weighs on both sides alike
  for (let i = 0; i < repeat; i++) {
    eager.push(await measure(...c.eager));
    narrow.push(await measure(...c.narrow));
  }
  const same = (m: Measure) => m.rows ?? m.bytes;
  if (
    narrow.some((m) => same(m) !== same(eager[0])) || eager.some((m) => same(m) !== same(eager[0]))
  ) {
    throw new Error(`${c.what}: narrow and eager read different rows`);
  }
  const t = [median(eager.map((m) => m.seconds)), median(narrow.map((m) => m.seconds))];
  const rss = [median(eager.map((m) => m.peakRssBytes)), median(narrow.map((m) => m.peakRssBytes))];
  console.log(
    `| ${c.what} | ${same(eager[0])} | ${t[0].toFixed(2)} | ${t[1].toFixed(2)} | ` +
      `${(t[1] / t[0]).toFixed(3)} | ${mb(rss[0]).toFixed(0)} | ${mb(rss[1]).toFixed(0)} | ` +
      `${(rss[1] / rss[0]).toFixed(3)} |`,
  );
}
console.log(`\n(medians of ${repeat}; each measurement in its own process)`);

if (before) {
  const table = ["table", "results", "--data", data, "--format", "csv"];
  const COMMANDS = [
    {
      what: "plot throughput",
      args: ["plot", "throughput", "--data", data, "-o", `${work}/t.vl.json`],
    },
    // no latency distribution in these runs: it reads what it needs and says so (exit 1)
    {
      what: "plot latency (nothing to draw)",
      args: ["plot", "latency", "--data", data, "-o", `${work}/l.vl.json`],
    },
    { what: "table results, csv", args: table },
    {
      what: "table results --columns (3), csv",
      args: [...table, "--columns", "run_id,test,ops_per_sec"],
    },
  ];
  console.log(`\ncommands: ${before} (before) and ${HERE} (after)\n`);
  console.log(
    "| command | before s | after s | after ÷ before (time) | before peak RSS MB | " +
      "after peak RSS MB | after ÷ before (RSS) |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const { what, args } of COMMANDS) {
    const old: Measure[] = [];
    const now: Measure[] = [];
    for (let i = 0; i < repeat; i++) {
      old.push(await run(CLI_WORKER, [before, ...args]));
      now.push(await run(CLI_WORKER, [HERE, ...args]));
    }
    if ([...old, ...now].some((m) => m.code !== old[0].code || m.bytes !== old[0].bytes)) {
      throw new Error(`${args.join(" ")}: before and after printed differently`);
    }
    const t = [median(old.map((m) => m.seconds)), median(now.map((m) => m.seconds))];
    const rss = [median(old.map((m) => m.peakRssBytes)), median(now.map((m) => m.peakRssBytes))];
    console.log(
      `| kvlab ${what} | ${t[0].toFixed(2)} | ${t[1].toFixed(2)} | ${(t[1] / t[0]).toFixed(3)} | ` +
        `${mb(rss[0]).toFixed(0)} | ${mb(rss[1]).toFixed(0)} | ${(rss[1] / rss[0]).toFixed(3)} |`,
    );
  }
  console.log(`\n(medians of ${repeat}; each command in its own process)`);
}
if (!keep) Deno.removeSync(work, { recursive: true });
