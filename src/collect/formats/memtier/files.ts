/**
 * Which files of a folder are one memtier_benchmark run: the `--json-out-file` `X.json`, its
 * stdout `X.txt`, stderr `X.stderr.txt` and `--hdr-file-prefix` files `X_hdr_*.hgrm` /
 * `X_hdr_*.txt` share the base name `X`. Pure: names in, names out.
 *
 * @module
 */

import { parseHdrFileName } from "./hdr.ts";

/** Which of memtier_benchmark's files a text is. */
export type MemtierFileKind = "json" | "stdout" | "stderr" | "hdr-log" | "hdr-percentiles";

/** What a file name says of its place in a memtier run. */
export interface MemtierName {
  /** The run's base name (`X`). */
  base: string;
  /** The file it would be, by its name. */
  kind: MemtierFileKind;
}

/**
 * The base name and kind a file name gives: `X.json` → JSON, `X.stderr.txt` → stderr,
 * `X_hdr_FULL_RUN_1.hgrm` / `X_FULL_RUN_1.hgrm` → interval log of run `X`, the same `.txt` →
 * percentile distribution, anything else (`X.txt`, `X.log`, `X`) → stdout.
 *
 * @param name A file's base name.
 * @returns Its run's base name and its kind by name.
 *
 * @example
 * ```ts
 * import { memtierName } from "./files.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(memtierName("a.stderr.txt"), { base: "a", kind: "stderr" });
 * assert.deepEqual(memtierName("a_hdr_GET_command_run_1.hgrm"), { base: "a", kind: "hdr-log" });
 * assert.deepEqual(memtierName("a_hdr_FULL_RUN_1.txt"), { base: "a", kind: "hdr-percentiles" });
 * assert.deepEqual(memtierName("a.txt"), { base: "a", kind: "stdout" });
 * ```
 */
export function memtierName(name: string): MemtierName {
  if (name.endsWith(".json")) return { base: name.slice(0, -5), kind: "json" };
  if (name.endsWith(".stderr.txt")) return { base: name.slice(0, -11), kind: "stderr" };
  const hdr = parseHdrFileName(name);
  if (hdr) {
    const kind = hdr.format === "percentiles" ? "hdr-percentiles" : "hdr-log";
    return { base: hdr.prefix.replace(/[_-]hdr$/, ""), kind };
  }
  return { base: name.replace(/\.(txt|log|out)$/, ""), kind: "stdout" };
}

/** The order a run reads its files in: JSON, stdout, stderr, interval logs, percentile files. */
export const MEMTIER_FILE_ORDER: readonly MemtierFileKind[] = [
  "json",
  "stdout",
  "stderr",
  "hdr-log",
  "hdr-percentiles",
];

/**
 * The names of a folder that share a file's run base name, in the order a run reads them
 * (JSON, stdout, stderr, interval logs, percentile files; by name within a kind).
 *
 * @param name The file's base name.
 * @param names Every name in its folder.
 * @returns The run's names (the file's own included) with their kinds by name.
 *
 * @example
 * ```ts
 * import { memtierSiblings } from "./files.ts";
 * import assert from "node:assert/strict";
 * const names = ["x_hdr_FULL_RUN_1.hgrm", "x.txt", "x.json", "y.txt", "x.stderr.txt"];
 * assert.deepEqual(memtierSiblings("x.txt", names).map((s) => s.name), [
 *   "x.json", "x.txt", "x.stderr.txt", "x_hdr_FULL_RUN_1.hgrm",
 * ]);
 * ```
 */
export function memtierSiblings(
  name: string,
  names: readonly string[],
): { name: string; kind: MemtierFileKind }[] {
  const base = memtierName(name).base;
  return names.map((n) => ({ name: n, ...memtierName(n) }))
    .filter((n) => n.base === base)
    .sort((a, b) =>
      MEMTIER_FILE_ORDER.indexOf(a.kind) - MEMTIER_FILE_ORDER.indexOf(b.kind) ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    )
    .map(({ name, kind }) => ({ name, kind }));
}

/**
 * Tool version from a file name such as `memtier_2.3.0_…` or `memtier_benchmark-2.3.0.json`.
 *
 * @param name A file's base name.
 * @returns The version, or null.
 *
 * @example
 * ```ts
 * import { memtierVersionOfName } from "./files.ts";
 * import assert from "node:assert/strict";
 * assert.equal(memtierVersionOfName("memtier-2.3.0_redis-7.0.15_x.json"), "2.3.0");
 * assert.equal(memtierVersionOfName("run.json"), null);
 * ```
 */
export function memtierVersionOfName(name: string): string | null {
  return /memtier(?:_benchmark)?[_-]v?(\d+\.\d+(?:\.\d+)?)/.exec(name)?.[1] ?? null;
}
