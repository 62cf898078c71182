/**
 * Benchmark inputs: a large transcript mixing every redis-benchmark format, and many small
 * files, all made from real outputs in test/testdata/ with their numbers varied.
 *
 * @module
 */

const TESTDATA = new URL("../test/testdata/", import.meta.url).pathname;

/** Real outputs with the command that produced them. */
export const SOURCES: { command: string; file: string }[] = [
  {
    command: "redis-benchmark -h 127.0.0.1 -p 6379 -n 20000 -t set,get,incr,lpush,lrange_100",
    file: "corpus/redis-benchmark_7.0.15_redis-7.0.15_full.txt",
  },
  {
    command: "redis-benchmark -h 127.0.0.1 -p 6379 -n 20000 -t set,get,incr,lpush,lrange_100 -q",
    file: "corpus/redis-benchmark_7.0.15_redis-7.0.15_quiet.txt",
  },
  {
    command: "redis-benchmark -h 127.0.0.1 -p 6379 -n 20000 -t set,get,incr,lpush,lrange_100 --csv",
    file: "corpus/redis-benchmark_7.0.15_redis-7.0.15_csv.csv",
  },
  {
    command:
      "redis-benchmark -h 127.0.0.1 -p 6379 -n 20000 -t set,get,incr,lpush,lrange_100 --threads 2",
    file: "corpus/redis-benchmark_7.0.15_redis-7.0.15_threads2.txt",
  },
  {
    command: "valkey-benchmark -h 127.0.0.1 -p 6380 -n 20000 -t set,get,incr,lpush,lrange_100",
    file: "corpus/valkey-benchmark_8.0.1_valkey-8.0.1_full.txt",
  },
  {
    command: "redis-benchmark -p 6379 -n 100000 -t ping,set,get",
    file: "handmade/redis-benchmark-6.0.16_full-cut-during-get.txt",
  },
  { command: "redis-benchmark -h db -p 6379 -c 100 -n 100000 -t set,get --csv", file: "" },
];

const LEGACY_CSV = '"SET","41562.76"\n"GET","38491.14"\n';

/** The text of each source, numbers varied by `k` so that no two copies are the same. */
export function variant(text: string, k: number): string {
  // change the last two digits of decimals: same format, other values
  return text.replace(
    /(\d\.\d)(\d)(\d)\b/g,
    (_m, a, b, c) => `${a}${(Number(b) + k) % 10}${(Number(c) + 3 * k) % 10}`,
  );
}

/** Loads the texts of {@link SOURCES}. */
export function loadSources(): { command: string; text: string }[] {
  return SOURCES.map((s) => ({
    command: s.command,
    text: s.file ? Deno.readTextFileSync(TESTDATA + s.file) : LEGACY_CSV,
  }));
}

/**
 * Writes a transcript of about `bytes` bytes: `$ command` lines followed by their outputs, in
 * every format, cycled.
 */
export async function writeTranscript(path: string, bytes: number): Promise<number> {
  const sources = loadSources();
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  let written = 0;
  let k = 0;
  try {
    while (written < bytes) {
      const parts: string[] = [];
      for (const s of sources) {
        parts.push(`[bench@host${k % 7} ~]$ ${s.command}\n`, variant(s.text, k));
        k++;
      }
      const chunk = enc.encode(parts.join(""));
      await file.write(chunk);
      written += chunk.length;
    }
  } finally {
    file.close();
  }
  return written;
}

/**
 * Writes a file of about `bytes` bytes made of a few very long outputs, as `redis-benchmark -l`
 * (loop) prints them, one block per format: 6.2+ report, -q, --csv and the ≤6.0 report.
 */
export async function writeLoops(path: string, bytes: number): Promise<number> {
  const s = loadSources();
  const formats = [
    { command: s[0].command + " -l", text: s[0].text.replace(/\n\n$/, "\n") },
    { command: s[1].command + " -l", text: s[1].text.replace(/\n\n$/, "\n") },
    { command: s[2].command + " -l", text: s[2].text.split("\n").slice(1).join("\n") },
    {
      command: "redis-benchmark -p 6379 -n 100000 -t ping,set -l",
      text: s[5].text.slice(0, s[5].text.indexOf("GET: 0.00")),
    },
  ];
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  let written = 0;
  try {
    for (const [i, f] of formats.entries()) {
      const head = enc.encode(`$ ${f.command}\n${i === 2 ? s[2].text.split("\n")[0] + "\n" : ""}`);
      await file.write(head);
      written += head.length;
      const target = (bytes * (i + 1)) / formats.length;
      for (let k = 0; written < target; k++) {
        const chunk = enc.encode(variant(f.text, k));
        await file.write(chunk);
        written += chunk.length;
      }
    }
  } finally {
    file.close();
  }
  return written;
}

/** Writes `n` small files, varied copies of the real outputs, into `dir`. */
export function writeSmallFiles(dir: string, n: number): void {
  const s = loadSources();
  Deno.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < n; i++) {
    const src = s[i % s.length];
    const name = `${String(i).padStart(4, "0")}-${src.command.split(" ")[0]}.txt`;
    Deno.writeTextFileSync(
      `${dir}/${name}`,
      `[bench@host${i} ~]$ ${src.command}\n${variant(src.text, Math.floor(i / s.length))}`,
    );
  }
}

/**
 * Writes `runs` runs as `files` transcripts of short outputs (-q, --csv, ≤2.x CSV, cycled),
 * numbers varied, for the 100,000-run dataset.
 */
export function writeManyRuns(dir: string, runs: number, files: number): void {
  const s = loadSources();
  const short = [s[1], s[2], s[6]];
  Deno.mkdirSync(dir, { recursive: true });
  const per = Math.ceil(runs / files);
  for (let f = 0; f < files; f++) {
    const parts: string[] = [];
    for (let i = f * per; i < Math.min(runs, (f + 1) * per); i++) {
      const src = short[i % short.length];
      parts.push(`[bench@host${i} ~]$ ${src.command}\n`, variant(src.text, i));
    }
    Deno.writeTextFileSync(`${dir}/runs-${String(f).padStart(3, "0")}.txt`, parts.join(""));
  }
}

/** A real memtier JSON with 3 runs (`--run-count 3 --print-all-runs`): RUN #1–3, BEST, WORST, AGGREGATED. */
const MEMTIER_JSON = "real/memtier-2.3.0_redis-7.0.15_runcount3-allruns.json";

/** One second of a `Time-Serie`, in memtier's layout, numbers varied by `i`. */
function memtierSecond(i: number, count: number): string {
  const c = Math.max(0, count + ((i * 7919) % 101) - 50);
  const avg = (0.15 + ((i * 31) % 97) / 1000).toFixed(3);
  const t = "\t\t\t\t\t";
  return `${i ? "\t\t\t\t," : "\t\t\t\t"}"${i}":{\n${t}"Bytes RX": ${c * 17}\n` +
    `${t},"Bytes TX": ${c * 101}\n${t},"Count": ${c}\n${t},"Average Latency": ${avg}\n` +
    `${t},"Accumulated Latency": ${Math.floor(c * Number(avg))}\n${t},"Min Latency": 0.016\n` +
    `${t},"Max Latency": ${(8 + (i % 13) / 10).toFixed(3)}\n${t},"p50.00": 0.175\n` +
    `${t},"p99.00": ${(2 + (i % 7) / 10).toFixed(3)}\n${t},"p99.90": 8.191\n${t}}\n`;
}

/**
 * Writes a memtier_benchmark JSON of about `bytes` bytes, of a real run's shape: three runs with
 * `--print-all-runs` (RUN #1–3, BEST, WORST, AGGREGATED), HDR histograms and latency
 * distributions as memtier printed them, and every `Time-Serie` grown to as many seconds as the
 * size asks (the numbers of each second varied around its type's rate).
 *
 * @returns The bytes written and the seconds per series.
 */
export async function writeMemtierJson(
  path: string,
  bytes: number,
): Promise<{ bytes: number; seconds: number }> {
  const text = Deno.readTextFileSync(TESTDATA + MEMTIER_JSON);
  const open = '"Time-Serie":{\n';
  const parts: { before: string; count: number }[] = [];
  let rest = 0;
  for (let at = text.indexOf(open); at >= 0; at = text.indexOf(open, rest)) {
    const body = at + open.length;
    const empty = text.startsWith("\t\t\t}", body);
    const close = empty ? body : text.indexOf('\n\t\t\t\t}\n\t\t\t,"Percentile', body);
    if (close < 0) throw new Error(`${MEMTIER_JSON}: no end of the Time-Serie at ${at}`);
    const end = empty ? body : close + 1;
    const count = Number(/"Count": (\d+)/.exec(text.slice(body, end))?.[1] ?? 0);
    parts.push({ before: text.slice(rest, body), count: empty ? -1 : count });
    rest = end;
  }
  const tail = text.slice(rest);
  const counted = parts.filter((p) => p.count >= 0);
  const series = counted.length;
  const perSecond = counted.reduce((a, p) => a + memtierSecond(10_000, p.count).length, 0) /
    Math.max(1, series);
  const seconds = Math.max(2, Math.floor((bytes - text.length) / series / perSecond));
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  let written = 0;
  const put = async (s: string) => {
    const b = enc.encode(s);
    for (let off = 0; off < b.length;) off += await file.write(b.subarray(off));
    written += b.length;
  };
  try {
    for (const p of parts) {
      await put(p.before);
      if (p.count < 0) continue;
      for (let i = 0; i < seconds; i += 1000) {
        const chunk: string[] = [];
        for (let j = i; j < Math.min(seconds, i + 1000); j++) {
          chunk.push(memtierSecond(j, p.count));
        }
        await put(chunk.join(""));
      }
    }
    await put(tail);
  } finally {
    file.close();
  }
  return { bytes: written, seconds };
}
