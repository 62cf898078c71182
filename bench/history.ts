// deno-lint-ignore-file no-console
/**
 * Charts of large histories (issue 30): `deno run -A bench/history.ts [--tests 500,1000,2000]
 * [--nights 30] [--changed 0.1] [--dir PARENT] [--keep DIR]`. For each number of tests, a
 * generated nightly history (`<tmp>/nightly/<yyyy-mm-dd>/redis-benchmark.csv`, one
 * `redis-benchmark --csv` output per night with that many tests, 2 % noise, a share of the tests
 * `--changed` 12 % slower from the middle night on; see `test/_support/history.ts`) is ingested,
 * then three commands run, each in its own process (`_cli_worker.ts`, so peak memory is its own):
 *
 * - `kvlab changes --format csv`: the baseline (the dataset read once, every series' change
 *   points found, nothing drawn);
 * - `kvlab plot changes -o changes.png`: every series' points and segments, drawn;
 * - `kvlab summary`: the history's page (its change points and their chart, SVG and PNG).
 *
 * Printed per command: seconds, peak RSS (VmHWM of its process) and its ratio to the baseline's,
 * the PNG's size in pixels, and issue 30's target beside it: under 1 GB peak RSS at 2,000 tests
 * × 30 nights (before: "Maximum call stack size exceeded" and an empty `figures/` at 2,000
 * tests; at 1,000 a 1522 × 316,962 px PNG and 4.7 GB). A chart draws at most
 * `MAX_CHANGE_PANELS` series, so its size and memory stay flat as the history widens.
 *
 * @module
 */

import { ingestPaths } from "../src/collect/ingest/ingest.ts";
import { MAX_CHANGE_PANELS } from "../src/analyze/charts/changes.ts";
import { wideHistory, writeNightlyHistory } from "../test/_support/history.ts";

const args = Deno.args;
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const sizes = opt("tests", "500,1000,2000").split(",").map(Number);
const nights = Number(opt("nights", "30"));
const share = Number(opt("changed", "0.1"));
const work = opt("keep", "") ||
  Deno.makeTempDirSync({ prefix: "kvlab-bench-history-", dir: opt("dir", undefined as never) });
const ROOT = new URL("../", import.meta.url).pathname;
const WORKER = new URL("./_cli_worker.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

/** Issue 30's bound on the peak RSS of `plot changes` and `summary` at 2,000 tests × 30 nights. */
const RSS_TARGET_MB = 1000;

interface Measure {
  seconds: number;
  peakRssBytes: number;
  code: number;
}

/** `kvlab ARGS…` in its own process. */
async function measure(...a: string[]): Promise<Measure> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, WORKER, ROOT, ...a],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const m = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
  if (!out.success || m.code !== 0) throw new Error(`kvlab ${a.join(" ")}: exit ${m.code}`);
  return m;
}

/** A PNG's width × height (its IHDR). */
function pngSize(path: string): string {
  const b = Deno.readFileSync(path);
  const v = new DataView(b.buffer, b.byteOffset);
  return `${v.getUint32(16)} × ${v.getUint32(20)} px`;
}

const mb = (b: number) => (b / 1e6).toFixed(0);
console.log(
  `changes charts of wide histories: ${nights} nights, ${share * 100} % of the tests ` +
    `changed; at most ${MAX_CHANGE_PANELS} panels; target: plot and summary under ` +
    `${RSS_TARGET_MB} MB peak RSS at 2,000 tests × 30 nights`,
);
try {
  for (const tests of sizes) {
    const dir = `${work}/${tests}`;
    writeNightlyHistory(`${dir}/nightly`, wideHistory(30, { tests, nights, changed: share }));
    const t0 = performance.now();
    const [r] = await ingestPaths([`${dir}/nightly`], { data: `${dir}/data`, server: "redis" });
    if (r.status !== "ingested") throw new Error(`ingest: ${r.status}`);
    const ingestS = (performance.now() - t0) / 1000;
    const base = await measure("changes", "--data", `${dir}/data`, "--format", "csv");
    const plot = await measure("plot", "changes", "--data", `${dir}/data`, "-o", `${dir}/c.png`);
    const page = await measure("summary", `${dir}/data`, "-o", `${dir}/summary`);
    console.log(
      `\n${tests} tests × ${nights} nights (${tests * nights} results; ingest ` +
        `${ingestS.toFixed(1)} s)`,
    );
    const line = (name: string, m: Measure, png?: string) => {
      const ratio = (m.peakRssBytes / base.peakRssBytes).toFixed(2);
      const verdict = m === base
        ? ""
        : m.peakRssBytes < RSS_TARGET_MB * 1e6
        ? `  under ${RSS_TARGET_MB} MB`
        : `  OVER ${RSS_TARGET_MB} MB`;
      console.log(
        `  ${name.padEnd(22)} ${m.seconds.toFixed(2).padStart(6)} s  peak RSS ` +
          `${mb(m.peakRssBytes).padStart(5)} MB (${ratio}× changes)${verdict}` +
          (png ? `  ${png}` : ""),
      );
    };
    line("changes --format csv", base);
    line("plot changes (png)", plot, pngSize(`${dir}/c.png`));
    line("summary (svg + png)", page, pngSize(`${dir}/summary/figures/changes.png`));
  }
} finally {
  if (!opt("keep", "")) Deno.removeSync(work, { recursive: true });
}
