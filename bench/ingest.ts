// deno-lint-ignore-file no-console
/**
 * Ingest benchmark (`deno task bench`). Every measurement runs in its own process, so peak
 * memory (VmHWM) is its own, and every ratio is against a baseline measured in the same run:
 *
 * (a) large files, 50 / 100 / 200 MB, of three shapes:
 *     - a transcript of many commands mixing every format (6.2+ report, -q, --csv, ≤6.0 report,
 *       headerless CSV), so ~11 k runs per 100 MB;
 *     - a few very long outputs (`-l` loops) in each of those formats;
 *     - a memtier_benchmark `--json-out-file` of a real 3-run shape (RUN #1–3, BEST, WORST,
 *       AGGREGATED; HDR histograms, latency distributions) with every per-second `Time-Serie`
 *       grown to the size (≈ 9 hours per run at 200 MB).
 *     Printed: ingest MB/s, Deno's plain read of the same bytes (MB/s), Deno reading the same
 *     bytes as text lines (TextDecoderStream + line split), the ratios, and peak RSS (VmHWM of
 *     the ingest's own process) beside issue 21's target: under 250 MB, and flat.
 * (b) 1,000 small real files: files per second, and the time to load the dataset with
 *     `loadResults`.
 * (c) 100,000 runs (short outputs in 20 transcripts, one ingest call): ingest, files and bytes
 *     in the dataset, `loadResults`, `kvlab table results --format csv` (and the same CSV
 *     written by polars), then the same after `kvlab compact`.
 *
 * Usage: deno task bench [--sizes 50,100,200] [--files 1000] [--runs 100000] [--dir PARENT]
 *   [--keep DIR] [--only rss]
 *   --only rss: only the peak-memory cases (a transcript and a memtier JSON at each size), with
 *   peak RSS and time per input; the rest is skipped.
 *   --dir: where the temporary inputs and datasets go (the filesystem matters: file creation
 *   dominates the cost of many small runs).
 *
 * @module
 */

import {
  writeLoops,
  writeManyRuns,
  writeMemtierJson,
  writeSmallFiles,
  writeTranscript,
} from "./_corpus.ts";

const args = Deno.args;
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const sizesMb = opt("sizes", "50,100,200").split(",").map(Number);
const nFiles = Number(opt("files", "1000"));
const nRuns = Number(opt("runs", "100000"));
const work = opt("keep", "") ||
  Deno.makeTempDirSync({ prefix: "kvlab-bench-", dir: opt("dir", undefined as unknown as string) });
const WORKER = new URL("./_ingest_worker.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

interface Measure {
  seconds: number;
  peakRssBytes: number;
  [k: string]: unknown;
}

async function measure(...a: string[]): Promise<Measure> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, WORKER, ...a],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`worker failed: ${a.join(" ")}`);
  return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
}

const mb = (b: number) => b / 1e6;
const fmt = (x: number, d = 1) => x.toFixed(d);

/** Issue 21's bound on ingest's peak RSS, whatever the input's size. */
const RSS_TARGET_MB = 250;
const SHAPES = ["transcript", "loops", "memtier-json"] as const;
type Shape = typeof SHAPES[number];

/** Writes an input of a shape; a memtier JSON goes in a folder of its own (no sibling files). */
async function writeInput(shape: Shape, size: number): Promise<{ file: string; bytes: number }> {
  if (shape === "memtier-json") {
    const dir = `${work}/memtier-${size}MB`;
    Deno.mkdirSync(dir, { recursive: true });
    const file = `${dir}/memtier-${size}MB.json`;
    return { file, bytes: (await writeMemtierJson(file, size * 1e6)).bytes };
  }
  const file = `${work}/${shape}-${size}MB.txt`;
  const write = shape === "transcript" ? writeTranscript : writeLoops;
  return { file, bytes: await write(file, size * 1e6) };
}

const within = (m: Measure) => (mb(m.peakRssBytes) < RSS_TARGET_MB ? "yes" : "**no**");

console.log(
  `kvlab ingest benchmark — ${
    new Date().toISOString()
  }, Deno ${Deno.version.deno}, work dir ${work}\n`,
);
const only = opt("only", "");
if (only !== "" && only !== "rss") throw new RangeError(`invalid --only: ${only} (expected rss)`);
if (only === "rss") {
  console.log("(r) peak memory of ingest (VmHWM of the ingest's own process)");
  console.log(`| shape | size MB | runs | rows | ingest s | peak RSS MB | target MB | within |`);
  console.log("|---|---:|---:|---:|---:|---:|---:|---|");
  for (const shape of ["transcript", "memtier-json"] as const) {
    for (const size of sizesMb) {
      const { file, bytes } = await writeInput(shape, size);
      const data = `${work}/data-${shape}-${size}`;
      const ing = await measure("ingest", file, data);
      if ((ing.errors as string[]).length) throw new Error(String(ing.errors));
      const rows = await measure("rows", data);
      console.log(
        `| ${shape} | ${fmt(mb(bytes))} | ${ing.runs} | ${rows.rows} | ${fmt(ing.seconds)} | ` +
          `${fmt(mb(ing.peakRssBytes))} | ${RSS_TARGET_MB} | ${within(ing)} |`,
      );
      Deno.removeSync(data, { recursive: true });
      Deno.removeSync(file);
    }
  }
  if (!opt("keep", "")) Deno.removeSync(work, { recursive: true });
  Deno.exit(0);
}

console.log("(a) large files");
console.log(
  "| shape | size MB | runs | ingest MB/s | plain read MB/s | text-lines read MB/s | ingest / plain read | ingest / text lines | peak RSS MB (ingest) | target MB |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const shape of SHAPES) {
  for (const size of sizesMb) {
    const { file, bytes } = await writeInput(shape, size);
    // Baselines and ingest interleaved in one run; the page cache is warm for all three.
    const read = await measure("read", file);
    const lines = await measure("textlines", file);
    const data = `${work}/data-${shape}-${size}`;
    const ing = await measure("ingest", file, data);
    if ((ing.errors as string[]).length) throw new Error(String(ing.errors));
    const ingestRate = mb(bytes) / ing.seconds;
    const readRate = mb(bytes) / read.seconds;
    const linesRate = mb(bytes) / lines.seconds;
    console.log(
      `| ${shape} | ${fmt(mb(bytes))} | ${ing.runs} | ${fmt(ingestRate)} | ${fmt(readRate)} | ${
        fmt(linesRate)
      } | ` +
        `${fmt(ingestRate / readRate, 4)} | ${fmt(ingestRate / linesRate, 3)} | ${
          fmt(mb(ing.peakRssBytes))
        } | < ${RSS_TARGET_MB} (${within(ing)}) |`,
    );
    Deno.removeSync(data, { recursive: true });
    Deno.removeSync(file);
  }
}

console.log(`\n(b) ${nFiles} small files`);
const dir = `${work}/small`;
writeSmallFiles(dir, nFiles);
const data = `${work}/data-small`;
const ing = await measure("ingest", dir, data);
const load = await measure("load", data);
console.log(
  "| files | runs | ingest s | files/s | load s (loadResults) | rows | peak RSS MB (ingest) |",
);
console.log("|---:|---:|---:|---:|---:|---:|---:|");
console.log(
  `| ${ing.files} | ${ing.runs} | ${fmt(ing.seconds, 2)} | ${
    fmt((ing.files as number) / ing.seconds, 0)
  } | ` +
    `${fmt(load.seconds, 2)} | ${load.rows} | ${fmt(mb(ing.peakRssBytes))} |`,
);
console.log(`\n(c) ${nRuns} runs`);
const many = `${work}/many`;
writeManyRuns(many, nRuns, 20);
const manyData = `${work}/data-many`;
const ingMany = await measure("ingest", many, manyData);
console.log(
  "| dataset | runs | ingest s | files | MB | raw files | load s (loadResults) | rows | table csv s | polars csv s |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const stage of ["as ingested", "after compact"]) {
  if (stage === "after compact") await measure("compact", manyData);
  const files = await measure("files", manyData);
  const loadMany = await measure("load", manyData);
  const table = await measure("table", manyData);
  const pcsv = await measure("polarscsv", manyData);
  console.log(
    `| ${stage} | ${ingMany.runs} | ${
      stage === "as ingested" ? fmt(ingMany.seconds, 2) : "–"
    } | ${files.files} | ${fmt(mb(files.bytes as number))} | ${
      (files.raw as { files: number }).files
    } | ${fmt(loadMany.seconds, 2)} | ${loadMany.rows} | ${fmt(table.seconds, 2)} | ${
      fmt(pcsv.seconds, 2)
    } |`,
  );
}

console.log(
  `\ntargets: (a) transcript ≥ 0.3×, -l ≥ 0.5× the text-line read, peak < 250 MB and flat; ` +
    `(b) ${nFiles} files ≤ 2 s; (c) load ≤ 2 s, table csv ≤ 3 s, a few hundred files after compact`,
);
if (!opt("keep", "")) Deno.removeSync(work, { recursive: true });
