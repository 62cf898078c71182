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
