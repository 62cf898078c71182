// deno-lint-ignore-file no-console
/**
 * One measurement in its own process (so peak memory is its own): `ingest FILE DATA [LABEL]`,
 * `read FILE` (plain chunked read), `lines FILE` (kvlab's line reader), `load DATA`,
 * `table DATA` (`kvlab table results --format csv`, output counted), `polarscsv DATA` (the same
 * table written as CSV by polars), `compact DATA`, `files DATA` (files and bytes), `rows DATA`
 * (rows of the results, distribution, series and histogram tables), and `bench/reads.ts`'s pairs,
 * each read narrowly and eagerly (the whole tables, then filtered in memory): `one DATA ID` /
 * `one-eager DATA ID` (one run's results), `test DATA` / `test-eager DATA` (SET's label and
 * throughput over every run), `columns DATA` / `columns-eager DATA` (`kvlab table results
 * --columns run_id,test,ops_per_sec --format csv`, and the same columns of the whole table view).
 * Prints one JSON line: { seconds, peakRssBytes, ... }.
 *
 * @module
 */

import { Dataset } from "../src/store/dataset.ts";
import { ingestPaths } from "../src/collect/ingest/ingest.ts";
import { readLines } from "../src/text/read_lines.ts";
import pl from "nodejs-polars";
import { loadResults, loadTable } from "../src/analyze/load.ts";
import { formatTable } from "../src/analyze/format.ts";
import { tableCommand, tableView } from "../src/cli/table.ts";
import { compactDataset } from "../src/store/compact.ts";

function peakRss(): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : NaN;
}

const [mode, a, b, c] = Deno.args;
/** `bench/reads.ts`'s one test's columns, and `kvlab table --columns`'s. */
const SET_COLUMNS = ["label", "test", "ops_per_sec"];
const TABLE_COLUMNS = ["run_id", "test", "ops_per_sec"];
const t0 = performance.now();
const extra: Record<string, unknown> = {};
switch (mode) {
  case "read": {
    const f = await Deno.open(a);
    const buf = new Uint8Array(1 << 20);
    let n = 0;
    for (let r; (r = await f.read(buf)) !== null;) n += r;
    f.close();
    extra.bytes = n;
    break;
  }
  case "textlines": {
    // What a Deno program reading the same bytes as text does: TextDecoderStream + line split.
    const f = await Deno.open(a);
    let n = 0;
    let rest = "";
    for await (const chunk of f.readable.pipeThrough(new TextDecoderStream())) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      n += parts.length;
    }
    extra.lines = n + (rest ? 1 : 0);
    break;
  }
  case "lines": {
    let n = 0;
    for await (const _ of readLines(a)) n++;
    extra.lines = n;
    break;
  }
  case "ingest": {
    const out = await ingestPaths([a], { data: b, label: c });
    extra.runs = out.reduce((n, o) => n + o.runs.length, 0);
    extra.files = out.length;
    extra.errors = out.filter((o) => o.status === "error").map((o) => o.error?.message);
    break;
  }
  case "rows": {
    // rows of every table of a dataset (the series a large memtier JSON holds included)
    let rows = 0;
    for (const table of ["results", "latency_distribution", "time_series", "hdr_histograms"]) {
      rows += loadTable(a, table).height;
    }
    extra.rows = rows;
    break;
  }
  case "load": {
    const df = loadResults(a);
    extra.rows = df.height;
    break;
  }
  case "table": {
    let bytes = 0;
    tableCommand({ name: "results", data: Dataset.open(a), format: "csv" }, {
      print: (s) => void (bytes += s.length),
      printErr: () => {},
    });
    extra.bytes = bytes;
    break;
  }
  case "polarscsv": {
    const df = loadTable(a, "results");
    extra.bytes = df.writeCSV().length;
    break;
  }
  case "one": {
    extra.rows = loadResults(a, { runIds: [b] }).height;
    break;
  }
  case "one-eager": {
    extra.rows = loadResults(a).filter(pl.col("run_id").eq(pl.lit(b))).height;
    break;
  }
  case "test": {
    extra.rows = loadResults(a, { tests: ["SET"], columns: SET_COLUMNS }).height;
    break;
  }
  case "test-eager": {
    extra.rows = loadResults(a).filter(pl.col("test").eq(pl.lit("SET"))).select(...SET_COLUMNS)
      .height;
    break;
  }
  case "columns": {
    let bytes = 0;
    tableCommand(
      { name: "results", data: Dataset.open(a), format: "csv", columns: TABLE_COLUMNS },
      {
        print: (s) => void (bytes += s.length),
        printErr: () => {},
      },
    );
    extra.bytes = bytes;
    break;
  }
  case "columns-eager": {
    const { frame } = tableView(a, "results");
    extra.bytes = formatTable(frame.select(...TABLE_COLUMNS), "csv").length;
    break;
  }
  case "compact": {
    const r = compactDataset(a);
    Object.assign(extra, r, { merged: r.merged.length });
    break;
  }
  case "files": {
    const walk = (d: string): { files: number; bytes: number } => {
      let files = 0, bytes = 0;
      for (const e of Deno.readDirSync(d)) {
        const p = `${d}/${e.name}`;
        if (e.isDirectory) {
          const w = walk(p);
          files += w.files;
          bytes += w.bytes;
        } else {
          files++;
          bytes += Deno.statSync(p).size;
        }
      }
      return { files, bytes };
    };
    Object.assign(extra, walk(a), { raw: walk(`${a}/raw`), batches: walk(`${a}/batches`) });
    break;
  }
  default:
    throw new TypeError(`invalid mode: ${mode}`);
}
const seconds = (performance.now() - t0) / 1000;
console.log(JSON.stringify({ mode, seconds, peakRssBytes: peakRss(), ...extra }));
