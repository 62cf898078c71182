// deno-lint-ignore-file no-console
/**
 * A history built by one ingest per night: `deno run -A bench/nightly.ts [nights]` (default
 * 365) writes a generated nightly history (`<tmp>/nightly/<yyyy-mm-dd>/redis-benchmark.csv`,
 * 20 tests per night), ingests each night with its own call, as a nightly CI job does, and
 * prints the dataset's batches and files and the time `loadResults` takes (three times: the
 * first is cold). Automatic compaction keeps the batches few (see `src/store/auto_compact.ts`).
 *
 * @module
 */

import { loadResults } from "../src/analyze/load.ts";
import { ingestFile } from "../src/collect/mod.ts";
import { nightFolder, nightlyHistory, writeNightlyHistory } from "../test/_support/history.ts";

const nights = Number(Deno.args[0] ?? 365);
const dir = Deno.makeTempDirSync({ prefix: "kvlab-nightly-" });
try {
  writeNightlyHistory(`${dir}/nightly`, nightlyHistory(1, { nights }));
  const t0 = performance.now();
  for (let i = 0; i < nights; i++) {
    const o = await ingestFile(`${dir}/nightly/${nightFolder(i)}/redis-benchmark.csv`, {
      data: `${dir}/data`,
      server: "redis",
    });
    if (o.status !== "ingested") throw new Error(`night ${i}: ${o.status}`);
  }
  const ingestS = (performance.now() - t0) / 1000;
  const batches = [...Deno.readDirSync(`${dir}/data/batches`)].map((e) => e.name);
  const files = batches.flatMap((b) =>
    [...Deno.readDirSync(`${dir}/data/batches/${b}`)].filter((e) => e.name.endsWith(".parquet"))
  );
  console.log(
    `${nights} nightly ingests in ${ingestS.toFixed(1)} s: ${batches.length} batches, ` +
      `${files.length} Parquet files`,
  );
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const df = loadResults(`${dir}/data`);
    console.log(`loadResults: ${((performance.now() - t) / 1000).toFixed(3)} s, ${df.height} rows`);
  }
} finally {
  Deno.removeSync(dir, { recursive: true });
}
