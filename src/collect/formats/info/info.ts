/**
 * Parser for the reply of `INFO` (Redis, Valkey, Dragonfly, KeyDB): `# Section` headers and
 * `key:value` lines, with comma lists (`db0:keys=1,expires=0`, `cmdstat_get:calls=…`) also
 * split into `key.field` rows, and `*_human` sizes (`8.77M`, `6.74MiB`) read as bytes in
 * `valueNum`. Works on `INFO memory | grep human` excerpts too (no section). Pure.
 *
 * @module
 */

import { splitLines } from "../../../text/lines.ts";
import { parseBytes } from "../../../text/units.ts";
import type { MemoryRow, ServerInfoRow } from "../../../schema.ts";
import { redactInfo } from "../../../text/redact.ts";

/** One field of an INFO reply. */
export interface InfoField {
  /** Section name as printed after `# ` (`Server`, `Memory`, …); `""` before any header. */
  section: string;
  key: string;
  /** The value as printed. */
  value: string;
  /** The value as a number when it is a plain number, else null. */
  valueNum: number | null;
}

/** What an INFO reply says about the server. */
export interface ServerIdentity {
  /** redis, valkey, dragonfly, keydb or unknown. */
  server: string;
  /** The server's own version (valkey_version / dragonfly_version win over redis_version). */
  version: string | null;
}

const NUMBER = /^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/**
 * Parses an INFO reply.
 *
 * @example
 * ```ts
 * import { parseInfo } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const f = parseInfo("# Server\r\nredis_version:7.0.15\r\n# Keyspace\r\ndb0:keys=100000,expires=0,avg_ttl=0\r\n");
 * assert.deepEqual(f[0], { section: "Server", key: "redis_version", value: "7.0.15", valueNum: null });
 * assert.deepEqual(f.find((x) => x.key === "db0.keys"), { section: "Keyspace", key: "db0.keys", value: "100000", valueNum: 100000 });
 * ```
 */
export function parseInfo(text: string): InfoField[] {
  const out: InfoField[] = [];
  let section = "";
  for (const { text: raw } of splitLines(text)) {
    const line = raw.trim();
    if (line === "") continue;
    if (line.startsWith("#")) {
      section = line.replace(/^#+\s*/, "");
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const key = line.slice(0, colon);
    const value = line.slice(colon + 1);
    out.push({
      section,
      key,
      value,
      valueNum: NUMBER.test(value)
        ? Number(value)
        : key.endsWith("_human")
        ? parseBytes(value)
        : null,
    });
    if (
      /^[\w.-]+=[^,]*(,[\w.-]+=[^,]*)+$|^[\w.-]+=[^,]*$/.test(value) && !/^[\w.-]+=$/.test(value)
    ) {
      for (const part of value.split(",")) {
        const eq = part.indexOf("=");
        const v = part.slice(eq + 1);
        out.push({
          section,
          key: `${key}.${part.slice(0, eq)}`,
          value: v,
          valueNum: NUMBER.test(v) ? Number(v) : null,
        });
      }
    }
  }
  return out;
}

/**
 * Which server and version an INFO reply comes from. Valkey prints `redis_version:7.2.4` beside
 * `server_name:valkey` and `valkey_version:…`: the real version wins.
 *
 * @example
 * ```ts
 * import { parseInfo, serverIdentity } from "@kvlab/kvlab/collect";
 * import assert from "node:assert/strict";
 * const v = parseInfo("redis_version:7.2.4\nserver_name:valkey\nvalkey_version:8.0.1\n");
 * assert.deepEqual(serverIdentity(v), { server: "valkey", version: "8.0.1" });
 * assert.deepEqual(serverIdentity(parseInfo("redis_version:7.0.15\n")), { server: "redis", version: "7.0.15" });
 * ```
 */
export function serverIdentity(fields: readonly InfoField[]): ServerIdentity {
  const get = (k: string) => fields.find((f) => f.key === k)?.value;
  if (get("valkey_version") || get("server_name") === "valkey") {
    return { server: "valkey", version: get("valkey_version") ?? get("redis_version") ?? null };
  }
  if (get("dragonfly_version")) {
    return { server: "dragonfly", version: get("dragonfly_version")!.replace(/^df-v?/, "") };
  }
  if (get("keydb_version") || /keydb/i.test(get("executable") ?? "")) {
    return { server: "keydb", version: get("keydb_version") ?? get("redis_version") ?? null };
  }
  if (get("redis_version")) return { server: "redis", version: get("redis_version")! };
  return { server: "unknown", version: null };
}

/**
 * A number from INFO fields: the first of `keys` that is present with a numeric value
 * (`used_memory`, then `used_memory_human`, …), or null.
 *
 * @example
 * ```ts
 * import { infoNumber } from "./info.ts";
 * import assert from "node:assert/strict";
 * const info = [{ section: "Memory", key: "used_memory_human", value: "1.00K", valueNum: 1024 }];
 * assert.equal(infoNumber(info, "used_memory", "used_memory_human"), 1024);
 * assert.equal(infoNumber(info, "maxmemory"), null);
 * ```
 */
export function infoNumber(
  info: readonly InfoField[] | undefined,
  ...keys: readonly string[]
): number | null {
  if (!info) return null;
  for (const k of keys) {
    const v = info.find((f) => f.key === k)?.valueNum;
    if (v !== undefined && v !== null) return v;
  }
  return null;
}

/**
 * The INFO memory views of a `memory` row (`used_memory`, `used_memory_rss`, `used_memory_peak`,
 * each falling back to its `_human` form, as `INFO memory | grep human` excerpts have only those).
 */
export function memoryViews(
  info: readonly InfoField[],
): Pick<MemoryRow, "used_memory_bytes" | "used_memory_rss_bytes" | "used_memory_peak_bytes"> {
  const num = (k: string) => infoNumber(info, k, `${k}_human`);
  return {
    used_memory_bytes: num("used_memory"),
    used_memory_rss_bytes: num("used_memory_rss"),
    used_memory_peak_bytes: num("used_memory_peak"),
  };
}

/**
 * The number of keys INFO's Keyspace section lists (the sum of `db*.keys`).
 *
 * @param info Parsed INFO fields.
 * @param text The reply they were parsed from: an empty server's Keyspace section has no field
 *   (`# Keyspace` alone), which is 0 keys, not unknown.
 * @returns The sum, or null when the reply has no Keyspace section.
 *
 * @example
 * ```ts
 * import { keyspaceKeys, parseInfo } from "./info.ts";
 * import assert from "node:assert/strict";
 * assert.equal(keyspaceKeys(parseInfo("# Keyspace\ndb0:keys=3,expires=0\ndb1:keys=2,expires=0\n")), 5);
 * assert.equal(keyspaceKeys(parseInfo("# Memory\nused_memory:1\n")), null);
 * const empty = "# Memory\r\nused_memory:1\r\n\r\n# Keyspace\r\n";
 * assert.equal(keyspaceKeys(parseInfo(empty), empty), 0);
 * ```
 */
export function keyspaceKeys(info: readonly InfoField[], text?: string): number | null {
  if (!info.some((f) => f.section.toLowerCase() === "keyspace")) {
    return text !== undefined && /^# Keyspace\r?$/m.test(text) ? 0 : null;
  }
  let keys = 0;
  for (const f of info) if (/^db\d+\.keys$/.test(f.key)) keys += f.valueNum ?? 0;
  return keys;
}

/**
 * The `server_info` rows of INFO fields, secrets redacted.
 *
 * @param runId The run.
 * @param phase When the reply was read (`before`, `after`, `snapshot`).
 * @param info The fields.
 * @returns One row per field.
 *
 * @example
 * ```ts
 * import { infoRows, parseInfo } from "./info.ts";
 * import assert from "node:assert/strict";
 * const rows = infoRows("r1", "snapshot", parseInfo("# Replication\nmasterauth:pw\n"));
 * assert.deepEqual(rows.map((r) => [r.section, r.key, r.value]), [["Replication", "masterauth", "***"]]);
 * ```
 */
export function infoRows(
  runId: string,
  phase: string,
  info: readonly InfoField[],
): ServerInfoRow[] {
  return redactInfo(info).map((f) => ({
    run_id: runId,
    phase,
    section: f.section,
    key: f.key,
    value: f.value,
    value_num: f.valueNum,
  }));
}
