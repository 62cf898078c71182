/**
 * Test support: the captured outputs under `test/testdata/` (real runs of the tools, named after
 * tool and version), read by their path below that folder, and the lists of them that several
 * tests walk, kept here once.
 *
 * @module
 */

/** The repository's root folder (with a trailing slash). */
export const ROOT = new URL("../../", import.meta.url).pathname;

/** The fixtures' folder, `test/testdata/` (with a trailing slash). */
export const TESTDATA = ROOT + "test/testdata/";

/**
 * A fixture's text.
 *
 * @param path Its path below `test/testdata/` (`corpus/…`, `real/…`, `hostile/…`).
 * @returns The file's text.
 */
export function readTestdata(path: string): string {
  return Deno.readTextFileSync(TESTDATA + path);
}

/**
 * The memtier_benchmark 2.3.0 runs that finished, each a `.json` and a `.txt` (stdout) beside
 * it (paths below `test/testdata/`, without the extension).
 */
export const MEMTIER_RUNS = [
  "corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratio1-10-d256-test10s",
  "corpus/memtier_2.3.0_redis-7.0.15_t2c10-ratelimit500-test10s",
  "corpus/memtier_2.3.0_redis-7.0.15_t2c10-runcount2-test5s",
  "real/memtier-2.3.0_redis-7.0.15_runcount3-allruns",
  "real/memtier-2.3.0_redis-7.0.15_ratelimit100-pct4",
  "real/memtier-2.3.0_valkey-8.0.1_t2c5-pipeline4-requests2000",
  "real/memtier-2.3.0_valkey-8.0.1_command-set-incr",
] as const;

/**
 * The memtier_benchmark 2.3.0 run stopped by SIGINT after 1.5 s: its JSON is whole (memtier
 * writes it on the signal), the run is interrupted.
 */
export const MEMTIER_SIGINT_RUN = "real/memtier-2.3.0_redis-7.0.15_sigint-at-1.5s";

/** The memtier_benchmark 2.3.0 run killed (SIGKILL) after 1.5 s: its JSON is cut short. */
export const MEMTIER_SIGKILL_RUN = "real/memtier-2.3.0_redis-7.0.15_sigkill-at-1.5s";

/**
 * The fixtures of one or more folders below `test/testdata/` whose paths match `pattern`,
 * sorted.
 *
 * @param folders Folders below `test/testdata/` (`corpus`, `real`, …).
 * @param pattern Matched against `folder/name`.
 * @returns Their paths below `test/testdata/`.
 */
export function testdataFiles(folders: readonly string[], pattern: RegExp): string[] {
  return folders.flatMap((d) => [...Deno.readDirSync(TESTDATA + d)].map((e) => `${d}/${e.name}`))
    .filter((p) => pattern.test(p)).sort();
}
