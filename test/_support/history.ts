/**
 * Test support: nightly benchmark histories with known shifts, the shape of a nightly CI
 * (`<dir>/<yyyy-mm-dd>/redis-benchmark.csv`, one `redis-benchmark --csv` output per night),
 * for the change-point tests and the bundled `history` study. Seeded: the same seed gives the
 * same history.
 *
 * @module
 */

import { seededRandom } from "../../src/random.ts";

/** The 20 tests of a default `redis-benchmark --csv` run, as it titles them. */
export const CSV_TESTS = [
  "PING_INLINE",
  "PING_MBULK",
  "SET",
  "GET",
  "INCR",
  "LPUSH",
  "RPUSH",
  "LPOP",
  "RPOP",
  "SADD",
  "HSET",
  "SPOP",
  "ZADD",
  "ZPOPMIN",
  "LPUSH (needed to benchmark LRANGE)",
  "LRANGE_100 (first 100 elements)",
  "LRANGE_300 (first 300 elements)",
  "LRANGE_500 (first 500 elements)",
  "LRANGE_600 (first 600 elements)",
  "MSET (10 keys)",
] as const;

/** Options of {@link nightlyHistory}. */
export interface HistoryOptions {
  /** @default {150} */
  nights?: number;
  /** True shifts over all tests (each test gets 0–3). @default {27} */
  shifts?: number;
  /** Noise: coefficient of variation of each night's value. @default {0.02} */
  cv?: number;
  /** Smallest and largest shift, relative. @default {[0.04, 0.12]} */
  shiftRange?: [number, number];
  /** Fewest nights between two shifts of a test, and from either end. @default {10} */
  gap?: number;
}

/** One test's nightly values and its true shifts (night index of the first changed night). */
export interface TestHistory {
  title: string;
  opsPerSec: number[];
  shifts: number[];
}

/** A normal deviate from a uniform generator (Box–Muller). */
function gauss(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/**
 * A history of every test of {@link CSV_TESTS}: each night's ops/sec is the test's level times
 * (1 + cv · N(0, 1)); at each true shift the level moves by ± 4–12 %.
 */
export function nightlyHistory(seed: number, options: HistoryOptions = {}): TestHistory[] {
  const nights = options.nights ?? 150;
  const cv = options.cv ?? 0.02;
  const [lo, hi] = options.shiftRange ?? [0.04, 0.12];
  const gap = options.gap ?? 10;
  const rand = seededRandom(seed);
  const counts = CSV_TESTS.map(() => 0);
  for (let left = options.shifts ?? 27; left > 0;) {
    const i = Math.floor(rand() * counts.length);
    if (counts[i] < 3) counts[i]++, left--;
  }
  return CSV_TESTS.map((title, t) => {
    const shifts: number[] = [];
    while (shifts.length < counts[t]) {
      const s = gap + Math.floor(rand() * (nights - 2 * gap));
      if (shifts.every((x) => Math.abs(x - s) >= gap)) shifts.push(s);
    }
    shifts.sort((a, b) => a - b);
    let level = 40_000 + 80_000 * rand();
    const opsPerSec: number[] = [];
    for (let night = 0; night < nights; night++) {
      if (shifts.includes(night)) level *= 1 + (rand() < 0.5 ? -1 : 1) * (lo + rand() * (hi - lo));
      opsPerSec.push(level * (1 + cv * gauss(rand)));
    }
    return { title, opsPerSec, shifts };
  });
}

/** Options of {@link wideHistory}. */
export interface WideHistoryOptions {
  /** Tests per night (`T00000`, `T00001`, …). */
  tests: number;
  /** @default {30} */
  nights?: number;
  /** Share of the tests 12 % slower from the middle night on. @default {0.1} */
  changed?: number;
}

/**
 * A wide history, the shape that broke the changes chart (issue 30): many tests over a few
 * nights, 2 % noise, a share of the tests 12 % slower from the middle night on. Seeded.
 */
export function wideHistory(seed: number, options: WideHistoryOptions): TestHistory[] {
  const nights = options.nights ?? 30;
  const share = options.changed ?? 0.1;
  const rand = seededRandom(seed);
  return Array.from({ length: options.tests }, (_, t) => {
    const level = 40_000 + 80_000 * rand();
    const shift = rand() < share ? Math.floor(nights / 2) : null;
    return {
      title: `T${String(t).padStart(5, "0")}`,
      opsPerSec: Array.from(
        { length: nights },
        (_, i) => level * (shift !== null && i >= shift ? 0.88 : 1) * (1 + 0.02 * gauss(rand)),
      ),
      shifts: shift === null ? [] : [shift],
    };
  });
}

/** The date folder of night `i` (night 0 is 2026-01-01). */
export function nightFolder(i: number): string {
  return new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10);
}

/** Night `i`'s `redis-benchmark --csv` output. */
export function csvOutput(history: readonly TestHistory[], i: number): string {
  const q = (s: string | number) => `"${s}"`;
  const lines = [
    `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"`,
  ];
  for (const t of history) {
    const rps = t.opsPerSec[i];
    const avg = 50 / rps * 1000; // 50 clients
    lines.push(
      [
        q(t.title),
        q(rps.toFixed(2)),
        q(avg.toFixed(3)),
        q((avg * 0.4).toFixed(3)),
        q((avg * 0.97).toFixed(3)),
        q((avg * 1.4).toFixed(3)),
        q((avg * 1.9).toFixed(3)),
        q((avg * 6).toFixed(3)),
      ].join(","),
    );
  }
  return lines.join("\n") + "\n";
}

/**
 * Writes a history as a nightly CI leaves it: `<dir>/<yyyy-mm-dd>/redis-benchmark.csv`.
 *
 * @returns The folder.
 */
export function writeNightlyHistory(dir: string, history: readonly TestHistory[]): string {
  for (let i = 0; i < history[0].opsPerSec.length; i++) {
    Deno.mkdirSync(`${dir}/${nightFolder(i)}`, { recursive: true });
    Deno.writeTextFileSync(`${dir}/${nightFolder(i)}/redis-benchmark.csv`, csvOutput(history, i));
  }
  return dir;
}

/** The tests of the bundled `history` study (`redis-benchmark -t set,get,incr,lpush,sadd,mset`). */
export const BUNDLED_TESTS = ["SET", "GET", "INCR", "LPUSH", "SADD", "MSET (10 keys)"] as const;

/** What happens in the bundled history, night by night (night 0 is 2026-01-01). */
export const BUNDLED_EVENTS = {
  /** A commit makes LPUSH 9 % slower. */
  lpushCommit: 40,
  /** The CI moves from host bench-a to bench-b, 6 % slower for every test. */
  hostChange: 75,
  /** Redis 7.2.4 → 7.2.5: SET 8 % faster. */
  release: 100,
  /** A commit makes SADD 5 % faster. */
  saddCommit: 120,
} as const;

/**
 * The bundled `history` study, the shape of a nightly CI: 150 nights of `redis-benchmark --csv`
 * transcripts (`ci@<host>:~/redis$ redis-benchmark …` then the CSV, so the host is in the
 * prompt) in `nightly/<yyyy-mm-dd>/redis-benchmark.txt`, and the `ingest.json` that tags each
 * night with its commit (`commit=<1000 + night>-<7 hex>`, in natural order) and server version.
 * The events are {@link BUNDLED_EVENTS}; noise is 2 % (seed 2026).
 *
 * @returns The files (path relative to the study folder → text).
 */
export function bundledHistory(): Map<string, string> {
  const rand = seededRandom(2026);
  const e = BUNDLED_EVENTS;
  const base = [118_000, 121_000, 123_000, 117_000, 119_000, 92_000];
  const files = new Map<string, string>();
  const ingest: unknown[] = [];
  for (let night = 0; night < 150; night++) {
    const host = night < e.hostChange ? "bench-a" : "bench-b";
    const version = night < e.release ? "7.2.4" : "7.2.5";
    const rows = BUNDLED_TESTS.map((title, t) => {
      let level = base[t] * (night < e.hostChange ? 1 : 0.94);
      if (title === "LPUSH" && night >= e.lpushCommit) level *= 0.91;
      if (title === "SET" && night >= e.release) level *= 1.08;
      if (title === "SADD" && night >= e.saddCommit) level *= 1.05;
      return { title, opsPerSec: [level * (1 + 0.02 * gauss(rand))], shifts: [] };
    });
    const sha = Array.from({ length: 7 }, () => Math.floor(rand() * 16).toString(16)).join("");
    const path = `nightly/${nightFolder(night)}/redis-benchmark.txt`;
    files.set(
      path,
      `ci@${host}:~/redis$ redis-benchmark --csv -q -n 100000 -c 50 -t set,get,incr,lpush,sadd,mset\n` +
        csvOutput(rows, 0),
    );
    ingest.push({
      file: path,
      server: "redis",
      server_version: version,
      tags: { commit: `${1000 + night}-${sha}` },
    });
  }
  files.set(
    "ingest.json",
    "[\n" + ingest.map((x) => "  " + JSON.stringify(x)).join(",\n") + "\n]\n",
  );
  return files;
}

if (import.meta.main) {
  // deno run -A test/_support/history.ts data/raw/history: (re)writes the bundled study
  const dir = Deno.args[0];
  if (!dir) throw new TypeError("usage: history.ts <study folder>");
  for (const [path, text] of bundledHistory()) {
    Deno.mkdirSync(`${dir}/${path.slice(0, path.lastIndexOf("/") + 1) || "."}`, {
      recursive: true,
    });
    Deno.writeTextFileSync(`${dir}/${path}`, text);
  }
}
