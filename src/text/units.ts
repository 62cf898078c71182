/**
 * Byte sizes as tools print them: Redis's `used_memory_human` (`904.26K`, `8.77M`, `7.55G`,
 * `184B`, powers of 1024), Dragonfly's (`860.3KiB`, `6.74MiB`, `8.94GiB`), and docker's
 * (`10.68MiB` for memory; `116MB`, `3.06MB`, `656B`, `1.2kB` for I/O, powers of 1000).
 *
 * @module
 */

const POW2: Record<string, number> = {
  "": 1,
  B: 1,
  K: 1024,
  M: 1024 ** 2,
  G: 1024 ** 3,
  T: 1024 ** 4,
  P: 1024 ** 5,
};
const SI: Record<string, number> = { k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 };

/**
 * Parses a byte size to bytes. `K/M/G` alone (Redis) and `KiB/MiB/GiB` are powers of 1024;
 * `kB/MB/GB` (docker's I/O columns) are powers of 1000. Returns null for anything else.
 *
 * @example
 * ```ts
 * import { parseBytes } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * assert.equal(parseBytes("904.26K"), Math.round(904.26 * 1024));
 * assert.equal(parseBytes("6.74MiB"), Math.round(6.74 * 1024 ** 2));
 * assert.equal(parseBytes("116MB"), 116e6);
 * assert.equal(parseBytes("0B"), 0);
 * assert.equal(parseBytes("7.652GiB"), Math.round(7.652 * 1024 ** 3));
 * assert.equal(parseBytes("12%"), null);
 * ```
 */
export function parseBytes(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kKMGTP]?)(i?)(B?)\s*$/.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  const [, , prefix, i, b] = m;
  if (prefix === "") return b || text.trim() === m[1] ? Math.round(n) : null;
  if (i === "i") return b ? Math.round(n * POW2[prefix.toUpperCase()]) : null;
  // "904.26K" (Redis): 1024-based. "1.2kB", "116MB" (docker I/O): 1000-based.
  if (!b) return Math.round(n * POW2[prefix.toUpperCase()]);
  return Math.round(n * SI[prefix]);
}
